r"""Multi-armed bandits: testbeds, agents, vectorised regret races and the bounds on regret.

A *race* runs several agents on the same bandit problems. Everything random in it is a pure
function of ``(seed, stream, step, run, arm, draw)`` (see ``Noise``), which gives three
guarantees at once:

- **common random numbers**: every agent faces the same true arm means in run ``r``, and pulling
  arm ``a`` at step ``t`` of run ``r`` pays the same reward whoever pulls it, so differences
  between agents are differences between algorithms, not luck;
- **independence from the line-up**: an agent's curves do not change when another racer is added
  or removed, and run ``r`` does not depend on how many runs there are;
- **a plain loop can check the vectorised code draw for draw**: a per-run Python loop asks for
  the same numbers by index and must reproduce every action of every run.

Layout: per-run state is stored arms-major, ``[A, R]`` (arms x runs), so that a reduction over
arms is an element-wise operation across runs. Steps are numbered from 1 in text and in ``t``
arguments of formulas; arrays are indexed from 0 (index ``i`` holds step ``i + 1``).

Sources: Sutton & Barto, *Reinforcement Learning: An Introduction*, 2nd ed. (2018), chapter 2;
Auer, Cesa-Bianchi & Fischer (2002), *Finite-time analysis of the multiarmed bandit problem*;
Lai & Robbins (1985), *Asymptotically efficient adaptive allocation rules*; Thompson (1933);
Agrawal & Goyal (2012); Cheng (1978) for the Beta sampler.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from statistics import NormalDist
from typing import Any, ClassVar

import numpy as np

__all__ = [
    "BOOK_AGENTS",
    "BOOK_VALUES",
    "EQUATIONS",
    "EXPECTED_MAX_OF_10",
    "UCB",
    "Agent",
    "BernoulliTestbed",
    "BetaThompson",
    "book_race",
    "BookValue",
    "Context",
    "EpsilonGreedy",
    "gaussian",
    "GaussianTestbed",
    "GaussianThompson",
    "Gradient",
    "kl_bernoulli",
    "lai_robbins",
    "Noise",
    "Optimistic",
    "parse_probs",
    "Race",
    "race",
    "race_seconds",
    "RandomWalkTestbed",
    "Stream",
    "Testbed",
    "ucb1_bound",
    "unit",
]

MAX_ARMS = 256
MAX_RUNS = 1 << 20
MAX_STEPS = 1 << 22
BETA_ATTEMPTS = 255
"""Attempts per Beta draw (Cheng's algorithm accepts each with probability at least 0.29 for
shapes of at least ``MIN_PRIOR``, so all are rejected with probability below 1e-38)."""
MIN_PRIOR = 0.05
"""The smallest Beta prior parameter: smaller ones put almost all the prior mass within
``1e-20`` of 0 or 1, beyond what a double can tell apart."""
CHUNK_CELLS = 1 << 15
"""Runs are raced in chunks of at most this many (run, arm) cells, which bounds the memory of
a step's temporaries; the result does not depend on it."""
STEP_BLOCK = 256
"""Pulls are tallied (regret, optimal choices, ranks, counts) every this many steps."""
BLOCK_CELLS = 1 << 15
"""Beta–Bernoulli Thompson sampling draws the first attempt of this many cells at once (over
several steps when a chunk has fewer cells); the result does not depend on it."""
_ALLOCATOR_PROBE = 31 << 20


# ------------------------------------------------------------------------------ random numbers
class Stream(IntEnum):
    """What a random number is for; each purpose draws from its own independent stream."""

    MEANS = 1
    """True arm means of each run (drawn once, at step 0)."""
    REWARD = 2
    """Reward noise of pulling an arm: shared by every agent."""
    WALK = 3
    """Increments of the nonstationary random walk of the means."""
    EXPLORE = 4
    """ε-greedy's coin and its random arm."""
    TIE = 5
    """Breaking ties between equally valued arms."""
    SAMPLE = 6
    """Sampling an action (gradient bandit) or a posterior (Thompson sampling)."""


_GOLDEN_INT = 0x9E3779B97F4A7C15
_MASK64 = (1 << 64) - 1
_GOLDEN = np.uint64(_GOLDEN_INT)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_LOW32 = np.uint64(0xFFFFFFFF)
_RUN_SHIFT, _ARM_SHIFT = np.uint64(16), np.uint64(8)
_U30, _U27, _U31, _U32, _U11 = (np.uint64(s) for s in (30, 27, 31, 32, 11))


@dataclass(frozen=True)
class Noise:
    r"""Counter-based random numbers: each draw is a pure function of its index.

    The 64-bit index ``i`` packs ``stream`` (6 bits), ``step`` (22), ``run`` (20), ``arm`` (8)
    and ``draw`` (8). The output is SplitMix64 at that position of its sequence,

    .. math:: x = \operatorname{mix}\big((k + i\,\gamma) \bmod 2^{64}\big),

    with the key ``k`` made from the seed by ``np.random.SeedSequence``, ``γ`` the golden-ratio
    increment and ``mix`` Stafford's variant-13 finaliser. No state is carried, so the
    vectorised race computes only the numbers it needs (the reward of the arm actually pulled)
    and a per-run loop can ask for exactly the same ones.

    Source: Steele, Lea & Flood (2014), *Fast splittable pseudorandom number generators*;
    Salmon et al. (2011), *Parallel random numbers: as easy as 1, 2, 3*.

    Attributes:
        seed: A non-negative integer.
    """

    seed: int
    key: int = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int | np.integer):
            raise ValueError(f"the seed must be a whole number, not {self.seed!r}")
        if self.seed < 0:
            raise ValueError(f"the seed must be 0 or more, not {self.seed}")
        state = np.random.SeedSequence(int(self.seed)).generate_state(1, dtype=np.uint64)
        object.__setattr__(self, "key", int(state[0]))

    def cells(self, run: Any, arm: Any = 0) -> np.ndarray:
        """The (run, arm) part of the counter, premultiplied: ``(k + (run, arm)·γ) mod 2**64``.

        A race computes these once; each step then costs one addition before the mix.

        Raises:
            ValueError: A run or arm index outside its field.
        """
        run, arm = np.asarray(run), np.asarray(arm)
        for name, x, top in (("run", run, MAX_RUNS), ("arm", arm, MAX_ARMS)):
            if x.size and (x.min() < 0 or x.max() >= top):
                raise ValueError(f"{name} indices must lie in [0, {top})")
        index = (run.astype(np.uint64) << _RUN_SHIFT) | (arm.astype(np.uint64) << _ARM_SHIFT)
        return np.add(np.multiply(index, _GOLDEN), np.uint64(self.key), dtype=np.uint64)

    @staticmethod
    def bits_at(cells: np.ndarray, stream: int, step: int, draw: Any = 0) -> np.ndarray:
        """64 random bits for each (run, arm) cell at the given stream, step and draw(s).

        ``draw`` may be an array; it broadcasts against ``cells``.

        Raises:
            ValueError: A stream, step or draw index outside its field.
        """
        if not (0 <= stream < 64 and 0 <= step < MAX_STEPS):
            raise ValueError("stream or step index out of range")
        cells = np.asarray(cells)
        base = ((int(stream) << 58) | (int(step) << 36)) * _GOLDEN_INT
        if isinstance(draw, int | np.integer):
            if not 0 <= draw < 256:
                raise ValueError("draw index out of range")
            offset = np.uint64((base + int(draw) * _GOLDEN_INT) & _MASK64)
            shape = cells.shape
        else:  # (base | draw)·γ = base·γ + draw·γ, as draw fits below bit 36
            draw = np.asarray(draw)
            if draw.size and (draw.min() < 0 or draw.max() > 255):
                raise ValueError("draw index out of range")
            offset = np.add(np.multiply(draw.astype(np.uint64), _GOLDEN), np.uint64(base & _MASK64))
            shape = np.broadcast_shapes(cells.shape, offset.shape)
        return _mix(np.add(cells, offset, out=np.empty(shape, np.uint64)))

    def bits(self, stream: int, step: int, run: Any, arm: Any = 0, draw: int = 0) -> np.ndarray:
        """64 random bits per (run, arm); ``run`` and ``arm`` broadcast.

        Args:
            stream: A ``Stream``.
            step: Step index in ``[0, 2**22)``.
            run: Run indices in ``[0, 2**20)``.
            arm: Arm indices in ``[0, 256)``.
            draw: Which of several numbers for the same (step, run, arm), in ``[0, 256)``.
        """
        return self.bits_at(self.cells(run, arm), stream, step, draw)

    def uniform(self, stream: int, step: int, run: Any, arm: Any = 0, draw: int = 0) -> np.ndarray:
        """Uniform numbers in the open interval (0, 1), 53 random bits each."""
        return unit(self.bits(stream, step, run, arm, draw))

    def normal(self, stream: int, step: int, run: Any, arm: Any = 0, draw: int = 0) -> np.ndarray:
        """Standard normal numbers (see ``gaussian``)."""
        return gaussian(self.bits(stream, step, run, arm, draw))


def _mix(z: np.ndarray) -> np.ndarray:
    """Stafford's variant-13 finaliser of SplitMix64, in place on a uint64 array."""
    t = np.right_shift(z, _U30, out=np.empty_like(z))
    np.bitwise_xor(z, t, out=z)
    np.multiply(z, _MIX1, out=z)
    np.right_shift(z, _U27, out=t)
    np.bitwise_xor(z, t, out=z)
    np.multiply(z, _MIX2, out=z)
    np.right_shift(z, _U31, out=t)
    return np.bitwise_xor(z, t, out=z)


