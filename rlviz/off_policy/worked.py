"""The per-decision ratio worked by hand on short episodes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.off_policy._common import _unit
from rlviz.off_policy.estimators import importance_ratio, ordinary_is, per_decision_is

__all__ = [
    "WORKED_EPISODES",
    "PerDecisionWorked",
    "worked_per_decision",
]


# =========================================================================== worked example
WORKED_EPISODES = {
    "Rewards along the way": {"pi": [0.9, 0.9, 0.2, 0.9], "b": [0.5] * 4, "r": [1.0, 0, 0, 1.0]},
    "Reward only at the end": {"pi": [0.9, 0.9, 0.2, 0.9], "b": [0.5] * 4, "r": [0, 0, 0, 1.0]},
    "π never takes step 2's action": {"pi": [0.9, 0.9, 0.0, 0.9], "b": [0.5] * 4,
                                      "r": [1.0, 1.0, 1.0, 1.0]},
}
"""Short episodes to work the per-decision ratio on: pi(A_t|S_t), b(A_t|S_t) and R_{t+1}."""


@dataclass(frozen=True)
class PerDecisionWorked:
    """One episode's ordinary and per-decision IS terms, step by step."""

    pi: np.ndarray  # [T] pi(A_t | S_t)
    b: np.ndarray  # [T] b(A_t | S_t)
    rewards: np.ndarray  # [T] R_{t+1}
    gamma: float
    ratios: np.ndarray  # [T] rho_t = pi / b
    rho_upto: np.ndarray  # [T] rho_{0:t}
    discount: np.ndarray  # [T] gamma^t
    per_decision_terms: np.ndarray  # [T] gamma^t rho_{0:t} R_{t+1}
    ordinary_terms: np.ndarray  # [T] gamma^t rho_{0:T-1} R_{t+1}
    episode_return: float
    """``G_0 = sum_t gamma^t R_{t+1}``."""
    episode_ratio: float
    """``rho_{0:T-1}``."""
    ordinary: float
    """``rho_{0:T-1} G_0``: this episode's ordinary IS term."""
    per_decision: float
    """``sum_t gamma^t rho_{0:t} R_{t+1}``: its per-decision IS term."""


def _cells(name: str, values: object) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"The column {name} must hold numbers") from None
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise InputError(f"{name} at step {bad[0]} is empty or not a number: enter it")
    return arr


def worked_per_decision(pi: object, b: object, rewards: object, *,
                        gamma: float = 1.0) -> PerDecisionWorked:
    r"""The per-decision ratio worked on one episode the user wrote down.

    Args:
        pi: ``[T]`` the target's probability of each action taken, in ``[0, 1]``.
        b: ``[T]`` the behaviour's probability of it, in ``(0, 1]``.
        rewards: ``[T]`` the reward after each action.
        gamma: Discount factor in ``[0, 1]``.

    Returns:
        Every intermediate of both estimators on this episode.
    """
    pi_t, b_t, r_t = _cells("π(a|s)", pi), _cells("b(a|s)", b), _cells("reward", rewards)
    if not pi_t.size == b_t.size == r_t.size:
        raise InputError("Every step needs π(a|s), b(a|s) and a reward")
    if pi_t.size == 0:
        raise InputError("The episode is empty: add a step")
    gamma = _unit("γ", gamma)
    for name, col, lo_ok in (("π(a|s)", pi_t, True), ("b(a|s)", b_t, False)):
        bad = np.flatnonzero((col < 0) | (col > 1))
        if bad.size:
            raise InputError(f"{name} at step {bad[0]} is {col[bad[0]]:g}: a probability is "
                             "from 0 to 1")
        if not lo_ok and (col == 0).any():
            t = int(np.flatnonzero(col == 0)[0])
            raise InputError(f"b(a|s) at step {t} is 0: the behaviour policy never takes that "
                             "action, so this episode could not have been observed")
    ratios = pi_t / b_t
    rho_upto = np.cumprod(ratios)
    discount = gamma ** np.arange(r_t.size)
    episode_return = float(np.sum(discount * r_t))
    episode_ratio = float(importance_ratio(pi_t, b_t))
    return PerDecisionWorked(
        pi=pi_t, b=b_t, rewards=r_t, gamma=gamma, ratios=ratios, rho_upto=rho_upto,
        discount=discount, per_decision_terms=discount * rho_upto * r_t,
        ordinary_terms=discount * episode_ratio * r_t, episode_return=episode_return,
        episode_ratio=episode_ratio,
        ordinary=float(ordinary_is(np.array([episode_ratio]), np.array([episode_return]))),
        per_decision=float(per_decision_is(ratios[None, :], r_t[None, :], gamma)),
    )
