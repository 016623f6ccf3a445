import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import numpy as np
import streamlit as st

from rlviz import policy_gradient as pg
from rlviz import ui
from rlviz.figures import policy_gradient as figs

BOOK = "Sutton & Barto (2018)"
INTRO = (
    "On the short corridor every state looks the same to the agent, so the best it can do is a "
    "coin: go right with probability p* = 2 − √2, which no ε-greedy policy comes close to. "
    "REINFORCE climbs to it along single-episode gradient estimates; a baseline keeps their mean "
    "and shrinks their spread, and a critic's TD error shrinks it far more, but is only as right "
    "as the critic."
)
POWERS = {k: figs.power(2.0**k) for k in range(-16, 0)}
CRITIC_LABELS = {"per_state": "one value per state", "one_value": "one value for all states"}
ACTION_LABELS = {pg.RIGHT: "right", pg.LEFT: "left"}
BOOK_SETTINGS = {"p0": 0.05, "episodes": 1000, "b_theta": -9, "b_w": -6}


@ui.cached(max_entries=32, show_spinner="Training the learners…")
def learn(spec: tuple, runs: int, episodes: int, p0: float, seed: int) -> pg.Training:
    """One learner's runs (each learner on its own: a changed step size retrains only it)."""
    return pg.train([pg.Method(*spec)], runs=runs, episodes=episodes, p0=p0, seed=seed)


def trained(specs: tuple, runs: int, episodes: int, p0: float, seed: int) -> pg.Training:
    return pg.Training.join([learn(spec, runs, episodes, p0, seed) for spec in specs])


@ui.cached(max_entries=32, show_spinner="Sampling episodes…")
def study(p: float, n: int, constant: float, seed: int) -> pg.GradientStudy:
    return pg.gradient_study(p, episodes=n, constant=constant, seed=seed)


@ui.cached(max_entries=32, show_spinner=False)
def whiteboard_gap(p: float, constant: float, seed: int) -> float:
    return pg.whiteboard_gap(p, constant, seed)


@ui.cached(max_entries=1, show_spinner=False)
def optimal_p() -> float:
    return float(pg.argmax_value())


@ui.cached_figures()
def learning_figures(specs: tuple, runs: int, episodes: int, p0: float, seed: int,
                     window: int, study_p: float):
    t = trained(specs, runs, episodes, p0, seed)
    return (figs.value_figure(learned=figs.final_policies(t), study_p=study_p),
            figs.curves_figure(t, window=window), figs.policy_figure(t))


@ui.cached_figures()
def study_figures(p: float, n: int, constant: float, seed: int):
    s = study(p, n, constant, seed)
    return figs.cloud_figure(s, seed=seed), figs.variance_figure(s), figs.parabola_figure(s)


@ui.cached_figures()
def corridor():
    return figs.corridor_figure()


@ui.cached_figures()
def worked_figure(w: pg.WorkedScore):
    return figs.log_policy_figure(w)


def step_size(name: str, label: str, lo: int, hi: int, value: int, help: str) -> ui.SelectSlider:
    return ui.SelectSlider(name=name, label=label, options=list(range(lo, hi + 1)), value=value,
                           labels=POWERS, help=help)


