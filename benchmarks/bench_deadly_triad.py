"""The deadly triad: each section's view, the page's first view and worst case, its warm rerun."""

import numpy as np

from benchmarks import ROOT, case, page_rerun
from rlviz import approximation as ap
from rlviz.figures import approximation as figs

BOOK = ap.baird()
WORST = dict(steps=ap.MAX_STEPS, runs=ap.MAX_RUNS)
EXPERIENCE = ap.sample_transitions(BOOK, steps=1000, runs=20, seed=0)


def _td_one_run_at_a_time():
    """The plain loop: one run after another, one transition at a time."""
    x, out = BOOK.features, []
    for r in range(EXPERIENCE.states.shape[1]):
        w = BOOK.start_weights.copy()
        s = EXPERIENCE.states[:, r]
        for t in range(EXPERIENCE.actions.shape[0]):
            rho = EXPERIENCE.rho[t, r]
            delta = BOOK.gamma * (x[s[t + 1]] @ w) - x[s[t]] @ w
            w = w + 0.01 * rho * delta * x[s[t]]
        out.append(w)
    return np.array(out)


@case("semi-gradient TD: 20 runs x 1000 steps, side by side", group="deadly_triad",
      reference=_td_one_run_at_a_time, min_ratio=3, repeat=5,
      note="the reference runs each seed on its own, step by step")
def td_twenty_runs():
    return ap.run_td(BOOK, EXPERIENCE, alpha=0.01)


@case("view: Baird's counterexample at defaults (TD, DP, contrasts)", group="deadly_triad",
      budget=0.5, repeat=5)
def baird_defaults():
    return ap.baird_experiment()


@case("view: TDC and emphatic TD at defaults", group="deadly_triad", budget=0.5, repeat=5)
def gradient_defaults():
    return ap.gradient_experiment()


@case("view: the switchboard at defaults (8 settings, n = 1..40)", group="deadly_triad",
      budget=0.5, repeat=5)
def board_defaults():
    return ap.switchboard()


@case("view: w -> 2w (1000 updates, both variants)", group="deadly_triad", budget=0.5)
def two_state_view():
    return ap.two_state(gamma=0.99, alpha=0.01, updates=1000)


@case("view at the caps: Baird, 2000 steps x 30 runs", group="deadly_triad", budget=0.5,
      repeat=3)
def baird_worst():
    return ap.baird_experiment(alpha=0.1, **WORST)


@case("view at the caps: TDC and emphatic TD, 2000 steps x 30 runs", group="deadly_triad",
      budget=0.5, repeat=3)
def gradient_worst():
    return ap.gradient_experiment(alpha=0.05, beta=0.2, etd_alpha=0.1, **WORST)


@case("view at the caps: the switchboard, 2000 sweeps, n = 40", group="deadly_triad",
      budget=0.5, repeat=3)
def board_worst():
    return ap.switchboard(steps=ap.MAX_STEPS, n=40, alpha=0.1)


def _all_figures(gamma, steps, runs, alpha):
    exp = ap.baird_experiment(gamma=gamma, alpha=alpha, steps=steps, runs=runs)
    grad = ap.gradient_experiment(gamma=gamma, steps=steps, runs=runs)
    sb = ap.switchboard(gamma=gamma, alpha=alpha, steps=steps, n=40)
    two = ap.two_state(gamma=gamma, alpha=alpha, updates=1000)
    scale = figs.weight_scale([exp.td, exp.dp])
    return [figs.diagram(), figs.method_figure(exp.td, title="", unit="", scale=scale),
            figs.method_figure(exp.dp, title="", unit="", scale=scale),
            figs.contrast_figure(exp), figs.two_state_figure(two), figs.growth_figure(two),
            *(figs.method_figure(r, title="", unit="") for r in
              (grad.tdc, grad.tdc_expected, grad.etd_expected)),
            figs.switch_grid(sb, (1, 1, 1)), figs.switch_curves(sb, (1, 1, 1)),
            figs.n_dial_figure(sb, (1, 1, 1))]


@case("worst combination: every section recomputed at the caps, with figures",
      group="deadly_triad", budget=2.0, repeat=3,
      note="a change of γ or π at 2000 steps x 30 runs; spinners show per section")
def everything_worst():
    return _all_figures(0.995, ap.MAX_STEPS, ap.MAX_RUNS, 0.1)


def _cold_page():
    """The page's first view at its defaults with empty caches (imports already paid)."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "pages" / "deadly_triad.py"), default_timeout=120)
    st.cache_data.clear()
    st.cache_resource.clear()
    at.run()
    if at.exception:
        raise RuntimeError(at.exception[0].message)
    return at


@case("first view at defaults: the page with empty caches", group="deadly_triad", budget=1.5,
      repeat=3)
def first_view():
    return _cold_page()


page_rerun("deadly_triad")
