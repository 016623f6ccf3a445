"""Known answers: the book's figures and the whiteboard check, live."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlviz.approximation.problem import NULL_WEIGHTS, SOLID, Problem, projection
from rlviz.approximation.steps import semi_gradient_td_step, tdc_step
from rlviz.approximation.studies import (
    BairdExperiment,
    GradientExperiment,
    Switchboard,
    TwoState,
    drift,
    two_state_growth,
)

__all__ = [
    "Known",
    "book_settings",
    "known_answers",
    "whiteboard_gap",
]


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