with ui.page("policy_gradient", intro=INTRO) as page:
    p = page.controls([
        ui.Section("Learners", expanded=True, controls=[
            ui.MultiChoice(name="alphas", label="REINFORCE step sizes α", options=list(
                range(-15, -9)), value=[-13], labels=POWERS, max_selections=3,
                help="Up to three; Figure 13.1 compares 2⁻¹², 2⁻¹³ and 2⁻¹⁴."),
            step_size("b_theta", "With baseline: α_θ", -12, -6, -9,
                      "REINFORCE with baseline's policy step size (Figure 13.2: 2⁻⁹)."),
            step_size("b_w", "With baseline: α_w", -10, -2, -6,
                      "Step size of the baseline w (Figure 13.2: 2⁻⁶)."),
            step_size("ac_theta", "Actor-critic: α_θ", -10, -3, -6,
                      "One-step actor-critic's policy step size."),
            step_size("ac_w", "Actor-critic: α_w", -8, -2, -4, "The critic's step size."),
            ui.Choice(name="critic", label="Actor-critic's critic", options=list(CRITIC_LABELS),
                      value="per_state", labels=CRITIC_LABELS, widget="radio",
                      help="The actor cannot tell the states apart; the critic may or may not."),
            ui.FloatSlider(name="p0", label="Initial π(right)", min=0.05, max=0.95, value=0.05,
                           step=0.05, help="0.05 is the ε-greedy 'left' policy (ε = 0.1)."),
            ui.IntSlider(name="episodes", label="Episodes per run", min=100, max=1000,
                         value=1000, step=100, scales_work=True),
            ui.IntSlider(name="runs", label="Independent runs", min=10, max=100, value=100,
                         step=10, scales_work=True),
            ui.IntSlider(name="window", label="Smoothing (episodes)", min=1, max=50, value=1),
        ]),
        ui.Section("Gradient study", expanded=True, controls=[
            ui.FloatSlider(name="study_p", label="Policy studied: π(right)", min=0.05, max=0.95,
                           value=0.3, step=0.01),
            ui.SelectSlider(name="study_n", label="Episodes sampled",
                            options=[500, 1000, 2000, 5000], value=2000, scales_work=True),
            ui.FloatSlider(name="b", label="Constant baseline b", min=-100.0, max=0.0,
                           value=-20.0, step=1.0),
        ]),
        ui.Seed(),
    ])
    specs = tuple(("reinforce", 2.0**k, 0.0, "per_state") for k in sorted(p.alphas, reverse=True))
    specs += (("reinforce_with_baseline", 2.0**p.b_theta, 2.0**p.b_w, "per_state"),
              ("actor_critic", 2.0**p.ac_theta, 2.0**p.ac_w, p.critic))
    args = (specs, p.runs, p.episodes, p.p0, p.seed)
    training = trained(*args)
    fig_value, fig_curves, fig_policy = learning_figures(*args, p.window, p.study_p)
    s = study(p.study_p, p.study_n, p.b, p.seed)
    fig_cloud, fig_var, fig_parabola = study_figures(p.study_p, p.study_n, p.b, p.seed)

    page.section("The corridor, and what each coin is worth")
    left, right = st.columns([2, 3], gap="medium")
    with left:
        ui.chart(corridor(), key="policy_gradient.corridor")
        st.caption(
            "Every step costs −1, the one into G too. In state 2 the actions are reversed. The "
            "agent sees the same features everywhere, so its policy is one number p = π(right). "
            "Always right bounces between S and 2 forever; always left never leaves S.")
    with right:
        ui.chart(fig_value, key="policy_gradient.value")
    star = pg.optimal_probability()

    page.section("Learning curves")
    ui.chart(fig_curves, key="policy_gradient.curves")
    last = min(100, p.episodes)
    finals = "; ".join(
        f"{figs.method_label(m)}: " + (f"{x:.2f}" if np.isfinite(x := training.final_mean(
            m, last)) else "not reached (its runs stopped)") for m in training.methods)
    st.caption(f"Mean return over the last {last} episodes — {finals}. v*(S) = "
               f"{pg.start_value(star):.2f}.")
    notes = figs.stop_notes(training)
    if notes:
        st.caption(":material/trending_down: " + " ".join(notes))
    ui.chart(fig_policy, key="policy_gradient.policy")

    page.section("One episode's gradient, seven ways")
    st.markdown(
        f"Each dot is one episode at π(right) = {s.p:g}: the sampled "
        "Σₜ ψₜ ∇ln π(Aₜ) for a choice of ψₜ, on the **same** "
        f"{s.n:,} episodes. The dashed line is the exact gradient; diamonds are means with 95% "
        "intervals.")
    ui.chart(fig_cloud, key="policy_gradient.cloud")
    c1, c2 = st.columns(2, gap="medium")
    with c1:
        ui.chart(fig_var, key="policy_gradient.variance")
    with c2:
        ui.chart(fig_parabola, key="policy_gradient.parabola")
    st.caption(
        f"Baselines: learned w = {s.learned:.3f} (where REINFORCE with baseline's w settles for "
        f"this policy); true v_π = ({', '.join(f'{v:.2f}' for v in s.true_values)}); "
        f"optimal b*(s) = ({', '.join(f'{v:.2f}' for v in s.optimal)}), the per-state baseline "
        f"with the least variance on these episodes; one-value critic v̂ = J(p) = "
        f"{s.one_value:.3f}.")

    page.section("∇ ln π by hand")
    st.markdown("The interview question: derive the score of a softmax policy, then take one "
                "REINFORCE step. Set the numbers.")
    w1, w2, w3 = st.columns(3)
    wa = page.controls([
        ui.Number(name="wb_tr", label="θ(right)", min=-20.0, max=20.0, value=0.5, step=0.1,
                  format="%g"),
        ui.Number(name="wb_tl", label="θ(left)", min=-20.0, max=20.0, value=-0.5, step=0.1,
                  format="%g"),
    ], container=w1)
    wb = page.controls([
        ui.Choice(name="wb_a", label="Action taken", options=[pg.RIGHT, pg.LEFT], value=pg.LEFT,
                  labels=ACTION_LABELS, widget="segmented"),
        ui.Number(name="wb_alpha", label="Step size α", min=0.0, max=1.0, value=0.01,
                  step=0.01, format="%g"),
    ], container=w2)
    wc = page.controls([
        ui.Number(name="wb_g", label="Return G", min=-1000.0, max=1000.0, value=-12.0, step=1.0,
                  format="%g"),
        ui.Number(name="wb_b", label="Baseline b", min=-1000.0, max=1000.0, value=-10.0,
                  step=1.0, format="%g"),
    ], container=w3)
    worked = pg.worked_score(wa.wb_tr, wa.wb_tl, wb.wb_a, ret=wc.wb_g, baseline=wc.wb_b,
                             alpha=wb.wb_alpha)
    steps_box, plot_box = st.columns([3, 2], gap="medium")
    with steps_box:
        for caption, latex in figs.worked_steps(worked):
            st.markdown(caption)
            st.latex(latex)
    with plot_box:
        ui.chart(worked_figure(worked), key="policy_gradient.worked")
        st.caption("The score is a slope: the tangent of ln π(a) as θ(right) moves.")

    page.read_it(
        "**J(p):** the exact start value of every coin, from the Bellman equations. The star is "
        "p* = 2 − √2; the grey dots are the ε-greedy policies; diamonds mark where each learner "
        "ended (mean π(right) over the runs).  \n"
        "**Curves:** the return of each episode averaged over the runs (band: 95% interval of "
        "that mean). Every learner plays the same random numbers, so their first episodes are "
        "identical. REINFORCE needs a small step because its estimates are so noisy; the "
        "baseline lets a 16 times larger step work.  \n"
        "**Cloud:** every Monte-Carlo baseline leaves the mean on the dashed line and only "
        "changes the spread; the variance of a constant baseline is a parabola in b. The TD "
        "error of actor-critic varies a hundred times less, unbiased with the true v_π; a critic "
        "with one value for all states is just as tight and wrong — it always says "
        "\"more right\", which is why actor-critic with that critic runs away."
    )
    page.try_this([
        "Predict which REINFORCE step size reaches −20 first, then add 2⁻¹² and 2⁻¹⁴ to "
        "REINFORCE's step sizes (Figure 13.1). Which one is still far from v* after 1000 "
        "episodes?",
        "Move the constant baseline b from −20 to 0 and to −100. Does the mean of its cloud "
        "move? Where on the parabola is the variance lowest, and is it below the true v_π?",
        "Switch actor-critic's critic to one value for all states. Predict what its π(right) "
        "does; then set the gradient study's policy to 0.9 and compare the TD cloud with the "
        "dashed line.",
    ])
    eps = pg.epsilon_greedy_values(0.1)
    h = 1e-6
    theta_s = np.log([s.p, 1.0 - s.p])
    fd = (pg.start_value(pg.policy(theta_s + [h, 0])[0]) -
          pg.start_value(pg.policy(theta_s - [h, 0])[0])) / (2 * h)
    mc = list(pg.ESTIMATORS[:5])
    inside = [abs(s.means[s.index(k)] - s.exact) <= s.half_widths[s.index(k)] for k in mc]
    least = pg.ESTIMATORS[int(np.argmin(s.variances[:5]))]
    one = s.index("td_one")
    checks = [
        ui.Check("Optimal π(right), J maximised numerically",
                 value=optimal_p(), reference=star, tol=1e-6,
                 source=f"2 − √2; {BOOK}, Example 13.1 (≈ 0.59)"),
        ui.Check("J(p*), linear system", value=pg.start_value(star),
                 reference=pg.closed_form_value(star), tol=1e-9,
                 source=f"(2p − 4)/(p(1 − p)); {BOOK}, Example 13.1 (≈ −11.6)"),
        ui.Check("ε-greedy right, J(0.95)", value=eps["right"],
                 reference=pg.closed_form_value(0.95), tol=1e-9,
                 source=f"{BOOK}, Example 13.1 (≈ −44)"),
        ui.Check("ε-greedy left, J(0.05)", value=eps["left"],
                 reference=pg.closed_form_value(0.05), tol=1e-9,
                 source=f"{BOOK}, Example 13.1 (≈ −82)"),
        ui.Check(f"∂J/∂θ(right) at p = {s.p:g}, vs a finite difference",
                 value=s.exact, reference=float(fd), tol=1e-5,
                 source="(2p² − 8p + 4)/(p(1 − p))"),
        ui.Check("Baselines whose mean is within 95% of the exact gradient",
                 value=f"{sum(inside)} of {len(mc)}", reference=f"{len(mc)} of {len(mc)}",
                 passed=sum(inside) >= len(mc) - 1,
                 source=f"E[b(S) ∇ln π(A)] = 0, {BOOK} §13.4; one miss in 20 is chance"),
        ui.Check("Least variance among the baselines",
                 value=figs.estimator_names(s)[least],
                 reference="optimal b*(s)", passed=least == "optimal",
                 source="Greensmith, Bartlett & Baxter (2004), JMLR 5"),
        ui.Check("One-value critic's mean gradient", value=float(s.means[one]),
                 reference=-s.one_value * (1 - s.p), tol=float(2 * s.half_widths[one]),
                 source="−J(p)(1 − p): every δ is −1 but the last"),
        ui.Check("Whiteboard version equals rlviz on this view (20 episodes)",
                 value=whiteboard_gap(s.p, s.constant, p.seed), reference=0.0, tol=1e-9,
                 source="rlviz.interview.whiteboard.policy_gradient"),
    ]
    book = (p.p0 == BOOK_SETTINGS["p0"] and p.episodes == BOOK_SETTINGS["episodes"]
            and -13 in p.alphas and (p.b_theta, p.b_w) == (-9, -6))
    if book:
        r13 = next(m for m in training.methods if m.kind == "reinforce"
                   and m.alpha_theta == 2.0**-13)
        base = next(m for m in training.methods if m.kind == "reinforce_with_baseline")
        ends = [training.final_mean(r13), training.final_mean(base)]
        checks.append(ui.Check(
            "Last 100 episodes at the book's step sizes, within 10% of v*",
            value=f"{ends[0]:.2f}, {ends[1]:.2f}", reference=f"→ {pg.start_value(star):.2f}",
            passed=all(abs(x - pg.start_value(star)) <= 0.1 * abs(pg.start_value(star))
                       for x in ends), source=f"{BOOK}, Figures 13.1 and 13.2"))
    page.known_answer(checks)
    page.equations(figs.EQUATIONS)
    page.source(pg.reinforce_run, pg.actor_critic_run, pg.policy, pg.score, pg.corridor_step,
                pg.returns_to_go, pg.episode_gradient, pg.play_episodes, pg.gradient_study,
                pg.worked_score, pg.state_values, pg.exact_gradient, pg.train)

    page.export(
        figures={"value": fig_value, "learning_curves": fig_curves, "policy": fig_policy,
                 "gradient_cloud": fig_cloud, "variances": fig_var,
                 "constant_baseline": fig_parabola},
        data=lambda: figs.export_tables(training, s, window=p.window),
    )
