r"""The race: every agent on the same bandit problems, vectorised across runs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from rlviz.bandits.agents import Agent, Context
from rlviz.bandits.noise import (
    MAX_RUNS,
    MAX_STEPS,
    Noise,
    Stream,
    _mix,
    _step_offset,
    gaussian_rows,
    mix64,
)
from rlviz.bandits.testbeds import Testbed
from rlviz.compiled import kernel, on_warm_up
from rlviz.errors import InputError

CHUNK_CELLS = 1 << 15
"""Runs are raced in chunks of at most this many (run, arm) cells, which bounds the memory of
a step's temporaries; the result does not depend on it."""
STEP_BLOCK = 256
"""Pulls are tallied (regret, optimal choices, ranks, counts) every this many steps."""
_ALLOCATOR_PROBE = 31 << 20


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

    def select(self, agents: Sequence[Agent]) -> Race:
        """The same race with only these racers (each the first racer equal to it), in order.

        A racer's curves do not depend on who else races, so this is the race of ``agents``.
        """
        rows = [self.agents.index(agent) for agent in agents]
        per_agent = {name: getattr(self, name)[rows] for name in (
            "reward", "optimal", "regret", "regret_sd", "final_regret", "counts",
            "choice_by_rank")}
        return Race(agents=tuple(agents), testbed=self.testbed, runs=self.runs, steps=self.steps,
                    seed=self.seed, means=self.means, final_means=self.final_means,
                    rank_means=self.rank_means, **per_agent)

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
        raise TypeError(f"the testbed must be a Testbed, not {type(testbed).__name__}")
    if not agents:
        raise InputError("choose at least one racer")
    for agent in agents:
        if not isinstance(agent, Agent):
            raise TypeError(f"{agent!r} is not a bandit agent")
        agent.check(testbed)
    for name, value, top in (("runs", runs, MAX_RUNS), ("steps", steps, MAX_STEPS)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer):
            raise InputError(f"the number of {name} must be a whole number, not {value!r}")
        if not 1 <= value <= top:
            raise InputError(f"the number of {name} must lie in [1, {top}], not {value}")


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
        InputError: No agents, bad sizes or seed, or an agent that cannot play the testbed.
        TypeError: Something that is not a ``Testbed`` or an ``Agent``.
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


