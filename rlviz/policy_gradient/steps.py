"""The readable steps: a corridor step, REINFORCE (with and without baseline), actor-critic."""

from __future__ import annotations

import numpy as np

from rlviz.policy_gradient.corridor import NEXT, REWARD, policy, score

__all__ = [
    "actor_critic_step",
    "baseline_trace",
    "corridor_step",
    "episode_gradient",
    "reinforce_baseline_update",
    "reinforce_update",
    "returns_to_go",
]


_TRACE_BLOCK = 128  # steps of the baseline unrolled at once


def corridor_step(state: np.ndarray, action: np.ndarray) -> tuple[np.ndarray, float]:
    r"""One step of the short corridor for every run: next state and reward.

    Right moves right and left moves left, except in the second state (index 1) where they are
    reversed; left in S stays in S. Every step earns −1, the step into the goal too.

    Args:
        state: ``[...]`` current states (0 = S, 1 the reversed one, 2), never the goal.
        action: ``[...]`` ``RIGHT`` or ``LEFT``.

    Returns:
        ``[...]`` next states (3 = G), and the reward (the same −1 for every run).
    """
    return NEXT[state, action], REWARD


# --------------------------------------------------------------------------- Monte Carlo
def returns_to_go(rewards: np.ndarray) -> np.ndarray:
    r"""``G_t = Σ_{k ≥ t} R_{k+1}``: the undiscounted return from each step (γ = 1).

    Args:
        rewards: ``[..., T]`` reward after each step (0 after the episode's end).
    """
    return np.cumsum(rewards[..., ::-1], axis=-1)[..., ::-1]


def episode_gradient(pi: np.ndarray, actions: np.ndarray, weights: np.ndarray) -> np.ndarray:
    r"""``Σ_t ψ_t ∇_θ ln π(A_t | S_t, θ)``: one episode's score-function gradient estimate.

    ``ψ_t = G_t`` is REINFORCE, ``G_t − b(S_t)`` REINFORCE with a baseline, ``δ_t`` the
    actor-critic's TD error (Sutton & Barto 2018, eqs. 13.8, 13.11, 13.12). Within an episode the
    policy is fixed and the same in every state, so ``∇ln π(A_t)`` depends on the action only
    and the sum groups by action: ``Σ_b W_b ∇ln π(b)`` with ``W_b = Σ_{t: A_t = b} ψ_t``.

    Args:
        pi: ``[..., 2]`` the policy of the episode.
        actions: ``[..., T]`` ``A_t``, ``RIGHT`` (0) or ``LEFT`` (1).
        weights: ``[..., T]`` ``ψ_t``, 0 after the episode's end.

    Returns:
        ``[..., 2]``.
    """
    weights = np.asarray(weights)
    weights = weights.astype(np.result_type(weights, np.int64), copy=False)  # no overflow
    w_left = np.einsum("...t,...t->...", weights, actions)  # LEFT is 1: the steps that went left
    total = weights.sum(axis=-1)
    w = np.stack([total - w_left, w_left], axis=-1)  # W_right, W_left
    # Σ_b W_b ∇ln π(b) with ∇ln π(b) = onehot(b) − π (``score``): W − (Σ_b W_b) π.
    return w - total[..., None] * pi


def reinforce_update(theta: np.ndarray, actions: np.ndarray, rewards: np.ndarray, *,
                     alpha: float) -> np.ndarray:
    r"""REINFORCE after one episode: ``θ ← θ + α Σ_t G_t ∇ln π(A_t | θ)`` (§13.3, γ = 1).

    Args:
        theta: ``[R, 2]`` preferences the episodes were played with.
        actions: ``[R, T]`` actions, one episode per row.
        rewards: ``[R, T]`` rewards, 0 after each episode's end.
        alpha: Step size α (or ``[R, 1]``, one per run).

    Returns:
        ``[R, 2]`` the new θ.
    """
    returns = returns_to_go(rewards)
    return theta + alpha * episode_gradient(policy(theta), actions, returns)


