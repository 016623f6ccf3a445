r"""Bandit agents: each one's select step (``act``) and update step (``learn``) on ``[A, R]``.

An agent is small and frozen; its state lives in the dict that ``start`` returns. One call of
``act`` or ``learn`` serves every run of a chunk at once (arms x runs), and a race calls exactly
these methods.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from rlviz.bandits import beta as cheng
from rlviz.bandits.beta import MIN_PRIOR
from rlviz.bandits.noise import (
    MAX_STEPS,
    Noise,
    Steps,
    Stream,
    _coin_below,
    _pick,
    _step_offset,
    gaussian_rows,
    mix64,
    unit,
    unit64,
)
from rlviz.bandits.testbeds import Testbed, _finite, _nonnegative
from rlviz.compiled import kernel, on_warm_up
from rlviz.errors import InputError


@dataclass(frozen=True, eq=False)
class Context:
    """What an agent may read during a race: sizes and the random cells of its runs.

    Attributes:
        arms: ``A``.
        runs: ``R``, the runs handled together (a chunk of the race).
        cells: ``[A, R]`` ``Noise.cells`` of each (arm, run).
        local: ``[R]`` 0..R-1, for flat indexing ``a * R + r`` into ``[A, R]`` arrays.
        steps: The race's length ``T`` (random numbers are made ahead, never beyond it).
    """

    arms: int
    runs: int
    cells: np.ndarray  # [A, R] uint64
    local: np.ndarray  # [R] int64
    steps: int = MAX_STEPS

    def stream(self, stream: int, cells: np.ndarray, make) -> Steps:
        """``Steps`` of ``stream`` at ``cells`` (rows of ``self.cells``), up to the race's end."""
        return Steps(cells, stream, make, end=self.steps)

    def flat(self, actions: np.ndarray) -> np.ndarray:
        """Flat indices of ``(actions[r], r)`` into ``[A, R]`` arrays."""
        return actions * self.runs + self.local


FEW_RUNS = 256
"""Up to this many runs in a chunk, a cumulative sum over the arms is one numpy call."""


def _argmax(values: np.ndarray, ctx: Context) -> np.ndarray:
    """The first arm with the largest value in each run, like ``values.argmax(axis=0)``."""
    return _first_argmax(values, np.empty(ctx.runs, dtype=np.int64))


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
    return _argmax_keyed_ties(values, ctx.cells, _step_offset(Stream.TIE, step),
                              np.empty(ctx.runs, dtype=np.int64))


@kernel
def _first_argmax(values, out):
    """``out[r]``: the first arm with the largest of ``values[:, r]``.

    The loop runs over the arms and, inside, along the runs (contiguous in memory).
    """
    top = values[0].copy()
    out[:] = 0
    for a in range(1, values.shape[0]):
        for r in range(values.shape[1]):
            if values[a, r] > top[r]:
                top[r], out[r] = values[a, r], a
    return out


@kernel
def _argmax_keyed_ties(values, cells, offset, out):
    """``out[r]``: the arm with the largest of ``values[:, r]``, ties broken by a key.

    Among tied arms, the first with the largest key ``unit(mix(cells[a, r] + offset))``
    (``offset``: the TIE stream's step, ``_step_offset``) wins.
    """
    arms, runs = values.shape
    top = values[0].copy()
    ties = np.ones(runs, dtype=np.int64)
    out[:] = 0
    for a in range(1, arms):
        for r in range(runs):
            v = values[a, r]
            if v > top[r]:
                top[r], out[r], ties[r] = v, a, 1
            elif v == top[r]:
                ties[r] += 1
    for r in range(runs):
        if ties[r] > 1:
            best_key = -1.0
            for a in range(out[r], arms):
                if values[a, r] == top[r]:
                    key = unit64(mix64(cells[a, r] + offset))
                    if key > best_key:
                        out[r], best_key = a, key
    return out


@kernel
def _update_pulled(q, n, pulls, rewards, step_size):
    """The incremental update at each pulled cell ``i = pulls[r]`` (flat indices into ``[A·R]``).

    ``N_i ← N_i + 1``, ``Q_i ← Q_i + α (R_r − Q_i)`` with ``α = 1/N_i`` if ``step_size`` is 0,
    else ``step_size``.
    """
    for r in range(pulls.size):
        i = pulls[r]
        n[i] += 1.0
        rate = 1.0 / n[i] if step_size == 0.0 else step_size
        q[i] += rate * (rewards[r] - q[i])


