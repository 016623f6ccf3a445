import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import streamlit as st

from rlviz import approximation as ap
from rlviz import ui
from rlviz.figures import approximation as figs

INTRO = (
    "Off-policy sampling, bootstrapping and function approximation: any two are safe, all three "
    "can make the weights grow without bound. Watch it happen on Baird's counterexample, then "
    "see the gradient-TD and emphatic fixes, and flip the three switches yourself."
)
STEPS = [100, 250, 500, 1000, 1500, 2000]
ALPHAS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1]
TDC_ALPHAS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05]
BETAS = [0.005, 0.01, 0.02, 0.05, 0.1, 0.2]
ETD_ALPHAS = [0.001, 0.003, 0.01, 0.03, 0.1]
PI_SOLID = [1 / 7, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
NS = [1, 2, 3, 4, 5, 6, 8, 10, 12, 13, 15, 20, 30, 40, "mc"]
TWO_STATE_UPDATES = 1000


def pi_label(p: float) -> str:
    return "1/7 (π = b)" if abs(p - 1 / 7) < 1e-12 else f"{p:g}"


def n_label(n) -> str:
    return "∞ (Monte Carlo)" if n == "mc" else str(n)


@ui.cached(max_entries=24, show_spinner="Running Baird's counterexample…")
def baird(gamma, pi, alpha, steps, runs, seed):
    return ap.baird_experiment(gamma=gamma, target_solid=pi, alpha=alpha, steps=steps, runs=runs,
                               seed=seed)


@ui.cached(max_entries=24, show_spinner="Running TDC and emphatic TD…")
def gradient(gamma, pi, alpha, beta, etd_alpha, steps, runs, seed):
    return ap.gradient_experiment(gamma=gamma, target_solid=pi, alpha=alpha, beta=beta,
                                  etd_alpha=etd_alpha, steps=steps, runs=runs, seed=seed)


@ui.cached(max_entries=32)
def two_state(gamma, alpha):
    return ap.two_state(gamma=gamma, alpha=alpha, updates=TWO_STATE_UPDATES)


@ui.cached(max_entries=32, show_spinner="Flipping the switches…")
def board(gamma, pi, alpha, steps, n):
    return ap.switchboard(gamma=gamma, target_solid=pi, alpha=alpha, steps=steps, n=n)


# The studies ride along unhashed: their arguments already identify them.
@ui.cached(max_entries=32, show_spinner=False)
def known_answers(args, gargs, two_state_args, bargs, _exp, _gexp, _ts, _sb):
    alpha, steps = args[2], args[3]
    tdc_alpha, beta, etd_alpha = gargs[2:5]
    return ap.known_answers(_exp, _gexp, _ts, _sb, alpha=alpha, tdc_alpha=tdc_alpha, beta=beta,
                            etd_alpha=etd_alpha, steps=steps)


@ui.cached_figures()
def baird_figures(args, scale):
    exp = baird(*args)
    mode = figs.weight_scale([exp.td, exp.dp], scale)
    return {
        "diagram": figs.diagram(target_solid=args[1]),
        "td": figs.method_figure(exp.td, title="Semi-gradient off-policy TD (sampled)",
                                 unit="steps", scale=mode),
        "dp": figs.method_figure(exp.dp, title="Semi-gradient DP (expected update)",
                                 unit="sweeps", scale=mode),
        "contrast": figs.contrast_figure(exp),
    }


@ui.cached_figures()
def gradient_figures(args, scale):
    exp = gradient(*args)
    mode = figs.weight_scale([exp.tdc, exp.tdc_expected, exp.etd_expected], scale)
    return {
        "tdc": figs.method_figure(exp.tdc, title="TDC (sampled)", unit="steps", scale=mode),
        "tdc_expected": figs.method_figure(exp.tdc_expected, title="Expected TDC",
                                           unit="sweeps", scale=mode),
        "etd": figs.method_figure(exp.etd_expected, title="Expected emphatic TD",
                                  unit="sweeps", scale=mode),
    }


@ui.cached_figures()
def two_state_figures(gamma, alpha):
    res = two_state(gamma, alpha)
    return {"w": figs.two_state_figure(res), "growth": figs.growth_figure(res)}


@ui.cached_figures()
def board_figures(args, chosen):
    sb = board(*args)
    return {"grid": figs.switch_grid(sb, chosen), "curves": figs.switch_curves(sb, chosen),
            "dial": figs.n_dial_figure(sb, chosen)}


with ui.page("deadly_triad", intro=INTRO) as page:
    p = page.controls([
        ui.FloatSlider(name="gamma", label="Discount γ", min=0.0, max=0.995, value=0.99,
                       step=0.005),
        ui.SelectSlider(name="pi", label="Target policy π(solid)", options=PI_SOLID, value=1.0,
                        labels=pi_label, help="The book's π always takes solid (1). At 1/7 the "
                        "target equals the behaviour b: learning is on-policy."),
        ui.SelectSlider(name="steps", label="Steps (sampled) and sweeps (expected)",
                        options=STEPS, value=1000, scales_work=True),
        ui.IntSlider(name="runs", label="Sampled runs (mean, 95% band)", min=1,
                     max=ap.MAX_RUNS, value=10, scales_work=True),
        ui.Section("Step sizes", [
            ui.SelectSlider(name="alpha", label="α: semi-gradient TD and DP, w → 2w",
                            options=ALPHAS, value=0.01),
            ui.SelectSlider(name="tdc_alpha", label="α: TDC", options=TDC_ALPHAS, value=0.005),
            ui.SelectSlider(name="beta", label="β: TDC's second weights", options=BETAS,
                            value=0.05),
            ui.SelectSlider(name="etd_alpha", label="α: emphatic TD", options=ETD_ALPHAS,
                            value=0.03),
        ]),
        ui.Section("Display and seed", [
            ui.Choice(name="scale", label="Weight axis", options=["auto", "linear", "signed log"],
                      value="auto", widget="segmented",
                      help="Auto switches to a signed log axis once a weight passes 1000."),
            ui.Seed(),
        ]),
    ])
    args = (p.gamma, p.pi, p.alpha, p.steps, p.runs, p.seed)
    exp = baird(*args)
    shown = baird_figures(args, p.scale)

    page.section("Baird's counterexample")
    left, right = st.columns([3, 2], gap="medium")
    with left:
        ui.chart(shown["diagram"], key="deadly_triad.diagram")
    with right:
        st.markdown(figs.baird_text(exp))
        st.caption(figs.baird_caption(exp))
    c1, c2 = st.columns(2, gap="medium")
    with c1:
        ui.chart(shown["td"], key="deadly_triad.td")
    with c2:
        ui.chart(shown["dp"], key="deadly_triad.dp")
    ui.chart(shown["contrast"], key="deadly_triad.contrast")
    st.caption(figs.contrast_caption(exp))

    page.section("The smallest divergence: w → 2w")
    ts = two_state(p.gamma, p.alpha)
    tshown = two_state_figures(p.gamma, p.alpha)
    st.markdown(
        "Two states with one shared weight: values w and 2w, reward 0. Off-policy, only the "
        "transition from the first to the second is ever updated (the behaviour's actions in "
        "the second state have ρ = 0).")
    c1, c2 = st.columns([3, 2], gap="medium")
    with c1:
        ui.chart(tshown["w"], key="deadly_triad.two_state")
    with c2:
        ui.chart(tshown["growth"], key="deadly_triad.growth")
    c1, c2 = st.columns([2, 3], gap="medium")
    with c1:
        st.markdown("One update by hand, from w = 1:")
        st.latex(figs.worked_update(ts))
    with c2:
        st.caption(figs.two_state_caption(ts, TWO_STATE_UPDATES))

    page.section("Stable off-policy TD: TDC and emphatic TD")
    gargs = (p.gamma, p.pi, p.tdc_alpha, p.beta, p.etd_alpha, p.steps, p.runs, p.seed)
    gexp = gradient(*gargs)
    gshown = gradient_figures(gargs, p.scale)
    c1, c2 = st.columns(2, gap="medium")
    with c1:
        ui.chart(gshown["tdc"], key="deadly_triad.tdc")
    with c2:
        ui.chart(gshown["tdc_expected"], key="deadly_triad.tdc_expected")
    c1, c2 = st.columns(2, gap="medium")
    with c1:
        ui.chart(gshown["etd"], key="deadly_triad.etd")
    with c2:
        for text in figs.gradient_text(gexp.tdc_expected, gexp.etd_expected, p.gamma):
            st.markdown(text)
        notes = [figs.stopped_note(r, u) for r, u in ((gexp.tdc, "step"),
                 (gexp.tdc_expected, "sweep"), (gexp.etd_expected, "sweep"))]
        if any(notes):
            st.caption(" ".join(n for n in notes if n))

    page.section("The triad switchboard")
    st.markdown("Expected updates, so no sampling noise: which combinations diverge?")
    s1, s2, s3 = st.columns(3)
    with s1:
        sw_o = page.controls([ui.Toggle(name="off_policy", label="Off-policy sampling",
                                        value=True, help="Update in b's state distribution. "
                                        "Off: in π's own.")], container=st.container())
    with s2:
        sw_n = page.controls([ui.SelectSlider(name="n", label="Bootstrapping: n-step return",
                                              options=NS, value=1, labels=n_label,
                                              help="n = ∞ is Monte Carlo: no bootstrapping.")],
                             container=st.container())
    with s3:
        sw_a = page.controls([ui.Toggle(name="approx", label="Function approximation",
                                        value=True, help="Baird's 8 features. Off: one "
                                        "feature per state (tabular).")],
                             container=st.container())
    n_boot = 1 if sw_n.n == "mc" else int(sw_n.n)
    chosen = (int(sw_o.off_policy), int(sw_n.n != "mc"), int(sw_a.approx))
    bargs = (p.gamma, p.pi, p.alpha, p.steps, n_boot)
    sb = board(*bargs)
    bshown = board_figures(bargs, chosen)
    ui.chart(bshown["grid"], key="deadly_triad.grid")
    st.caption(figs.switch_caption(sb, chosen))
    c1, c2 = st.columns(2, gap="medium")
    with c1:
        ui.chart(bshown["curves"], key="deadly_triad.curves")
    with c2:
        ui.chart(bshown["dial"], key="deadly_triad.dial")
    st.caption(figs.n_caption(sb, p.alpha))

    page.read_it(
        "**Weights (top of each panel):** one line per weight, the mean over the sampled runs "
        "with a 95% band; in the expected updates w₁…w₆ move together. **Errors (bottom):** "
        "√VE is the RMS distance from the true values (all 0), √PBE the RMS projected Bellman "
        "error, both weighted by b's state distribution, on a log axis where steady growth is a "
        "straight line. A run stops once a weight passes 10⁶ and says so.  \n"
        "**Switchboard:** each cell is expected n-step TD with one choice of each switch; its "
        "colour is how many decades the error gains (red) or loses (blue) per 1000 sweeps (the "
        "×… / 1000 in each cell) in "
        "the long run, read from the eigenvalues of the update. Grey lines neither grow nor "
        "shrink: on-policy at π(solid) = 1 the learner only ever sees the lower state.  \n"
        "**Step size:** divergence here is not a too-large α. For off-policy TD on Baird's "
        "problem some eigenvalue has a positive real part, so every α > 0 diverges; a smaller "
        "α only makes it slower."
    )
    page.try_this([
        "Predict: if you halve α, does semi-gradient DP stop diverging? Move α from 0.01 to "
        "0.005 and read the growth factor under the diagram.",
        "In the switchboard turn off exactly one switch at a time. Which cells turn blue? Then "
        "slide n up to 13 with the other two on: why does the cell change colour there?",
        "Set π(solid) to 0.6, then 0.7. How off-policy must the target be before DP diverges "
        "at γ = 0.99? In the w → 2w example, find the γ where growth starts.",
    ])

    known = known_answers(args, gargs, (p.gamma, p.alpha), bargs, exp, gexp, ts, sb)
    page.known_answer([ui.Check(**vars(k)) for k in known])
    if not ap.book_settings(exp.problem, p.steps):
        st.caption("The book's figures are checked at γ = 0.99, π(solid) = 1 and 1000 steps.")
    page.equations(figs.EQUATIONS)
    page.source(ap.semi_gradient_td_step, ap.expected_td_step, ap.tdc_step, ap.expected_tdc_step,
                ap.expected_etd_step, ap.emphasis_step, ap.projection,
                ap.projected_bellman_error, ap.growth_per_sweep, ap.sample_transitions,
                ap.run_td, ap.run_expected_td)
    page.export(
        figures={"td": shown["td"], "dp": shown["dp"], "contrast": shown["contrast"],
                 "two_state": tshown["w"], "two_state_growth": tshown["growth"],
                 "tdc": gshown["tdc"],
                 "tdc_expected": gshown["tdc_expected"], "etd": gshown["etd"],
                 "switchboard": bshown["grid"], "switch_curves": bshown["curves"],
                 "n_dial": bshown["dial"]},
        data=lambda: figs.tables(exp, gexp, ts, sb),
    )
