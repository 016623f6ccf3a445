"""The losses: the squared TD loss on fixed data, and CQL(H)'s gap (Kumar et al. 2020, eq. 4)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from rlviz.offline.problems import Dataset

__all__ = [
    "bellman_targets",
    "cql_gap",
    "offline_loss",
    "offline_loss_grad",
]


# ---------------------------------------------------------------------------------- losses
def cql_gap(q: torch.Tensor, states: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    r"""The CQL(H) gap ``log Σ_a' exp Q(s, a') - Q(s, a)`` of logged pairs; always >= 0.

    Kumar et al. (2020), eq. 4, with the maximising distribution chosen by entropy
    regularisation: ``max_μ E_μ[Q] + H(μ) = log Σ_a exp Q``, which is at least ``max_a Q``.

    Args:
        q: ``[..., S, A]`` action values.
        states: ``[N]`` logged states.
        actions: ``[N]`` logged actions.

    Returns:
        ``[..., N]`` the gap (a max-subtracted log-sum-exp, so large values do not overflow).
    """
    return torch.logsumexp(q, dim=-1)[..., states] - q[..., states, actions]


def bellman_targets(
    q_target: torch.Tensor,
    rewards: torch.Tensor,
    next_states: torch.Tensor,
    dones: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """Fitted-Q targets ``y = r + γ (1 - done) max_a' Q(s', a')``.

    Args:
        q_target: ``[..., S, A]`` action values to bootstrap from.
        rewards: ``[N]`` rewards.
        next_states: ``[N]`` next states.
        dones: ``[N]`` True where the next state is terminal.
        gamma: Discount factor.

    Returns:
        ``[..., N]`` targets.
    """
    return rewards + gamma * (~dones) * q_target.amax(dim=-1)[..., next_states]


def offline_loss(
    q: torch.Tensor,
    states: torch.Tensor,
    actions: torch.Tensor,
    targets: torch.Tensor,
    alphas: torch.Tensor,
    weights: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Weighted squared TD error plus the CQL(H) regulariser, per learner.

    ``L = Σ_i w_i [½ (Q(s_i, a_i) - y_i)² + α (log Σ_a exp Q(s_i, a) - Q(s_i, a_i))]``.

    Args:
        q: ``[B, S, A]`` action values, one table per learner.
        states: ``[N]`` logged states.
        actions: ``[N]`` logged actions.
        targets: ``[B, N]`` Bellman targets (held fixed: no gradient flows through them).
        alphas: ``[B]`` CQL weight α of each learner (0: the naive learner).
        weights: ``[N]`` weight of each transition (``1/N`` for the plain mean).

    Returns:
        ``(loss [B], td [B], gap [B])``: the total, the weighted ½ TD², and the weighted gap.
    """
    q_sa = q[:, states, actions]
    td = 0.5 * (weights * (q_sa - targets) ** 2).sum(dim=-1)
    gap = (weights * cql_gap(q, states, actions)).sum(dim=-1)
    return td + alphas * gap, td, gap


