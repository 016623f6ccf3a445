r"""Off-policy prediction with linear function approximation: the deadly triad.

Sutton & Barto (2018), chapter 11. Values are linear in features, ``v̂(s, w) = x(s)ᵀ w``, with the
features of all states stacked as the rows of ``X`` (``[S, F]``). A *sampled* method learns from
transitions ``(S_t, A_t, R_{t+1}, S_{t+1})`` drawn by a behaviour policy ``b`` and reweighted by
the importance ratio ``ρ_t = π(A_t | S_t) / b(A_t | S_t)`` of the target policy ``π``; an
*expected* method replaces each sampled update by its expectation under the distribution ``d``
of the states it updates (the book's "semi-gradient DP", eq. 11.9), so it has no noise at all.

Every step function is written on arrays with a leading batch axis, so one call advances one run
or many (independent seeds, or different problems side by side), and the engines below call
exactly these steps. Runs stop once a weight passes ``DIVERGED`` in size: a diverging run is
reported as such and never produces an infinity or a NaN.

Baird's counterexample (Example 11.1): seven states, two actions. *Dashed* goes to one of the six
upper states with equal probability, *solid* goes to the seventh (lower) state; every reward is
0, so the true value of every policy is 0 everywhere. The behaviour policy takes dashed with
probability 6/7 and solid with 1/7, so every next state is equally likely and the behaviour's
state distribution is uniform. The book's target policy always takes solid; here ``target_solid``
is π(solid | s) in any state, 1 by default. Upper state ``i`` has value ``2 w_i + w_8``, the
lower state ``w_7 + 2 w_8``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError

__all__ = [
    "BOOK_START",
    "DIVERGED",
    "MAX_RUNS",
    "MAX_STEPS",
    "NULL_WEIGHTS",
    "BairdExperiment",
    "GradientExperiment",
    "Known",
    "Problem",
    "Run",
    "Switchboard",
    "Transitions",
    "TwoState",
    "baird",
    "baird_experiment",
    "baird_features",
    "book_settings",
    "critical_gamma",
    "drift",
    "emphasis_step",
    "expected_etd_step",
    "expected_tdc_step",
    "expected_td_step",
    "gradient_experiment",
    "growth_per_sweep",
    "known_answers",
    "n_step_model",
    "projected_bellman_error",
    "projection",
    "run_expected_etd",
    "run_expected_tdc",
    "run_expected_td",
    "run_td",
    "run_tdc",
    "sample_transitions",
    "semi_gradient_td_step",
    "switchboard",
    "tdc_step",
    "two_state",
    "two_state_growth",
    "value_error",
    "whiteboard_gap",
]

DIVERGED = 1e6
"""A run stops, and is reported as diverged, once any weight exceeds this in absolute value."""
MAX_STEPS = 2000
"""Most steps (sampled) or sweeps (expected) a run may take."""
MAX_RUNS = 30
"""Most independent sampled runs."""
BOOK_START = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 10.0, 1.0])
"""The start weights of Sutton & Barto's Figures 11.2, 11.5 and 11.6."""
NULL_WEIGHTS = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 4.0, -2.0])
"""Weights with v̂ = 0 in every state of Baird's problem: the true values, up to scale."""
SOLID, DASHED = 0, 1
LOWER = 6


# --------------------------------------------------------------------------- validation
def _number(name: str, x: float, lo: float, hi: float, *, open_lo: bool = False,
            open_hi: bool = False) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number; got {x!r}") from None
    below = x <= lo if open_lo else x < lo
    above = x >= hi if open_hi else x > hi
    if not math.isfinite(x) or below or above:
        left, right = "(" if open_lo else "[", ")" if open_hi else "]"
        raise InputError(f"{name} must be in {left}{lo:g}, {hi:g}{right}; got {x:g}")
    return x