def _step_offset(stream: int, step: int) -> np.uint64:
    """The (stream, step) part of the counter, times γ.

    ``Noise.bits_at`` without its checks is
    ``_mix(cells + _step_offset(stream, step) + _DRAW_OFFSETS[draw])``.
    """
    return np.uint64((((int(stream) << 58) | (int(step) << 36)) * _GOLDEN_INT) & _MASK64)


_DRAW_OFFSETS = np.multiply(np.arange(256, dtype=np.uint64), _GOLDEN)  # draw·γ mod 2**64


def unit(bits: np.ndarray) -> np.ndarray:
    """Uniform numbers in (0, 1) from the top 53 bits: ``(b + 1/2) / 2**53``."""
    u = np.array(np.right_shift(bits, _U11), dtype=np.float64)
    u += 0.5
    u *= 2.0**-53
    return u


def gaussian(bits: np.ndarray) -> np.ndarray:
    r"""Standard normal numbers by the Box–Muller transform of one 64-bit draw.

    .. math:: z = \sqrt{-2 \ln u_1}\,\cos(2\pi u_2),

    ``u1`` from the high 32 bits (so ``|z| < 6.8``; the cut tail has probability ``1e-11``) and
    ``u2`` from the low 32 bits. The cosine is taken in single precision (error about
    ``1e-7``, far below any sampling error) because it is 30 times faster.
    """
    z = np.array(np.right_shift(bits, _U32), dtype=np.float64)
    z += 0.5
    z *= 2.0**-32
    np.log(z, out=z)
    z *= -2.0
    np.sqrt(z, out=z)
    angle = np.bitwise_and(bits, _LOW32).astype(np.float64)
    angle *= 2.0 * np.pi * 2.0**-32
    z *= np.cos(angle.astype(np.float32))
    return z


def _coin_below(bits: np.ndarray, p: float) -> np.ndarray:
    """Whether the uniform ``h / 2**32`` of the high 32 bits ``h`` is below ``p``.

    Compared as integers: ``h / 2**32 < p`` exactly when ``h < ceil(p · 2**32)``.
    """
    return np.right_shift(bits, _U32) < np.uint64(math.ceil(p * 2.0**32))


def _pick(bits: np.ndarray, n: int) -> np.ndarray:
    """A uniform integer in ``[0, n)`` from the low 32 bits (multiply-shift, bias < n/2**32)."""
    return (((bits & _LOW32) * np.uint64(n)) >> _U32).astype(np.int64)