@on_warm_up
def _warm_up() -> None:
    """Compile (or load from disk) the loops for the argument types a race passes."""
    cells = Noise(0).cells(np.arange(2), np.arange(3)[:, None])
    for values in (np.zeros((3, 2)), np.zeros((3, 2), dtype=np.float32)):
        _first_argmax(values, np.empty(2, dtype=np.int64))
    _argmax_keyed_ties(np.zeros((3, 2)), cells, _step_offset(Stream.TIE, 0),
                       np.empty(2, dtype=np.int64))
    _update_pulled(np.zeros(6), np.zeros(6), np.arange(2), np.ones(2), 0.0)
    ctx = Context(arms=3, runs=2, cells=cells, local=np.arange(2), steps=2)
    for agent in (UCB(), GaussianThompson(), Gradient(), Gradient(baseline=False)):
        state = agent.start(ctx)
        pulls = ctx.flat(agent.act(state, ctx, 0))
        agent.learn(state, ctx, 0, pulls, np.ones(2))


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

    def cost_at(self, cells: int) -> tuple[float, float, float]:
        """``cost`` in a race whose chunks of runs have ``cells`` (run, arm) cells each."""
        return self.cost

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
        """Raise ``InputError`` if this agent cannot play ``testbed``."""


def _check_step_size(step_size: float | None) -> None:
    if step_size is not None and not 0.0 < _finite("the step size α", step_size) <= 1.0:
        raise InputError(f"the step size α must lie in (0, 1], not {step_size:g}")


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
        _update_pulled(state["Q"].reshape(-1), state["N"].reshape(-1), pulls, rewards,
                       0.0 if self.step_size is None else float(self.step_size))


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
    cost: ClassVar[tuple[float, float, float]] = (22e-6, 25e-9, 2.7e-9)

    def __post_init__(self) -> None:
        if not 0.0 <= _finite("ε", self.epsilon) <= 1.0:
            raise InputError(f"ε is a probability and must lie in [0, 1], not {self.epsilon:g}")
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

    def start(self, ctx):
        """Estimates, counts, and the exploring moves of every step (see ``explore``)."""
        state = super().start(ctx)
        if self.epsilon > 0:
            state["explore"] = ctx.stream(Stream.EXPLORE, ctx.cells[0],
                                          lambda bits, first: self.explore(bits, first, ctx.arms))
        return state

    def act(self, state, ctx, step):
        """Explore with probability ε_t (EXPLORE stream), else the greedy arm."""
        greedy = _argmax_random_ties(state["Q"], ctx, step)
        if "explore" not in state:
            return greedy
        explore = state["explore"].at(step)  # a random arm with probability ε_t, else -1
        return np.where(explore < 0, greedy, explore)

    def explore(self, bits: np.ndarray, first: int, arms: int) -> np.ndarray:
        """Whether each run explores at steps ``first, first + 1, ...``, and which arm it tries.

        The coin is the high half of the EXPLORE draw (below ``ε_t``: explore) and the arm its
        low half. ``bits`` is ``[n, R]``; returns ``[n, R]``: the arm, or −1 for greedy.
        """
        t = np.arange(first, first + len(bits))[:, None]
        epsilon = self.epsilon / (1.0 + self.decay * t)
        return np.where(_coin_below(bits, epsilon), _pick(bits, arms), -1)


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
    cost: ClassVar[tuple[float, float, float]] = (15e-6, 35e-9, 8e-9)

    def __post_init__(self) -> None:
        if _finite("UCB's exploration weight c", self.c) < 0:
            raise InputError(f"UCB's exploration weight c must be 0 or more, not {self.c:g}")

    @property
    def label(self) -> str:
        """``UCB c=2``, or ``UCB1 (c=√2)``."""
        return "UCB1 (c=√2)" if math.isclose(self.c, math.sqrt(2)) else f"UCB c={_fmt(self.c)}"

    def act(self, state, ctx, step):
        """The arm with the largest upper confidence bound; untried arms first."""
        bounds = _upper_bounds(state["Q"], state["N"], float(self.c), math.log(step + 1.0),
                               np.empty((ctx.arms, ctx.runs)))
        return _argmax_random_ties(bounds, ctx, step)


