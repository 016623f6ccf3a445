"""Studies: regret and first-reach curves across runs, and the sweep over sizes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.exploration.engine import simulate
from rlviz.exploration.exact import (
    Plan,
    finite_horizon_plan,
    first_reach_probability,
    policy_value_exact,
)
from rlviz.exploration.problems import LEARNERS, LEFT, Problem, make_problem

__all__ = [
    "Study",
    "Sweep",
    "run_study",
    "sweep_first_reach",
]


# --------------------------------------------------------------------------- studies
def mean_band(values: np.ndarray, axis: int = 0, level: float = 0.95):
    r"""Mean over ``axis`` with its t-interval (zero width for one sample).

    .. math:: \bar x \pm t_{(1+\mathrm{level})/2,\,n-1}\, s / \sqrt n

    Returns:
        ``(mean, low, high)``.
    """
    values = np.asarray(values, dtype=np.float64)
    n = values.shape[axis]
    mean = values.mean(axis=axis)
    if n < 2:
        return mean, mean.copy(), mean.copy()
    from scipy.stats import t as student_t

    half = student_t.ppf(0.5 + level / 2, n - 1) * values.std(axis=axis, ddof=1) / math.sqrt(n)
    return mean, mean - half, mean + half


@dataclass(frozen=True, eq=False)
class Study:
    """The learners on one problem: regret, first reach and where they went.

    Regret is paired: in each run, episode ``e``'s regret is the return the optimal policy
    collects on the same dice minus the learner's, so its expectation is
    ``V*(s_0) − E[G_e]`` and a learner that has found the optimal policy adds exactly 0.

    Attributes:
        problem: The problem.
        kinds: The learners.
        runs, episodes, seed, epsilon, alpha, beta: The settings.
        plan: The optimal plan of the true model.
        returns: Each learner's return per run and episode.
        optimal_returns: The optimal policy's returns on the same dice.
        regret: Cumulative regret after each episode.
        first_reach: Episode (from 1) of the first far reward, 0 if none.
        visit_share: Share of episodes that were at position ``s`` at step ``h``.
        lure_value: Expected return of always moving left, toward the small nearby reward.
    """

    problem: Problem
    kinds: tuple[str, ...]
    runs: int
    episodes: int
    seed: int
    epsilon: float
    alpha: float
    beta: float
    plan: Plan
    returns: np.ndarray  # [K, R, E]
    optimal_returns: np.ndarray  # [R, E]
    regret: np.ndarray  # [K, R, E] cumulative
    first_reach: np.ndarray  # [K, R] int, 0 = not reached
    visit_share: np.ndarray  # [K, H, S] in [0, 1]
    lure_value: float

    @property
    def optimal_value(self) -> float:
        """``V*(s_0)``: the optimal expected return of an episode."""
        return float(self.plan.start_values[self.problem.mdp.start_state])

    def regret_band(self, level: float = 0.95):
        """``(mean, low, high)``, each ``[K, E]``: cumulative regret over runs with its band."""
        return mean_band(self.regret, axis=1, level=level)

    def index(self, kind: str) -> int:
        """Position of a learner in ``kinds``."""
        return self.kinds.index(kind)


def run_study(
    problem: Problem,
    kinds: Sequence[str],
    *,
    runs: int,
    episodes: int,
    seed: int,
    epsilon: float,
    alpha: float,
    beta: float,
) -> Study:
    """Train the learners on ``problem`` beside the optimal policy on the same dice.

    Args:
        problem: From ``make_problem``.
        kinds: Learners from ``LEARNERS`` (at least one).
        runs: Independent runs.
        episodes: Episodes per run.
        seed: Seed of everything random.
        epsilon: ε of the ε-greedy learner.
        alpha: Step size of the Q-learners.
        beta: Bonus scale of the count-based learner.

    Returns:
        The study.

    Raises:
        InputError: for a setting out of range or no learner.
    """
    kinds = tuple(kinds)
    if not kinds:
        raise InputError("Choose at least one learner.")
    if any(k not in LEARNERS for k in kinds):
        raise InputError(f"Choose learners among {', '.join(LEARNERS)}; got {list(kinds)}.")
    sim = simulate([problem], (*kinds, "optimal"), runs=runs, episodes=episodes, seed=seed,
                   epsilon=epsilon, alpha=alpha, beta=beta)
    returns, best = sim.returns[:-1, 0], sim.returns[-1, 0]
    regret = np.cumsum(best[None] - returns, axis=-1)
    share = sim.visits[:-1, 0, : problem.horizon, : problem.n_states] / (runs * episodes)
    arrays = dict(returns=returns, optimal_returns=best, regret=regret,
                  first_reach=sim.first_reach[:-1, 0], visit_share=share)
    for a in arrays.values():
        a.setflags(write=False)
    left = np.zeros((problem.horizon, problem.n_states, problem.mdp.n_actions))
    left[..., LEFT] = 1.0
    lure = policy_value_exact(problem, left)[0, problem.mdp.start_state]
    return Study(problem=problem, kinds=kinds, runs=runs, episodes=episodes, seed=seed,
                 epsilon=float(epsilon), alpha=float(alpha), beta=float(beta),
                 plan=finite_horizon_plan(problem.mdp, problem.horizon), lure_value=float(lure),
                 **arrays)


@dataclass(frozen=True, eq=False)
class Sweep:
    """Episodes until each learner first collects the deep sea's treasure, size by size.

    Attributes:
        sizes: The deep-sea sizes N.
        kinds: The learners (``"random"`` is ε-greedy with ε = 1).
        runs: Runs per (learner, size).
        cap: Runs give up after this many episodes (then "not reached within ``cap``").
        first_reach: The first successful episode (from 1), 0 if not within ``cap``.
        expected_random: ``2^N``, the random walker's expected episodes (closed form).
    """

    sizes: tuple[int, ...]
    kinds: tuple[str, ...]
    runs: int
    cap: int
    seed: int
    first_reach: np.ndarray  # [K, T, R] int, 0 = not reached within cap
    expected_random: np.ndarray  # [T] 2^N

    def reached(self) -> np.ndarray:
        """``[K, T]`` runs that found the treasure within the cap."""
        return (self.first_reach > 0).sum(axis=-1)

    def mean_band(self, level: float = 0.95):
        """``(mean, low, high)``, each ``[K, T]``, over runs; NaN where a run did not reach."""
        mean, low, high = mean_band(self.first_reach, axis=-1, level=level)
        missing = self.reached() < self.runs
        for a in (mean, low, high):
            a[missing] = np.nan
        return mean, low, high

    def at_least(self) -> np.ndarray:
        """``[K, T]`` a lower bound on the mean episodes (unfinished runs count as cap + 1)."""
        capped = np.where(self.first_reach > 0, self.first_reach, self.cap + 1)
        return capped.mean(axis=-1)

    def censoring(self) -> np.ndarray:
        """``[T]`` chance that an ε = 1 run goes ``cap`` episodes without the treasure."""
        return (1.0 - 1.0 / self.expected_random) ** self.cap


def sweep_first_reach(
    sizes: Sequence[int],
    kinds: Sequence[str],
    *,
    runs: int,
    cap: int,
    seed: int,
    epsilon: float,
    alpha: float,
    beta: float,
) -> Sweep:
    """Run each learner on the deep sea of every size until it first finds the treasure.

    All sizes run in one lockstep ``simulate(..., until_reached=True)``; a run stops after its
    first success or after ``cap`` episodes.

    Raises:
        InputError: for a size outside [2, 40] or a setting out of range.
    """
    sizes = tuple(int(n) for n in sizes)
    if not sizes:
        raise InputError("Give at least one deep-sea size.")
    problems = [make_problem("deep_sea", n) for n in sizes]
    sim = simulate(problems, kinds, runs=runs, episodes=cap, seed=seed, epsilon=epsilon,
                   alpha=alpha, beta=beta, until_reached=True, record_visits=False)
    reach = sim.first_reach
    reach.setflags(write=False)
    expected = np.array([1.0 / first_reach_probability(p) for p in problems])
    expected.setflags(write=False)
    return Sweep(sizes=sizes, kinds=sim.kinds, runs=runs, cap=int(cap), seed=seed,
                 first_reach=reach, expected_random=expected)