def baseline_trace(w: np.ndarray, returns: np.ndarray, *, alpha_w: float) -> np.ndarray:
    r"""The baseline before each step, when it moves toward every return in turn.

    ``w_{t+1} = w_t + α_w (G_t − w_t)`` (the book's per-step update of ``v̂ = w``), unrolled over
    blocks of up to 128 steps: from a block's first value ``w_s``,
    ``w_{s+i} = (1 − α_w)^i w_s + α_w Σ_{j<i} (1 − α_w)^{i−1−j} G_{s+j}``.

    Args:
        w: ``[R]`` the baseline at the episode's start.
        returns: ``[R, T]`` ``G_t``.
        alpha_w: Step size in (0, 1).

    Returns:
        ``[R, T + 1]`` ``w_0 … w_T``.
    """
    length = returns.shape[-1]
    out = np.empty(returns.shape[:-1] + (length + 1,))
    out[..., 0] = w
    grow = (1.0 - alpha_w) ** -np.arange(1, min(length, _TRACE_BLOCK) + 1)  # (1 − α_w)^{−i}
    for s in range(0, length, _TRACE_BLOCK):
        g = returns[..., s:s + _TRACE_BLOCK]
        n = g.shape[-1]
        grown = np.cumsum(g * grow[:n], axis=-1)  # Σ_{j<i} (1 − α_w)^{−(j+1)} G_{s+j}
        out[..., s + 1:s + n + 1] = (out[..., s, None] + alpha_w * grown) / grow[:n]
    return out


def reinforce_baseline_update(theta: np.ndarray, w: np.ndarray, actions: np.ndarray,
                              rewards: np.ndarray, alive: np.ndarray, *, alpha_theta: float,
                              alpha_w: float) -> tuple[np.ndarray, np.ndarray]:
    r"""REINFORCE with a learned baseline after one episode (§13.4, γ = 1).

    ``δ_t = G_t − w_t``, ``w ← w + α_w δ_t`` step by step, and
    ``θ ← θ + α_θ Σ_t δ_t ∇ln π(A_t | θ)``. The baseline is one number: the agent's features
    cannot tell the states apart, so neither can its value estimate ``v̂(s, w) = w``.

    Args:
        theta: ``[R, 2]`` preferences the episodes were played with.
        w: ``[R]`` baselines.
        actions: ``[R, T]`` the actions.
        rewards: ``[R, T]`` the rewards, 0 after the end.
        alive: ``[R, T]`` step t was played.
        alpha_theta: Step size of θ.
        alpha_w: Step size of w.

    Returns:
        ``[R, 2]`` the new θ and ``[R]`` the new w.
    """
    returns = returns_to_go(rewards)
    trace = baseline_trace(w, returns, alpha_w=alpha_w)
    deltas = (returns - trace[..., :-1]) * alive
    theta = theta + alpha_theta * episode_gradient(policy(theta), actions, deltas)
    lengths = alive.sum(axis=-1)
    return theta, trace[np.arange(len(trace)), lengths]


# --------------------------------------------------------------------------- actor-critic
def actor_critic_step(theta: np.ndarray, v: np.ndarray, pi: np.ndarray, cell: np.ndarray,
                      action: np.ndarray, reward: float | np.ndarray, next_cell: np.ndarray, *,
                      alpha_theta: float, alpha_w: float
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""One step of one-step actor-critic for every run (§13.5, γ = 1 so I = 1).

    ``δ = R + v̂(S') − v̂(S)`` (``v̂(G) = 0``), ``w ← w + α_w δ ∇v̂(S)``,
    ``θ ← θ + α_θ δ ∇ln π(A | S, θ)``. The critic is a table, ``v̂(S) = v[cell]``, so its
    gradient picks out the one entry of S.

    Args:
        theta: ``[R, 2]`` preferences.
        v: ``[K]`` the critic's values, one per (run, cell); the goal's entries stay 0.
        pi: ``[R, 2]`` ``policy(theta)``, which drew the action.
        cell: ``[R]`` the entry of ``v`` that holds v̂(S).
        action: ``[R]`` A.
        reward: R.
        next_cell: ``[R]`` the entry that holds v̂(S').
        alpha_theta: The actor's step size.
        alpha_w: The critic's step size.

    Returns:
        ``[R, 2]`` new θ, ``[K]`` new critic, ``[R]`` the TD errors δ.
    """
    v_s = v[cell]
    delta = reward + v[next_cell] - v_s
    v = v.copy()
    v[cell] = v_s + alpha_w * delta
    theta = theta + (alpha_theta * delta)[:, None] * score(pi, action)
    return theta, v, delta
