import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import numpy as np
import pandas as pd
import streamlit as st

from rlviz import approximation as ap
from rlviz import ui
from rlviz.figures import approximation as figs
from rlviz.interview.whiteboard import deadly_triad as wb

BOOK = "Sutton & Barto (2018)"
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
BOOK_SETTINGS = dict(gamma=0.99, pi=1.0, steps=1000)


def pi_label(p: float) -> str:
    return "1/7 (π = b)" if abs(p - 1 / 7) < 1e-12 else f"{p:g}"


def sci(x: float) -> str:
    """A number for a sentence: 17,190 or 3.2 × 10⁻⁷."""
    if 1e3 <= abs(x) < 1e6:
        return f"{x:,.0f}"
    if 1e-3 <= abs(x) < 1e3:
        return f"{x:.4g}"
    mantissa, exponent = f"{x:.2e}".split("e")
    power = "".join("⁰¹²³⁴⁵⁶⁷⁸⁹⁻"["0123456789-".index(c)] for c in str(int(exponent)))
    return f"10{power}" if mantissa == "1.00" else f"{mantissa} × 10{power}"


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


def stopped_note(run: ap.Run, unit: str) -> str:
    if run.diverged_at is None:
        return ""
    return (f"**{run.method}** diverged: a weight passed {sci(ap.DIVERGED)} at {unit} "
            f"{run.diverged_at:,}, where its curves stop.")


