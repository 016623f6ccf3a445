"""The engines: lanes of (run, setting) advanced one stream step at a time, and the α sweeps.

The engines gather the rows, call the readable step and book the episodes; a lane that passes
``DIVERGED`` is frozen and reported as diverged.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rlviz import returns
from rlviz.errors import InputError
from rlviz.prediction.steps import (
    n_step_td_step,
    offline_lambda_return_update,
    td_lambda_step,
    true_online_td_lambda_step,
)
from rlviz.prediction.walks import (
    DIVERGED,
    EXAMPLE_6_2,
    METHODS,
    Runs,
    Walk,
    _grid,
    _unit,
    _whole,
    sample_runs,
    true_values,
)

__all__ = [
    "Sweep",
    "SweepSummary",
    "TdVsMc",
    "constant_alpha_mc",
    "n_step_td",
    "offline_lambda_return",
    "run_sweep",
    "td_lambda",
    "td_vs_mc",
    "true_online_td_lambda",
]


# --------------------------------------------------------------------------- the lanes
class _Lanes:
    """Runs side by side in lock step, longest first: the runs still going are a prefix.

    Each run has ``M`` lanes (its settings). The engines keep one column per lane, ``[..., S,
    L]`` (leading axes, if any, are more settings that share the lane's other arrays: TD(λ)'s
    step sizes), lane ``position * M + j``; the runs still going at step ``k`` are the first
    ``active[k]`` positions, so their lanes are the first ``active[k] * M`` columns, and an
    engine narrows its arrays to those columns as runs end (``narrow``): a run that has ended
    is never read again, its values being in the snapshots.
    """

    def __init__(self, runs: Runs, per_run: int):
        self.runs = runs
        self.m = per_run
        self.order = np.argsort(-runs.run_lengths, kind="stable")  # position -> run
        self.position = np.argsort(self.order)  # run -> position
        self.states = np.ascontiguousarray(runs.states[self.order].T)  # [K, R]
        self.rewards = np.ascontiguousarray(runs.rewards[self.order].T)
        self.next_states = np.ascontiguousarray(runs.next_states[self.order].T)
        k = np.arange(runs.states.shape[1])
        active = (runs.run_lengths[self.order][None, :] > k[:, None]).sum(axis=1)  # [K]
        self.active: list[int] = active.tolist()  # runs going at step k
        self.shrinks = set(np.flatnonzero(np.diff(active, prepend=active[0])).tolist())
        episode = runs.episode_of_step[self.order].T  # [K, R]
        self.episode = episode
        first = np.zeros(episode.shape, dtype=bool)
        first[0] = True
        first[1:] = episode[1:] != episode[:-1]
        first &= episode < runs.n_episodes
        self.first = _by_step(first)  # positions starting an episode at step k (or None)
        self.last = _by_step(runs.dones[self.order].T)  # positions ending one at step k

    def start(self, walk: Walk) -> np.ndarray:
        """``[S, R * M]`` every lane's initial values, terminal rows 0."""
        return np.ascontiguousarray(_start_values(walk, (len(self.order) * self.m,)).T)

    def snapshots(self, v: np.ndarray) -> np.ndarray:
        """``[M, ..., R, E+1, S]`` room for the values after each episode, the start filled.

        Runs are in their own order here (not by position); the leading axes are ``v``'s.
        """
        *lead, n_states, _ = v.shape
        n_runs = len(self.order)
        out = np.empty((self.m, *lead, n_runs, self.runs.n_episodes + 1, n_states))
        out[..., self.order, 0, :] = _by_lane(v.reshape(*lead, n_states, n_runs, self.m))
        return out

    def columns(self, positions: np.ndarray) -> np.ndarray:
        """The lanes (columns) of some positions."""
        return (positions[:, None] * self.m + np.arange(self.m)).ravel()

    def narrow(self, k: int, *arrays: np.ndarray) -> list[np.ndarray]:
        """The arrays cut to the lanes of the runs going at step ``k`` (the same if all are).

        Only the steps in ``shrinks`` have fewer runs going than the step before.
        """
        width = self.active[k] * self.m
        return [x if x.shape[-1] == width else np.ascontiguousarray(x[..., :width])
                for x in arrays]

    def record(self, snaps: np.ndarray, v: np.ndarray, k: int) -> None:
        """Store the values of the runs whose episode ended at step ``k``."""
        pos = self.last[k]
        if pos is not None:
            lanes = v.reshape(*v.shape[:-1], -1, self.m)[..., pos, :]  # [..., S, P', M]
            snaps[..., self.order[pos], self.episode[k, pos] + 1, :] = _by_lane(lanes)

    def in_run_order(self, per_position: np.ndarray) -> np.ndarray:
        """``[R, ...]`` an array over positions, back in the order of the runs."""
        return per_position[self.position]