# ------------------------------------------------------------------------------ testbeds
def _finite(name: str, value: Any) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, not {value!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, not {value}")
    return value


def _nonnegative(name: str, value: Any) -> None:
    if _finite(name, value) < 0:
        raise ValueError(f"{name} cannot be negative (got {value:g})")


def _check_arms(arms: Any) -> None:
    if isinstance(arms, bool) or not isinstance(arms, int | np.integer):
        raise ValueError(f"the number of arms must be a whole number, not {arms!r}")
    if arms < 1:
        raise ValueError(f"a bandit needs at least one arm (got {arms})")
    if arms > MAX_ARMS:
        raise ValueError(f"at most {MAX_ARMS} arms are supported (got {arms})")


class Testbed(ABC):
    """A family of bandit problems: how each run's true means are drawn and rewards are paid.

    Means are arms-major, ``[A, R]``. Rewards are drawn at the cells (run, arm) that were
    pulled, so the reward of a pull depends only on (seed, step, run, arm), never on who pulls.
    """

    arms: int
    stationary: ClassVar[bool] = True
    binary_rewards: ClassVar[bool] = False
    cost: ClassVar[tuple[float, float, float]] = (0.0, 0.0, 0.0)
    """What the testbed adds to a race beyond paying rewards, in seconds: per step of a chunk
    of runs, per run and step, and per (run, arm) cell and step (see ``race_seconds``)."""

    @property
    def fixed_means(self) -> tuple[float, ...] | None:
        """The arm means if every run has the same ones, else None."""
        return None

    @abstractmethod
    def initial_means(self, noise: Noise, runs: np.ndarray) -> np.ndarray:
        """True means ``[A, R]`` at step 1 of the runs with indices ``runs`` ``[R]``."""

    def drift(self, step: int, means: np.ndarray, cells: np.ndarray) -> np.ndarray:
        """True means at step index ``step`` from those at ``step - 1`` (stationary: same)."""
        return means

    @abstractmethod
    def reward(self, step: int, cells: np.ndarray, chosen_means: np.ndarray) -> np.ndarray:
        """Rewards of the pulls at ``cells`` (see ``Noise.cells``) with the given true means."""

    @property
    @abstractmethod
    def label(self) -> str:
        """A one-line description."""


@dataclass(frozen=True)
class GaussianTestbed(Testbed):
    r"""The k-armed testbed of Sutton & Barto (2018), section 2.3.

    .. math:: q_*(a) \sim \mathcal N(\mu, s^2) \text{ once per run}, \qquad
        R_t \sim \mathcal N(q_*(A_t), \sigma^2).

    The book uses ``arms=10, mean=0, spread=1, noise_sd=1``; Figure 2.5 uses ``mean=4``.

    Attributes:
        arms: Number of arms ``k``.
        mean: ``μ``, the mean of the true values.
        spread: ``s``, their standard deviation.
        noise_sd: ``σ``, the standard deviation of the rewards around them.
    """

    arms: int = 10
    mean: float = 0.0
    spread: float = 1.0
    noise_sd: float = 1.0

    def __post_init__(self) -> None:
        _check_arms(self.arms)
        _finite("the mean of the true values μ", self.mean)
        _nonnegative("the spread of the true values", self.spread)
        _nonnegative("the reward noise σ", self.noise_sd)

    def initial_means(self, noise, runs):
        """q*(a) = μ + s·z with z ~ N(0, 1) from the MEANS stream."""
        return self.mean + self.spread * noise.normal(
            Stream.MEANS, 0, runs, np.arange(self.arms)[:, None]
        )

    def reward(self, step, cells, chosen_means):
        """R = q*(a) + σ·z with z from the REWARD stream at the pulled cell."""
        return chosen_means + self.noise_sd * gaussian(Noise.bits_at(cells, Stream.REWARD, step))

    @property
    def label(self) -> str:
        """A one-line description."""
        return (f"{self.arms}-armed Gaussian testbed, q*(a) ~ N({self.mean:g}, {self.spread:g}²), "
                f"reward noise σ = {self.noise_sd:g}")


@dataclass(frozen=True)
class BernoulliTestbed(Testbed):
    """Arms that pay 1 with probability ``p_a`` and 0 otherwise.

    With ``probs`` every run faces the same arms (the setting of the regret bounds); without,
    each run draws ``p_a ~ U(0, 1)``.

    Attributes:
        probs: Success probability of each arm, in [0, 1]; or None for random ones.
        arms: Number of arms when ``probs`` is None (otherwise ``len(probs)``).
    """

    probs: tuple[float, ...] | None = None
    arms: int = 10
    binary_rewards: ClassVar[bool] = True

    def __post_init__(self) -> None:
        if self.probs is not None:
            probs = tuple(_finite("a success probability", p) for p in self.probs)
            if not probs:
                raise ValueError("a bandit needs at least one arm: give one probability per arm")
            bad = ", ".join(f"{p:g}" for p in probs if not 0.0 <= p <= 1.0)
            if bad:
                raise ValueError(f"success probabilities must lie in [0, 1] (got {bad})")
            object.__setattr__(self, "probs", probs)
            object.__setattr__(self, "arms", len(probs))
        _check_arms(self.arms)

    @property
    def fixed_means(self) -> tuple[float, ...] | None:
        """The given probabilities, or None when each run draws its own."""
        return self.probs

    def initial_means(self, noise, runs):
        """The given probabilities in every run, or U(0, 1) from the MEANS stream."""
        if self.probs is not None:
            return np.repeat(np.asarray(self.probs)[:, None], len(runs), axis=1)
        return noise.uniform(Stream.MEANS, 0, runs, np.arange(self.arms)[:, None])

    def reward(self, step, cells, chosen_means):
        """R = 1 if u < p(a) else 0, with u from the REWARD stream at the pulled cell."""
        return (unit(Noise.bits_at(cells, Stream.REWARD, step)) < chosen_means).astype(np.float64)

    @property
    def label(self) -> str:
        """A one-line description."""
        if self.probs is None:
            return f"{self.arms}-armed Bernoulli, p(a) ~ U(0, 1) in each run"
        return "Bernoulli arms, p = " + ", ".join(f"{p:g}" for p in self.probs)


@dataclass(frozen=True)
class RandomWalkTestbed(Testbed):
    r"""A nonstationary testbed whose true means take independent random walks.

    Sutton & Barto (2018), Exercise 2.5: the means start equal and after every step each one
    moves by an independent normal increment,

    .. math:: q_{t+1}(a) = q_t(a) + \varepsilon_{t,a},\quad \varepsilon_{t,a} \sim
        \mathcal N(0, w^2), \qquad R_t \sim \mathcal N(q_t(A_t), \sigma^2).

    Attributes:
        arms: Number of arms.
        start: The common starting value.
        walk_sd: ``w``, the standard deviation of one step of the walk (0.01 in the book).
        noise_sd: ``σ``, the reward noise.
    """

    arms: int = 10
    start: float = 0.0
    walk_sd: float = 0.01
    noise_sd: float = 1.0
    stationary: ClassVar[bool] = False
    cost: ClassVar[tuple[float, float, float]] = (22e-6, 30e-9, 10e-9)  # the walk; ranks every step

    def __post_init__(self) -> None:
        _check_arms(self.arms)
        _finite("the starting value of the means", self.start)
        _nonnegative("the random-walk step w", self.walk_sd)
        _nonnegative("the reward noise σ", self.noise_sd)

    def initial_means(self, noise, runs):
        """Every mean starts at ``start``."""
        return np.full((self.arms, len(runs)), self.start, dtype=np.float64)

    def drift(self, step, means, cells):
        """Each mean moves by ``w·z``, ``z ~ N(0, 1)`` from the WALK stream."""
        return means + self.walk_sd * gaussian(Noise.bits_at(cells, Stream.WALK, step))

    def reward(self, step, cells, chosen_means):
        """R = q_t(a) + σ·z with z from the REWARD stream at the pulled cell."""
        return chosen_means + self.noise_sd * gaussian(Noise.bits_at(cells, Stream.REWARD, step))

    @property
    def label(self) -> str:
        """A one-line description."""
        return (f"{self.arms}-armed random walk, q₁ = {self.start:g}, "
                f"steps N(0, {self.walk_sd:g}²), reward noise σ = {self.noise_sd:g}")


# ------------------------------------------------------------------------------ agents
@dataclass(frozen=True, eq=False)
class Context:
    """What an agent may read during a race: sizes and the random cells of its runs.

    Attributes:
        arms: ``A``.
        runs: ``R``, the runs handled together (a chunk of the race).
        cells: ``[A, R]`` ``Noise.cells`` of each (arm, run).
        local: ``[R]`` 0..R-1, for flat indexing ``a * R + r`` into ``[A, R]`` arrays.
    """

    arms: int
    runs: int
    cells: np.ndarray  # [A, R] uint64
    local: np.ndarray  # [R] int64
    first_weight: np.ndarray = field(init=False, repr=False)  # [A, 1] A, A-1, ..., 1
    last_weight: np.ndarray = field(init=False, repr=False)  # [A, 1] 1, 2, ..., A

    def __post_init__(self) -> None:
        dtype = np.uint8 if self.arms < 256 else np.uint16
        object.__setattr__(self, "first_weight", np.arange(self.arms, 0, -1, dtype=dtype)[:, None])
        object.__setattr__(self, "last_weight", np.arange(1, self.arms + 1, dtype=dtype)[:, None])

    def flat(self, actions: np.ndarray) -> np.ndarray:
        """Flat indices of ``(actions[r], r)`` into ``[A, R]`` arrays."""
        return actions * self.runs + self.local

    def first_top(self, is_top: np.ndarray) -> np.ndarray:
        """The first arm flagged in each run of ``is_top`` ``[A, R]`` bool (``argmax(axis=0)``).

        A weighted maximum across runs is several times faster than ``argmax`` along the arms.
        """
        return self.arms - (is_top.view(np.uint8) * self.first_weight).max(axis=0).astype(np.int64)

    def last_top(self, is_top: np.ndarray) -> np.ndarray:
        """The last arm flagged in each run of ``is_top`` ``[A, R]`` bool."""
        return (is_top.view(np.uint8) * self.last_weight).max(axis=0).astype(np.int64) - 1


def _argmax(values: np.ndarray, ctx: Context) -> np.ndarray:
    """The first arm with the largest value in each run, like ``values.argmax(axis=0)``."""
    return ctx.first_top(values == values.max(axis=0))


def _argmax_random_ties(values: np.ndarray, ctx: Context, step: int) -> np.ndarray:
    """The arm with the largest value in each run, ties broken uniformly at random.

    Each tied arm gets the key ``U(TIE, step, run, arm)`` and the largest key wins, which is a
    uniform choice among the tied arms. Keys are computed only for runs that have a tie.

    Args:
        values: ``[A, R]``; ``+inf`` allowed (untried arms), NaN not.
        ctx: The race context (its ``cells`` key the tie-breaking draws).
        step: 0-based step index.

    Returns:
        ``[R]`` int64.
    """
    is_top = values == values.max(axis=0)
    choice = ctx.first_top(is_top)
    if np.count_nonzero(is_top) == ctx.runs:  # one top arm in every run: no ties anywhere
        return choice
    tied = np.flatnonzero(choice != ctx.last_top(is_top))
    if tied.size:
        keys = unit(Noise.bits_at(ctx.cells[:, tied], Stream.TIE, step))
        choice[tied] = np.where(is_top[:, tied], keys, -1.0).argmax(axis=0)
    return choice


class Agent(ABC):
    """A bandit algorithm: small, frozen, described only by its parameters.

    A race calls ``start`` once, then at each step ``act`` (an arm in every run) and ``learn``
    (update from the rewards). Mutable state lives in the dict that ``start`` returns; the
    agent itself never changes.
    """

    kind: ClassVar[str]
    """Colour key shared by all pages (``rlviz.figures.color``)."""
    cost: ClassVar[tuple[float, float, float]]
    """What one such racer adds to a race, in seconds: per step of a chunk of runs, per run and
    step, and per (run, arm) cell and step (see ``race_seconds``)."""

    @property
    @abstractmethod
    def label(self) -> str:
        """A short name with the parameters, e.g. ``"UCB c=2"``."""

    @abstractmethod
    def start(self, ctx: Context) -> dict[str, np.ndarray]:
        """Fresh state, arrays ``[A, R]``."""

    @abstractmethod
    def act(self, state: dict[str, np.ndarray], ctx: Context, step: int) -> np.ndarray:
        """The arm ``A_t`` of each run, ``[R]`` int64; ``step`` is the 0-based index ``t - 1``."""

    @abstractmethod
    def learn(self, state: dict[str, np.ndarray], ctx: Context, step: int, pulls: np.ndarray,
              rewards: np.ndarray) -> None:
        """Update the state after the pulls paid ``rewards`` ``[R]``.

        ``pulls`` ``[R]`` are the pulled (arm, run) cells as flat indices ``a * R + r`` into
        ``[A, R]`` arrays (``ctx.flat`` of the actions).
        """

    def check(self, testbed: Testbed) -> None:  # noqa: B027 - most agents play any testbed
        """Raise ``ValueError`` if this agent cannot play ``testbed``."""


def _check_step_size(step_size: float | None) -> None:
    if step_size is not None and not 0.0 < _finite("the step size α", step_size) <= 1.0:
        raise ValueError(f"the step size α must lie in (0, 1], not {step_size:g}")


def _fmt(x: float) -> str:
    return f"{x:g}"


class _ActionValues(Agent):
    """Bookkeeping shared by action-value methods: estimates ``Q`` and counts ``N``."""

    initial: float = 0.0
    step_size: float | None = None

    def start(self, ctx):
        """Estimates ``Q = Q_1`` and counts ``N = 0``."""
        return {
            "Q": np.full((ctx.arms, ctx.runs), float(self.initial)),
            "N": np.zeros((ctx.arms, ctx.runs)),
        }

    def learn(self, state, ctx, step, pulls, rewards):
        r"""Incremental update of the pulled arm, :math:`Q \leftarrow Q + \alpha_n (R - Q)`.

        ``α_n = 1/N(a)`` gives the sample average, a constant ``α`` the exponential
        recency-weighted average (Sutton & Barto 2018, equations 2.3 and 2.5).
        """
        q, n = state["Q"].ravel(), state["N"].ravel()
        n[pulls] += 1.0
        rate = 1.0 / n[pulls] if self.step_size is None else self.step_size
        q[pulls] += rate * (rewards - q[pulls])


@dataclass(frozen=True)
class EpsilonGreedy(_ActionValues):
    r"""ε-greedy action selection on action-value estimates.

    .. math:: A_t = \begin{cases} \text{a uniformly random arm} & \text{with probability }
        \varepsilon_t, \\ \arg\max_a Q_t(a) \text{ (ties at random)} & \text{otherwise,}
        \end{cases} \qquad \varepsilon_t = \frac{\varepsilon}{1 + d\,(t-1)},

    with ``Q`` updated by sample averages (``step_size=None``) or a constant step size.
    ``epsilon=0`` is the greedy method. Source: Sutton & Barto (2018), sections 2.2–2.5.

    Attributes:
        epsilon: Exploration probability ``ε`` in [0, 1].
        step_size: Constant ``α`` in (0, 1], or None for sample averages.
        decay: ``d ≥ 0``; 0 keeps ε constant.
        initial: Initial estimates ``Q_1(a)``.
    """

    epsilon: float = 0.1
    step_size: float | None = None
    decay: float = 0.0
    initial: float = 0.0
    cost: ClassVar[tuple[float, float, float]] = (22e-6, 25e-9, 1.9e-9)

    def __post_init__(self) -> None:
        if not 0.0 <= _finite("ε", self.epsilon) <= 1.0:
            raise ValueError(f"ε is a probability and must lie in [0, 1], not {self.epsilon:g}")
        _check_step_size(self.step_size)
        _nonnegative("the ε decay d", self.decay)
        _finite("the initial estimate Q₁", self.initial)

    @property
    def kind(self) -> str:  # type: ignore[override]
        """``greedy`` for ε = 0, else ``epsilon_greedy``."""
        return "greedy" if self.epsilon == 0 else "epsilon_greedy"

    @property
    def label(self) -> str:
        """``greedy`` for ε = 0, else ``epsilon_greedy``."""
        name = "greedy" if self.epsilon == 0 else f"ε-greedy ε={_fmt(self.epsilon)}"
        if self.decay and self.epsilon:
            name += f"/(1+{_fmt(self.decay)}(t−1))"
        if self.step_size is not None:
            name += f", α={_fmt(self.step_size)}"
        if self.initial:
            name += f", Q₁={_fmt(self.initial)}"
        return name

    def act(self, state, ctx, step):
        """Explore with probability ε_t (EXPLORE stream), else the greedy arm."""
        greedy = _argmax_random_ties(state["Q"], ctx, step)
        epsilon = self.epsilon / (1.0 + self.decay * step)
        if epsilon <= 0.0:
            return greedy
        bits = Noise.bits_at(ctx.cells[0], Stream.EXPLORE, step)
        explore = np.flatnonzero(_coin_below(bits, epsilon))
        greedy[explore] = _pick(bits[explore], ctx.arms)
        return greedy


@dataclass(frozen=True)
class Optimistic(_ActionValues):
    r"""Greedy action selection from optimistic initial values.

    Every estimate starts at ``Q_1``, well above any true mean; each pull disappoints and moves
    the greedy choice on to another arm, so the agent explores early and then stops.

    .. math:: A_t = \arg\max_a Q_t(a), \qquad
        Q_{t+1}(A_t) = Q_t(A_t) + \alpha\,\big(R_t - Q_t(A_t)\big)

    Source: Sutton & Barto (2018), section 2.6 and Figure 2.3 (``Q_1 = 5``, ``α = 0.1``).

    Attributes:
        initial: The optimistic starting estimate ``Q_1(a)``.
        step_size: Constant ``α`` in (0, 1], or None for sample averages (which forget
            ``Q_1`` after the first pull of each arm).
    """

    initial: float = 5.0
    step_size: float | None = 0.1
    kind: ClassVar[str] = "optimistic"
    cost: ClassVar[tuple[float, float, float]] = (12e-6, 20e-9, 3.5e-9)

    def __post_init__(self) -> None:
        _finite("the initial estimate Q₁", self.initial)
        _check_step_size(self.step_size)

    @property
    def label(self) -> str:
        """For example ``optimistic Q₁=5, α=0.1``."""
        alpha = "1/n" if self.step_size is None else _fmt(self.step_size)
        return f"optimistic Q₁={_fmt(self.initial)}, α={alpha}"

    def act(self, state, ctx, step):
        """The greedy arm, ties at random."""
        return _argmax_random_ties(state["Q"], ctx, step)


@dataclass(frozen=True)
class UCB(_ActionValues):
    r"""Upper-confidence-bound action selection on sample averages.

    .. math:: A_t = \arg\max_a \Big[ Q_t(a) + c \sqrt{\frac{\ln t}{N_t(a)}} \Big],

    where an untried arm (``N_t(a) = 0``) is maximising, so every arm is tried once in random
    order. Source: Sutton & Barto (2018), equation 2.10. With ``c = √2`` and rewards in [0, 1]
    this is UCB1 of Auer, Cesa-Bianchi & Fischer (2002), who write ``ln n`` with ``n = t − 1``
    plays so far; the two differ only in the first rounds.

    Attributes:
        c: Exploration weight ``c ≥ 0`` (0 is greedy after one pull of each arm).
    """

    c: float = 2.0
    kind: ClassVar[str] = "ucb"
    cost: ClassVar[tuple[float, float, float]] = (15e-6, 20e-9, 8e-9)

    def __post_init__(self) -> None:
        if _finite("UCB's exploration weight c", self.c) < 0:
            raise ValueError(f"UCB's exploration weight c must be 0 or more, not {self.c:g}")

    @property
    def label(self) -> str:
        """``UCB c=2``, or ``UCB1 (c=√2)``."""
        return "UCB1 (c=√2)" if math.isclose(self.c, math.sqrt(2)) else f"UCB c={_fmt(self.c)}"

    def act(self, state, ctx, step):
        """The arm with the largest upper confidence bound; untried arms first."""
        q, n = state["Q"], state["N"]
        bonus = self.c * np.sqrt(math.log(step + 1.0) / np.maximum(n, 1.0))
        return _argmax_random_ties(np.where(n > 0, q + bonus, np.inf), ctx, step)


@dataclass(frozen=True)
class GaussianThompson(Agent):
    r"""Thompson sampling with a Gaussian prior and Gaussian rewards of known noise.

    Arm ``a`` with ``N_a`` pulls summing to ``S_a`` has the normal posterior

    .. math:: \lambda_a = \frac{1}{s_0^2} + \frac{N_a}{\sigma^2}, \qquad
        m_a = \frac{\mu_0 / s_0^2 + S_a / \sigma^2}{\lambda_a};

    each step the agent draws ``θ_a ~ N(m_a, 1/λ_a)`` and pulls ``argmax θ``. On the
    Sutton & Barto testbed the prior ``N(μ, 1)`` with ``σ = 1`` is exactly right.
    Source: Thompson (1933); Russo et al. (2018), *A Tutorial on Thompson Sampling*, section 4.

    Attributes:
        prior_mean: ``μ_0``.
        prior_sd: ``s_0 > 0``.
        noise_sd: ``σ > 0``, the reward noise the agent assumes.
    """

    prior_mean: float = 0.0
    prior_sd: float = 1.0
    noise_sd: float = 1.0
    kind: ClassVar[str] = "thompson"
    cost: ClassVar[tuple[float, float, float]] = (27e-6, 25e-9, 6e-9)

    def __post_init__(self) -> None:
        _finite("the prior mean μ₀", self.prior_mean)
        if _finite("the prior standard deviation", self.prior_sd) <= 0:
            raise ValueError("the prior standard deviation must be positive")
        if _finite("the assumed reward noise", self.noise_sd) <= 0:
            raise ValueError("the assumed reward noise must be positive")

    @property
    def label(self) -> str:
        """For example ``Thompson N(0, 1²)``."""
        return f"Thompson N({_fmt(self.prior_mean)}, {_fmt(self.prior_sd)}²)"

    def start(self, ctx):
        """Counts, sums, and the prior as every arm's posterior."""
        shape = (ctx.arms, ctx.runs)
        return {
            "N": np.zeros(shape),
            "S": np.zeros(shape),
            "mean": np.full(shape, float(self.prior_mean)),
            "sd": np.full(shape, float(self.prior_sd)),
        }

    def act(self, state, ctx, step):
        """Draw ``θ = m + z/√λ`` for every arm (SAMPLE stream) and pull the largest."""
        theta = gaussian(Noise.bits_at(ctx.cells, Stream.SAMPLE, step))
        theta *= state["sd"]
        theta += state["mean"]
        return _argmax(theta, ctx)

    def learn(self, state, ctx, step, pulls, rewards):
        """Update the pulled arm's count, sum, posterior mean and standard deviation."""
        n, s = state["N"].reshape(-1), state["S"].reshape(-1)
        n[pulls] += 1.0
        s[pulls] += rewards
        precision = 1.0 / self.prior_sd**2 + n[pulls] / self.noise_sd**2
        state["mean"].reshape(-1)[pulls] = (
            self.prior_mean / self.prior_sd**2 + s[pulls] / self.noise_sd**2
        ) / precision
        state["sd"].reshape(-1)[pulls] = 1.0 / np.sqrt(precision)


_LOG_Z_SHIFT = math.log(4.0) - 96.0 * math.log(2.0)


def _beta_constants(p: np.ndarray, q: np.ndarray):
    r"""Cheng's constants for ``Beta(p, q)``: ``1/λ``, ``(p + λ)/λ`` and ``A = p + q``.

    .. math:: \lambda = \sqrt{\frac{2pq - A}{A - 2}} \text{ if } \min(p, q) > 1
        \text{ (algorithm BB), else } \min(p, q) \text{ (algorithm BC)}.
    """
    a = p + q
    low = np.minimum(p, q)
    with np.errstate(invalid="ignore", divide="ignore"):  # A = 2 (p = q = 1) takes λ = 1
        bb = np.sqrt((2.0 * p * q - a) / (a - 2.0))
    lam = np.where(low > 1.0, bb, low)
    inv = 1.0 / lam
    return inv, (p + lam) * inv, a


def _cheng_uniforms(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The part of a Cheng attempt that does not depend on the shapes.

    ``u1 = h / 2**32`` and ``u2 = l / 2**32`` with ``h`` and ``l`` the high and the low
    32 bits of each draw plus 1/2, so that the logit is ``ln(h / (2**32 − h))`` and
    ``ln(4 u1² u2) = ln(h² l) + ln 4 − 96 ln 2``.

    Returns:
        ``(ln(u1 / (1 − u1)), ln(4 u1² u2))``, each shaped like ``bits``.
    """
    high = np.right_shift(bits, _U32, out=np.empty(bits.shape), casting="unsafe")
    high += 0.5
    low = np.bitwise_and(bits, _LOW32, out=np.empty(bits.shape), casting="unsafe")
    low += 0.5
    logit = 2.0**32 - high
    np.divide(high, logit, out=logit)
    np.log(logit, out=logit)
    high *= high
    high *= low
    log_z = np.log(high, out=high)
    log_z += _LOG_Z_SHIFT
    return logit, log_z


def _cheng_attempt(logit, log_z, p, q, inv, cinv, a) -> tuple[np.ndarray, np.ndarray]:
    r"""One attempt of Cheng's algorithm: the candidates ``Y`` and whether each is accepted.

    .. math:: V = \frac{1}{\lambda}\ln\frac{u_1}{1 - u_1},\quad W = p\,e^V,\quad
        Y = \frac{W}{q + W};\qquad \text{accept if }
        (p + \lambda) V + A \ln\frac{A}{q + W} \ge \ln(4 u_1^2 u_2).

    ``logit`` and ``log_z`` come from ``_cheng_uniforms``; ``inv``, ``cinv`` and ``a`` from
    ``_beta_constants``; the shapes broadcast against the draws.
    """
    v = logit * inv
    w = np.exp(v)
    w *= p
    t = q + w
    y = w / t
    bound = a / t
    np.log(bound, out=bound)
    bound *= a
    bound += logit * cinv
    return y, bound >= log_z


def _first_attempts(cells: np.ndarray, first: int, count: int) -> tuple[np.ndarray, np.ndarray]:
    """``_cheng_uniforms`` of attempt 0 at every cell for steps ``first .. first + count − 1``.

    Returns:
        ``(logit, log_z)``, each ``[count, A·R]``.
    """
    offsets = np.array([_step_offset(Stream.SAMPLE, t) for t in range(first, first + count)])
    return _cheng_uniforms(_mix(cells.reshape(-1) + offsets[:, None]))


def _beta_draws(cells: np.ndarray, step: int, params: np.ndarray, logit: np.ndarray,
                log_z: np.ndarray) -> np.ndarray:
    r"""One draw ``θ ~ Beta(p, q)`` at every cell, by Cheng's (1978) rejection algorithms.

    ``Y = W/(q + W)`` with ``W = p e^V`` and ``V`` the logit of a uniform divided by ``λ``
    has a log-logistic density that, scaled, lies above the Beta density; accepting ``Y``
    with probability (Beta density)/(scaled envelope) makes it an exact Beta draw
    (see ``_cheng_attempt``). With ``λ`` from ``_beta_constants`` (algorithm BB for
    ``min(p, q) > 1``, BC otherwise) the scaled envelope touches the density at its mode,
    ``V = 0``, and an attempt is accepted with probability 0.68–1 for shapes of at least 1
    (about 0.87 typically) and at least 0.29 for shapes of at least ``MIN_PRIOR``.

    Draws: attempt ``j`` at cell (run, arm) takes draw ``j`` of the SAMPLE stream (``u1`` its
    high, ``u2`` its low 32 bits). Every cell makes attempt 0; the rejected ones make the next
    attempts together, two and then four at a time. A cell rejected ``BETA_ATTEMPTS`` times
    takes the posterior mean ``p / (p + q)``.

    Source: R. C. H. Cheng (1978), *Generating beta variates with nonintegral shape
    parameters*, Communications of the ACM 21(4), algorithms BB and BC.

    Args:
        cells: ``[A, R]`` ``Noise.cells``.
        step: 0-based step index.
        params: ``[5, A·R]`` rows ``p``, ``q`` and ``_beta_constants(p, q)``, flat
            ``a · R + r`` like ``cells.ravel()``.
        logit: ``[A·R]`` attempt 0's ``ln(u1 / (1 − u1))`` at this step (``_first_attempts``).
        log_z: ``[A·R]`` attempt 0's ``ln(4 u1² u2)``.

    Returns:
        ``[A·R]`` the draws, in (0, 1] (draws within 1e-16 of 1 round to 1).
    """
    flat_cells = cells.reshape(-1)
    offset = _step_offset(Stream.SAMPLE, step)
    y, ok = _cheng_attempt(logit, log_z, *params)
    todo = np.flatnonzero(~ok)
    attempt, batch = 1, 2 if todo.size > 2048 else 4
    while todo.size and attempt < BETA_ATTEMPTS:
        tries = min(batch, BETA_ATTEMPTS - attempt)
        draws = offset + _DRAW_OFFSETS[attempt: attempt + tries, None]  # [J, 1]
        bits = _mix(flat_cells[todo] + draws)  # [J, n]: draws attempt .. attempt + J - 1
        value, accepted = _cheng_attempt(*_cheng_uniforms(bits), *params.take(todo, axis=1))
        first = tries - (accepted.view(np.uint8) * _FIRST_WEIGHTS[-tries:]).max(axis=0)
        hit = first < tries  # the first accepted attempt of each cell, if any
        y[todo[hit]] = value[first[hit], np.flatnonzero(hit)]
        todo = todo[~hit]
        attempt, batch = attempt + tries, 4
    y[todo] = params[0, todo] / params[4, todo]  # all rejected (p < 1e-38): the posterior mean
    return y


_FIRST_WEIGHTS = np.arange(4, 0, -1, dtype=np.uint8)[:, None]  # [4, 1]: 4, 3, 2, 1


@dataclass(frozen=True)
class BetaThompson(Agent):
    r"""Thompson sampling for Bernoulli arms with a Beta prior.

    Arm ``a`` with ``s_a`` successes and ``f_a`` failures has posterior
    ``Beta(α + s_a, β + f_a)``; each step the agent draws ``θ_a`` from it and pulls
    ``argmax θ``. The draws are exact, by Cheng's rejection algorithms (see ``_beta_draws``).
    Source: Thompson (1933); Agrawal & Goyal (2012) and Kaufmann, Korda & Munos (2012), who
    prove it attains the Lai–Robbins rate.

    Attributes:
        alpha: Prior successes ``α ≥ MIN_PRIOR`` (with ``beta=1``, 1 is the uniform prior).
        beta: Prior failures ``β ≥ MIN_PRIOR``.
    """

    alpha: float = 1.0
    beta: float = 1.0
    kind: ClassVar[str] = "thompson"
    cost: ClassVar[tuple[float, float, float]] = (62e-6, 32e-9, 14e-9)

    def __post_init__(self) -> None:
        for name, value in (("α", self.alpha), ("β", self.beta)):
            if _finite(f"the Beta prior's {name}", value) <= 0:
                raise ValueError(f"the Beta prior's {name} must be positive, not {value:g}")
            if value < MIN_PRIOR:
                raise ValueError(f"the Beta prior's {name} must be at least {MIN_PRIOR:g}, "
                                 f"not {value:g}")

    @property
    def label(self) -> str:
        """For example ``Thompson Beta(1, 1)``."""
        return f"Thompson Beta({_fmt(self.alpha)}, {_fmt(self.beta)})"

    def check(self, testbed: Testbed) -> None:
        """Only 0/1 rewards have a Beta posterior."""
        if not testbed.binary_rewards:
            raise ValueError(
                "Beta–Bernoulli Thompson sampling needs rewards of 0 or 1: race it on Bernoulli "
                "arms, or use Gaussian Thompson sampling"
            )

    def start(self, ctx):
        """Every arm's posterior is the prior: ``[5, A·R]`` rows ``p = α``, ``q = β``, constants."""
        params = np.empty((5, ctx.arms * ctx.runs))
        params[0], params[1] = self.alpha, self.beta
        params[2:] = _beta_constants(params[0], params[1])
        return {"params": params}

    def act(self, state, ctx, step):
        """Draw ``θ ~ Beta(p, q)`` for every arm and pull the largest.

        Attempt 0 does not depend on the posterior, so it is drawn for ``BLOCK_CELLS`` cells
        at a time: for several steps at once when there are few cells.
        """
        first, logit, log_z = state.get("block") or (0, (), ())
        if not 0 <= step - first < len(logit):
            count = min(max(1, BLOCK_CELLS // ctx.cells.size), MAX_STEPS - step)
            first, logit, log_z = state["block"] = (step, *_first_attempts(ctx.cells, step, count))
        theta = _beta_draws(ctx.cells, step, state["params"], logit[step - first],
                            log_z[step - first])
        return _argmax(theta.reshape(ctx.arms, ctx.runs), ctx)

    def learn(self, state, ctx, step, pulls, rewards):
        """A win adds 1 to the pulled arm's ``p``, a loss to its ``q``."""
        params = state["params"]
        params.reshape(-1)[pulls + params.shape[1] * (rewards == 0.0)] += 1.0
        p, q = params[:2].take(pulls, axis=1)
        for row, value in enumerate(_beta_constants(p, q), start=2):
            params[row, pulls] = value


@dataclass(frozen=True)
class Gradient(Agent):
    r"""The gradient bandit: a softmax policy moved by stochastic gradient ascent.

    .. math:: \pi_t(a) = \frac{e^{H_t(a)}}{\sum_b e^{H_t(b)}}, \qquad
        H_{t+1}(a) = H_t(a) + \alpha\,(R_t - \bar R_t)\,(\mathbb 1_{a = A_t} - \pi_t(a)),

    with the baseline ``R̄_t`` the average of the rewards up to and including step ``t``, or 0
    without a baseline. Source: Sutton & Barto (2018), section 2.8, equation 2.12, Figure 2.5.

    Attributes:
        alpha: Step size ``α > 0``.
        baseline: Subtract the average reward (True) or not (False).
    """

    alpha: float = 0.1
    baseline: bool = True
    cost: ClassVar[tuple[float, float, float]] = (31e-6, 15e-9, 3.6e-9)

    def __post_init__(self) -> None:
        if _finite("the gradient step size α", self.alpha) <= 0:
            raise ValueError(f"the gradient step size α must be positive, not {self.alpha:g}")

    @property
    def kind(self) -> str:  # type: ignore[override]
        """``gradient``, or ``gradient_no_baseline``."""
        return "gradient" if self.baseline else "gradient_no_baseline"

    @property
    def label(self) -> str:
        """``gradient``, or ``gradient_no_baseline``."""
        return f"gradient α={_fmt(self.alpha)}" + ("" if self.baseline else ", no baseline")

    def start(self, ctx):
        """Preferences ``H = 0`` (a uniform policy) and a zero baseline."""
        return {
            "H": np.zeros((ctx.arms, ctx.runs)),
            "pi": np.full((ctx.arms, ctx.runs), 1.0 / ctx.arms),
            "baseline": np.zeros(ctx.runs),
        }

    def act(self, state, ctx, step):
        """Sample ``A_t ~ π_t`` by inverting its CDF at a uniform (SAMPLE stream)."""
        h = state["H"]
        e = np.exp(h - h.max(axis=0))
        state["pi"] = pi = e / e.sum(axis=0)
        u = unit(Noise.bits_at(ctx.cells[0], Stream.SAMPLE, step))
        # Inverse-CDF sampling: the number of arms whose cumulative probability is <= u. The
        # cumulative sum goes arm by arm (whole rows), several times faster than np.cumsum here.
        cum = pi.copy()
        for a in range(1, ctx.arms):
            np.add(cum[a], cum[a - 1], out=cum[a])
        return np.minimum(np.count_nonzero(cum <= u, axis=0), ctx.arms - 1)

    def learn(self, state, ctx, step, pulls, rewards):
        """Move every preference along ``(R − R̄)(1{a = A_t} − π(a))``."""
        if self.baseline:
            state["baseline"] += (rewards - state["baseline"]) / (step + 1.0)
        step_ = self.alpha * (rewards - state["baseline"])
        h = state["H"]
        h -= step_ * state["pi"]
        h.ravel()[pulls] += step_


# ------------------------------------------------------------------------------ the race
@dataclass(frozen=True, eq=False)
class Race:
    """Curves of several agents on the same bandit problems, averaged over runs.

    Step ``t`` (1-based) is at index ``t - 1`` of every per-step array. Regret is the
    pseudo-regret ``Σ_s (max_a q_s(a) − q_s(A_s))``: the same expectation as the realised
    regret ``Σ_s (max_a q_s(a) − R_s)``, with far less noise.

    Attributes:
        agents: The racers, in order (``K`` of them).
        testbed: The problem family.
        runs, steps, seed: ``R``, ``T`` and the seed.
        reward: ``[K, T]`` mean reward at each step.
        optimal: ``[K, T]`` fraction of runs that chose an optimal arm at each step.
        regret: ``[K, T]`` mean cumulative regret after each step.
        regret_sd: ``[K, T]`` its standard deviation across runs.
        final_regret: ``[K, R]`` cumulative regret of each run after the last step.
        counts: ``[K, R, A]`` pulls of each arm in each run.
        choice_by_rank: ``[K, T, A]`` fraction of runs that chose, at each step, the arm whose
            true mean ranked ``j`` (0 = best, ties share the better rank) at that step.
        means: ``[R, A]`` true means at step 1.
        final_means: ``[R, A]`` true means at the last step (equal to ``means`` if stationary).
        rank_means: ``[T, A]`` mean over runs of the ``j``-th largest true mean at each step.
    """

    agents: tuple[Agent, ...]
    testbed: Testbed
    runs: int
    steps: int
    seed: int
    reward: np.ndarray  # [K, T]
    optimal: np.ndarray  # [K, T]
    regret: np.ndarray  # [K, T]
    regret_sd: np.ndarray  # [K, T]
    final_regret: np.ndarray  # [K, R]
    counts: np.ndarray  # [K, R, A] int64
    choice_by_rank: np.ndarray  # [K, T, A]
    means: np.ndarray  # [R, A]
    final_means: np.ndarray  # [R, A]
    rank_means: np.ndarray  # [T, A]

    @property
    def labels(self) -> list[str]:
        """Each racer's label, repeats numbered so that every label is unique."""
        seen: dict[str, int] = {}
        out = []
        for agent in self.agents:
            n = seen[agent.label] = seen.get(agent.label, 0) + 1
            out.append(agent.label if n == 1 else f"{agent.label} ({n})")
        return out

    @property
    def best_mean(self) -> np.ndarray:
        """``[T]`` mean over runs of the best true mean: the best possible average reward."""
        return self.rank_means[:, 0]

    def regret_band(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        """``(low, high)`` ``[K, T]``: a normal-approximation confidence band of the mean regret."""
        if not 0.0 < level < 1.0:
            raise ValueError(f"the confidence level must lie in (0, 1), not {level}")
        half = NormalDist().inv_cdf(0.5 + level / 2.0) * self.regret_sd / math.sqrt(self.runs)
        return self.regret - half, self.regret + half

    def curves(self, level: float = 0.95) -> dict[str, np.ndarray]:
        """Every per-step curve in long form: one row per (racer, step), for export."""
        low, high = self.regret_band(level)
        k, t = self.reward.shape
        return {
            "racer": np.repeat(np.array(self.labels, dtype=object), t),
            "step": np.tile(np.arange(1, t + 1), k),
            "average_reward": self.reward.ravel(),
            "optimal_fraction": self.optimal.ravel(),
            "regret_mean": self.regret.ravel(),
            "regret_low": low.ravel(),
            "regret_high": high.ravel(),
            "best_possible_reward": np.tile(self.best_mean, k),
        }

    def pull_shares(self, step: int | None = None) -> np.ndarray:
        """``[K, A]`` fraction of each racer's pulls, up to ``step``, that went to each arm rank."""
        return self.pulls_by_rank(step) / (self.steps if step is None else step)

    def pulls_by_rank(self, step: int | None = None) -> np.ndarray:
        """``[K, A]`` mean pulls, over steps ``1..step`` (default: all), of the rank-``j`` arm."""
        stop = self.steps if step is None else step
        if not 1 <= stop <= self.steps:
            raise ValueError(f"the step must lie in [1, {self.steps}], not {stop}")
        return self.choice_by_rank[:, :stop, :].sum(axis=1)


class _Tally:
    """Per-step sums over runs for one agent; runs arrive in chunks."""

    def __init__(self, runs: int, steps: int, arms: int):
        self.reward = np.zeros(steps)
        self.optimal = np.zeros(steps)
        self.regret = np.zeros(steps)
        self.regret_sq = np.zeros(steps)
        self.by_rank = np.zeros((steps, arms))
        self.final_regret = np.zeros(runs)
        self.counts = np.zeros((runs, arms), dtype=np.int64)


def _validate_race(agents: tuple[Agent, ...], testbed: Testbed, runs: int, steps: int) -> None:
    if not isinstance(testbed, Testbed):
        raise ValueError(f"the testbed must be a Testbed, not {type(testbed).__name__}")
    if not agents:
        raise ValueError("choose at least one racer")
    for agent in agents:
        if not isinstance(agent, Agent):
            raise ValueError(f"{agent!r} is not a bandit agent")
        agent.check(testbed)
    for name, value, top in (("runs", runs, MAX_RUNS), ("steps", steps, MAX_STEPS)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise ValueError(f"the number of {name} must be a whole number, not {value!r}")
        if not 1 <= value <= top:
            raise ValueError(f"the number of {name} must lie in [1, {top}], not {value}")


def race(agents: Sequence[Agent], testbed: Testbed, *, runs: int, steps: int, seed: int) -> Race:
    r"""Race agents on the same bandit problems, vectorised across runs.

    All agents advance together, one step at a time; within a step each agent acts in every run
    at once (numpy over the runs axis). Runs are processed in chunks small enough for numpy's
    temporaries to stay in cache; as every random number is indexed by its run, the chunking
    cannot change the result. The regret of a run after ``T`` steps is
    :math:`\sum_{t=1}^{T} \big(\max_a q_t(a) - q_t(A_t)\big)`, which on a stationary testbed
    equals :math:`\sum_a \Delta_a N_T(a)`.

    Args:
        agents: The racers: ``EpsilonGreedy``, ``Optimistic``, ``UCB``, ``GaussianThompson``,
            ``BetaThompson``, ``Gradient``.
        testbed: ``GaussianTestbed``, ``BernoulliTestbed`` or ``RandomWalkTestbed``.
        runs: Independent runs ``R`` in ``[1, 2**20]``.
        steps: Steps ``T`` per run in ``[1, 2**22]``.
        seed: A non-negative integer; the same seed gives the same race.

    Returns:
        A ``Race`` of per-step curves, one row per agent.

    Raises:
        ValueError: No agents, bad sizes or seed, or an agent that cannot play the testbed.
    """
    agents = tuple(agents)
    _validate_race(agents, testbed, runs, steps)
    _keep_freed_memory()
    noise = Noise(seed)
    arms = testbed.arms
    tallies = [_Tally(runs, steps, arms) for _ in agents]
    rank_means = np.zeros((steps, arms))
    means = np.empty((runs, arms))
    final_means = np.empty((runs, arms))
    chunk = max(1, CHUNK_CELLS // arms)
    for lo in range(0, runs, chunk):
        ids = np.arange(lo, min(lo + chunk, runs))
        first, last = _race_chunk(agents, testbed, noise, ids, steps, tallies, rank_means)
        means[ids], final_means[ids] = first.T, last.T

    reward, optimal, regret, regret_sq = (
        np.array([getattr(t, name) for t in tallies]) / runs
        for name in ("reward", "optimal", "regret", "regret_sq")
    )
    variance = np.maximum(regret_sq - regret**2, 0.0) * runs / max(runs - 1, 1)
    return Race(
        agents=agents, testbed=testbed, runs=runs, steps=steps, seed=int(seed),
        reward=reward, optimal=optimal, regret=regret, regret_sd=np.sqrt(variance),
        final_regret=np.array([t.final_regret for t in tallies]),
        counts=np.array([t.counts for t in tallies]),
        choice_by_rank=np.array([t.by_rank for t in tallies]) / runs,
        means=means, final_means=final_means, rank_means=rank_means / runs,
    )


RACE_COST = (15e-6, 2e-9, 0.2e-9)
"""What a race costs whatever its racers (true means, ranks, tallies), in seconds: per step
of a chunk of runs, per run and step, and per (run, arm) cell and step (see
``race_seconds``)."""


def race_seconds(agents: Sequence[Agent], testbed: Testbed, *, runs: int, steps: int) -> float:
    r"""About how many seconds ``race`` takes with these arguments.

    .. math:: T \Big[ n \big(c_0 + c_b + \textstyle\sum_k c_k\big)
        + R \big(f_0 + f_b + \textstyle\sum_k f_k\big)
        + R A \big(e_0 + e_b + \textstyle\sum_k e_k\big) \Big],

    with ``n`` the chunks of runs (see ``CHUNK_CELLS``) and ``(c, f, e)`` the cost per step of
    a chunk, per run and per cell (run, arm) of the race itself (``RACE_COST``), of the testbed
    and of each racer (their ``cost``). The costs were fitted, with some room to spare, to races
    timed on the project's two-core benchmark machine (``python -m benchmarks -k bandits``); the
    estimate keeps live races short.

    Args:
        agents: The racers (``K`` of them).
        testbed: The problem family (``A`` arms).
        runs: ``R``.
        steps: ``T``.

    Returns:
        The estimate in seconds.

    Raises:
        ValueError: The same arguments that ``race`` refuses.
    """
    agents = tuple(agents)
    _validate_race(agents, testbed, runs, steps)
    chunks = -(-runs // max(1, CHUNK_CELLS // testbed.arms))
    per_step, per_run, per_cell = (
        sum(parts) for parts in zip(RACE_COST, testbed.cost, *(a.cost for a in agents), strict=True)
    )
    return steps * (chunks * per_step + runs * per_run + runs * testbed.arms * per_cell)


def _keep_freed_memory() -> None:
    """Let the C allocator keep freed memory for reuse instead of handing it back at once.

    Each step of a race allocates and frees a few dozen arrays of 0.1–1 MB. glibc returns free
    memory at the top of its heap to the system as soon as more than its trim threshold
    (128 kB at start) is free, then faults it back in on the next allocation, which made races
    two to three times slower. Freeing one block of just under 32 MB raises that threshold to
    64 MB for the rest of the process (glibc's dynamic mmap threshold, see ``mallopt(3)``); with
    other allocators this costs one allocation and nothing else.
    """
    np.empty(_ALLOCATOR_PROBE // 8)


def _race_chunk(agents, testbed, noise, ids, steps, tallies, rank_means):
    """Run every agent on the runs ``ids``, adding per-step sums into ``tallies``.

    At each step every agent acts, then the rewards of all their pulls are drawn together,
    then every agent learns. The pulls are kept for a block of ``STEP_BLOCK`` steps and then
    tallied at once.
    """
    arms, size = testbed.arms, ids.size
    cells = noise.cells(ids, np.arange(arms)[:, None])
    flat_cells = cells.reshape(-1)
    ctx = Context(arms=arms, runs=size, cells=cells, local=np.arange(size))
    states = [agent.start(ctx) for agent in agents]
    block = _Block(len(agents), min(STEP_BLOCK, steps), ctx, testbed.stationary)
    carried = [t.final_regret[ids[0]: ids[-1] + 1] for t in tallies]  # views, updated in place
    counts = [np.zeros(arms * size, dtype=np.int64) for _ in agents]
    pulls = np.empty((len(agents), size), dtype=np.int64)  # [K, R] flat (arm, run) indices
    first = means = testbed.initial_means(noise, ids)
    gaps = ranks = best = None
    for step in range(steps):
        if step and not testbed.stationary:
            means = testbed.drift(step, means, cells)
        if step == 0 or not testbed.stationary:
            best = means.max(axis=0)
            sorted_means = np.sort(means, axis=0)[::-1].sum(axis=1)
            if testbed.stationary:  # per (arm, run): its gap, and how many arms are better
                gaps = (best - means).ravel()
                ranks = (means[:, None, :] > means[None, :, :]).sum(axis=0, dtype=np.uint8)
                ranks = ranks.ravel()
        rank_means[step] += sorted_means
        for agent, state, flat in zip(agents, states, pulls, strict=True):
            np.add(agent.act(state, ctx, step) * size, ctx.local, out=flat)  # ctx.flat
        chosen = means.reshape(-1)[pulls]
        rewards = testbed.reward(step, flat_cells[pulls], chosen)
        for agent, state, flat, reward in zip(agents, states, pulls, rewards, strict=True):
            agent.learn(state, ctx, step, flat, reward)
        row = step % STEP_BLOCK
        block.flat[:, row] = pulls
        block.reward[:, row] = rewards
        if not testbed.stationary:
            block.gap[:, row] = best - chosen
            block.rank[:, row] = (means > chosen[:, None, :]).sum(axis=1, dtype=np.uint8)
        if row == STEP_BLOCK - 1 or step == steps - 1:
            for k, (tally, cum, count) in enumerate(zip(tallies, carried, counts, strict=True)):
                block.tally(k, step - row, row + 1, tally, cum, count, gaps, ranks)
    for tally, count in zip(tallies, counts, strict=True):
        tally.counts[ids] = count.reshape(arms, size).T
    return first, means


class _Block:
    """Every agent's pulls over a block of steps in one chunk of runs, until they are tallied."""

    def __init__(self, agents: int, length: int, ctx: Context, stationary: bool):
        shape = (agents, length, ctx.runs)
        self.arms = ctx.arms
        self.flat = np.empty(shape, dtype=np.int64)  # flat (arm, run) index of each pull
        self.reward = np.empty(shape)
        if not stationary:  # the gap and rank of a pull change with the means
            self.gap = np.empty(shape)
            self.rank = np.empty(shape, dtype=np.uint8)

    def tally(self, agent: int, start: int, n: int, tally: _Tally, cum: np.ndarray,
              count: np.ndarray, gaps: np.ndarray | None, ranks: np.ndarray | None) -> None:
        """Add an agent's steps ``start .. start + n - 1`` to ``tally``.

        ``cum`` carries each run's regret from block to block. An optimal pull is one of rank 0
        (no arm better), which is the same as a zero gap.
        """
        flat = self.flat[agent, :n]
        gap = gaps[flat] if gaps is not None else self.gap[agent, :n]
        rank = ranks[flat] if ranks is not None else self.rank[agent, :n]
        stop = start + n
        tally.reward[start:stop] += self.reward[agent, :n].sum(axis=1)
        running = np.empty_like(gap)  # each run's regret, summed step by step in order
        np.add(cum, gap[0], out=running[0])
        for i in range(1, n):
            np.add(running[i - 1], gap[i], out=running[i])
        cum[:] = running[-1]
        tally.regret[start:stop] += running.sum(axis=1)
        tally.regret_sq[start:stop] += np.einsum("ij,ij->i", running, running)
        by_rank = np.bincount((rank + self.arms * np.arange(n)[:, None]).ravel(),
                              minlength=n * self.arms).reshape(n, self.arms)
        tally.by_rank[start:stop] += by_rank
        tally.optimal[start:stop] += by_rank[:, 0]
        count += np.bincount(flat.ravel(), minlength=count.size)


def parse_probs(text: str) -> tuple[float, ...]:
    """Arm success probabilities from text such as ``"0.9, 0.8, 0.5"``.

    Raises:
        ValueError: No numbers, something that is not a number, or one outside [0, 1].
    """
    parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p.strip()]
    if not parts:
        raise ValueError("give at least one success probability, e.g. 0.9, 0.8, 0.5")
    probs = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            message = f"{part.strip()!r} is not a probability (a number in [0, 1])"
            raise ValueError(message) from None
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"success probabilities must lie in [0, 1]; got {part.strip()}")
        probs.append(value)
    if len(probs) > MAX_ARMS:
        raise ValueError(f"at most {MAX_ARMS} arms are supported (got {len(probs)})")
    return tuple(probs)


# ------------------------------------------------------------------------------ bounds
def kl_bernoulli(p: Any, q: Any) -> np.ndarray:
    r"""Kullback–Leibler divergence between Bernoulli distributions, in nats.

    .. math:: \mathrm{KL}(p, q) = p \ln\frac{p}{q} + (1 - p) \ln\frac{1 - p}{1 - q},

    with ``0 ln 0 = 0``; infinite when ``q`` is 0 or 1 and ``p`` differs from it.
    """
    p, q = np.broadcast_arrays(np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64))
    if np.any((p < 0) | (p > 1) | (q < 0) | (q > 1)):
        raise ValueError("Bernoulli means must lie in [0, 1]")
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / q), 0.0)
        b = np.where(p < 1, (1 - p) * np.log(np.where(p < 1, 1 - p, 1.0) / (1 - q)), 0.0)
    return np.where(p == q, 0.0, a + b)


def _bernoulli_means(probs: Any) -> np.ndarray:
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 1 or probs.size < 1:
        raise ValueError("give one success probability per arm")
    if not np.all(np.isfinite(probs)) or np.any((probs < 0) | (probs > 1)):
        raise ValueError("success probabilities must lie in [0, 1]")
    return probs


def lai_robbins(probs: Any, steps: int) -> np.ndarray:
    r"""The Lai–Robbins asymptotic lower bound on regret for Bernoulli arms, as a curve.

    Any algorithm that is consistent on all Bernoulli bandits satisfies

    .. math:: \liminf_{T\to\infty} \frac{\mathbb E[\mathrm{Regret}_T]}{\ln T} \ge
        \sum_{a:\,\Delta_a > 0} \frac{\Delta_a}{\mathrm{KL}(\mu_a, \mu^*)};

    the curve is that constant times ``ln t``. It is asymptotic: finite-horizon regret may sit
    below it early on. Source: Lai & Robbins (1985), Theorem 2.

    Args:
        probs: ``[A]`` success probabilities.
        steps: Horizon ``T``.

    Returns:
        ``[T]`` the bound at steps ``1..T``.
    """
    probs = _bernoulli_means(probs)
    best = probs.max()
    gaps = best - probs
    kl = kl_bernoulli(probs, best)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_arm = np.where(gaps > 0, gaps / kl, 0.0)
    return float(per_arm.sum()) * np.log(np.arange(1, steps + 1, dtype=np.float64))


def ucb1_bound(probs: Any, steps: int) -> np.ndarray:
    r"""The finite-time upper bound on UCB1's expected regret, as a curve.

    .. math:: \mathbb E[\mathrm{Regret}_n] \le \sum_{a:\,\Delta_a > 0} \frac{8 \ln n}{\Delta_a}
        + \Big(1 + \frac{\pi^2}{3}\Big) \sum_a \Delta_a

    for rewards in [0, 1]. Source: Auer, Cesa-Bianchi & Fischer (2002), Theorem 1.

    Args:
        probs: ``[A]`` arm means in [0, 1].
        steps: Horizon ``T``.

    Returns:
        ``[T]`` the bound at ``n = 1..T``.
    """
    probs = _bernoulli_means(probs)
    gaps = probs.max() - probs
    positive = gaps[gaps > 0]
    log_n = np.log(np.arange(1, steps + 1, dtype=np.float64))
    return 8.0 * log_n * float((1.0 / positive).sum()) + (1.0 + math.pi**2 / 3.0) * gaps.sum()


# ------------------------------------------------------------------------------ the book
@dataclass(frozen=True)
class BookValue:
    """A number from Sutton & Barto (2018), chapter 2, that a race should reproduce.

    Attributes:
        source: Where it comes from, e.g. ``"Sutton & Barto (2018), Fig. 2.2"``.
        agent: The label of the ``BOOK_AGENTS`` racer it is about ("" for the testbed itself).
        quantity: ``"reward"`` (average reward), ``"optimal"`` (fraction of runs choosing an
            optimal arm) or ``"best"`` (the best arm's mean, averaged over runs).
        value: The book's value.
        tol: How far ours may be: the reading error of a printed curve plus the sampling error
            of a 2000-run average.
        steps: The steps (1-based, inclusive) whose average is compared.
    """

    source: str
    agent: str
    quantity: str
    value: float
    tol: float
    steps: tuple[int, int] = (951, 1000)

    @property
    def label(self) -> str:
        """What is compared, in words."""
        first, last = self.steps
        if self.quantity == "best":
            return "best possible average reward: the best arm's mean, over runs"
        what = "average reward" if self.quantity == "reward" else "fraction choosing the best arm"
        when = f"step {first}" if first == last else f"steps {first}–{last}"
        return f"{self.agent}: {what}, {when}"

    def ours(self, result: Race) -> float:
        """Our counterpart in ``result``: the quantity averaged over ``steps``."""
        if self.quantity == "best":
            return float(result.best_mean[0])
        curve = result.reward if self.quantity == "reward" else result.optimal
        first, last = self.steps
        return float(curve[result.labels.index(self.agent), first - 1:last].mean())


BOOK_AGENTS: tuple[Agent, ...] = (
    EpsilonGreedy(epsilon=0.0),
    EpsilonGreedy(epsilon=0.01),
    EpsilonGreedy(epsilon=0.1),
    UCB(c=2.0),
)

EXPECTED_MAX_OF_10 = 1.5387527308351729
"""``E[max of 10 independent N(0, 1)]``: the best possible average reward on the 10-armed
testbed (the book's "about 1.55"), by numerical integration of ``10 x φ(x) Φ(x)^9``."""

_FIG = "Sutton & Barto (2018), Fig. "
BOOK_VALUES: tuple[BookValue, ...] = (
    # Figure 2.2, read off the printed curves near step 1000 (the text: greedy earns "about 1"
    # and finds the optimal action in "approximately one-third of the tasks").
    BookValue(_FIG + "2.2", "greedy", "reward", 1.0, 0.07),
    BookValue(_FIG + "2.2", "ε-greedy ε=0.01", "reward", 1.3, 0.07),
    BookValue(_FIG + "2.2", "ε-greedy ε=0.1", "reward", 1.37, 0.07),
    BookValue(_FIG + "2.2", "greedy", "optimal", 0.35, 0.05),
    BookValue(_FIG + "2.2", "ε-greedy ε=0.01", "optimal", 0.55, 0.07),
    BookValue(_FIG + "2.2", "ε-greedy ε=0.1", "optimal", 0.8, 0.05),
    BookValue(_FIG + "2.4", "UCB c=2", "reward", 1.5, 0.07),
    # Exercise 2.8, UCB's spike at step 11: every arm has been pulled once, so UCB picks the
    # largest single sample q + n; E[q | q + n = s] = s/2 and the largest of 10 draws of
    # N(0, 2) has mean √2 · E[max of 10 N(0, 1)], so the expected reward is E_max / √2.
    BookValue("Exercise 2.8, the spike of Fig. 2.4: E[max] / √2, exact", "UCB c=2", "reward",
              EXPECTED_MAX_OF_10 / math.sqrt(2.0), 0.08, steps=(11, 11)),
    # The book's "best possible, about 1.55": 3 standard errors (sd of the max 0.587).
    BookValue("E[max of 10 N(0, 1)], exact", "", "best", EXPECTED_MAX_OF_10,
              round(3 * 0.587 / math.sqrt(2000), 3), steps=(1, 1)),
)


def book_race(seed: int = 0) -> Race:
    """The race behind Figures 2.2 and 2.4 of Sutton & Barto (2018).

    Greedy, ε = 0.01 and ε = 0.1 (sample averages) and UCB c = 2 on the 10-armed Gaussian
    testbed, 2000 runs of 1000 steps.
    """
    return race(BOOK_AGENTS, GaussianTestbed(), runs=2000, steps=1000, seed=seed)


EQUATIONS: tuple[tuple[str, str], ...] = (
    ("Regret after T steps, from the gaps Δₐ = max q* − q*(a) and the pulls Nₐ",
     r"\mathrm{Regret}_T=\sum_{t=1}^{T}\big(\max_a q_*(a)-q_*(A_t)\big)=\sum_a\Delta_a N_T(a)"),
    ("Action values: sample average (α = 1/n) or constant step size (Sutton & Barto eq. 2.5)",
     r"Q_{n+1}=Q_n+\alpha_n\,(R_n-Q_n)"),
    ("ε-greedy",
     r"A_t=\begin{cases}\text{a random arm}&\text{with probability }\varepsilon\\"
     r"\arg\max_a Q_t(a)&\text{otherwise}\end{cases}"),
    ("UCB, untried arms first (eq. 2.10; c = √2 is UCB1)",
     r"A_t=\arg\max_a\Big[Q_t(a)+c\sqrt{\tfrac{\ln t}{N_t(a)}}\Big]"),
    ("Thompson sampling on Bernoulli arms (s wins, f losses)",
     r"\theta_a\sim\mathrm{Beta}(1+s_a,\,1+f_a),\qquad A_t=\arg\max_a\theta_a"),
    ("Gradient bandit (eq. 2.12), baseline R̄ the average reward so far",
     r"H_{t+1}(a)=H_t(a)+\alpha\,(R_t-\bar R_t)\,(\mathbb 1_{a=A_t}-\pi_t(a)),"
     r"\quad\pi_t=\mathrm{softmax}(H_t)"),
    ("Lai & Robbins (1985): no consistent method's regret grows more slowly",
     r"\liminf_{T\to\infty}\frac{\mathbb E[\mathrm{Regret}_T]}{\ln T}\ge"
     r"\sum_{a:\,\Delta_a>0}\frac{\Delta_a}{\mathrm{KL}(\mu_a,\mu^*)}"),
    ("UCB1's finite-time bound (Auer, Cesa-Bianchi & Fischer 2002, Theorem 1)",
     r"\mathbb E[\mathrm{Regret}_n]\le\sum_{a:\,\Delta_a>0}\frac{8\ln n}{\Delta_a}+"
     r"\Big(1+\frac{\pi^2}{3}\Big)\sum_a\Delta_a"),
)
"""The page's equations as (caption, LaTeX) pairs."""