@kernel
def _upper_bounds(q, n, c, log_t, out):
    """``out = Q + c √(ln t / N)`` where ``N > 0``, and ``+inf`` for untried arms."""
    arms, runs = q.shape
    for a in range(arms):
        for r in range(runs):
            if n[a, r] > 0:
                out[a, r] = q[a, r] + c * np.sqrt(log_t / max(n[a, r], 1.0))
            else:
                out[a, r] = np.inf
    return out


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
    cost: ClassVar[tuple[float, float, float]] = (27e-6, 91e-9, 9.7e-9)

    def __post_init__(self) -> None:
        _finite("the prior mean μ₀", self.prior_mean)
        if _finite("the prior standard deviation", self.prior_sd) <= 0:
            raise InputError("the prior standard deviation must be positive")
        if _finite("the assumed reward noise", self.noise_sd) <= 0:
            raise InputError("the assumed reward noise must be positive")

    @property
    def label(self) -> str:
        """For example ``Thompson N(0, 1²)``."""
        return f"Thompson N({_fmt(self.prior_mean)}, {_fmt(self.prior_sd)}²)"

    def start(self, ctx):
        """Counts, sums, the prior as every arm's posterior, and the normals ``z`` to come.

        Arms ``2k`` and ``2k + 1`` share a SAMPLE draw at arm ``2k`` (``gaussian_rows``). The
        samples are made in single precision, like ``z``; counts and sums are kept exactly.
        """
        shape = (ctx.arms, ctx.runs)
        return {
            "N": np.zeros(shape),
            "S": np.zeros(shape),
            "mean": np.full(shape, self.prior_mean, dtype=np.float32),
            "sd": np.full(shape, self.prior_sd, dtype=np.float32),
            "z": ctx.stream(Stream.SAMPLE, ctx.cells[0::2],
                            lambda bits, first: gaussian_rows(bits, ctx.arms)),
        }

    def act(self, state, ctx, step):
        """Draw ``θ = m + z/√λ`` for every arm and pull the largest."""
        return _argmax_sample(state["z"].at(step), state["sd"], state["mean"],
                              np.empty(ctx.runs, dtype=np.int64))

    def learn(self, state, ctx, step, pulls, rewards):
        """Update the pulled arm's count, sum, posterior mean and standard deviation."""
        prior = 1.0 / self.prior_sd**2
        _posterior_step(state["N"].reshape(-1), state["S"].reshape(-1),
                        state["mean"].reshape(-1), state["sd"].reshape(-1), pulls, rewards,
                        prior, self.prior_mean / self.prior_sd**2, self.noise_sd**2)


@kernel
def _argmax_sample(z, sd, mean, out):
    """``out[r]``: the first arm with the largest ``θ = z · sd + mean`` (single precision)."""
    arms, runs = z.shape
    top = np.empty(runs, dtype=np.float32)
    for a in range(arms):
        for r in range(runs):
            theta = z[a, r] * sd[a, r]
            theta += mean[a, r]
            if a == 0 or theta > top[r]:
                top[r], out[r] = theta, a
    return out


@kernel
def _posterior_step(n, s, mean, sd, pulls, rewards, prior, prior_term, noise_var):
    """The Gaussian posterior of each pulled cell ``i = pulls[r]``, after its reward.

    ``N_i ← N_i + 1``, ``S_i ← S_i + R_r``, then the precision ``λ = prior + N_i / noise_var``,
    the mean ``(prior_term + S_i / noise_var) / λ`` and the standard deviation ``1/√λ``, both
    stored in single precision.
    """
    for r in range(pulls.size):
        i = pulls[r]
        n[i] += 1.0
        s[i] += rewards[r]
        precision = prior + n[i] / noise_var
        mean[i] = np.float32((prior_term + s[i] / noise_var) / precision)
        sd[i] = np.float32(1.0 / np.sqrt(precision))


