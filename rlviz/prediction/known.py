"""Known answers: the book's figures and the identities, checked live."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlviz.prediction.engines import SweepSummary, TdVsMc
from rlviz.prediction.views import Identities
from rlviz.prediction.walks import BOOK, true_values

__all__ = [
    "BOOK_EPISODES",
    "BOOK_RUNS",
    "Known",
    "known_answers",
]


# --------------------------------------------------------------------------- known answers
@dataclass(frozen=True)
class Known:
    """One known answer: a live number against a textbook value or an identity."""

    label: str
    value: float | str
    reference: float | str
    tol: float = 0.0
    source: str = ""
    passed: bool | None = None  # for comparisons that are not a number within a tolerance
    fmt: str = ".4g"


BOOK_RUNS, BOOK_EPISODES = 100, 10
"""The protocol of Figures 7.2, 12.3, 12.6 and 12.8: 100 runs, the first 10 episodes."""
FIGURES = {"n_step": "Figure 7.2", "offline_lambda_return": "Figure 12.3",
           "td_lambda": "Figure 12.6", "true_online": "Figure 12.8"}
IDENTITY_TOL = 1e-12


def _setting(s: SweepSummary, p: int, a: int) -> str:
    name = "n" if s.method == "n_step" else "λ"
    return f"{name} = {s.params[p]:g}, α = {s.alphas[a]:g}"


def known_answers(*, example: TdVsMc, sweep: SweepSummary, ident: Identities,
                  n_step: SweepSummary | None, compare: dict[str, SweepSummary] | None,
                  whiteboard: float | None) -> list[Known]:
    """The page's checks: true values, Example 6.2, the α sweep's figure, the identities.

    The figure's best region and lowest error are checked at the book's protocol only (the
    19-state walk, 100 runs, the first 10 episodes). ``n_step`` is n-step TD on the same
    episodes, at α = 1 at least (its last α is read): Figure 12.3's check needs it, the other
    figures' do not (None). ``compare`` is the three λ methods at one λ (for Figure 12.8).
    """
    k5, k19 = np.arange(1, 6), np.arange(1, 20)
    out = [
        Known("5-state walk: true values vs 1/6 … 5/6 (largest gap)",
              float(np.abs(true_values(5)[1:-1] - k5 / 6).max()), 0.0, 1e-12,
              f"{BOOK}, Example 6.2", fmt=".2g"),
        Known("19-state walk: true values vs −18/20 … 18/20 (largest gap)",
              float(np.abs(true_values(19)[1:-1] - (k19 - 10) / 10).max()), 0.0, 1e-12,
              f"{BOOK}, Example 7.1", fmt=".2g"),
    ]
    first = example.estimates[1] - example.estimates[0] if len(example.shown) > 1 else None
    if first is not None:
        moved = np.flatnonzero(np.abs(first) > 1e-12)
        end = "A" if moved.size == 1 and moved[0] == 0 else "E"
        out.append(Known(
            "Example 6.2, run 1: states TD(0) moved in episode 1 (α = 0.1)",
            f"{moved.size}: V({end}) by {float(first[moved[0]]) if moved.size else 0:+.3g}"
            .replace("-", "−"),
            "1: V(A) by −0.05 or V(E) by +0.05", passed=bool(
                moved.size == 1 and moved[0] in (0, 4) and abs(abs(first[moved[0]]) - 0.05)
                < 1e-12), source=f"{BOOK}, Example 6.2 (only the end state's value moves)"))
    td_end, mc_end = example.td_error[:, -1].min(), example.mc_error[:, -1].min()
    out.append(Known(
        f"Example 6.2: lowest error after {example.episodes} episodes, TD(0) vs MC",
        f"{td_end:.3f} vs {mc_end:.3f}", "TD(0) lower", passed=bool(td_end < mc_end),
        source=f"{BOOK}, Example 6.2 (right panel)"))
    out.append(Known(
        f"{FIGURES[sweep.method]}: α = 0 leaves every curve at √0.3",
        float(np.abs(sweep.curve[:, 0] - math.sqrt(0.3)).max()) if sweep.alphas[0] == 0 else
        "no α = 0", 0.0, 1e-12, "V = 0 against v(k) = (k − 10)/10: mean square 0.3",
        passed=None if sweep.alphas[0] == 0 else False, fmt=".2g"))
    if sweep.runs == BOOK_RUNS and sweep.episodes == BOOK_EPISODES:
        out += _figure_checks(sweep, n_step, compare)
    out += [
        Known("Forward = backward: offline TD(λ) vs the λ-return's summed updates (every λ "
              f"and α, {ident.runs} runs × {ident.episodes} episodes)", ident.forward_backward,
              0.0, IDENTITY_TOL,
              "Sutton (1988); Sutton & Barto (2018) §12.2", fmt=".2g"),
        Known("Offline TD(λ = 1) vs every-visit constant-α Monte Carlo",
              ident.monte_carlo, 0.0, IDENTITY_TOL, f"{BOOK} §12.2", fmt=".2g"),
        Known(f"True online TD(λ) vs the online λ-return, each of {ident.true_online_steps} "
              f"steps (λ = {ident.lam:g}, α = {ident.alpha:g})",
              ident.true_online, 0.0, IDENTITY_TOL,
              "van Seijen et al. (2016), Theorem 1; Sutton & Barto (2018) §12.5", fmt=".2g"),
        Known("Whiteboard version equals rlviz on this view (run 1, up close)",
              "run 1 diverged here: nothing to compare" if whiteboard is None else whiteboard,
              0.0, IDENTITY_TOL, "rlviz.interview.whiteboard.multistep_td",
              passed=True if whiteboard is None else None, fmt=".2g"),
    ]
    return out


def _figure_checks(sweep: SweepSummary, n_step: SweepSummary | None,
                   compare: dict[str, SweepSummary] | None) -> list[Known]:
    fig = f"{BOOK}, {FIGURES[sweep.method]}"
    p, a = sweep.best
    inner = 0 < p < sweep.params.size - 1
    kind = "n" if sweep.method == "n_step" else "λ"
    out = [
        Known(f"{FIGURES[sweep.method]}: best setting", _setting(sweep, p, a),
              f"an intermediate {kind}", passed=bool(inner), source=fig),
        Known(f"{FIGURES[sweep.method]}: its error (first 10 episodes, 100 runs)",
              sweep.best_error, "0.25–0.30 (the book's axis starts at 0.25)",
              passed=bool(0.24 <= sweep.best_error <= 0.30), source=fig),
    ]
    if sweep.method == "offline_lambda_return" and n_step is not None:
        mine, theirs = float(sweep.curve[:, -1].min()), float(n_step.curve[:, -1].min())
        out.append(Known("Figure 12.3: at α = 1, the best λ against the best n (same episodes)",
                         f"{mine:.3f} vs {theirs:.3f}", "the λ-return lower",
                         passed=mine < theirs, source=f"{fig} (caption: better at high α)"))
    if sweep.method == "td_lambda":
        big = sweep.params >= 0.9
        blown = ~np.isfinite(sweep.curve[big, -1])
        out.append(Known("Figure 12.6: the curves with λ ≥ 0.9 diverge before α = 1",
                         f"{int(blown.sum())} of {int(big.sum())}", f"all {int(big.sum())}",
                         passed=bool(blown.all()), source=f"{fig} (unstable at large α)"))
    if sweep.method == "true_online" and compare is not None:
        lam = float(compare["true_online"].params[0])
        mine = float(compare["true_online"].curve.min())
        theirs = float(compare["offline_lambda_return"].curve.min())
        out.append(Known(f"Figure 12.8: at λ = {lam:g}, lowest error of true online TD(λ) vs "
                         "the offline λ-return", f"{mine:.3f} vs {theirs:.3f}",
                         "as low or lower", passed=mine <= theirs + 0.005, source=fig))
        out.append(Known("Figure 12.8: runs that diverged, any λ and α",
                         int(sweep.diverged.sum()), 0, 0.0, f"{fig} (stable where TD(λ) is not)",
                         fmt=".0f"))
    return out