def _by_lane(x: np.ndarray) -> np.ndarray:
    """``[..., S, P, M]`` values of ``P`` positions' lanes as ``[M, ..., P, S]``."""
    d = x.ndim
    return x.transpose(d - 1, *range(d - 3), d - 2, d - 3)


def _by_step(flags: np.ndarray) -> list[np.ndarray | None]:
    """``[K, R]`` flags as the flagged positions of each step (None where there are none)."""
    k, pos = np.nonzero(flags)
    out: list[np.ndarray | None] = [None] * flags.shape[0]
    if k.size:
        cuts = np.flatnonzero(np.diff(k)) + 1
        for step, group in zip(k[np.r_[0, cuts]].tolist(), np.split(pos, cuts), strict=True):
            out[step] = group
    return out


def _start_values(walk: Walk, shape: tuple[int, ...]) -> np.ndarray:
    """``[*shape, n+2]`` the walk's initial estimates, terminals 0."""
    v = np.full((*shape, walk.n_states + 2), walk.initial_value)
    v[..., [0, -1]] = 0.0
    return v


def _freeze(alpha: np.ndarray, diverged: np.ndarray, bad: np.ndarray, episode) -> None:
    """Stop the lanes flagged ``bad`` (α = 0) and note the episode (1-based) they diverged in.

    ``alpha``, ``diverged`` and ``bad`` have one shape; ``episode``, each lane's current episode
    (0-based), broadcasts to it.
    """
    fresh = bad & (diverged == 0)
    alpha[fresh] = 0.0
    diverged[fresh] = np.broadcast_to(np.asarray(episode) + 1, bad.shape)[fresh]


def _check(delta: np.ndarray, alpha: np.ndarray, diverged: np.ndarray, v: np.ndarray,
           lanes: _Lanes, k: int) -> None:
    """Freeze the lanes whose TD error ``delta`` ``[..., na * M]`` passed ``DIVERGED`` at step k.

    ``alpha`` and ``diverged`` ``[..., R * M]`` are by lane, ``v`` the engine's ``[..., S,
    na * M]`` values. A frozen lane's values are cleared as well: they are reported as NaN from
    this episode on and never read, and cleared they give small TD errors (α is 0), so only the
    lanes still going are ever frozen here.
    """
    size = np.abs(delta)
    if np.maximum.reduce(size, axis=None) <= DIVERGED:
        return
    *setting, lane = np.nonzero(size > DIVERGED)
    alpha[(*setting, lane)] = 0.0
    diverged[(*setting, lane)] = lanes.episode[k, lane // lanes.m] + 1
    v[(*setting, slice(None), lane)] = 0.0


# --------------------------------------------------------------------------- results
@functools.cache
def _t975(dof: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, dof))