RACE_COST = (15e-6, 8e-9, 0.6e-9)
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
    and of each racer (their ``cost_at`` the cells of a chunk: Beta–Bernoulli Thompson sampling
    draws one way in small chunks and another in large ones). The per-step costs were fitted to
    races timed on the project's two-core benchmark machine; the per-run and per-cell costs were
    refitted to the CPU time of single-racer races at three sizes (2000 runs x 10 arms, 100 x 10,
    1000 x 20), scaled by 2/3 as that machine was busy and never below the first fit, so that
    line-ups of many arms and costly racers (Thompson sampling, gradients, drifting arms) are not
    underestimated. Beta–Bernoulli Thompson sampling was refitted to the CPU time it adds to a
    race at eight sizes from 20 runs x 20 arms to 2000 x 10 on the busy machine, unscaled (it
    had been estimated at a third of its time with few runs); with many cells its constant per
    step is kept high, as eight racers on 20 Bernoulli arms cost more together than alone. The
    estimate keeps live races short.

    Args:
        agents: The racers (``K`` of them).
        testbed: The problem family (``A`` arms).
        runs: ``R``.
        steps: ``T``.

    Returns:
        The estimate in seconds.

    Raises:
        InputError: The same arguments that ``race`` refuses.
    """
    agents = tuple(agents)
    _validate_race(agents, testbed, runs, steps)
    chunk = max(1, CHUNK_CELLS // testbed.arms)
    chunks, cells = -(-runs // chunk), min(runs, chunk) * testbed.arms
    costs = (agent.cost_at(cells) for agent in agents)
    per_step, per_run, per_cell = (
        sum(parts) for parts in zip(RACE_COST, testbed.cost, *costs, strict=True)
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
    ctx = Context(arms=arms, runs=size, cells=cells, local=np.arange(size), steps=steps)
    states = [agent.start(ctx) for agent in agents]
    rewards_of = _Rewards(testbed, ctx, len(agents))
    walk = None if testbed.stationary else ctx.stream(
        Stream.WALK, cells[0::2], lambda bits, first: gaussian_rows(bits, arms))
    block = _Block(len(agents), min(STEP_BLOCK, steps), ctx, testbed.stationary)
    carried = [t.final_regret[ids[0]: ids[-1] + 1] for t in tallies]  # views, updated in place
    counts = [np.zeros(arms * size, dtype=np.int64) for _ in agents]
    pulls = np.empty((len(agents), size), dtype=np.int64)  # [K, R] flat (arm, run) indices
    first = means = testbed.initial_means(noise, ids)
    gaps = ranks = best = None
    for step in range(steps):
        if step and walk is not None:
            means = testbed.drift(means, walk.at(step))
        if step == 0 or walk is not None:
            best = np.maximum.reduce(means, axis=0)
            sorted_means = np.sort(means, axis=0)[::-1].sum(axis=1)
            if walk is None:  # per (arm, run): its gap, and how many arms are better
                gaps = (best - means).ravel()
                better = (means[:, None, :] > means[None, :, :]).view(np.uint8)
                ranks = np.add.reduce(better, axis=0, dtype=np.uint8).ravel()
        rank_means[step] += sorted_means
        for agent, state, flat in zip(agents, states, pulls, strict=True):
            np.add(agent.act(state, ctx, step) * size, ctx.local, out=flat)  # ctx.flat
        row = step % STEP_BLOCK
        chosen = block.record(row, pulls, means, best)  # the true means of the pulled arms
        rewards = rewards_of.at(step, pulls, chosen)
        for agent, state, flat, reward in zip(agents, states, pulls, rewards, strict=True):
            agent.learn(state, ctx, step, flat, reward)
        block.reward[:, row] = rewards
        if row == STEP_BLOCK - 1 or step == steps - 1:
            for k, (tally, cum, count) in enumerate(zip(tallies, carried, counts, strict=True)):
                block.tally(k, step - row, row + 1, tally, cum, count, gaps, ranks)
    for tally, count in zip(tallies, counts, strict=True):
        tally.counts[ids] = count.reshape(arms, size).T
    return first, means


EVERY_CELL = 1024
"""Rewards are drawn ahead at every cell, not only at the pulled ones, when that draws at most
this many more numbers a step (few runs, or as many racers as arms): numpy's per-call cost
then outweighs the extra numbers."""


class _Rewards:
    """The rewards of every racer's pulls at a step: the testbed's draws at the pulled cells.

    A pull's reward depends only on (step, run, arm), so whether the draws are made at the
    pulled cells, once per cell that several racers pulled, or ahead at every cell (``Steps``)
    changes nothing but the speed.
    """

    def __init__(self, testbed: Testbed, ctx: Context, racers: int):
        self.testbed = testbed
        self.flat_cells = ctx.cells.reshape(-1)
        self.ahead = self.pulled = None
        if (ctx.arms - racers) * ctx.runs <= EVERY_CELL:
            self.ahead = ctx.stream(Stream.REWARD, self.flat_cells,
                                    lambda bits, first: testbed.draw(bits))
        elif racers > 2:  # racers often pull the same arm: draw each pulled cell once
            self.pulled = np.empty(self.flat_cells.size, dtype=bool)
            self.cells = np.empty(self.flat_cells.size, dtype=np.int64)
            self.bits = np.empty(self.flat_cells.size, dtype=np.uint64)
            self.draws = np.empty(self.flat_cells.size)

    def at(self, step: int, pulls: np.ndarray, chosen_means: np.ndarray) -> np.ndarray:
        """Rewards ``[K, R]`` of the pulls (flat cell indices ``[K, R]``) at step ``step``."""
        if self.ahead is not None:
            return self.testbed.pay(self.ahead.at(step)[pulls], chosen_means)
        offset = _step_offset(Stream.REWARD, step)
        if self.pulled is None:
            draws = self.testbed.draw(_mix(np.add(self.flat_cells[pulls], offset)))
        else:
            cells = _pulled_cells(pulls.reshape(-1), self.pulled, self.cells)
            bits = _mixed_at(self.flat_cells, cells, offset, self.bits)
            draws = _spread(self.testbed.draw(bits), cells, self.draws, pulls,
                            np.empty(pulls.shape))
        return self.testbed.pay(draws, chosen_means)


@kernel
def _pulled_cells(pulls, pulled, out):
    """The distinct cells of ``pulls``, in increasing order (``out`` holds every cell)."""
    pulled[:] = False
    for i in pulls:
        pulled[i] = True
    n = 0
    for cell in range(pulled.size):
        if pulled[cell]:
            out[n] = cell
            n += 1
    return out[:n]


@kernel
def _mixed_at(flat_cells, cells, offset, out):
    """The REWARD bits ``mix64(flat_cells[c] + offset)`` of the cells ``c`` in ``cells``."""
    bits = out[:cells.size]
    for j in range(cells.size):
        bits[j] = mix64(flat_cells[cells[j]] + offset)
    return bits


@kernel
def _spread(draws, cells, at_cells, pulls, out):
    """``out = d[pulls]`` for the draws ``d`` that are ``draws`` at ``cells``."""
    for j in range(cells.size):
        at_cells[cells[j]] = draws[j]
    for k in range(pulls.shape[0]):
        for r in range(pulls.shape[1]):
            out[k, r] = at_cells[pulls[k, r]]
    return out


class _Block:
    """Every agent's pulls over a block of steps in one chunk of runs, until they are tallied."""

    def __init__(self, agents: int, length: int, ctx: Context, stationary: bool):
        shape = (agents, length, ctx.runs)
        self.arms = ctx.arms
        self.flat = np.empty(shape, dtype=np.int64)  # flat (arm, run) index of each pull
        self.reward = np.empty(shape)
        self.stationary = stationary
        if stationary:  # only moving means change the gap and rank of a pull
            shape = (0, 0, 0)
        self.gap = np.empty(shape)
        self.rank = np.empty(shape, dtype=np.uint8)
        self.chosen = np.empty((agents, ctx.runs))

    def record(self, row: int, pulls: np.ndarray, means: np.ndarray,
               best: np.ndarray) -> np.ndarray:
        """Keep the pulls ``[K, R]`` of a step at ``row``; return the true means of the pulled arms.

        On moving means also the gap ``best − q(A)`` of each pull and how many arms are better.
        """
        return _record(row, pulls, np.ascontiguousarray(means), best, not self.stationary,
                       self.flat, self.gap, self.rank, self.chosen)

    def tally(self, agent: int, start: int, n: int, tally: _Tally, cum: np.ndarray,
              count: np.ndarray, gaps: np.ndarray | None, ranks: np.ndarray | None) -> None:
        """Add an agent's steps ``start .. start + n - 1`` to ``tally``.

        ``cum`` carries each run's regret from block to block. An optimal pull is one of rank 0
        (no arm better), which is the same as a zero gap.
        """
        flat = self.flat[agent, :n]
        stop = start + n
        tally.reward[start:stop] += self.reward[agent, :n].sum(axis=1)
        running = np.empty((n, flat.shape[1]))  # each run's regret, summed step by step in order
        by_rank = np.zeros((n, self.arms), dtype=np.int64)
        if gaps is not None:
            _book_stationary(flat, gaps, ranks, cum, running, by_rank, count)
        else:
            _book_moving(flat, self.gap[agent, :n], self.rank[agent, :n], cum, running, by_rank,
                         count)
        tally.regret[start:stop] += running.sum(axis=1)
        tally.regret_sq[start:stop] += np.einsum("ij,ij->i", running, running)
        tally.by_rank[start:stop] += by_rank
        tally.optimal[start:stop] += by_rank[:, 0]


