"""Settings checks, the ε schedule, and the results of a control run."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.mdp import TabularMDP

__all__ = [
    "ALGORITHMS",
    "DEFAULT_MAX_STEPS",
    "ControlResult",
    "Curve",
    "GreedyPath",
    "epsilon_schedule",
]


ALGORITHMS: tuple[str, ...] = ("q_learning", "sarsa", "expected_sarsa", "double_q")
DEFAULT_MAX_STEPS = 1000
"""Steps after which an episode is cut short. With Q starting at 0 the first episodes are long
(about 500 steps on the 4x12 cliff at the book's settings, as the zero estimates send the agent
to every corner), so the cap sits well above that and the book's protocol is essentially never
cut. It bounds the work when a policy learns to wander: heavy exploration on a big slippery grid,
or a discount well below 1, under which wandering forever costs little more than the walk to
the goal."""


# --------------------------------------------------------------------------- validation
def _check_probability(name: str, value) -> None:
    arr = np.asarray(value, dtype=np.float64)
    if not (np.isfinite(arr).all() and (arr >= 0).all() and (arr <= 1).all()):
        raise InputError(f"{name} must be between 0 and 1; got {value}")


def _check_settings(*, gamma=None, alpha=None, epsilon=None) -> None:
    if alpha is not None and not (np.isfinite(alpha) and 0.0 < alpha <= 1.0):
        raise InputError(f"the step size α must be in (0, 1]; got {alpha}")
    if epsilon is not None:
        _check_probability("the exploration rate ε", epsilon)
    if gamma is not None:
        _check_probability("the discount γ", gamma)


def _check_run(
    mdp, algorithm, episodes, runs, epsilon, alpha, gamma, max_steps, max_total_steps
) -> None:
    if not isinstance(mdp, TabularMDP):
        raise TypeError(f"expected a TabularMDP; got {type(mdp).__name__}")
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose one of {', '.join(ALGORITHMS)}")
    counts = [("episodes", episodes), ("runs", runs), ("max_steps", max_steps)]
    if max_total_steps is not None:
        counts.append(("max_total_steps", max_total_steps))
    for name, value in counts:
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise InputError(f"the number of {name} must be a whole number ≥ 1; got {value}")
    _check_settings(gamma=gamma, alpha=alpha, epsilon=epsilon)
    if (mdp.start[mdp.terminal] > 0).any():
        raise InputError("an episode cannot start in a terminal state")


def epsilon_schedule(epsilon: float, episodes: int, *, decay: bool = False) -> np.ndarray:
    r"""The exploration rate of each episode: constant, or decaying linearly to zero.

    .. math:: \varepsilon_k = \varepsilon \Big(1 - \frac{k}{N - 1}\Big), \quad k = 0, \dots, N-1

    so the last episode is fully greedy (a GLIE-style schedule, Sutton & Barto (2018), Sec. 5.4).

    Args:
        epsilon: Initial exploration rate in [0, 1].
        episodes: Number of episodes N.
        decay: Decay linearly to 0 instead of staying constant.

    Returns:
        ``[N]`` ε of each episode.
    """
    _check_probability("the exploration rate ε", epsilon)
    if not decay or episodes == 1:
        return np.full(episodes, float(epsilon))
    return float(epsilon) * (1.0 - np.arange(episodes) / (episodes - 1))


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class GreedyPath:
    """Where the greedy policy leads from the start, following each action's likeliest outcome.

    The walk stops at a terminal state, or when it comes back to a state it has already visited
    (then it would go round forever: ``loops`` is True), or after ``max_len`` moves.
    """

    states: np.ndarray  # [L + 1] states visited, the start first
    actions: np.ndarray  # [L] greedy action taken in each but the last
    reaches_goal: bool  # ends in a goal (a terminal state that is not a hole)
    loops: bool  # returns to a state already on the path

    @property
    def length(self) -> int:
        """Number of moves."""
        return len(self.actions)


@dataclass(frozen=True)
class ControlResult:
    """``runs`` independent learners of one algorithm, trained for ``episodes`` episodes each.

    A run whose step budget ran out played fewer episodes: the ones it never played have a NaN
    return and length 0.
    """

    algorithm: str
    returns: np.ndarray  # [R, N] undiscounted sum of rewards of each episode (online), NaN unplayed
    lengths: np.ndarray  # [R, N] steps of each episode, 0 unplayed
    truncated: np.ndarray  # [R, N] bool, episode cut short (max_steps or the step budget)
    q: np.ndarray  # [R, S, A] final action values (Double Q: the mean of its two tables)
    visits: np.ndarray  # [R, S] times each state was visited (an action taken there)
    epsilons: np.ndarray  # [N] ε of each episode
    path_lengths: np.ndarray  # [R] moves of each run's greedy path, -1 if it misses the goal
    path: GreedyPath  # the greedy path of the run-averaged Q
    played: np.ndarray  # [R] episodes each run played (N unless its step budget ran out)
    alpha: float
    gamma: float
    seed: int
    max_steps: int
    max_total_steps: int | None

    @property
    def runs(self) -> int:
        """Number of independent runs R."""
        return self.returns.shape[0]

    @property
    def episodes(self) -> int:
        """Episodes per run N."""
        return self.returns.shape[1]

    @property
    def mean_q(self) -> np.ndarray:
        """``[S, A]`` action values averaged over runs."""
        return self.q.mean(axis=0)

    @property
    def stopped_early(self) -> np.ndarray:
        """``[R]`` runs whose step budget ran out before their last episode."""
        return self.played < self.episodes

    def mean_return(self, last: int = 100) -> float:
        """Average online return over the last ``last`` episodes each run played."""
        played = np.arange(self.episodes) < self.played[:, None]
        recent = np.arange(self.episodes) >= self.played[:, None] - last
        window = played & recent
        per_run = np.where(window, self.returns, 0.0).sum(axis=1) / window.sum(axis=1)
        return float(per_run.mean())


@dataclass(frozen=True)
class Curve:
    """A learning curve summarised across runs."""

    mean: np.ndarray  # [N] mean over runs of the smoothed per-episode value
    low: np.ndarray  # [N] lower end of the 95% confidence interval of the mean
    high: np.ndarray  # [N] upper end
