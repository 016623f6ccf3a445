"""The MDP of Sutton & Barto's Example 6.7, the limits of its settings, and the dice.

Episode ``e`` of run ``r`` owns one row of uniforms, each column with one purpose
(``A_EXPLORE`` … ``COIN_B``), and one standard normal for B's reward (``_dice``). Trainings
that follow one another on the same dice (one call per method) can share them: ``shared_dice``.
"""

from __future__ import annotations

import contextlib
import math
import threading
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError

METHODS: tuple[str, ...] = ("q_learning", "double_q", "expected_sarsa")
LEFT, RIGHT = 0, 1
BLOCK = 32
"""Episodes of dice drawn at a time (one block of every run's uniforms stays small in memory)."""
MAX_ACTIONS = 100
MAX_RUNS = 10_000
MAX_EPISODES = 1000
MAX_SAMPLES = 1000
MAX_TRIALS = 20_000
BOOK = dict(n_actions=10, mean=-0.1, sigma=1.0, epsilon=0.1, alpha=0.1, gamma=1.0, episodes=300,
            runs=10_000)
"""Sutton & Barto's protocol for Figure 6.5 (the book says "many" actions at B; 10 is the usual
choice): ε = α = 0.1, γ = 1, Q starting at 0, ties broken at random, 300 episodes, 10,000 runs."""

# Columns of an episode's row of uniforms: which decision each one drives.
A_EXPLORE, A_PICK, B_EXPLORE, B_PICK, COIN_A, COIN_B = range(6)
N_UNIFORMS = 6
SOURCE = "Sutton & Barto (2018)"


# --------------------------------------------------------------------------- the MDP
@dataclass(frozen=True)
class MaxBiasMDP:
    r"""The MDP of Sutton & Barto (2018), Example 6.7.

    Description: two non-terminal states. Every episode starts in A.
    Action space: in A, ``LEFT`` (0) and ``RIGHT`` (1); in B, ``n_actions`` actions.
    Rewards: 0 for both actions of A; each action of B draws a reward from
    :math:`N(\mu, \sigma^2)` every time it is taken.
    Episode end: right from A, or any action of B.

    Attributes:
        n_actions: Actions at B, m ≥ 1.
        mean: Mean reward of every action at B (the book's −0.1).
        sigma: Standard deviation of that reward (the book's 1).
    """

    n_actions: int = 10
    mean: float = -0.1
    sigma: float = 1.0

    def __post_init__(self) -> None:
        m = self.n_actions
        if isinstance(m, bool) or not isinstance(m, int | np.integer) or not 1 <= m <= MAX_ACTIONS:
            raise InputError(f"B needs between 1 and {MAX_ACTIONS} actions; got {m}")
        if not (math.isfinite(self.mean) and abs(self.mean) <= 100):
            raise InputError(f"B's mean reward must be a number in [−100, 100]; got {self.mean}")
        if not (math.isfinite(self.sigma) and 0 <= self.sigma <= 100):
            raise InputError(f"the reward noise σ must be in [0, 100]; got {self.sigma}")
        object.__setattr__(self, "n_actions", int(m))

    def q_left(self, gamma: float = 1.0) -> float:
        """True value of left from A: reward 0, then any action of B is worth μ."""
        return gamma * self.mean

    @staticmethod
    def optimal_left_fraction(epsilon: float) -> float:
        """How often an ε-greedy learner that knows right is better still goes left: ε/2."""
        return epsilon / 2