def _mean_band(x: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """Mean and 95% t-interval half-width along ``axis``; inf (and 0) where any entry is inf."""
    n = x.shape[axis]
    each = np.isfinite(x)
    if each.all():
        mean = x.mean(axis=axis)
        spread = x.std(axis=axis, ddof=1) if n > 1 else np.zeros_like(mean)
        return mean, _t975(max(n - 1, 1)) * spread / math.sqrt(n)
    finite = each.all(axis=axis)
    safe = np.where(each, x, 0.0)
    mean = np.where(finite, safe.mean(axis=axis), np.inf)
    half = np.zeros_like(mean)
    if n > 1:
        half = np.where(finite, _t975(n - 1) * safe.std(axis=axis, ddof=1) / math.sqrt(n), 0.0)
    return mean, half


@dataclass(frozen=True)
class SweepSummary:
    """What the page draws of a sweep: means over runs with 95% bands, and one run's estimates."""

    method: str
    params: np.ndarray  # [P] n or λ
    alphas: np.ndarray  # [A]
    curve: np.ndarray  # [P, A] RMS error averaged over episodes 1..E, then runs (inf: diverged)
    curve_half: np.ndarray  # [P, A] its 95% half-width over runs
    by_episode: np.ndarray  # [P, A, E+1] RMS error after e episodes, mean over runs
    by_episode_half: np.ndarray  # [P, A, E+1]
    values: np.ndarray  # [P, A, E+1, n] estimates after e episodes, mean over runs (NaN: diverged)
    values_half: np.ndarray  # [P, A, E+1, n]
    first_run: np.ndarray  # [P, A, E+1, n] run 1's estimates (NaN once it diverged)
    diverged: np.ndarray  # [P, A] int, runs that diverged
    true_values: np.ndarray  # [n]
    runs: int
    episodes: int

    @property
    def best_alpha(self) -> np.ndarray:
        """``[P]`` index of each curve's lowest finite point (-1 if none)."""
        finite = np.isfinite(self.curve)
        masked = np.where(finite, self.curve, np.inf)
        return np.where(finite.any(axis=1), masked.argmin(axis=1), -1)

    @property
    def best(self) -> tuple[int, int]:
        """``(p, a)`` of the lowest point of all."""
        p, a = np.unravel_index(np.argmin(np.where(np.isfinite(self.curve), self.curve, np.inf)),
                                self.curve.shape)
        return int(p), int(a)

    @property
    def best_error(self) -> float:
        """The RMS error there."""
        p, a = self.best
        return float(self.curve[p, a])

    def only(self, p: int) -> SweepSummary:
        """The ``p``-th n or λ alone: what sweeping it by itself gives (lanes are independent)."""
        one = slice(p, p + 1)
        return dataclasses.replace(
            self, params=self.params[one], curve=self.curve[one],
            curve_half=self.curve_half[one], by_episode=self.by_episode[one],
            by_episode_half=self.by_episode_half[one], values=self.values[one],
            values_half=self.values_half[one], first_run=self.first_run[one],
            diverged=self.diverged[one])


@dataclass(frozen=True)
class Sweep:
    """One method on an ``[n or λ, α, run]`` grid: every estimate after every episode."""

    method: str
    params: np.ndarray  # [P] n (n-step TD) or λ
    alphas: np.ndarray  # [A]
    values: np.ndarray  # [P, A, R, E+1, n] estimates after e episodes (NaN once diverged)
    errors: np.ndarray  # [P, A, R, E+1] RMS error over the n states (inf once diverged)
    diverged_in: np.ndarray  # [P, A, R] int, the episode a run diverged in (0: never)
    true_values: np.ndarray  # [n]
    gamma: float

    @property
    def average_error(self) -> np.ndarray:
        """``[P, A, R]`` each run's RMS error averaged over episodes 1..E (the book's measure)."""
        return self.errors[..., 1:].mean(axis=-1)

    def summary(self) -> SweepSummary:
        """Means over runs with 95% bands (t-intervals), as drawn."""
        curve, curve_half = _mean_band(self.average_error, axis=2)
        by_ep, by_ep_half = _mean_band(self.errors, axis=2)
        values = np.empty(self.values.shape[:2] + self.values.shape[3:])
        values_half = np.empty_like(values)
        for p in range(values.shape[0]):  # one n or λ at a time: small scratch arrays
            x = self.values[p]
            if self.diverged_in[p].any():  # NaN once a run diverged: not shown
                ok = np.isfinite(x).all(axis=1)
                mean, half = _mean_band(np.where(ok[:, None], x, 0.0), axis=1)
                mean, half = np.where(ok, mean, np.nan), np.where(ok, half, np.nan)
            else:
                mean, half = _mean_band(x, axis=1)
            values[p], values_half[p] = mean, half
        return SweepSummary(
            method=self.method, params=self.params, alphas=self.alphas, curve=curve,
            curve_half=curve_half, by_episode=by_ep, by_episode_half=by_ep_half,
            values=values, values_half=values_half,
            first_run=self.values[:, :, 0], diverged=(self.diverged_in > 0).sum(axis=2),
            true_values=self.true_values, runs=int(self.values.shape[2]),
            episodes=int(self.values.shape[3] - 1),
        )


def _sweep(method: str, lanes: _Lanes, snaps: np.ndarray, diverged: np.ndarray,
           params: np.ndarray, alphas: np.ndarray, gamma: float) -> Sweep:
    """Package an engine's snapshots ``[M, ..., R, E+1, S]`` as a ``Sweep``.

    ``M × ...`` is ``P × A``; ``diverged`` is ``[R * M]`` by lane, or ``[A, R * P]`` with TD(λ)'s
    step sizes in front.
    """
    runs = lanes.runs
    p, a = params.size, alphas.size
    v = snaps.reshape(p, a, *snaps.shape[-3:])[..., 1:-1]  # [P, A, R, E+1, n]
    by_run = diverged.reshape(*diverged.shape[:-1], -1, lanes.m)[..., lanes.position, :]
    div = np.moveaxis(np.moveaxis(by_run, -2, -1), -2, 0).reshape(p, a, -1)  # [P, A, R]
    return _finish(method, runs.walk, params, alphas, gamma, v, div)


def _finish(method: str, walk: Walk, params: np.ndarray, alphas: np.ndarray, gamma: float,
            v: np.ndarray, div: np.ndarray) -> Sweep:
    """A ``Sweep`` from the estimates ``[P, A, R, E+1, n]``: errors, and NaN after divergence."""
    truth = true_values(walk, gamma)[1:-1]
    errors = np.empty(v.shape[:-1])
    for p in range(v.shape[0]):  # one n or λ at a time: a small scratch array, reused
        gap = v[p] - truth
        errors[p] = np.sqrt(np.square(gap, out=gap).mean(axis=-1))
    if div.any():  # (in place: v is the engine's own array)
        n_eps = v.shape[3] - 1
        after = np.arange(n_eps + 1) >= np.where(div > 0, div, n_eps + 1)[..., None]
        v[after] = np.nan
        errors[after] = np.inf
    return Sweep(method, params, alphas, v, errors, div, truth, gamma)


# --------------------------------------------------------------------------- the engines
def n_step_td(runs: Runs, *, ns: Sequence[int], alphas: Sequence[float],
              gamma: float = 1.0) -> Sweep:
    r"""n-step TD prediction for every ``n``, ``α`` and run at once (Sutton & Barto 2018, §7.1).

    The book's algorithm updates ``S_τ`` at time ``τ + n − 1`` (or at the episode's end), after
    every update of the steps before ``τ``; so doing the updates in stream order, one step ``τ``
    at a time, is that algorithm exactly. The rewards part of each n-step return is the same for
    every α and comes from ``rlviz.returns.n_step_returns``; the bootstrap ``V(S_{τ+n})`` is read
    when the update is made, from the values of that moment.

    Args:
        runs: The episodes (``sample_runs``).
        ns: ``[P]`` the n to try, each at least 1 (an n past an episode's length is Monte Carlo).
        alphas: ``[A]`` step sizes in ``[0, 1]``.
        gamma: Discount ``γ`` in ``[0, 1]`` (the book's walks use 1).

    Returns:
        The sweep, ``params`` the n.
    """
    ns_ = np.array([_whole("n", n) for n in np.atleast_1d(ns)], dtype=np.int64)
    alphas_ = _grid("α", alphas)
    gamma = _unit("γ", gamma)
    p, a = ns_.size, alphas_.size
    lanes = _Lanes(runs, p * a)
    n_runs, n_steps = lanes.states.shape[1], lanes.states.shape[0]
    # The rewards part of every step's n-step return and the state it bootstraps from, [K, R, P]:
    # the same for every α, computed on all the runs' steps laid end to end.
    real = runs.episode_of_step < runs.n_episodes  # [R, K] the steps that exist
    run, step = np.nonzero(real)
    rewards, dones = runs.rewards[run, step], runs.dones[run, step]
    ends = runs.episode_end[run, step]
    zero = np.zeros(run.size)
    sums = [returns.n_step_returns(rewards, zero, gamma=gamma, n=int(n), dones=dones) for n in ns_]
    # S_{τ+n} is the next state of step τ + n − 1, or of the episode's last step if that is sooner
    boots = [runs.next_states[run, np.minimum(step + n - 1, ends)] for n in ns_]
    row = step * n_runs + lanes.position[run]  # each step's row of [K, R]
    reward_sums = np.zeros((n_steps * n_runs, p))
    reward_sums[row] = np.stack(sums, axis=1)
    reward_sums = reward_sums.reshape(n_steps, n_runs, p)
    boot = np.zeros((n_steps * n_runs, p), dtype=np.int64)
    boot[row] = np.stack(boots, axis=1)
    boot = boot.reshape(n_steps, n_runs, p)
    discount = np.tile(np.repeat(gamma ** ns_.astype(np.float64), a), n_runs)
    alpha = np.tile(alphas_, n_runs * p)
    v = lanes.start(runs.walk)
    snaps = lanes.snapshots(v)
    m = p * a
    for k in range(n_steps):
        na = lanes.active[k]
        if k in lanes.shrinks:
            (v,) = lanes.narrow(k, v)
        n_step_td_step(v, lanes.states[k, :na].repeat(m), reward_sums[k, :na].repeat(a),
                       boot[k, :na].repeat(a), discount[: na * m], alpha[: na * m])
        lanes.record(snaps, v, k)
    return _sweep("n_step", lanes, snaps, np.zeros(n_runs * m, dtype=np.int64), ns_, alphas_,
                  gamma)


def constant_alpha_mc(runs: Runs, *, alphas: Sequence[float], gamma: float = 1.0) -> Sweep:
    r"""Constant-α Monte Carlo (Sutton & Barto 2018, eq. 6.1): n-step TD with n past every end.

    .. math:: V(S_t) \leftarrow V(S_t) + \alpha\,[G_t - V(S_t)]

    made for ``t = 0 … T−1`` in order once the episode is over (every visit counts).
    """
    longest = int(runs.lengths.max())
    sweep = n_step_td(runs, ns=[longest], alphas=alphas, gamma=gamma)
    return Sweep("monte_carlo", np.array([np.inf]), sweep.alphas, sweep.values, sweep.errors,
                 sweep.diverged_in, sweep.true_values, sweep.gamma)


def td_lambda(runs: Runs, *, lams: Sequence[float], alphas: Sequence[float],
              gamma: float = 1.0, offline: bool = False) -> Sweep:
    r"""TD(λ) with accumulating traces for every ``λ``, ``α`` and run at once (§12.2).

    Online (Figure 12.6) each step's ``αδz`` changes the values at once; with ``offline`` the
    increments are summed over the episode and applied at its end, which makes exactly the
    offline λ-return algorithm's updates (the forward and backward views agree).

    Args:
        runs: The episodes.
        lams: ``[P]`` trace decays in ``[0, 1]``.
        alphas: ``[A]`` step sizes in ``[0, 1]``.
        gamma: Discount ``γ``.
        offline: Apply the updates at each episode's end.

    Returns:
        The sweep, ``params`` the λ.
    """
    lams_, alphas_ = _grid("λ", lams), _grid("α", alphas)
    gamma = _unit("γ", gamma)
    p, a = lams_.size, alphas_.size
    lanes = _Lanes(runs, p)  # a lane per run and λ; its step sizes share its trace
    n_runs = len(lanes.order)
    v = lanes.start(runs.walk)[None].repeat(a, axis=0)  # [A, S, R * P]
    z = np.zeros(v.shape[1:])
    dv = np.zeros_like(v) if offline else None
    snaps = lanes.snapshots(v)  # [P, A, R, E+1, S]
    lam = np.tile(lams_, n_runs)
    alpha = np.repeat(alphas_[:, None], n_runs * p, axis=1)  # [A, R * P]
    diverged = np.zeros(alpha.shape, dtype=np.int64)
    for k in range(lanes.states.shape[0]):
        na = lanes.active[k]
        if k in lanes.shrinks and dv is None:
            v, z = lanes.narrow(k, v, z)
        elif k in lanes.shrinks:
            v, z, dv = lanes.narrow(k, v, z, dv)
        starting = lanes.first[k]
        if starting is not None:
            z[:, lanes.columns(starting)] = 0.0
        n = na * p
        delta = td_lambda_step(
            v, z, lanes.states[k, :na].repeat(p), lanes.rewards[k, :na].repeat(p),
            lanes.next_states[k, :na].repeat(p), gamma=gamma, lam=lam[:n], alpha=alpha[:, :n],
            out=dv)
        if dv is None:
            _check(delta, alpha, diverged, v, lanes, k)
        else:
            ended = lanes.last[k]
            if ended is not None:
                cols = lanes.columns(ended)
                v[..., cols] += dv[..., cols]  # the episode's summed updates, at its end
                dv[..., cols] = 0.0
                bad = np.abs(v[..., cols]).max(axis=-2) > DIVERGED  # [A, lanes ended]
                if bad.any():
                    alpha_, diverged_ = alpha[:, cols], diverged[:, cols]
                    _freeze(alpha_, diverged_, bad, lanes.episode[k, ended].repeat(p))
                    alpha[:, cols], diverged[:, cols] = alpha_, diverged_
        lanes.record(snaps, v, k)
    return _sweep("offline_td_lambda" if offline else "td_lambda", lanes, snaps, diverged,
                  lams_, alphas_, gamma)


def true_online_td_lambda(runs: Runs, *, lams: Sequence[float], alphas: Sequence[float],
                          gamma: float = 1.0) -> Sweep:
    r"""True online TD(λ) for every ``λ``, ``α`` and run at once (§12.5, Figure 12.8).

    It makes, step by step, the same values as the online λ-return algorithm
    (``online_lambda_return``), at the cost of TD(λ).

    Args:
        runs: The episodes.
        lams: ``[P]`` trace decays in ``[0, 1]``.
        alphas: ``[A]`` step sizes in ``[0, 1]``.
        gamma: Discount ``γ``.

    Returns:
        The sweep, ``params`` the λ.
    """
    lams_, alphas_ = _grid("λ", lams), _grid("α", alphas)
    gamma = _unit("γ", gamma)
    p, a = lams_.size, alphas_.size
    m = p * a
    lanes = _Lanes(runs, m)
    n_runs = len(lanes.order)
    v = lanes.start(runs.walk)
    z = np.zeros_like(v)
    v_old = np.zeros(v.shape[1])
    snaps = lanes.snapshots(v)
    lam = np.tile(np.repeat(lams_, a), n_runs)
    alpha = np.tile(alphas_, n_runs * p)
    diverged = np.zeros(n_runs * m, dtype=np.int64)
    for k in range(lanes.states.shape[0]):
        na = lanes.active[k]
        if k in lanes.shrinks:
            v, z, v_old = lanes.narrow(k, v, z, v_old)
        starting = lanes.first[k]
        if starting is not None:
            cols = lanes.columns(starting)
            z[:, cols] = 0.0
            v_old[cols] = 0.0
        rows = slice(0, na * m)
        delta = true_online_td_lambda_step(
            v, z, v_old, lanes.states[k, :na].repeat(m), lanes.rewards[k, :na].repeat(m),
            lanes.next_states[k, :na].repeat(m), gamma=gamma, lam=lam[rows], alpha=alpha[rows])
        _check(delta, alpha, diverged, v, lanes, k)
        lanes.record(snaps, v, k)
    return _sweep("true_online", lanes, snaps, diverged, lams_, alphas_, gamma)


def _offline_engine(runs: Runs, alphas: np.ndarray, params: np.ndarray, update) -> tuple:
    """Episode by episode, every run at once: ``update(v[:, p], run, s, r, done, p, alpha)``."""
    n_runs, p, a = runs.n_runs, params.size, alphas.size
    v = _start_values(runs.walk, (n_runs, p, a))
    snaps = np.empty((p, a, n_runs, runs.n_episodes + 1, v.shape[-1]))  # as a Sweep holds them
    snaps[:, :, :, 0] = v.transpose(1, 2, 0, 3)
    alpha = np.broadcast_to(alphas, (n_runs, p, a)).copy()
    diverged = np.zeros((n_runs, p, a), dtype=np.int64)
    episode_of_step = runs.episode_of_step
    for e in range(runs.n_episodes):
        run, step = np.nonzero(episode_of_step == e)
        s, r, done = runs.states[run, step], runs.rewards[run, step], runs.dones[run, step]
        for i in range(p):
            update(v[:, i], run, s, r, done, i, alpha[:, i])
        _freeze(alpha, diverged, np.abs(v).max(axis=-1) > DIVERGED, e)
        snaps[:, :, :, e + 1] = v.transpose(1, 2, 0, 3)
    return snaps, diverged


def _offline_sweep(method, runs, params, alphas, gamma, snaps, diverged) -> Sweep:
    v = snaps[..., 1:-1]  # [P, A, R, E+1, n]
    return _finish(method, runs.walk, params, alphas, gamma, v, np.moveaxis(diverged, 0, 2))


def offline_lambda_return(runs: Runs, *, lams: Sequence[float], alphas: Sequence[float],
                          gamma: float = 1.0) -> Sweep:
    r"""The offline λ-return algorithm for every ``λ``, ``α`` and run at once (Figure 12.3).

    Each episode's λ-returns are computed with the values of its start
    (``rlviz.returns.lambda_returns``, every run's episode in one call per λ) and the updates
    made at its end (``offline_lambda_return_update``).

    Args:
        runs: The episodes.
        lams: ``[P]`` λ in ``[0, 1]``.
        alphas: ``[A]`` step sizes in ``[0, 1]``.
        gamma: Discount ``γ``.

    Returns:
        The sweep, ``params`` the λ.
    """
    lams_, alphas_ = _grid("λ", lams), _grid("α", alphas)
    gamma = _unit("γ", gamma)

    def update(v, run, s, r, done, i, alpha):
        offline_lambda_return_update(v, run, s, r, done, gamma=gamma, lam=float(lams_[i]),
                                     alpha=alpha)

    snaps, diverged = _offline_engine(runs, alphas_, lams_, update)
    return _offline_sweep("offline_lambda_return", runs, lams_, alphas_, gamma, snaps, diverged)


def run_sweep(method: str, runs: Runs, *, params: Sequence[float],
              alphas: Sequence[float]) -> Sweep:
    """One of ``METHODS`` by name (the page's α sweep)."""
    if method == "n_step":
        return n_step_td(runs, ns=[int(n) for n in params], alphas=alphas)
    if method == "offline_lambda_return":
        return offline_lambda_return(runs, lams=params, alphas=alphas)
    if method == "td_lambda":
        return td_lambda(runs, lams=params, alphas=alphas)
    if method == "true_online":
        return true_online_td_lambda(runs, lams=params, alphas=alphas)
    raise InputError(f"the method must be one of {', '.join(METHODS)}; got {method!r}")


# --------------------------------------------------------------------------- Example 6.2
@dataclass(frozen=True)
class TdVsMc:
    """Example 6.2: TD(0) against constant-α Monte Carlo on the 5-state walk, paired episodes."""

    td_alphas: np.ndarray  # [3]
    mc_alphas: np.ndarray  # [4]
    td_error: np.ndarray  # [3, E+1] RMS error over the 5 states after e episodes, mean over runs
    td_half: np.ndarray  # [3, E+1] its 95% half-width
    mc_error: np.ndarray  # [4, E+1]
    mc_half: np.ndarray  # [4, E+1]
    shown: tuple[int, ...]  # the episodes after which the estimates are shown
    estimates: np.ndarray  # [len(shown), 5] TD(0) at α = 0.1, run 1
    true_values: np.ndarray  # [5]
    runs: int
    episodes: int


def td_vs_mc(*, runs: int, seed: int, episodes: int = EXAMPLE_6_2["episodes"]) -> TdVsMc:
    """Example 6.2: TD(0) (n-step TD, n = 1) and constant-α MC on the same episodes.

    Constant-α MC is n-step TD with n past the longest episode (``constant_alpha_mc``).

    Args:
        runs: Independent runs (the book: 100).
        seed: Seeds the episodes.
        episodes: Episodes per run (the book: 100).

    Returns:
        The errors of every step size after every episode, and run 1's TD(0) estimates.
    """
    walk_runs = sample_runs(5, runs=runs, episodes=episodes, seed=seed)
    td_alphas, mc_alphas = EXAMPLE_6_2["td"], EXAMPLE_6_2["mc"]
    # One sweep: n = 1 is TD(0), an n past every episode's end is constant-α MC.
    both = n_step_td(walk_runs, ns=[1, int(walk_runs.lengths.max())],
                     alphas=td_alphas + mc_alphas)
    td_error, td_half = _mean_band(both.errors[0, : len(td_alphas)], axis=1)
    mc_error, mc_half = _mean_band(both.errors[1, len(td_alphas) :], axis=1)
    shown = tuple(e for e in EXAMPLE_6_2["shown"] if e <= episodes)
    at = td_alphas.index(EXAMPLE_6_2["alpha_shown"])
    return TdVsMc(
        td_alphas=np.array(td_alphas), mc_alphas=np.array(mc_alphas), td_error=td_error,
        td_half=td_half, mc_error=mc_error, mc_half=mc_half, shown=shown,
        estimates=both.values[0, at, 0][list(shown)], true_values=both.true_values,
        runs=int(runs), episodes=int(episodes),
    )
