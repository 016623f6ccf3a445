"""Studies: the growth per sweep, the experiments, the two-state w → 2w, the switchboard."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from rlviz.approximation.problem import DIVERGED, MAX_STEPS, Problem, _count, _number, baird
from rlviz.approximation.runs import (
    Run,
    n_step_model,
    run_expected_etd,
    run_expected_td,
    run_expected_tdc,
    run_td,
    run_tdc,
)
from rlviz.approximation.steps import sample_transitions, semi_gradient_td_step

__all__ = [
    "BairdExperiment",
    "GradientExperiment",
    "Switchboard",
    "TwoState",
    "baird_experiment",
    "critical_gamma",
    "drift",
    "gradient_experiment",
    "growth_per_sweep",
    "switchboard",
    "two_state",
    "two_state_growth",
]


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
