"""The random walks of Example 6.2 and Example 7.1, their true values, and the episodes.

A run's episodes are sampled once and shared by every method and setting (paired random
numbers, as in the book's figures).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rlviz import returns
from rlviz.errors import InputError
from rlviz.mdp import policy_value

__all__ = [
    "ALPHAS",
    "ALPHAS_7_2",
    "DIVERGED",
    "EXAMPLE_6_2",
    "LAMBDAS",
    "METHODS",
    "NS",
    "WALKS",
    "Runs",
    "Walk",
    "linear_true_values",
    "sample_runs",
    "true_values",
]


BOOK = "Sutton & Barto (2018)"
DIVERGED = 1e6
"""A lane whose TD error (or value after an offline update) passes this in size has diverged."""

NS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
"""The n of Figure 7.2."""
LAMBDAS = (0.0, 0.4, 0.8, 0.9, 0.95, 0.975, 0.99, 1.0)
"""The λ of Figures 12.3, 12.6 and 12.8."""
ALPHAS_7_2 = tuple(round(0.1 * i, 1) for i in range(11))
"""Figure 7.2's step sizes, 0 to 1 by 0.1."""
ALPHAS = (0.0, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
"""The page's step sizes: Figure 7.2's and finer below 0.2, where large n and λ do best."""
EXAMPLE_6_2 = {"td": (0.05, 0.1, 0.15), "mc": (0.01, 0.02, 0.03, 0.04), "episodes": 100,
               "shown": (0, 1, 10, 100), "alpha_shown": 0.1}
"""Example 6.2's step sizes, episodes, and the estimates its left panel shows (TD(0), α = 0.1)."""

METHODS = {
    "n_step": "n-step TD",
    "offline_lambda_return": "offline λ-return",
    "td_lambda": "TD(λ)",
    "true_online": "true online TD(λ)",
}
"""The α sweeps of the page, by name."""


# --------------------------------------------------------------------------- the walks
@dataclass(frozen=True)
class Walk:
    """A random walk of the book: states 1 … n between terminals 0 and n + 1, starts central."""

    n_states: int
    left_reward: float
    right_reward: float
    initial_value: float  # every estimate starts here (the terminals are worth 0)
    source: str

    @property
    def centre(self) -> int:
        """The start state ``(n + 1) // 2``."""
        return (self.n_states + 1) // 2


WALKS: dict[int, Walk] = {
    5: Walk(5, *returns.SUTTON_BARTO_WALKS[5], initial_value=0.5, source=f"{BOOK}, Example 6.2"),
    19: Walk(19, *returns.SUTTON_BARTO_WALKS[19], initial_value=0.0,
             source=f"{BOOK}, Example 7.1"),
}


def _walk(walk: Walk | int) -> Walk:
    if isinstance(walk, Walk):
        return walk
    if walk not in WALKS:
        raise InputError(f"the walks are the book's 5-state and 19-state ones; got {walk!r}")
    return WALKS[walk]


def linear_true_values(walk: Walk | int) -> np.ndarray:
    r"""``[n]`` the true values without discounting, a straight line between the two rewards.

    From state ``k`` the walk leaves on the right with probability ``k / (n + 1)`` (gambler's
    ruin), so ``v(k) = a + (b - a) k / (n + 1)`` for the rewards ``a`` (left) and ``b`` (right):
    ``1/6 … 5/6`` on the 5-state walk, ``−18/20 … 18/20`` on the 19-state one.
    """
    w = _walk(walk)
    k = np.arange(1, w.n_states + 1)
    return w.left_reward + (w.right_reward - w.left_reward) * k / (w.n_states + 1)


@functools.lru_cache(maxsize=16)
def _true_values(n_states: int, left: float, right: float, gamma: float) -> np.ndarray:
    mdp = returns.random_walk(n_states, left_reward=left, right_reward=right)
    v = policy_value(mdp, np.full((mdp.n_states, 2), 0.5), gamma)
    v.setflags(write=False)
    return v


def true_values(walk: Walk | int, gamma: float = 1.0) -> np.ndarray:
    """``[n + 2]`` the uniform policy's values by one linear solve (terminals 0, at both ends)."""
    w = _walk(walk)
    return _true_values(w.n_states, w.left_reward, w.right_reward, _unit("γ", gamma))


# --------------------------------------------------------------------------- validation
def _unit(name: str, x: float) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number in [0, 1]; got {x!r}") from None
    if not 0.0 <= x <= 1.0:
        raise InputError(f"{name} must be in [0, 1]; got {x:g}")
    return x


def _grid(name: str, xs: Sequence[float]) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(xs, dtype=np.float64))
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(f"give at least one value of {name}")
    for x in arr:
        _unit(name, x)
    return arr


def _whole(name: str, x: int, *, low: int = 1) -> int:
    if isinstance(x, bool) or not float(x).is_integer() or x < low:
        raise InputError(f"{name} must be a whole number of at least {low}; got {x!r}")
    return int(x)