def _count(name: str, n: int, lo: int, hi: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or not lo <= n <= hi:
        raise InputError(f"{name} must be a whole number in [{lo}, {hi}]; got {n!r}")
    return int(n)


# --------------------------------------------------------------------------- the problem
def baird_features() -> np.ndarray:
    """Baird's feature matrix ``X`` ``[7, 8]``: rows ``2e_i + e_8`` (upper) and ``e_7 + 2e_8``."""
    x = np.zeros((7, 8))
    x[np.arange(6), np.arange(6)] = 2.0
    x[:6, 7] = 1.0
    x[LOWER, 6], x[LOWER, 7] = 1.0, 2.0
    return x


def _stationary(p: np.ndarray) -> np.ndarray:
    """The distribution ``d`` with ``dᵀ P = dᵀ`` (unique for the chains used here)."""
    s = p.shape[0]
    a = np.vstack([p.T - np.eye(s), np.ones(s)])
    d = np.linalg.lstsq(a, np.r_[np.zeros(s), 1.0], rcond=None)[0]
    d = np.clip(d, 0.0, None)
    return d / d.sum()


@dataclass(frozen=True)
class Problem:
    """An off-policy prediction problem: an MDP, behaviour and target policies, features, γ."""

    features: np.ndarray  # [S, F] x(s) as rows
    transitions: np.ndarray  # [S, A, S] p(s' | s, a)
    rewards: np.ndarray  # [S, A] expected reward of acting
    behaviour: np.ndarray  # [S, A] b(a | s), positive wherever π is
    target: np.ndarray  # [S, A] π(a | s)
    start_weights: np.ndarray  # [F]
    gamma: float

    @functools.cached_property
    def rho(self) -> np.ndarray:
        """Importance ratios ``π(a | s) / b(a | s)`` ``[S, A]``."""
        return self.target / self.behaviour

    @functools.cached_property
    def target_matrix(self) -> np.ndarray:
        """``P_π[s, s']`` ``[S, S]``: the next-state distribution under π."""
        return np.einsum("sa,sat->st", self.target, self.transitions)

    @functools.cached_property
    def target_rewards(self) -> np.ndarray:
        """``r_π(s)`` ``[S]``: the expected reward under π."""
        return np.einsum("sa,sa->s", self.target, self.rewards)

    @functools.cached_property
    def behaviour_distribution(self) -> np.ndarray:
        """``d_b`` ``[S]``: the behaviour's stationary state distribution (uniform on Baird's)."""
        return _stationary(np.einsum("sa,sat->st", self.behaviour, self.transitions))

    @functools.cached_property
    def target_distribution(self) -> np.ndarray:
        """``d_π`` ``[S]``: π's own (on-policy) stationary distribution."""
        return _stationary(self.target_matrix)

    @functools.cached_property
    def true_values(self) -> np.ndarray:
        """``v_π = (I − γ P_π)⁻¹ r_π`` ``[S]``."""
        s = self.target_rewards.size
        return np.linalg.solve(np.eye(s) - self.gamma * self.target_matrix, self.target_rewards)

    def distribution(self, on_policy: bool) -> np.ndarray:
        """The state distribution of the updates: π's own when on-policy, else the behaviour's."""
        return self.target_distribution if on_policy else self.behaviour_distribution


def baird(*, gamma: float = 0.99, target_solid: float = 1.0, tabular: bool = False) -> Problem:
    """Baird's counterexample (Sutton & Barto 2018, Example 11.1, Figure 11.1).

    Args:
        gamma: Discount γ in [0, 1).
        target_solid: π(solid | s), the same in every state; 1 is the book's target policy and
            1/7 makes π equal to the behaviour (on-policy).
        tabular: One-hot features (7 weights, one per state) instead of Baird's 8, starting
            from the same values ``X w₀`` as Baird's start weights.
    """
    gamma = _number("The discount γ", gamma, 0.0, 1.0, open_hi=True)
    p = _number("π(solid)", target_solid, 0.0, 1.0)
    trans = np.zeros((7, 2, 7))
    trans[:, SOLID, LOWER] = 1.0
    trans[:, DASHED, :6] = 1.0 / 6.0
    behaviour = np.tile([1.0 / 7.0, 6.0 / 7.0], (7, 1))
    target = np.tile([p, 1.0 - p], (7, 1))
    x = baird_features()
    start = BOOK_START.copy()
    if tabular:
        start, x = x @ start, np.eye(7)
    return Problem(features=x, transitions=trans, rewards=np.zeros((7, 2)), behaviour=behaviour,
                   target=target, start_weights=start, gamma=gamma)


# --------------------------------------------------------------------------- errors
def projection(features: np.ndarray, d: np.ndarray) -> np.ndarray:
    r"""The projection ``Π = X (Xᵀ D X)⁺ Xᵀ D`` onto the representable values, in the d-norm.

    ``Π v`` is the representable value function closest to ``v`` in ``‖·‖_d`` (Sutton & Barto
    2018, eq. 11.14). The pseudo-inverse covers features that are linearly dependent, as
    Baird's 8 features of 7 states are.

    Args:
        features: ``X`` ``[S, F]``.
        d: State weights ``[S]``, non-negative.

    Returns:
        ``Π`` ``[S, S]``.
    """
    xd = features.T * d
    return features @ np.linalg.pinv(xd @ features) @ xd


def value_error(problem: Problem, weights: np.ndarray) -> np.ndarray:
    r"""√VE: the RMS value error ``√(Σ_s d_b(s) (x(s)ᵀw − v_π(s))²)`` (book eq. 9.1).

    Weighted by the behaviour's distribution, as in the book's Figures 11.5 and 11.6.

    Args:
        problem: The features, the true values and the behaviour's distribution.
        weights: ``[..., F]``.

    Returns:
        ``[...]``.
    """
    err = weights @ problem.features.T - problem.true_values
    return np.sqrt(err**2 @ problem.behaviour_distribution)


def projected_bellman_error(problem: Problem, weights: np.ndarray) -> np.ndarray:
    r"""√PBE: ``‖Π δ̄_w‖_d``, the RMS projected Bellman error (book eq. 11.22).

    ``δ̄_w = r_π + γ P_π X w − X w`` is the expected TD error of each state under π, and ``Π``
    projects in the behaviour's distribution ``d_b``.

    Args:
        problem: The features, π's model and the behaviour's distribution.
        weights: ``[..., F]``.

    Returns:
        ``[...]``.
    """
    d = problem.behaviour_distribution
    v = weights @ problem.features.T
    bellman = problem.target_rewards + problem.gamma * v @ problem.target_matrix.T - v
    projected = bellman @ projection(problem.features, d).T
    return np.sqrt(projected**2 @ d)


# --------------------------------------------------------------------------- the steps
def semi_gradient_td_step(w, x, x_next, reward, rho, *, gamma, alpha):
    r"""One step of off-policy semi-gradient TD(0) (Sutton & Barto 2018, eq. 11.2).

    ``δ = R + γ wᵀx' − wᵀx``, then ``w ← w + α ρ δ x``.

    Args:
        w: Weights ``[..., F]``.
        x: Features of ``S_t`` ``[..., F]``.
        x_next: Features of ``S_{t+1}`` ``[..., F]``.
        reward: ``R_{t+1}`` ``[...]``.
        rho: The importance ratio ``ρ_t`` ``[...]``.
        gamma: Discount γ.
        alpha: Step size α.
    """
    delta = reward + gamma * (w * x_next).sum(-1) - (w * x).sum(-1)
    return w + alpha * (rho * delta)[..., None] * x


def tdc_step(w, v, x, x_next, reward, rho, *, gamma, alpha, beta):
    r"""One step of TDC, gradient-corrected TD(0) (Sutton & Barto 2018, §11.7).

    ``δ = R + γ wᵀx' − wᵀx``;
    ``w ← w + α ρ (δ x − γ x' (xᵀv))``;  ``v ← v + β ρ (δ − vᵀx) x``.
    ``v`` learns the least-squares estimate of ``E[δ | x]`` from the features.
    """
    rho = np.asarray(rho)
    delta = reward + gamma * (w * x_next).sum(-1) - (w * x).sum(-1)
    vx = (v * x).sum(-1)
    w = w + alpha * rho[..., None] * (delta[..., None] * x - gamma * vx[..., None] * x_next)
    v = v + beta * (rho * (delta - vx))[..., None] * x
    return w, v


def expected_td_step(w, features, d, p, r, *, gamma, alpha):
    r"""One sweep of semi-gradient DP: the expected TD(0) update (Sutton & Barto 2018, eq. 11.9).

    ``δ̄(s) = r(s) + γ Σ_s' P(s, s') v̂(s') − v̂(s)`` for every state, then
    ``w ← w + α Σ_s d(s) δ̄(s) x(s)``. With the n-step model (``P ← Pⁿ``, ``γ ← γⁿ``, ``r`` the
    expected n-step reward) it is the expected n-step update.

    Args:
        w: Weights ``[..., F]``.
        features: ``X`` ``[..., S, F]``.
        d: Update distribution ``[..., S]``.
        p: Next-state matrix ``[..., S, S]``.
        r: Expected reward ``[..., S]``.
        gamma: Discount, a number or ``[...]``.
        alpha: Step size α.
    """
    v = np.einsum("...sf,...f->...s", features, w)
    delta = r + np.asarray(gamma)[..., None] * np.einsum("...st,...t->...s", p, v) - v
    return w + alpha * np.einsum("...s,...sf->...f", d * delta, features)


def expected_tdc_step(w, v, features, d, p, r, *, gamma, alpha, beta):
    r"""One sweep of expected TDC: each TDC update replaced by its expectation.

    With ``D = diag(d)``: ``w ← w + α (Xᵀ D δ̄ − γ Xᵀ Pᵀ D X v)`` and
    ``v ← v + β (Xᵀ D δ̄ − Xᵀ D X v)``, where ``δ̄ = r + γ P X w − X w``.
    """
    values = features @ w
    delta = r + gamma * p @ values - values
    dxv = d * (features @ v)
    w_next = w + alpha * (features.T @ (d * delta) - gamma * features.T @ (p.T @ dxv))
    v_next = v + beta * features.T @ (d * delta - dxv)
    return w_next, v_next


def emphasis_step(f, d, p, *, gamma, interest=1.0):
    r"""The expected followon trace, one step on: ``f ← d ∘ i + γ Pᵀ f``.

    ``f(s) = d(s) E[F_t | S_t = s]`` for the followon trace ``F_t = γ ρ_{t−1} F_{t−1} + I_t``
    (Sutton & Barto 2018, §11.8), starting from ``f = d ∘ i`` at ``t = 0``.
    """
    return d * interest + gamma * p.T @ f


def expected_etd_step(w, f, features, p, r, *, gamma, alpha):
    r"""One sweep of expected one-step emphatic TD: ``w ← w + α Σ_s f(s) δ̄(s) x(s)``.

    The sampled update is ``w ← w + α M_t ρ_t δ_t x_t`` with emphasis ``M_t = F_t`` (λ = 0);
    its expectation weights each state's expected TD error by ``f``, the expected emphasis.
    """
    values = features @ w
    delta = r + gamma * p @ values - values
    return w + alpha * features.T @ (f * delta)


# --------------------------------------------------------------------------- sampling
@dataclass(frozen=True)
class Transitions:
    """Sampled experience: independent streams of ``steps`` transitions each, side by side."""

    states: np.ndarray  # [T+1, R] S_0 .. S_T
    actions: np.ndarray  # [T, R] A_0 .. A_{T-1}
    rewards: np.ndarray  # [T, R] R_1 .. R_T
    rho: np.ndarray  # [T, R] ρ_0 .. ρ_{T-1} (1 where a stream follows π)
    on_policy: np.ndarray  # [R] whether each stream follows π (else the behaviour b)
    seed: int


def sample_transitions(problem: Problem, *, steps: int, runs: int, seed: int,
                       on_policy: bool | tuple[bool, ...] = False) -> Transitions:
    """Draw ``runs`` streams of experience following b (off-policy) or π (on-policy).

    With several flags, e.g. ``on_policy=(False, True)``, every flag gets the same ``runs``
    streams, stacked in that order, and stream ``i`` of each uses the same uniform numbers
    (start state, then one number per step that picks the action and the next state together):
    the off- and on-policy learners differ by the policy they follow, not by luck. S_0 follows
    the behaviour's stationary distribution.
    """
    steps = _count("Steps", steps, 1, MAX_STEPS)
    runs = _count("Runs", runs, 1, MAX_RUNS)
    flags = (on_policy,) if isinstance(on_policy, bool) else tuple(on_policy)
    n_states, n_actions = problem.behaviour.shape
    width = n_actions * n_states
    rng = np.random.default_rng(seed)
    u_start, u_step = np.tile(rng.random(runs), len(flags)), np.tile(rng.random((steps, runs)),
                                                                    (1, len(flags)))
    # One draw picks (a, s') jointly. Row j = k·S + s holds the cumulative probabilities of
    # (a, s') from state s under the k-th stream kind's policy, shifted by j, and the rows are
    # laid end to end: searchsorted(rows, j + u) then lands in row j.
    policies = np.stack([problem.target if f else problem.behaviour for f in flags])
    joint = (policies[..., None] * problem.transitions).reshape(len(flags) * n_states, width)
    rows = np.cumsum(joint, axis=1) + np.arange(len(joint))[:, None]
    rows[:, -1] = np.arange(1, len(joint) + 1)  # each row ends exactly at j + 1
    rows = rows.ravel()
    offset = np.repeat(np.arange(len(flags)) * n_states, runs)
    start = np.cumsum(problem.behaviour_distribution)
    start[-1] = 1.0
    states = np.empty((steps + 1, runs * len(flags)), dtype=np.int64)
    actions = np.empty((steps, runs * len(flags)), dtype=np.int64)
    states[0] = np.searchsorted(start, u_start, side="right")
    for t in range(steps):
        row = states[t] + offset
        k = np.searchsorted(rows, row + u_step[t], side="right") - row * width
        actions[t], states[t + 1] = np.divmod(k, n_states)
    follows = np.repeat(np.array(flags, dtype=bool), runs)
    ratio = np.where(follows, 1.0, problem.rho[states[:-1], actions])
    return Transitions(states=states, actions=actions,
                       rewards=problem.rewards[states[:-1], actions], rho=ratio,
                       on_policy=follows, seed=int(seed))


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


# --------------------------------------------------------------------------- stability
def growth_per_sweep(problem: Problem, *, alpha: float, n: int | None = 1,
                     on_policy: bool = False) -> float:
    r"""The factor by which the error of expected n-step TD grows per sweep, in the long run.

    The values ``v̂ = X w`` of the expected update evolve linearly:
    ``v̂ ← K v̂ + c`` with ``K = I − α X Xᵀ D (I − γⁿ Pⁿ)``. Returns the spectral radius of ``K``:
    above 1 the error grows without bound for almost every start, below 1 it converges, at 1
    some component neither grows nor shrinks. (Directions of ``w`` that leave ``X w``
    unchanged never move, so ``K``, not the weights' own matrix, decides.)
    """
    p, _, g = n_step_model(problem, n)
    x, d = problem.features, problem.distribution(on_policy)
    s = x.shape[0]
    k = np.eye(s) - alpha * (x @ x.T) @ np.diag(d) @ (np.eye(s) - g * p)
    return float(np.abs(np.linalg.eigvals(k)).max())


def drift(problem: Problem, *, gamma: float | None = None, n: int | None = 1) -> float:
    r"""The growth rate of expected off-policy n-step TD as the step size goes to 0.

    The largest real part of the eigenvalues of ``−X Xᵀ D_b (I − γⁿ P_πⁿ)``, the values' rate
    of change per unit of α. Positive: the expected update diverges for *every* step size
    α > 0, however small (a smaller α only slows it down). ``gamma`` overrides the problem's.
    """
    if gamma is not None:
        problem = dataclasses.replace(problem, gamma=gamma)
    p, _, g = n_step_model(problem, n)
    x, d, s = problem.features, problem.behaviour_distribution, problem.features.shape[0]
    m = -(x @ x.T) @ np.diag(d) @ (np.eye(s) - g * p)
    return float(np.linalg.eigvals(m).real.max())


def critical_gamma(problem: Problem, *, tol: float = 1e-12) -> float | None:
    r"""The smallest discount at which expected off-policy TD(0) grows for every small step size.

    Found by bisection on the sign of the largest real part of the eigenvalues of
    ``−X Xᵀ D_b (I − γ P_π)``; None when it does not grow for any γ < 1. On Baird's problem with
    the book's policies it is 15/17: the symmetric mode ``(u, …, u, z)`` of the values evolves
    by ``−(1/7)[[10, 2 − 12γ], [12, 5 − 17γ]]``, whose trace changes sign at γ = 15/17.
    """
    lo, hi = 0.0, 1.0 - 1e-9
    if drift(problem, gamma=hi) <= 1e-12:
        return None
    if drift(problem, gamma=lo) > 1e-12:
        return 0.0
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if drift(problem, gamma=mid) > 1e-12 else (mid, hi)
    return hi


# --------------------------------------------------------------------------- experiments
@dataclass(frozen=True)
class BairdExperiment:
    """Figure 11.2 and its on-policy contrast: semi-gradient TD (sampled) and DP (expected)."""

    problem: Problem
    td: Run  # off-policy, sampled, R runs
    td_on: Run  # following π, the same random numbers
    dp: Run  # expected, behaviour's distribution
    dp_on: Run  # expected, π's distribution
    growth: float  # spectral radius of DP's value iteration (off-policy)
    growth_on: float  # the same in π's distribution
    growth_tabular: float  # off-policy with one-hot features


def baird_experiment(*, gamma: float = 0.99, target_solid: float = 1.0, alpha: float = 0.01,
                     steps: int = 1000, runs: int = 10, seed: int = 0) -> BairdExperiment:
    """Semi-gradient off-policy TD and DP on Baird's problem, each with its on-policy contrast."""
    problem = baird(gamma=gamma, target_solid=target_solid)
    both = sample_transitions(problem, steps=steps, runs=runs, seed=seed,
                              on_policy=(False, True))
    td = run_td(problem, both, alpha=alpha)
    dp, dp_on = run_expected_td([problem, problem], alpha=alpha, steps=steps,
                                on_policy=[False, True])
    tabular = baird(gamma=gamma, target_solid=target_solid, tabular=True)
    return BairdExperiment(
        problem=problem, td=td.select(~both.on_policy, on_policy=False),
        td_on=td.select(both.on_policy, on_policy=True), dp=dp, dp_on=dp_on,
        growth=growth_per_sweep(problem, alpha=alpha),
        growth_on=growth_per_sweep(problem, alpha=alpha, on_policy=True),
        growth_tabular=growth_per_sweep(tabular, alpha=alpha),
    )


@dataclass(frozen=True)
class GradientExperiment:
    """Figures 11.5 and 11.6: TDC (sampled and expected) and expected emphatic TD."""

    problem: Problem
    tdc: Run  # sampled, R runs, the same experience as semi-gradient TD's of the same seed
    tdc_expected: Run
    etd_expected: Run


def gradient_experiment(*, gamma: float = 0.99, target_solid: float = 1.0,
                        alpha: float = 0.005, beta: float = 0.05, etd_alpha: float = 0.03,
                        steps: int = 1000, runs: int = 10, seed: int = 0) -> GradientExperiment:
    """TDC and emphatic TD on Baird's problem from the book's start weights."""
    problem = baird(gamma=gamma, target_solid=target_solid)
    off = sample_transitions(problem, steps=steps, runs=runs, seed=seed)
    return GradientExperiment(
        problem=problem, tdc=run_tdc(problem, off, alpha=alpha, beta=beta),
        tdc_expected=run_expected_tdc(problem, alpha=alpha, beta=beta, steps=steps),
        etd_expected=run_expected_etd(problem, alpha=etd_alpha, steps=steps),
    )


# --------------------------------------------------------------------------- two states
def two_state_growth(gamma: float, alpha: float, *, on_policy: bool = False) -> float:
    r"""The exact factor per update of the "w → 2w" example (Sutton & Barto 2018, §11.2).

    A state with feature 1 (value ``w``) moves to a state with feature 2 (value ``2w``), reward
    0. Updating that transition alone gives ``w ← w + α(γ 2w − w) = (1 + α(2γ − 1)) w``, which
    grows whenever γ > 1/2. On-policy the next state's own transition (to a terminal state,
    reward 0) is updated too, ``w ← (1 − 4α) w``, so one episode multiplies ``w`` by the product.
    """
    factor = 1.0 + alpha * (2.0 * gamma - 1.0)
    return factor * (1.0 - 4.0 * alpha) if on_policy else factor


@dataclass(frozen=True)
class TwoState:
    """``w`` over updates in the w → 2w example: the A → B update alone, and on-policy."""

    gamma: float
    alpha: float
    w: np.ndarray  # [K+1] the A → B transition updated alone (off-policy)
    w_on: np.ndarray  # [K_on+1] each episode updates A → B then B → terminal
    diverged_at: int | None
    diverged_at_on: int | None


def two_state(*, gamma: float, alpha: float, updates: int, w0: float = 1.0) -> TwoState:
    """Run the w → 2w example with ``semi_gradient_td_step`` (one feature, ρ = 1, R = 0)."""
    gamma = _number("The discount γ", gamma, 0.0, 1.0, open_hi=True)
    alpha = _number("The step size α", alpha, 0.0, 1.0, open_lo=True)
    updates = _count("Updates", updates, 1, MAX_STEPS)
    one, two, zero = np.array([1.0]), np.array([2.0]), np.array([0.0])
    # Row 0 updates A → B alone; row 1 (on-policy) also B → end. Off-policy, B's update has
    # ρ = 0: the behaviour takes actions there that π never would.
    w = np.full((2, 1), float(w0))
    rho_a, rho_b = np.ones(2), np.array([0.0, 1.0])
    trace, stopped = [w[:, 0]], [None, None]
    for k in range(updates):
        w = semi_gradient_td_step(w, one, two, 0.0, rho_a, gamma=gamma, alpha=alpha)
        w = semi_gradient_td_step(w, two, zero, 0.0, rho_b, gamma=gamma, alpha=alpha)
        trace.append(w[:, 0])
        for i in np.flatnonzero(~(np.abs(w[:, 0]) <= DIVERGED)):
            if stopped[i] is None:
                stopped[i], rho_a[i], rho_b[i] = k + 1, 0.0, 0.0
        if None not in stopped:
            break
    trace = np.stack(trace)
    w, w_on = (trace[: (len(trace) if s is None else s + 1), i] for i, s in enumerate(stopped))
    k, k_on = stopped
    return TwoState(gamma=gamma, alpha=alpha, w=w, w_on=w_on, diverged_at=k, diverged_at_on=k_on)


# --------------------------------------------------------------------------- the switchboard
@dataclass(frozen=True)
class Switchboard:
    """Expected n-step TD on Baird's problem for all eight settings of the triad's switches.

    Settings are indexed ``(off_policy, bootstrapping, approximation)``, each 0 or 1:
    off-policy samples the behaviour's distribution (else π's own), bootstrapping uses the
    n-step return (else Monte Carlo), approximation uses Baird's 8 features (else one per state).
    """

    n: int  # the bootstrapping setting's n
    runs: dict[tuple[int, int, int], Run]
    growth: dict[tuple[int, int, int], float]  # spectral radius per sweep (growth_per_sweep)
    ns: np.ndarray  # [N] n = 1 .. N for the bootstrapping dial
    growth_by_n: dict[tuple[int, int], np.ndarray]  # (off_policy, approximation) -> [N]
    growth_mc: dict[tuple[int, int], float]  # (off_policy, approximation) -> Monte Carlo's
    drift_by_n: np.ndarray  # [N] off-policy, Baird's features: drift (α → 0) for each n
    critical_gamma: float | None  # off-policy, Baird's features (α → 0), see critical_gamma
    gamma: float

    @property
    def first_stable_n(self) -> int | None:
        """The smallest n at which off-policy expected TD on Baird's features does not grow.

        At this switchboard's step size.
        """
        ok = np.flatnonzero(self.growth_by_n[(1, 1)] <= 1.0 + 1e-12)
        return int(self.ns[ok[0]]) if ok.size else None

    @property
    def first_stable_n_small_alpha(self) -> int | None:
        """The same as α → 0 (with complex eigenvalues a finite α needs a little more n)."""
        ok = np.flatnonzero(self.drift_by_n <= 1e-12)
        return int(self.ns[ok[0]]) if ok.size else None


SWITCHES = [(o, b, a) for o in (1, 0) for b in (1, 0) for a in (1, 0)]


def switchboard(*, gamma: float = 0.99, target_solid: float = 1.0, alpha: float = 0.01,
                steps: int = 1000, n: int = 1, max_n: int = 40) -> Switchboard:
    """Every combination of off-policy sampling, bootstrapping and function approximation.

    All eight run side by side in one batch of expected updates (``run_expected_td``) from the
    same start values; the growth factor of each, and of every n up to ``max_n``, comes from
    ``growth_per_sweep``.
    """
    n = _count("n (bootstrapping)", n, 1, 1000)
    problems = {a: baird(gamma=gamma, target_solid=target_solid, tabular=not a) for a in (0, 1)}
    batch = run_expected_td([problems[a] for _, _, a in SWITCHES], alpha=alpha, steps=steps,
                            on_policy=[not o for o, _, _ in SWITCHES],
                            n=[n if b else None for _, b, _ in SWITCHES])
    runs = dict(zip(SWITCHES, batch, strict=True))
    growth = {
        (o, b, a): growth_per_sweep(problems[a], alpha=alpha, n=n if b else None,
                                    on_policy=not o)
        for o, b, a in SWITCHES
    }
    ns = np.arange(1, max_n + 1)
    by_n = {
        (o, a): np.array([growth_per_sweep(problems[a], alpha=alpha, n=int(k), on_policy=not o)
                          for k in ns])
        for o in (1, 0) for a in (1, 0)
    }
    mc = {(o, a): growth_per_sweep(problems[a], alpha=alpha, n=None, on_policy=not o)
          for o in (1, 0) for a in (1, 0)}
    return Switchboard(n=n, runs=runs, growth=growth, ns=ns, growth_by_n=by_n, growth_mc=mc,
                       drift_by_n=np.array([drift(problems[1], n=int(k)) for k in ns]),
                       critical_gamma=critical_gamma(problems[1]), gamma=problems[1].gamma)


# --------------------------------------------------------------------------- known answers
SOURCE = "Sutton & Barto (2018)"


@dataclass(frozen=True)
class Known:
    """One known answer: a live number against a textbook value or a derived identity."""

    label: str
    value: float | str
    reference: float | str
    tol: float = 0.0
    source: str = ""
    passed: bool | None = None  # for comparisons that are not a number within a tolerance
    fmt: str = ".4g"


def whiteboard_gap(problem: Problem, w: np.ndarray, *, alpha: float, tdc_alpha: float,
                   beta: float) -> float:
    """How far the whiteboard's TD and TDC steps are from the library's, relative to ``w``.

    One step from the weights ``w`` for every (state, action) of the problem, to its likeliest
    next state.
    """
    from rlviz.interview.whiteboard import deadly_triad as wb

    x, g = problem.features, problem.gamma
    pairs = [(s, a, int(np.argmax(problem.transitions[s, a]))) for s in range(x.shape[0])
             for a in range(problem.behaviour.shape[1])]
    xs, xn = x[[s for s, _, _ in pairs]], x[[s2 for _, _, s2 in pairs]]
    rhos = problem.rho[[s for s, _, _ in pairs], [a for _, a, _ in pairs]]
    ws, vs = np.tile(w, (len(pairs), 1)), np.tile(w / 10, (len(pairs), 1))
    td = semi_gradient_td_step(ws, xs, xn, 0.0, rhos, gamma=g, alpha=alpha)
    tw, tv = tdc_step(ws, vs, xs, xn, 0.0, rhos, gamma=g, alpha=tdc_alpha, beta=beta)
    gap = 0.0
    for i in range(len(pairs)):
        bw, bv = wb.tdc(w, w / 10, xs[i], xn[i], 0.0, rhos[i], g, tdc_alpha, beta)
        bt = wb.off_policy_td(w, xs[i], xn[i], 0.0, rhos[i], g, alpha)
        gap = max(gap, np.abs(bt - td[i]).max(), np.abs(bw - tw[i]).max(),
                  np.abs(bv - tv[i]).max())
    return float(gap / max(1.0, float(np.abs(w).max())))


def known_answers(exp: BairdExperiment, grad: GradientExperiment, two: TwoState,
                  board: Switchboard, *, alpha: float, tdc_alpha: float, beta: float,
                  etd_alpha: float, steps: int) -> list[Known]:
    """The page's checks: closed forms, derived identities and the book's figures.

    Sutton & Barto's Figures 11.2, 11.5 and 11.6 are checked at their own settings only.
    """
    from rlviz.interview.whiteboard import deadly_triad as wb

    pb, x = exp.problem, exp.problem.features
    grows = drift(pb) > 1e-12
    gap = whiteboard_gap(pb, exp.td.final, alpha=alpha, tdc_alpha=tdc_alpha, beta=beta)
    wb_grows = bool(wb.expected_td_diverges(x, pb.behaviour_distribution, pb.target_matrix,
                                            pb.gamma))
    out = [
        Known("w → 2w: w after one update, from w = 1 (semi_gradient_td_step)",
              float(two.w[1]), two_state_growth(two.gamma, two.alpha), 1e-12,
              f"1 + α(2γ − 1), {SOURCE} §11.2", fmt=".10g"),
        Known("Off-policy DP grows, on-policy and tabular do not (growth per sweep)",
              f"{exp.growth:.6f} / {exp.growth_on:.6f} / {exp.growth_tabular:.6f}",
              "> 1 / ≤ 1 / ≤ 1" if grows else "≤ 1 for all three", 0.0,
              f"{SOURCE} §11.2, Figure 11.2",
              passed=(exp.growth > 1 + 1e-9) == grows and exp.growth_on <= 1 + 1e-9
              and exp.growth_tabular <= 1 + 1e-9),
        Known("Baird's null weights (1,1,1,1,1,1,4,−2) give v̂ = 0: largest value",
              float(np.abs(x @ NULL_WEIGHTS).max()), 0.0, 0.0, f"{SOURCE} §11.7"),
        Known("Π = I for Baird's features (rank 7 of 7 states): largest entry of Π − I",
              float(np.abs(projection(x, pb.behaviour_distribution) - np.eye(7)).max()), 0.0,
              1e-9, "PBE = BE when every value is representable"),
        Known("Whiteboard version equals rlviz on this view (TD and TDC steps, divergence "
              "test): largest relative gap", gap, 0.0, 1e-12,
              "rlviz.interview.whiteboard.deadly_triad",
              passed=gap <= 1e-12 and wb_grows == grows),
    ]
    crit, star, g = board.critical_gamma, board.first_stable_n_small_alpha, pb.gamma
    if crit is not None and star is not None:
        n_star = 1 if g <= crit else math.ceil(math.log(crit) / math.log(g) - 1e-9)
        out.append(Known(
            "First stable n as α → 0 (off-policy, features) = ⌈ln γ* / ln γ⌉, as Pⁿ = P here",
            star, n_star, 0.0, "γⁿ < γ* (γ* = 15/17 at π(solid) = 1, derived)", fmt=".0f"))
    if not book_settings(pb, steps):
        return out
    tdc, etd = grad.tdc_expected, grad.etd_expected
    if alpha == 0.01:
        w = exp.dp.weights[exp.dp.live - 1, 0]
        grew = bool(np.all(np.diff(exp.dp.value_error[-50:, 0]) > 0))
        out.append(Known("Figure 11.2: DP's weights after 1000 sweeps (w₁, w₇, w₈)",
                         f"{w[0]:.1f}, {w[6]:.2f}, {w[7]:.1f}", "all growing, w₈ fastest",
                         source=f"{SOURCE}, Figure 11.2",
                         passed=grew and w[7] > w[0] > w[6]))
    if (tdc_alpha, beta) == (0.005, 0.05):
        out += [Known("Figure 11.5: expected TDC's √PBE after 1000 sweeps",
                      float(tdc.pbe[-1, 0]), 0.0, 0.01,
                      f"{SOURCE}, Figure 11.5: falls to near zero"),
                Known("Figure 11.5: expected TDC's √VE after 1000 sweeps",
                      float(tdc.value_error[-1, 0]), 2.0, 0.1,
                      f"{SOURCE} §11.7: VE remains almost 2")]
    if etd_alpha == 0.03:
        out.append(Known("Figure 11.6: expected emphatic TD's √VE after 1000 sweeps",
                         float(etd.value_error[-1, 0]), 0.0, 1e-6,
                         f"{SOURCE}, Figure 11.6: converges to the true values", fmt=".3g"))
    return out


def book_settings(problem: Problem, steps: int) -> bool:
    """Whether a view is the book's: γ = 0.99, π always solid, 1000 steps."""
    return problem.gamma == 0.99 and float(problem.target[0, SOLID]) == 1.0 and steps == 1000