@dataclass(frozen=True)
class BetaThompson(Agent):
    r"""Thompson sampling for Bernoulli arms with a Beta prior.

    Arm ``a`` with ``s_a`` successes and ``f_a`` failures has posterior
    ``Beta(α + s_a, β + f_a)``; each step the agent draws ``θ_a`` from it and pulls
    ``argmax θ``. The draws are exact, by Cheng's rejection algorithms (see ``rlviz.bandits.beta``).
    Source: Thompson (1933); Agrawal & Goyal (2012) and Kaufmann, Korda & Munos (2012), who
    prove it attains the Lai–Robbins rate.

    Attributes:
        alpha: Prior successes ``α ≥ MIN_PRIOR`` (with ``beta=1``, 1 is the uniform prior).
        beta: Prior failures ``β ≥ MIN_PRIOR``.
    """

    alpha: float = 1.0
    beta: float = 1.0
    kind: ClassVar[str] = "thompson"
    cost: ClassVar[tuple[float, float, float]] = (300e-6, 30e-9, 43e-9)
    few_cells_cost: ClassVar[tuple[float, float, float]] = (90e-6, 400e-9, 180e-9)
    """``cost`` with at most ``beta.FEW_CELLS`` cells in a chunk, where the draws are made
    another way (see ``beta.Posteriors``)."""

    def __post_init__(self) -> None:
        for name, value in (("α", self.alpha), ("β", self.beta)):
            if _finite(f"the Beta prior's {name}", value) <= 0:
                raise InputError(f"the Beta prior's {name} must be positive, not {value:g}")
            if value < MIN_PRIOR:
                raise InputError(f"the Beta prior's {name} must be at least {MIN_PRIOR:g}, "
                                 f"not {value:g}")

    @property
    def label(self) -> str:
        """For example ``Thompson Beta(1, 1)``."""
        return f"Thompson Beta({_fmt(self.alpha)}, {_fmt(self.beta)})"

    def check(self, testbed: Testbed) -> None:
        """Only 0/1 rewards have a Beta posterior."""
        if not testbed.binary_rewards:
            raise InputError(
                "Beta–Bernoulli Thompson sampling needs rewards of 0 or 1: race it on Bernoulli "
                "arms, or use Gaussian Thompson sampling"
            )

    def cost_at(self, cells: int) -> tuple[float, float, float]:
        """``few_cells_cost`` up to ``beta.FEW_CELLS`` cells, else ``cost``."""
        return self.few_cells_cost if cells <= cheng.FEW_CELLS else self.cost

    def start(self, ctx):
        """Every arm's posterior is the prior ``Beta(α, β)``."""
        return {"posterior": cheng.Posteriors(ctx.cells, self.alpha, self.beta, steps=ctx.steps)}

    def act(self, state, ctx, step):
        """Draw ``θ ~ Beta(p, q)`` for every arm and pull the largest."""
        theta = state["posterior"].draw(step)
        return _argmax(theta.reshape(ctx.arms, ctx.runs), ctx)

    def learn(self, state, ctx, step, pulls, rewards):
        """A win adds 1 to the pulled arm's ``p``, a loss to its ``q``."""
        state["posterior"].add(pulls, wins=rewards != 0.0)


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
    cost: ClassVar[tuple[float, float, float]] = (31e-6, 15e-9, 9.7e-9)

    def __post_init__(self) -> None:
        if _finite("the gradient step size α", self.alpha) <= 0:
            raise InputError(f"the gradient step size α must be positive, not {self.alpha:g}")

    @property
    def kind(self) -> str:  # type: ignore[override]
        """``gradient``, or ``gradient_no_baseline``."""
        return "gradient" if self.baseline else "gradient_no_baseline"

    @property
    def label(self) -> str:
        """``gradient``, or ``gradient_no_baseline``."""
        return f"gradient α={_fmt(self.alpha)}" + ("" if self.baseline else ", no baseline")

    def start(self, ctx):
        """Preferences ``H = 0`` (a uniform policy), a zero baseline, the uniforms to come."""
        return {
            "H": np.zeros((ctx.arms, ctx.runs)),
            "e": np.ones((ctx.arms, ctx.runs), dtype=np.float32),
            "total": np.full(ctx.runs, float(ctx.arms), dtype=np.float32),
            "baseline": np.zeros(ctx.runs),
            "u": ctx.stream(Stream.SAMPLE, ctx.cells[0],
                            lambda bits, first: unit(bits).astype(np.float32)),
        }

    def act(self, state, ctx, step):
        """Sample ``A_t ~ π_t`` by inverting its CDF at a uniform (SAMPLE stream).

        ``π = e / Σe`` with ``e = exp(H − max H)``, in single precision (an action probability
        to 7 digits is plenty, and twice as fast). The exponential is numpy's; the shift
        before it and the inverse CDF after it are compiled loops (``_shifted``,
        ``_invert_cdf``).
        """
        e = np.exp(_shifted(state["H"], state["e"]), out=state["e"])
        return _invert_cdf(e, state["u"].at(step), state["total"], np.empty(ctx.runs, np.int64))

    def learn(self, state, ctx, step, pulls, rewards):
        """Move every preference along ``(R − R̄)(1{a = A_t} − π(a))``, ``π = e / Σe``.

        The baseline ``R̄ ← R̄ + (R − R̄)/t`` first, if any (``_gradient_step``).
        """
        _gradient_step(state["H"], state["e"], state["total"], state["baseline"], pulls, rewards,
                       float(self.alpha), bool(self.baseline), step + 1.0)


