"""Testbeds: how each run's true arm means are drawn and how a pull is paid."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from rlviz.bandits.noise import MAX_ARMS, Noise, Stream, gaussian, unit
from rlviz.errors import InputError


def _finite(name: str, value: Any) -> float:
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number, not {value!r}") from None
    if not math.isfinite(value):
        raise InputError(f"{name} must be a finite number, not {value}")
    return value


def _nonnegative(name: str, value: Any) -> None:
    if _finite(name, value) < 0:
        raise InputError(f"{name} cannot be negative (got {value:g})")


def _check_arms(arms: Any) -> None:
    if isinstance(arms, bool) or not isinstance(arms, int | np.integer):
        raise InputError(f"the number of arms must be a whole number, not {arms!r}")
    if arms < 1:
        raise InputError(f"a bandit needs at least one arm (got {arms})")
    if arms > MAX_ARMS:
        raise InputError(f"at most {MAX_ARMS} arms are supported (got {arms})")


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

    def drift(self, means: np.ndarray, z: np.ndarray) -> np.ndarray:
        """True means one step later (stationary: the same).

        Args:
            means: ``[A, R]`` the true means now.
            z: ``[A, R]`` standard normals of the WALK stream at the next step
                (``gaussian_rows``: single precision).
        """
        return means

    @abstractmethod
    def draw(self, bits: np.ndarray) -> np.ndarray:
        """What the REWARD-stream bits of a pull become (a normal, a uniform)."""

    @abstractmethod
    def pay(self, draws: np.ndarray, chosen_means: np.ndarray) -> np.ndarray:
        """Rewards of the pulls with these ``draw``-s and true means of the pulled arms."""

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

    def draw(self, bits):
        """A standard normal from the REWARD stream at the pulled cell."""
        return gaussian(bits)

    def pay(self, draws, chosen_means):
        """R = q*(a) + σ·z."""
        return chosen_means + self.noise_sd * draws

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
                raise InputError("a bandit needs at least one arm: give one probability per arm")
            bad = ", ".join(f"{p:g}" for p in probs if not 0.0 <= p <= 1.0)
            if bad:
                raise InputError(f"success probabilities must lie in [0, 1] (got {bad})")
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

    def draw(self, bits):
        """A uniform in (0, 1) from the REWARD stream at the pulled cell."""
        return unit(bits)

    def pay(self, draws, chosen_means):
        """R = 1 if u < p(a) else 0."""
        return (draws < chosen_means).astype(np.float64)

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
    cost: ClassVar[tuple[float, float, float]] = (22e-6, 30e-9, 19e-9)  # the walk; ranks every step

    def __post_init__(self) -> None:
        _check_arms(self.arms)
        _finite("the starting value of the means", self.start)
        _nonnegative("the random-walk step w", self.walk_sd)
        _nonnegative("the reward noise σ", self.noise_sd)

    def initial_means(self, noise, runs):
        """Every mean starts at ``start``."""
        return np.full((self.arms, len(runs)), self.start, dtype=np.float64)

    def drift(self, means, z):
        """Each mean moves by ``w·z``."""
        step = z.astype(np.float64)
        step *= self.walk_sd
        step += means
        return step

    def draw(self, bits):
        """A standard normal from the REWARD stream at the pulled cell."""
        return gaussian(bits)

    def pay(self, draws, chosen_means):
        """R = q_t(a) + σ·z."""
        return chosen_means + self.noise_sd * draws

    @property
    def label(self) -> str:
        """A one-line description."""
        return (f"{self.arms}-armed random walk, q₁ = {self.start:g}, "
                f"steps N(0, {self.walk_sd:g}²), reward noise σ = {self.noise_sd:g}")


def parse_probs(text: str) -> tuple[float, ...]:
    """Arm success probabilities from text such as ``"0.9, 0.8, 0.5"``.

    Raises:
        InputError: No numbers, something that is not a number, or one outside [0, 1].
    """
    parts = [p for p in text.replace(";", ",").replace(" ", ",").split(",") if p.strip()]
    if not parts:
        raise InputError("give at least one success probability, e.g. 0.9, 0.8, 0.5")
    probs = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            message = f"{part.strip()!r} is not a probability (a number in [0, 1])"
            raise InputError(message) from None
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise InputError(f"success probabilities must lie in [0, 1]; got {part.strip()}")
        probs.append(value)
    if len(probs) > MAX_ARMS:
        raise InputError(f"at most {MAX_ARMS} arms are supported (got {len(probs)})")
    return tuple(probs)
