"""The readable steps of the batched episodes: a corridor step, returns, an episode's gradient."""

from __future__ import annotations

import numpy as np

from rlviz.policy_gradient.corridor import NEXT, REWARD

__all__ = [
    "corridor_step",
    "episode_gradient",
    "returns_to_go",
]



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