@kernel
def _shifted(h, out):
    """``out = H − max_a H`` in each run (column), rounded to single precision.

    The loops run over the arms and, inside, along the runs (contiguous in memory), as in all
    the loops below.
    """
    arms, runs = h.shape
    top = h[0].copy()
    for a in range(1, arms):
        for r in range(runs):
            top[r] = max(top[r], h[a, r])
    for a in range(arms):
        for r in range(runs):
            out[a, r] = np.float32(h[a, r] - top[r])
    return out


@kernel
def _invert_cdf(e, u, total, out):
    """``out[r]``: the arm whose share of the CDF of ``e[:, r]`` holds the uniform ``u[r]``.

    That is the number of arms whose cumulative ``e`` is at most ``u[r] · total[r]`` (at most
    the last arm), with ``total[r] = Σ_a e[a, r]`` stored; single precision, summed arm after
    arm.
    """
    arms, runs = e.shape
    total[:] = e[0]
    for a in range(1, arms):
        for r in range(runs):
            total[r] += e[a, r]
    cut = u * total
    cum = e[0].copy()
    out[:] = 0
    for a in range(arms):
        for r in range(runs):
            if a:
                cum[r] += e[a, r]
            out[r] += cum[r] <= cut[r]
    np.minimum(out, arms - 1, out)
    return out


@kernel
def _gradient_step(h, e, total, baseline, pulls, rewards, alpha, with_baseline, t):
    """The gradient bandit's update of every run, ``pulls`` ``[R]`` flat cells into ``H``.

    With a baseline ``R̄ ← R̄ + (R − R̄)/t`` first; then ``H(a) ← H(a) − α (R − R̄) π(a)``
    for every arm, ``π = e / total``, and ``+ α (R − R̄)`` at the pulled cell.
    """
    arms, runs = h.shape
    if with_baseline:
        for r in range(runs):
            baseline[r] += (rewards[r] - baseline[r]) / t
    move = alpha * (rewards - baseline)
    share = move / total.astype(np.float64)
    for a in range(arms):
        for r in range(runs):
            h[a, r] -= share[r] * np.float64(e[a, r])
    flat = h.reshape(-1)
    for r in range(runs):
        flat[pulls[r]] += move[r]


_COMPILED_STEPS: dict[type, tuple] = {
    EpsilonGreedy: (_argmax_keyed_ties, _update_pulled),
    Optimistic: (_argmax_keyed_ties, _update_pulled),
    UCB: (_upper_bounds, _argmax_keyed_ties, _update_pulled),
    GaussianThompson: (_argmax_sample, _posterior_step),
    BetaThompson: (cheng.Posteriors, _first_argmax),
    Gradient: (_shifted, _invert_cdf, _gradient_step),
}


def compiled_steps(agent_type: type) -> tuple:
    """The compiled loops (and the sampler) that ``agent_type``'s ``act`` and ``learn`` call.

    A code panel shows them right after the agent, where its methods hand the work over.
    """
    return _COMPILED_STEPS.get(agent_type, ())