@kernel
def _record(row, pulls, means, best, moving, flat, gap, rank, chosen):
    """``_Block.record`` of every racer's pulls ``[K, R]`` (flat cells) at one step.

    ``flat[k, row] = pulls[k]``, ``chosen[k, r] = q(pulls[k, r])`` and, on moving means,
    ``gap[k, row, r] = best[r] − chosen[k, r]`` and ``rank[k, row, r]``: how many arms have a
    mean above ``chosen[k, r]``.
    """
    flat_means = means.reshape(-1)
    arms = means.shape[0]
    for k in range(pulls.shape[0]):
        for r in range(pulls.shape[1]):
            flat[k, row, r] = pulls[k, r]
            chosen[k, r] = flat_means[pulls[k, r]]
        if moving:
            for r in range(pulls.shape[1]):
                gap[k, row, r] = best[r] - chosen[k, r]
                better = 0
                for a in range(arms):
                    better += means[a, r] > chosen[k, r]
                rank[k, row, r] = better
    return chosen


@kernel
def _book_stationary(flat, gaps, ranks, cum, running, by_rank, count):
    """The pulls ``flat`` ``[n, R]`` of a block on fixed means, booked step after step.

    ``running[i, r] = cum[r] + Σ_{j ≤ i} gaps[flat[j, r]]`` (then ``cum = running[-1]``),
    ``by_rank[i, j]``: the pulls at step ``i`` of an arm with ``j`` better arms, ``count``:
    pulls of each cell.
    """
    n, runs = flat.shape
    for i in range(n):
        for r in range(runs):
            cell = flat[i, r]
            cum[r] += gaps[cell]
            running[i, r] = cum[r]
            by_rank[i, ranks[cell]] += 1
            count[cell] += 1


