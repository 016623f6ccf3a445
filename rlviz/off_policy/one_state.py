"""Example 5.5: the one-state MDP whose ordinary importance sampling has infinite variance."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.off_policy._common import _rng, _whole
from rlviz.off_policy.estimators import ordinary_is_running, weighted_is_running

__all__ = [
    "InfiniteVarianceStudy",
    "infinite_variance_study",
    "one_state_episodes",
]


# =========================================================================== Example 5.5
ONE_STATE_VALUE = 1.0
"""``v_pi(s)`` of Example 5.5: the target always goes left, and left ends in +1 eventually."""
P_LEFT_ENDS = 0.1
"""After *left* the episode ends with reward +1 with probability 0.1, else returns to s."""


def one_state_episodes(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    r"""``n`` episodes of Example 5.5 under ``b`` (left or right, 1/2 each).

    *Right* ends the episode with reward 0; the target never goes right, so the ratio becomes
    0. *Left* doubles the ratio (``pi = 1``, ``b = 1/2``) and ends with reward +1 with
    probability 0.1, else the episode goes on from ``s``. No discount.

    Returns:
        ``(weights [n], returns [n])``.
    """
    weights = np.ones(n)
    returns = np.zeros(n)
    going = np.arange(n)
    while going.size:
        left = rng.random(going.size) < 0.5  # A_t ~ b
        weights[going] *= np.where(left, 1.0 / 0.5, 0.0)  # pi(A_t|s) / b(A_t|s)
        ends = ~left | (rng.random(going.size) < P_LEFT_ENDS)
        returns[going[left & ends]] = 1.0
        going = going[~ends]
    return weights, returns


@dataclass(frozen=True)
class InfiniteVarianceStudy:
    """Ordinary and weighted IS on Example 5.5, run by run (Figure 5.4)."""

    runs: int
    episodes: int
    at: np.ndarray  # [K] episode counts where the curves are kept (log-spaced, 1..N)
    ordinary: np.ndarray  # [R, K] ordinary IS after at[k] episodes
    weighted: np.ndarray  # [R, K] weighted IS after at[k] episodes
    first_hit: np.ndarray  # [R] the first episode (1-based) that ended on the target's action;
    # 0 when none did
    weighted_gap_after: float
    """Largest ``|weighted - 1|`` over all episodes from each run's first hit on (exactly 0)."""
    weighted_before: float
    """Largest ``|weighted|`` before each run's first hit (0: nothing to weigh yet)."""
    ordinary_final: np.ndarray  # [R] each run's ordinary estimate after all episodes
    largest_weight: float
    """The largest ratio of any episode."""


def _log_points(n: int, count: int = 400) -> np.ndarray:
    """About ``count`` episode numbers from 1 to ``n``, evenly spaced on a log scale."""
    return np.unique(np.geomspace(1, n, count).round().astype(np.int64))


def infinite_variance_study(*, runs: int = 10, episodes: int = 100_000, seed: int = 0,
                            max_episodes: int = 100_000) -> InfiniteVarianceStudy:
    """Figure 5.4: ``runs`` independent runs of ordinary and weighted IS on Example 5.5.

    Args:
        runs: Independent runs (the book: 10).
        episodes: Episodes per run (the book: 100 million; capped here).
        seed: Seed of the random stream.
        max_episodes: The largest ``episodes`` allowed.

    Returns:
        The study.
    """
    runs = _whole("The number of runs", runs, 1, 20)
    episodes = _whole("The number of episodes", episodes, 1, max_episodes)
    weights, returns = one_state_episodes(runs * episodes, _rng(seed, 54))
    weights, returns = weights.reshape(runs, episodes), returns.reshape(runs, episodes)
    ordinary = ordinary_is_running(weights, returns)
    weighted = weighted_is_running(weights, returns)
    hit = weights * returns > 0
    first = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, 0)
    after = np.arange(1, episodes + 1) >= np.where(first > 0, first, episodes + 1)[:, None]
    at = _log_points(episodes)
    keep = np.unique(np.concatenate([at, first[first > 0], first[first > 1] - 1]))
    return InfiniteVarianceStudy(
        runs=runs, episodes=episodes, at=keep, ordinary=ordinary[:, keep - 1],
        weighted=weighted[:, keep - 1], first_hit=first,
        weighted_gap_after=float(np.abs(weighted[after] - ONE_STATE_VALUE).max(initial=0.0)),
        weighted_before=float(np.abs(weighted[~after]).max(initial=0.0)),
        ordinary_final=ordinary[:, -1].copy(), largest_weight=float(weights.max()),
    )