def offline_loss_grad(
    q: torch.Tensor,
    pair_weight: torch.Tensor,
    pair_target: torch.Tensor,
    alphas: torch.Tensor,
) -> torch.Tensor:
    r"""The gradient of ``offline_loss`` with respect to every action value, in closed form.

    Differentiating ``L`` (targets held fixed), with ``π(·|s) = softmax Q(s, ·)``,
    ``p̂(s, a) = Σ_{i: (s_i, a_i) = (s, a)} w_i`` the weight of a pair's transitions and
    ``p̂(s) = Σ_a p̂(s, a)`` the state's:

    ``∂L/∂Q(s, a) = p̂(s, a) (Q(s, a) - α) - Σ_{i: (s_i, a_i) = (s, a)} w_i y_i + α p̂(s) π(a|s)``.

    The TD error pulls each logged pair towards its mean target; the regulariser lifts the
    logged pairs by α and presses every action of a logged state down in proportion to its
    softmax mass. With one state it reads ``p̂_a (Q_a - r̄_a) + α (π_a - p̂_a)``, the equation
    ``one_state_fixed_point`` solves. It equals autograd's gradient of the loss (tested), and
    the data enters only through the two sums, computed once per set of targets: each of the
    thousands of training steps is a few operations on the table.

    Args:
        q: ``[B, S, A]`` action values, one table per learner.
        pair_weight: ``[S, A]`` ``p̂(s, a)``, the summed weight of each pair's transitions.
        pair_target: ``[B, S, A]`` each pair's summed ``w_i y_i`` (``_Rows.per_pair``).
        alphas: ``[B]`` CQL weight α of each learner.

    Returns:
        ``[B, S, A]`` the gradient of each learner's total loss.
    """
    alpha = alphas[:, None, None]
    state_weight = pair_weight.sum(dim=-1, keepdim=True)  # p̂(s)
    return pair_weight * (q - alpha) - pair_target + (alpha * state_weight) * _softmax(q)


def _softmax(q: torch.Tensor) -> torch.Tensor:
    """``softmax`` over the last axis; a short last axis goes through a middle one.

    torch's softmax along a last axis of a few entries (a grid's four actions) takes a slow
    path; the same numbers along a middle axis are several times quicker.
    """
    if q.shape[-1] >= 16:
        return torch.softmax(q, dim=-1)
    return torch.softmax(q.transpose(-1, -2), dim=-2).transpose(-1, -2)


@dataclass(frozen=True)
class _Rows:
    """Transitions grouped by (s, a, s', done).

    The loss's gradient needs only each group's weight and mean reward, so training costs the
    same for 100 or 20,000 transitions.
    """

    states: torch.Tensor  # [M]
    actions: torch.Tensor  # [M]
    next_states: torch.Tensor  # [M]
    dones: torch.Tensor  # [M]
    rewards: torch.Tensor  # [M] mean reward of the group
    weights: torch.Tensor  # [M] total weight of the group's transitions
    spread: float  # ½ Σ_i w_i (r_i - r̄_group)², the TD loss's constant part
    pairs: torch.Tensor  # [M] index of the group's (s, a) in a flattened [S, A] table
    n_states: int
    n_actions: int

    def per_pair(self, values: torch.Tensor) -> torch.Tensor:
        """``[..., S, A]``: ``values [..., M]`` summed over the groups of each (s, a) pair."""
        lead = values.shape[:-1]
        sums = values.new_zeros(*lead, self.n_states * self.n_actions)
        sums.index_add_(len(lead), self.pairs, values)
        return sums.view(*lead, self.n_states, self.n_actions)


def _rows(data: Dataset, per_state: bool, dtype: torch.dtype = torch.float64) -> _Rows:
    """Group the transitions; each weighs ``1/n(s)`` (``per_state``) or ``1/N``."""
    keys = np.stack([data.states, data.actions, data.next_states, data.dones.astype(np.int64)])
    uniq, inverse, counts = np.unique(keys, axis=1, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if per_state:
        w_each = 1.0 / np.bincount(data.states, minlength=data.n_states)[data.states]
    else:
        w_each = np.full(data.size, 1.0 / data.size)
    mean_r = np.bincount(inverse, data.rewards) / counts
    spread = 0.5 * float((w_each * (data.rewards - mean_r[inverse]) ** 2).sum())
    t = torch.tensor
    return _Rows(
        states=t(uniq[0]), actions=t(uniq[1]), next_states=t(uniq[2]), dones=t(uniq[3] == 1),
        rewards=t(mean_r, dtype=dtype), weights=t(np.bincount(inverse, w_each), dtype=dtype),
        spread=spread, pairs=t(uniq[0] * data.n_actions + uniq[1]), n_states=data.n_states,
        n_actions=data.n_actions,
    )
