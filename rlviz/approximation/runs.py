"""Runs: the steps repeated, sampled or in expectation, with their weights recorded."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.approximation.problem import (
    DIVERGED,
    MAX_STEPS,
    Problem,
    _count,
    _number,
    projected_bellman_error,
    value_error,
)
from rlviz.approximation.steps import (
    Transitions,
    emphasis_step,
    expected_etd_step,
    expected_td_step,
    expected_tdc_step,
    semi_gradient_td_step,
    tdc_step,
)

__all__ = [
    "Run",
    "n_step_model",
    "run_expected_etd",
    "run_expected_tdc",
    "run_expected_td",
    "run_td",
    "run_tdc",
]


# --------------------------------------------------------------------------- runs
RECORDED = 1000
"""Runs keep their weights at about this many evenly spaced steps (and at every stop)."""


@dataclass(frozen=True)
class Run:
    """The weights of one method over time and their errors, run by run.

    A run whose weights pass ``DIVERGED`` stops there: its later entries repeat its last
    weights, and ``stopped`` says at which step that happened.
    """

    method: str
    t: np.ndarray  # [K] the steps (sampled) or sweeps (expected) recorded, from 0
    weights: np.ndarray  # [K, R, F] w at those steps (R = 1 for expected runs)
    value_error: np.ndarray  # [K, R] √VE
    pbe: np.ndarray  # [K, R] √PBE
    stopped: np.ndarray  # [R] the step whose update took the run past DIVERGED, or -1
    on_policy: bool = False

    @property
    def steps(self) -> int:
        """The last step (or sweep) recorded."""
        return int(self.t[-1])

    @property
    def diverged_at(self) -> int | None:
        """The first step at which any run passed ``DIVERGED``, or None."""
        hit = self.stopped[self.stopped >= 0]
        return int(hit.min()) if hit.size else None

    @property
    def live(self) -> int:
        """How many recorded steps come before any run stopped: the span a mean may cover."""
        if self.diverged_at is None:
            return self.t.size
        return int(np.searchsorted(self.t, self.diverged_at, side="right"))

    @property
    def final(self) -> np.ndarray:
        """Mean weights over runs at the last live step ``[F]``."""
        return self.weights[self.live - 1].mean(axis=0)

    def select(self, which: np.ndarray, *, on_policy: bool) -> Run:
        """The runs picked by a boolean mask ``[R]``."""
        return Run(method=self.method, t=self.t, weights=self.weights[:, which],
                   value_error=self.value_error[:, which], pbe=self.pbe[:, which],
                   stopped=self.stopped[which], on_policy=on_policy)


class _Recorder:
    """Keeps the weights every ``ceil(steps / RECORDED)`` steps, the last step, and stops."""

    def __init__(self, steps: int, w: np.ndarray):
        self.every, self.last = max(1, -(-steps // RECORDED)), steps
        self.t, self.w = [0], [w]

    def __call__(self, t: int, w: np.ndarray, *, force: bool = False) -> None:
        if force or t % self.every == 0 or t == self.last:
            if self.t[-1] != t:
                self.t.append(t)
                self.w.append(w)

    def run(self, problem: Problem, method: str, stopped: np.ndarray,
            on_policy: bool = False) -> Run:
        weights = np.stack(self.w)
        if weights.ndim == 2:
            weights = weights[:, None, :]
        return Run(method=method, t=np.array(self.t), weights=weights,
                   value_error=value_error(problem, weights),
                   pbe=projected_bellman_error(problem, weights), stopped=np.asarray(stopped),
                   on_policy=on_policy)


class _Watch:
    """Finds runs whose weights passed ``DIVERGED``; each run is reported once."""

    def __init__(self, runs: int):
        self.limit = np.full(runs, DIVERGED)
        self.stopped = np.full(runs, -1)

    def __call__(self, t: int, *arrays: np.ndarray) -> np.ndarray | None:
        size = np.max([np.abs(a).max(axis=-1) for a in arrays], axis=0)
        past = ~(size <= self.limit)  # NaN counts as past
        if not past.any():
            return None
        self.stopped[past] = t
        self.limit[past] = np.inf
        return past


def run_td(problem: Problem, experience: Transitions, *, alpha: float) -> Run:
    """Off-policy semi-gradient TD(0) on sampled experience, every stream side by side.

    A stream stops when its weights pass ``DIVERGED``: its remaining ratios are set to 0, so
    the same step leaves its weights where they were.
    """
    alpha = _number("The step size α", alpha, 0.0, 1.0, open_lo=True)
    x = problem.features[experience.states]  # [T+1, R, F]
    rho, watch, steps = experience.rho.copy(), _Watch(x.shape[1]), experience.actions.shape[0]
    w = np.tile(problem.start_weights, (x.shape[1], 1))
    record, live = _Recorder(steps, w), None  # live: 1 for running streams, once one stops
    for t in range(steps):
        w = semi_gradient_td_step(w, x[t], x[t + 1], experience.rewards[t], rho[t],
                                  gamma=problem.gamma, alpha=alpha)
        size = np.abs(w).max() if live is None else (np.abs(w) * live).max()
        past = watch(t + 1, w) if size > DIVERGED else None
        record(t + 1, w, force=past is not None)
        if past is not None:
            rho[t + 1 :, past] = 0.0
            live = (watch.stopped < 0)[:, None].astype(float)
    return record.run(problem, "semi-gradient TD", watch.stopped)


def run_tdc(problem: Problem, experience: Transitions, *, alpha: float, beta: float) -> Run:
    """TDC on sampled experience (secondary weights ``v`` start at 0), every stream side by side.

    Streams stop as in ``run_td`` once ``w`` passes ``DIVERGED`` (a diverging ``v`` drives ``w``
    past it within a step or two, through the correction term).
    """
    alpha = _number("TDC's step size α", alpha, 0.0, 1.0, open_lo=True)
    beta = _number("TDC's step size β", beta, 0.0, 1.0, open_lo=True)
    x = problem.features[experience.states]
    rho, watch, steps = experience.rho.copy(), _Watch(x.shape[1]), experience.actions.shape[0]
    w = np.tile(problem.start_weights, (x.shape[1], 1))
    v = np.zeros_like(w)
    record, live = _Recorder(steps, w), None
    for t in range(steps):
        w, v = tdc_step(w, v, x[t], x[t + 1], experience.rewards[t], rho[t],
                        gamma=problem.gamma, alpha=alpha, beta=beta)
        # v reaches w through the correction term, so a growing v shows in w a step later.
        size = np.abs(w).max() if live is None else (np.abs(w) * live).max()
        past = watch(t + 1, w, v) if size > DIVERGED else None
        record(t + 1, w, force=past is not None)
        if past is not None:
            rho[t + 1 :, past] = 0.0
            live = (watch.stopped < 0)[:, None].astype(float)
    return record.run(problem, "TDC", watch.stopped)


def n_step_model(problem: Problem, n: int | None) -> tuple[np.ndarray, np.ndarray, float]:
    r"""The n-step model of π: ``(Pⁿ, Σ_{k<n} γᵏ Pᵏ r_π, γⁿ)``; ``n = None`` is Monte Carlo.

    The n-step return's expectation is ``r_n + γⁿ Pⁿ v̂``, so the expected n-step update is the
    one-step update on this model. Monte Carlo (n → ∞) targets ``v_π`` itself: ``(0, v_π, 0)``.
    """
    p, r, gamma = problem.target_matrix, problem.target_rewards, problem.gamma
    if n is None:
        return np.zeros_like(p), problem.true_values, 0.0
    power, reward = np.eye(p.shape[0]), np.zeros_like(r)
    for k in range(n):
        reward = reward + gamma**k * power @ r
        power = power @ p
    return power, reward, gamma**n


def run_expected_td(problems: list[Problem], *, alpha: float, steps: int,
                    on_policy: list[bool], n: list[int | None] | None = None) -> list[Run]:
    """Semi-gradient DP (expected n-step TD) on several problems at once, one sweep per step.

    The problems must share their number of states; features are padded with zero columns to
    the widest (a zero feature's weight never moves). Each problem stops on its own once its
    weights pass ``DIVERGED``.

    Args:
        problems: ``B`` problems.
        alpha: Step size α.
        steps: Sweeps to run.
        on_policy: Per problem: update in π's own distribution (else the behaviour's).
        n: Per problem: bootstrap after n steps (None: Monte Carlo); 1 when not given.
    """
    alpha = _number("The step size α", alpha, 0.0, 1.0, open_lo=True)
    steps = _count("Sweeps", steps, 1, MAX_STEPS)
    n = [1] * len(problems) if n is None else n
    width = max(pb.features.shape[1] for pb in problems)

    def pad(a: np.ndarray) -> np.ndarray:
        return np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, width - a.shape[-1])])

    models = [n_step_model(pb, k) for pb, k in zip(problems, n, strict=True)]
    x = np.stack([pad(pb.features) for pb in problems])  # [B, S, F]
    d = np.stack([pb.distribution(on) for pb, on in zip(problems, on_policy, strict=True)])
    p = np.stack([m[0] for m in models])
    r = np.stack([m[1] for m in models])
    g = np.array([m[2] for m in models])
    w = np.stack([pad(pb.start_weights) for pb in problems])
    watch, record = _Watch(len(problems)), _Recorder(steps, w)
    alive = np.ones((len(problems), 1), dtype=bool)
    for t in range(steps):
        w = np.where(alive, expected_td_step(w, x, d, p, r, gamma=g, alpha=alpha), w)
        past = watch(t + 1, w) if (np.abs(w) * alive).max() > DIVERGED else None
        record(t + 1, w, force=past is not None)
        if past is not None:
            alive[past] = False
            if not alive.any():
                break
    weights = np.stack(record.w)  # [K, B, F]
    return [
        _Recorder.run(_one(record, weights[:, b, : pb.features.shape[1]]), pb,
                      "semi-gradient DP", watch.stopped[b : b + 1], on_policy[b])
        for b, pb in enumerate(problems)
    ]


def _one(record: _Recorder, weights: np.ndarray) -> _Recorder:
    """A recorder holding one problem's slice of a batch's records."""
    out = _Recorder.__new__(_Recorder)
    out.every, out.last, out.t, out.w = record.every, record.last, record.t, list(weights)
    return out


def run_expected_tdc(problem: Problem, *, alpha: float, beta: float, steps: int) -> Run:
    """Expected TDC from the start weights (``v`` = 0), updating in the behaviour's distribution."""
    alpha = _number("TDC's step size α", alpha, 0.0, 1.0, open_lo=True)
    beta = _number("TDC's step size β", beta, 0.0, 1.0, open_lo=True)
    steps = _count("Sweeps", steps, 1, MAX_STEPS)
    x, d = problem.features, problem.behaviour_distribution
    p, r = problem.target_matrix, problem.target_rewards
    w, v = problem.start_weights.copy(), np.zeros_like(problem.start_weights)
    watch, record = _Watch(1), _Recorder(steps, w)
    for t in range(steps):
        w, v = expected_tdc_step(w, v, x, d, p, r, gamma=problem.gamma, alpha=alpha, beta=beta)
        if max(np.abs(w).max(), np.abs(v).max()) > DIVERGED:
            watch(t + 1, w, v)
            record(t + 1, w, force=True)
            break
        record(t + 1, w)
    return record.run(problem, "expected TDC", watch.stopped)


def run_expected_etd(problem: Problem, *, alpha: float, steps: int, interest: float = 1.0) -> Run:
    """Expected one-step emphatic TD from the start weights, interest 1 in every state.

    The expected emphasis starts at ``d ∘ i`` (the followon trace is ``I_0`` at ``t = 0``) and
    grows toward its fixed point ``(I − γ P_πᵀ)⁻¹ (d ∘ i)`` as the run goes on.
    """
    alpha = _number("Emphatic TD's step size α", alpha, 0.0, 1.0, open_lo=True)
    steps = _count("Sweeps", steps, 1, MAX_STEPS)
    x, d = problem.features, problem.behaviour_distribution
    p, r = problem.target_matrix, problem.target_rewards
    w, f = problem.start_weights.copy(), d * interest
    watch, record = _Watch(1), _Recorder(steps, w)
    for t in range(steps):
        w = expected_etd_step(w, f, x, p, r, gamma=problem.gamma, alpha=alpha)
        f = emphasis_step(f, d, p, gamma=problem.gamma, interest=interest)
        if np.abs(w).max() > DIVERGED:
            watch(t + 1, w)
            record(t + 1, w, force=True)
            break
        record(t + 1, w)
    return record.run(problem, "expected emphatic TD", watch.stopped)