def run_table(run: ap.Run, unit: str) -> pd.DataFrame:
    k = run.live
    mean = run.weights[:k].mean(axis=1)
    return pd.DataFrame({unit: run.t[:k], **{f"w{i + 1}": mean[:, i] for i in range(mean.shape[1])},
                         "rms_ve": run.value_error[:k].mean(axis=1),
                         "rms_pbe": run.pbe[:k].mean(axis=1)})


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
        st.markdown(
            "Seven states, every reward 0, so the true value is 0 everywhere. The behaviour b "
            "takes *dashed* 6 times in 7, so it visits every state equally; the target π takes "
            f"*solid*, to the lower state{' always' if p.pi == 1 else f', {p.pi:.3g} of the time'}"
            ". Eight weights for seven states: the features can represent the true values "
            "exactly (w ∝ (1, 1, 1, 1, 1, 1, 4, −2)), "
            + ("and still the weights run away." if exp.growth > 1 + 1e-9 else
               "and at these settings the expected update does not run away."))
        st.caption(
            f"Growth of DP's error per sweep: ×{exp.growth:.6f} off-policy, "
            f"×{exp.growth_on:.6f} in π's own distribution, ×{exp.growth_tabular:.6f} off-policy "
            "with one feature per state.")
    c1, c2 = st.columns(2, gap="medium")
    with c1:
        ui.chart(shown["td"], key="deadly_triad.td")
    with c2:
        ui.chart(shown["dp"], key="deadly_triad.dp")
    ui.chart(shown["contrast"], key="deadly_triad.contrast")
    notes = [n for n in (stopped_note(exp.td, "step"), stopped_note(exp.dp, "sweep")) if n]
    st.caption(" ".join(notes) or "Solid: learning about π from b's experience (off-policy). "
               "Dashed: the same updates on π's own experience. Following π (at π(solid) = 1) "
               "visits only the lower state, so only its value is learned.")

    page.section("The smallest divergence: w → 2w")
    ts = two_state(p.gamma, p.alpha)
    tshown = two_state_figures(p.gamma, p.alpha)
    factor = ap.two_state_growth(p.gamma, p.alpha)
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
        st.latex(
            rf"\begin{{aligned}} w &\leftarrow w + \alpha\,(\gamma\cdot 2w - w)\cdot 1 \\"
            rf"&= 1 + {p.alpha:g}\,({p.gamma:g}\cdot 2 \cdot 1 - 1) \\"
            rf"&= {ts.w[1]:.10g} = 1 + \alpha(2\gamma - 1) \end{{aligned}}")
    with c2:
        verdict = ("grows" if factor > 1 else "shrinks" if factor < 1 else "stays")
        st.caption(
            f"Every update multiplies w by the same factor, so w {verdict} geometrically: "
            f"after {TWO_STATE_UPDATES:,} updates w = {factor:.10g} to the power "
            f"{TWO_STATE_UPDATES:,} = {sci(factor ** TWO_STATE_UPDATES)}"
            + (f" (the run stops at update {ts.diverged_at:,}, past {sci(ap.DIVERGED)})"
               if ts.diverged_at else "")
            + ". On-policy the second state's own update (to the end, target 0) shrinks w by "
            f"1 − 4α = {1 - 4 * p.alpha:.10g} in the same episode. It grows exactly when "
            "γ > ½, whatever α is.")

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
    tdc_e, etd_e = gexp.tdc_expected, gexp.etd_expected
    with c2:
        st.markdown(
            f"**TDC** descends the projected Bellman error: after {tdc_e.steps:,} sweeps "
            f"√PBE = {tdc_e.pbe[-1, 0]:.3g} while √VE = {tdc_e.value_error[-1, 0]:.3g}. Baird's "
            "features represent every value function, so the projection Π is the identity and "
            f"PBE is the Bellman error itself; with γ = {p.gamma:g} a small Bellman error "
            "still allows a large value error, which TDC removes only slowly.")
        ve = etd_e.value_error[: etd_e.live, 0]
        path = f"Its √VE goes from {sci(float(ve[0]))}"
        if ve.max() > ve[0] * 1.01:
            path += f", up to {sci(float(ve.max()))} while the emphasis builds,"
        path += f" to {sci(float(ve[-1]))}."
        st.markdown(
            "**Emphatic TD** reweights each state's update by its expected emphasis, which "
            "starts at b's distribution and grows toward (I − γP_πᵀ)⁻¹d as the followon trace "
            f"builds up. {path} Sampled, the emphasis is a product of ratios (7 or 0 at "
            "π(solid) = 1), far too noisy to use here: the book shows only its expectation.")
        notes = [stopped_note(r, u) for r, u in ((gexp.tdc, "step"), (tdc_e, "sweep"),
                                                 (etd_e, "sweep"))]
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
    mine = sb.runs[chosen]
    verdict = figs.switch_label(chosen, n_boot)
    rho = sb.growth[chosen]
    st.caption(
        f"**{verdict}**: the error changes by ×{rho:.6f} per sweep in the long run; √VE "
        f"{float(mine.value_error[0, 0]):.3g} → {float(mine.value_error[mine.live - 1, 0]):.3g}"
        + (f", diverged at sweep {mine.diverged_at:,}" if mine.diverged_at else "")
        + f" after {mine.steps:,} sweeps.")
    c1, c2 = st.columns(2, gap="medium")
    with c1:
        ui.chart(bshown["curves"], key="deadly_triad.curves")
    with c2:
        ui.chart(bshown["dial"], key="deadly_triad.dial")
    star, limit_star, crit = sb.first_stable_n, sb.first_stable_n_small_alpha, sb.critical_gamma
    note = ("On Baird's problem every row of P_π is the same distribution, so Pⁿ = P_π and the "
            "n-step update is the one-step update with discount γⁿ: bootstrapping fades as γⁿ "
            "falls.")
    if crit is not None and limit_star is not None:
        note += (f" Off-policy with features, for small α it diverges exactly when γⁿ > γ* = "
                 f"{crit:.6f} (15/17 at π(solid) = 1): stable from n = {limit_star}.")
        if star is not None and star != limit_star:
            note += (f" At α = {p.alpha:g} the eigenvalues are complex and the step size adds "
                     f"a little growth: stable from n = {star}.")
    elif crit is None:
        note += " With these policies off-policy TD(0) does not diverge for any γ < 1."
    st.caption(note)

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

    # ------------------------------------------------------------------ known answers
    at_book = (p.gamma, p.pi, p.steps) == tuple(BOOK_SETTINGS.values())
    problem = exp.problem
    w_end = exp.dp.weights[exp.dp.live - 1, 0]
    x = problem.features
    pairs = [(s, a, s2) for s in range(7) for a, s2 in ((0, 6), (1, s % 6))]
    xs, xn = x[[s for s, _, _ in pairs]], x[[s2 for _, _, s2 in pairs]]
    rhos = problem.rho[[s for s, _, _ in pairs], [a for _, a, _ in pairs]]
    w_now = exp.td.final
    lib = ap.semi_gradient_td_step(np.tile(w_now, (len(pairs), 1)), xs, xn, 0.0, rhos,
                                   gamma=p.gamma, alpha=p.alpha)
    board_wb = np.array([wb.off_policy_td(w_now, xs[i], xn[i], 0.0, rhos[i], p.gamma, p.alpha)
                         for i in range(len(pairs))])
    lib_tdc = ap.tdc_step(np.tile(w_now, (len(pairs), 1)), np.tile(w_now / 10, (len(pairs), 1)),
                          xs, xn, 0.0, rhos, gamma=p.gamma, alpha=p.tdc_alpha, beta=p.beta)
    wb_tdc = [wb.tdc(w_now, w_now / 10, xs[i], xn[i], 0.0, rhos[i], p.gamma, p.tdc_alpha, p.beta)
              for i in range(len(pairs))]
    gap = max(np.abs(board_wb - lib).max(), np.abs(np.array([t[0] for t in wb_tdc]) -
              lib_tdc[0]).max(), np.abs(np.array([t[1] for t in wb_tdc]) - lib_tdc[1]).max())
    gap /= max(1.0, float(np.abs(w_now).max()))  # relative to the size of the weights
    wb_diverges = wb.expected_td_diverges(x, problem.behaviour_distribution,
                                          problem.target_matrix, p.gamma)
    checks = [
        ui.Check("w → 2w: w after one update, from w = 1 (semi_gradient_td_step)",
                 value=float(ts.w[1]), reference=factor, tol=1e-12, fmt=".10g",
                 source=f"1 + α(2γ − 1), {BOOK} §11.2"),
        ui.Check("Off-policy DP grows, on-policy and tabular do not (growth per sweep)",
                 value=f"{exp.growth:.6f} / {exp.growth_on:.6f} / {exp.growth_tabular:.6f}",
                 reference="> 1 / ≤ 1 / ≤ 1" if ap.drift(problem) > 0 else "≤ 1 for all three",
                 passed=(exp.growth > 1 + 1e-9) == (ap.drift(problem) > 1e-12)
                 and exp.growth_on <= 1 + 1e-9 and exp.growth_tabular <= 1 + 1e-9,
                 source=f"{BOOK} §11.2, Figure 11.2"),
        ui.Check("Baird's null weights (1,1,1,1,1,1,4,−2) give v̂ = 0: largest value",
                 value=float(np.abs(x @ ap.NULL_WEIGHTS).max()), reference=0.0, tol=0.0,
                 source=f"{BOOK} §11.7"),
        ui.Check("Π = I for Baird's features (rank 7 of 7 states): largest entry of Π − I",
                 value=float(np.abs(ap.projection(x, problem.behaviour_distribution)
                                    - np.eye(7)).max()),
                 reference=0.0, tol=1e-9, source="PBE = BE when every value is representable"),
        ui.Check("Whiteboard version equals rlviz on this view (TD and TDC steps, divergence "
                 "test): largest relative gap", value=float(gap), reference=0.0, tol=1e-12,
                 passed=gap <= 1e-12 and wb_diverges == (ap.drift(problem) > 1e-12),
                 source="rlviz.interview.whiteboard.deadly_triad"),
    ]
    limit_star = sb.first_stable_n_small_alpha
    if crit is not None and limit_star is not None:
        n_star = 1 if p.gamma <= crit else int(np.ceil(np.log(crit) / np.log(p.gamma) - 1e-9))
        checks.append(ui.Check(
            "First stable n as α → 0 (off-policy, features) = ⌈ln γ* / ln γ⌉, as Pⁿ = P here",
            value=limit_star, reference=n_star, tol=0.0, fmt=".0f",
            source="γⁿ < γ* (γ* = 15/17 at π(solid) = 1, derived)"))
    if at_book and p.alpha == 0.01:
        dp_grew = bool(np.all(np.diff(exp.dp.value_error[-50:, 0]) > 0))
        checks += [
            ui.Check("Figure 11.2: DP's weights after 1000 sweeps (w₁, w₇, w₈)",
                     value=f"{w_end[0]:.1f}, {w_end[6]:.2f}, {w_end[7]:.1f}",
                     reference="all growing, w₈ fastest", passed=dp_grew
                     and w_end[7] > w_end[0] > w_end[6], source=f"{BOOK}, Figure 11.2"),
        ]
        if (p.tdc_alpha, p.beta) == (0.005, 0.05):
            checks += [
                ui.Check("Figure 11.5: expected TDC's √PBE after 1000 sweeps",
                         value=float(tdc_e.pbe[-1, 0]), reference=0.0, tol=0.01,
                         source=f"{BOOK}, Figure 11.5: falls to near zero"),
                ui.Check("Figure 11.5: expected TDC's √VE after 1000 sweeps",
                         value=float(tdc_e.value_error[-1, 0]), reference=2.0, tol=0.1,
                         source=f"{BOOK} §11.7: VE remains almost 2"),
            ]
        if p.etd_alpha == 0.03:
            checks.append(ui.Check(
                "Figure 11.6: expected emphatic TD's √VE after 1000 sweeps",
                value=float(etd_e.value_error[-1, 0]), reference=0.0, tol=1e-6, fmt=".3g",
                source=f"{BOOK}, Figure 11.6: converges to the true values"))
    page.known_answer(checks)
    if not at_book:
        st.caption("The book's figures are checked at γ = 0.99, π(solid) = 1 and 1000 steps.")

    page.equations([
        ("Off-policy semi-gradient TD(0), with the importance ratio of the action taken",
         r"\delta_t = R_{t+1} + \gamma\,\mathbf w_t^\top \mathbf x_{t+1} - \mathbf w_t^\top"
         r"\mathbf x_t,\qquad \mathbf w_{t+1} = \mathbf w_t + \alpha\,\rho_t\,\delta_t\,"
         r"\mathbf x_t,\qquad \rho_t = \frac{\pi(A_t\mid S_t)}{b(A_t\mid S_t)}"),
        ("Semi-gradient DP: the same update in expectation, over the update distribution d "
         "(uniform on Baird's: 1/|S| each)",
         r"\mathbf w_{k+1} = \mathbf w_k + \alpha \sum_s d(s)\Big(\mathbb E_\pi\big[R + \gamma"
         r"\,\hat v(S',\mathbf w_k) \mid s\big] - \hat v(s,\mathbf w_k)\Big)\,\mathbf x(s)"),
        ("The values move linearly; they grow if some eigenvalue of K exceeds 1 in modulus "
         "(n-step: γⁿ and Pⁿ)",
         r"X\mathbf w_{k+1} = K\,X\mathbf w_k + c,\qquad K = I - \alpha\,XX^\top D\,"
         r"(I - \gamma^n P_\pi^n)"),
        ("w → 2w: one update of the single transition", r"w_{t+1} = w_t + \alpha\,(0 + \gamma"
         r"\,2w_t - w_t)\cdot 1 = \big(1 + \alpha(2\gamma - 1)\big)\,w_t"),
        ("Projection and projected Bellman error, in the behaviour's distribution D",
         r"\Pi = X\,(X^\top D X)^{+}X^\top D,\qquad \bar\delta_{\mathbf w} = r_\pi + \gamma P_\pi"
         r" X\mathbf w - X\mathbf w,\qquad \overline{\mathrm{PBE}}(\mathbf w) = \big\lVert \Pi\,"
         r"\bar\delta_{\mathbf w}\big\rVert_D^2"),
        ("TDC (gradient-corrected TD); v estimates E[δ x] by least squares",
         r"\mathbf w \leftarrow \mathbf w + \alpha\rho_t\big(\delta_t\mathbf x_t - \gamma\,"
         r"\mathbf x_{t+1}\,\mathbf x_t^\top\mathbf v\big),\qquad \mathbf v \leftarrow "
         r"\mathbf v + \beta\rho_t\big(\delta_t - \mathbf v^\top\mathbf x_t\big)\mathbf x_t"),
        ("Emphatic TD(0): the followon trace M reweights each update; in expectation f",
         r"M_t = \gamma\rho_{t-1}M_{t-1} + I_t,\quad \mathbf w \leftarrow \mathbf w + \alpha M_t"
         r"\rho_t\delta_t\mathbf x_t,\qquad f_{t+1} = d\circ i + \gamma P_\pi^\top f_t"),
        ("The RMS errors of the charts (true values v_π = 0 here)",
         r"\sqrt{\overline{\mathrm{VE}}} = \Big(\sum_s d(s)\big(\hat v(s,\mathbf w) - "
         r"v_\pi(s)\big)^2\Big)^{1/2}"),
    ])
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
        data=lambda: {
            "td": run_table(exp.td, "step"), "dp": run_table(exp.dp, "sweep"),
            "td_on_policy": run_table(exp.td_on, "step"),
            "dp_on_policy": run_table(exp.dp_on, "sweep"),
            "tdc": run_table(gexp.tdc, "step"), "tdc_expected": run_table(tdc_e, "sweep"),
            "etd_expected": run_table(etd_e, "sweep"),
            "two_state": pd.DataFrame({"update": np.arange(ts.w.size), "w": ts.w}),
            "switchboard": pd.DataFrame([
                {"setting": figs.switch_label(k, n_boot), "growth_per_sweep": sb.growth[k],
                 "rms_ve_start": float(r.value_error[0, 0]),
                 "rms_ve_end": float(r.value_error[r.live - 1, 0]),
                 "diverged_at": r.diverged_at} for k, r in sb.runs.items()]),
        },
    )