# --------------------------------------------------------------------------- the episodes
@dataclass(frozen=True)
class Runs:
    """Independent runs of episodes on one walk, each run's episodes back to back in a stream.

    Stream step ``k`` of run ``r`` acts in ``states[r, k]``; past the end of a run the arrays
    hold zeros (and no lane reads them).
    """

    walk: Walk
    states: np.ndarray  # [R, K] int, S_k: the state acted in at stream step k
    rewards: np.ndarray  # [R, K] R_{k+1}
    next_states: np.ndarray  # [R, K] int, S_{k+1}: a terminal (0 or n+1) at an episode's end
    dones: np.ndarray  # [R, K] bool, stream step k is the last of its episode
    lengths: np.ndarray  # [R, E] int, steps of each episode
    seed: int

    @property
    def n_runs(self) -> int:
        """``R``."""
        return int(self.lengths.shape[0])

    @property
    def n_episodes(self) -> int:
        """``E``, episodes per run."""
        return int(self.lengths.shape[1])

    @property
    def run_lengths(self) -> np.ndarray:
        """``[R]`` steps in each run."""
        return self.lengths.sum(axis=1)

    @property
    def starts(self) -> np.ndarray:
        """``[R, E]`` the stream step at which each episode starts."""
        return np.cumsum(self.lengths, axis=1) - self.lengths

    @functools.cached_property
    def episode_of_step(self) -> np.ndarray:
        """``[R, K]`` the episode (0-based) of each stream step; ``E`` past the run's end."""
        return self._per_step(np.broadcast_to(np.arange(self.n_episodes), self.lengths.shape),
                              fill=self.n_episodes)

    @functools.cached_property
    def episode_end(self) -> np.ndarray:
        """``[R, K]`` the stream step of the last step of each step's episode (itself past it)."""
        last = np.cumsum(self.lengths, axis=1) - 1
        k = np.broadcast_to(np.arange(self.states.shape[1]), self.states.shape)
        return np.where(self.episode_of_step < self.n_episodes,
                        self._per_step(last, fill=0), k)

    def _per_step(self, per_episode: np.ndarray, *, fill: int) -> np.ndarray:
        """``[R, E]`` numbers per episode spread over the episode's steps, ``fill`` past the end."""
        out = np.full(self.states.shape, fill, dtype=np.int64)
        real = np.arange(self.states.shape[1]) < self.run_lengths[:, None]
        out[real] = np.repeat(per_episode.ravel(), self.lengths.ravel())
        return out

    def head(self, runs: int, episodes: int | None = None) -> Runs:
        """The first ``runs`` runs, each cut to its first ``episodes`` episodes (default all)."""
        episodes = self.n_episodes if episodes is None else min(episodes, self.n_episodes)
        lengths = self.lengths[:runs, :episodes]
        keep = np.arange(self.states.shape[1]) < lengths.sum(axis=1)[:, None]
        longest = int(lengths.sum(axis=1).max())

        def cut(x: np.ndarray) -> np.ndarray:
            return np.where(keep, x[:runs], 0).astype(x.dtype)[:, :longest]

        return Runs(self.walk, cut(self.states), cut(self.rewards), cut(self.next_states),
                    cut(self.dones), lengths.copy(), self.seed)

    def episode(self, run: int, episode: int) -> slice:
        """The stream steps of one episode of one run."""
        start = int(self.starts[run, episode])
        return slice(start, start + int(self.lengths[run, episode]))


def sample_runs(walk: Walk | int, *, runs: int, episodes: int, seed: int) -> Runs:
    """Draw ``runs`` independent runs of ``episodes`` episodes of a walk (uniform policy).

    Run ``r`` uses the ``r``-th child of ``np.random.SeedSequence(seed)``, so a run's episodes do
    not change when more runs are drawn.

    Args:
        walk: The walk, or its number of states (5 or 19).
        runs: ``R``, at least 1.
        episodes: ``E``, episodes per run, at least 1.
        seed: Seeds everything.

    Returns:
        The runs.
    """
    w = _walk(walk)
    runs = _whole("the number of runs", runs)
    episodes = _whole("the number of episodes", episodes)
    drawn = [
        returns.sample_walks(w.n_states, episodes, np.random.default_rng(child),
                             left_reward=w.left_reward, right_reward=w.right_reward)
        for child in np.random.SeedSequence(seed).spawn(runs)
    ]
    longest = max(d.states.size for d in drawn)
    states = np.zeros((runs, longest), dtype=np.int64)
    next_states = np.zeros((runs, longest), dtype=np.int64)
    rewards = np.zeros((runs, longest))
    dones = np.zeros((runs, longest), dtype=bool)
    for r, d in enumerate(drawn):
        k = d.states.size
        states[r, :k], next_states[r, :k] = d.states, d.next_states
        rewards[r, :k], dones[r, :k] = d.rewards, d.dones
    lengths = np.stack([d.lengths for d in drawn])
    return Runs(w, states, rewards, next_states, dones, lengths, int(seed))