@kernel
def _book_moving(flat, gap, rank, cum, running, by_rank, count):
    """``_book_stationary`` with the gap and rank of each pull recorded as the means moved."""
    n, runs = flat.shape
    for i in range(n):
        for r in range(runs):
            cum[r] += gap[i, r]
            running[i, r] = cum[r]
            by_rank[i, rank[i, r]] += 1
            count[flat[i, r]] += 1


@on_warm_up
def _warm_up() -> None:
    """Compile (or load from disk) the booking loops for the argument types a race passes."""
    flat, cum, count = np.zeros((2, 3), dtype=np.int64), np.zeros(3), np.zeros(6, dtype=np.int64)
    running, by_rank = np.empty((2, 3)), np.zeros((2, 2), dtype=np.int64)
    _book_stationary(flat, np.zeros(6), np.zeros(6, dtype=np.uint8), cum, running, by_rank, count)
    moving = np.zeros((2, 2, 3))  # the block's [K, n, R] arrays, sliced as a tally slices them
    _book_moving(flat, moving[0, :2], moving.astype(np.uint8)[0, :2], cum, running, by_rank,
                 count)
    pulled, cells = np.empty(6, dtype=bool), np.empty(6, dtype=np.int64)
    pulls = _pulled_cells(flat.reshape(-1), pulled, cells)
    bits = _mixed_at(Noise(0).cells(np.arange(6)), pulls, _step_offset(Stream.REWARD, 0),
                     np.empty(6, dtype=np.uint64))
    _spread(bits.astype(np.float64), pulls, np.empty(6), flat, np.empty(flat.shape))
    ctx = Context(arms=3, runs=2, cells=np.zeros((3, 2), dtype=np.uint64), local=np.arange(2))
    means = np.zeros((3, 2))
    for stationary in (True, False):
        _Block(2, 4, ctx, stationary).record(1, flat[:, :2].copy(), means, means[0])