# --------------------------------------------------------------------------- validation
def _check_count(name: str, value, high: int, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not (
        low <= value <= high
    ):
        raise InputError(f"the number of {name} must be a whole number in [{low}, {high}]; "
                         f"got {value}")
    return int(value)


def _check_settings(epsilon, alpha, gamma) -> None:
    if not (math.isfinite(epsilon) and 0 <= epsilon <= 1):
        raise InputError(f"the exploration rate ε must be between 0 and 1; got {epsilon}")
    if not (math.isfinite(alpha) and 0 < alpha <= 1):
        raise InputError(f"the step size α must be in (0, 1]; got {alpha}")
    if not (math.isfinite(gamma) and 0 <= gamma <= 1):
        raise InputError(f"the discount γ must be between 0 and 1; got {gamma}")


def _check_methods(algorithms) -> tuple[str, ...]:
    algorithms = tuple(algorithms)
    if not algorithms:
        raise InputError("choose at least one method")
    unknown = [a for a in algorithms if a not in METHODS]
    if unknown:
        raise ValueError(f"unknown algorithm {unknown[0]!r}; choose from {', '.join(METHODS)}")
    return algorithms


# --------------------------------------------------------------------------- dice
def _dice(seed: int, runs: int, block: int, columns=range(N_UNIFORMS), out=None):
    """Block ``block`` of every run's dice: uniforms ``[BLOCK, 6, R]`` and normals ``[BLOCK, R]``.

    Each column (purpose) of each block has its own generator, filled run by run
    (``[R, BLOCK]`` in C order), so the first runs' numbers do not depend on how many runs there
    are, and a method draws only the columns it uses (the others are NaN). The numbers are then
    laid out episode-major for the lockstep.

    ``out``: the arrays of an earlier call with the same ``runs`` and ``columns``, to fill again
    (a training reuses its memory from block to block instead of asking for fresh pages). Inside
    ``shared_dice`` a column drawn before is copied from there instead of drawn again.
    """
    if out is None:
        u = np.full((BLOCK, N_UNIFORMS, runs), np.nan)
        z = np.empty((BLOCK, runs))
    else:
        u, z = out
    shared = getattr(_SHARED, "dice", None)
    drawn = None
    for c in (*columns, N_UNIFORMS):  # the last: B's rewards
        dst = z if c == N_UNIFORMS else u[:, c]
        key = (seed, runs, block, c)
        if shared is not None and key in shared.columns:
            dst[...] = shared.columns[key]
            continue
        if drawn is None:
            drawn = np.empty((runs, BLOCK))
        gen = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(block, c)))
        _transpose(gen.standard_normal(out=drawn) if c == N_UNIFORMS else gen.random(out=drawn),
                   dst)
        if shared is not None:
            shared.keep(key, dst)
    return u, z


class _SharedDice:
    """The dice columns drawn inside one ``shared_dice`` block, up to ``room`` bytes."""

    def __init__(self, room: int):
        self.columns: dict[tuple, np.ndarray] = {}
        self.room = room

    def keep(self, key: tuple, column: np.ndarray) -> None:
        if column.nbytes <= self.room:
            self.columns[key] = column.copy()
            self.room -= column.nbytes


_SHARED = threading.local()


@contextlib.contextmanager
def shared_dice(max_bytes: int = 256 * 2**20):
    """Within this block, trainings on this thread draw each column of dice once and share it.

    The numbers are the same as without it (each column has its own generator); a training
    after another on the same seed and runs copies the columns the first one drew instead of
    drawing them again: three methods trained one call each cost about what one call of all
    three costs. The columns are kept (up to ``max_bytes``; the book's protocol needs about
    180 MB) until the block ends.
    """
    if getattr(_SHARED, "dice", None) is not None:  # nested: the outer block shares
        yield
        return
    _SHARED.dice = _SharedDice(max_bytes)
    try:
        yield
    finally:
        _SHARED.dice = None


_TILE = 256  # runs per tile of the transposition (a tile of both layouts stays in cache)


def _transpose(src: np.ndarray, dst: np.ndarray) -> None:
    """``dst[:] = src.T`` for ``[R, BLOCK]`` into ``[BLOCK, R]``, a tile of runs at a time."""
    for r in range(0, src.shape[0], _TILE):
        dst[:, r:r + _TILE] = src[r:r + _TILE].T


def _columns(algorithms) -> tuple[int, ...]:
    """The dice columns these methods use: the table coins only for Double Q."""
    if "double_q" in algorithms:
        return tuple(range(N_UNIFORMS))
    return (A_EXPLORE, A_PICK, B_EXPLORE, B_PICK)
