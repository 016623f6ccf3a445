import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import math

import numpy as np
import streamlit as st

from rlviz import exploration as ex
from rlviz import td, ui
from rlviz.figures import exploration as figs
from rlviz.interview.whiteboard import exploration as wb

INTRO = (
    "Four learners meet a chain whose real reward sits at the far end, with the same dice in "
    "every run: ε-greedy dithers one step at a time, optimism and a count bonus plan toward "
    "what they have not tried, posterior sampling commits to one plausible world per episode. "
    "On the deep sea the dithering learner needs about 2ᴺ episodes to find the treasure; the "
    "others need a number that grows like a polynomial in N."
)
PROBLEMS = {"riverswim": "RiverSwim", "deep_sea": "Deep sea"}
SWEEP_SIZES = (8, 10, 12, 16)
WALKER_EPISODES = 40_000
OSBAND_2013 = "Osband, Russo & Van Roy (2013), Thm 1: Õ(HS√(AT))"


def superscript(n: int) -> str:
    return str(n).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))


@ui.cached(max_entries=24, show_spinner="Training the learners…")
def study(problem, n, learners, runs, episodes, seed, epsilon, alpha, beta) -> ex.Study:
    return ex.run_study(ex.make_problem(problem, n), learners, runs=runs, episodes=episodes,
                        seed=seed, epsilon=epsilon, alpha=alpha, beta=beta)


@ui.cached(max_entries=16, show_spinner="Sweeping the deep sea's size N…")
def sweep(largest, cap, runs, seed, epsilon, alpha, beta, learners) -> ex.Sweep:
    sizes = [n for n in ex.DEEP_SEA_SIZES if n <= largest]
    return ex.sweep_first_reach(sizes, (*learners, "random"), runs=runs, cap=cap, seed=seed,
                                epsilon=epsilon, alpha=alpha, beta=beta)


@ui.cached(max_entries=24, show_spinner=False)
def known_answers(args, sweep_args) -> list[ui.Check]:
    res, sw = study(*args), sweep(*sweep_args)
    problem = res.problem
    exact = ex.policy_value_exact(problem, res.plan.greedy)[0, problem.mdp.start_state]
    checks = [ui.Check(
        "V*(s₀): value iteration vs a linear solve of its policy",
        value=res.optimal_value, reference=float(exact), tol=1e-9, fmt=".6f",
        source="Bellman optimality; Puterman (1994), §4.5",
    )]
    if problem.key == "riverswim":
        right = bool(res.plan.greedy[0, :, ex.RIGHT].all() and
                     not res.plan.greedy[0, :, ex.LEFT].any())
        checks.append(ui.Check(
            "Optimal first move in every position", value="swim right" if right else "mixed",
            reference="swim right", passed=right, source="Strehl & Littman (2008), §6",
        ))
    else:
        checks.append(ui.Check(
            f"V*(s₀) of the deep sea, N = {problem.size}", value=res.optimal_value,
            reference=1 - ex.DEEP_SEA_COST, tol=1e-9, fmt=".6f",
            source="Osband et al. (2019), §7.1: 1 − 0.01",
        ))
    p_exact = ex.first_reach_probability(problem)
    p_mc = ex.random_walk_episodes(problem, WALKER_EPISODES, seed=res.seed)
    se = math.sqrt(p_exact * (1 - p_exact) / WALKER_EPISODES)
    closed = f"2⁻{superscript(problem.size)}" if problem.key == "deep_sea" else "exact recursion"
    checks.append(ui.Check(
        f"Random walker: chance per episode of the far reward ({closed}) vs "
        f"{WALKER_EPISODES:,} simulated episodes", value=p_mc, reference=p_exact, tol=4 * se,
        fmt=".5g", source="geometric first success: E[episodes] = 1/p",
    ))
    ok = np.flatnonzero(sw.censoring() < 1e-3)
    if "random" in sw.kinds and ok.size:
        t = int(ok[-1])
        walk = sw.first_reach[sw.kinds.index("random"), t]
        expected = float(sw.expected_random[t])
        spread = math.sqrt(expected * (expected - 1) / sw.runs)
        checks.append(ui.Check(
            f"ε = 1 learner, deep sea N = {sw.sizes[t]}: mean episodes to the first treasure "
            f"({sw.runs} runs)", value=float(walk.mean()), reference=expected,
            tol=3 * spread, fmt=".1f", source=f"closed form 2ᴺ = {expected:,.0f}",
        ))
    if problem.key == "riverswim" and "psrl" in res.kinds:
        mean = res.regret_band()[0][res.index("psrl")]
        half = mean[res.episodes // 2 - 1]
        ratio = float(mean[-1] / half) if half > 0 else 1.0
        checks.append(ui.Check(
            f"Posterior sampling's regret grows sublinearly: R({res.episodes}) / "
            f"R({res.episodes // 2})", value=f"{ratio:.2f}", reference="< 2 (2 is linear)",
            passed=ratio < 2, source=OSBAND_2013,
        ))
    q_wb = wb.backward_induction(problem.mdp.P, problem.mdp.R, problem.horizon)
    checks.append(ui.Check(
        "Whiteboard version equals rlviz on this view: largest gap in Q_h(s, a)",
        value=float(np.abs(q_wb - res.plan.q).max()), reference=0.0, tol=1e-12, fmt=".2g",
        source="backward induction, ten lines of numpy",
    ))
    return checks


@ui.cached_figures()
def study_charts(args):
    res = study(*args)
    return figs.regret_figure(res), {k: figs.visits_figure(res, k) for k in res.kinds}


@ui.cached_figures()
def sweep_chart(args):
    return figs.first_reach_figure(sweep(*args))


def reach_summary(res: ex.Study) -> str:
    parts = []
    for k, kind in enumerate(res.kinds):
        first = res.first_reach[k]
        found = first > 0
        text = f"{ex.LABELS[kind]} {int(found.sum())} of {res.runs}"
        if found.any():
            text += f" (median episode {np.median(first[found]):.0f})"
        parts.append(text)
    return "Runs that collected the far reward: " + " · ".join(parts) + "."


with ui.page("exploration", intro=INTRO) as page:
    top = page.controls([
        ui.Choice(name="problem", label="Problem", options=list(PROBLEMS), value="riverswim",
                  labels=PROBLEMS, widget="segmented"),
    ])
    p = page.controls([
        ui.MultiChoice(name="learners", label="Learners", options=ex.LEARNERS,
                       value=list(ex.LEARNERS), labels=ex.LABELS),
        ui.FloatSlider(name="epsilon", label="ε of ε-greedy", min=0.0, max=1.0, value=0.1,
                       step=0.05, help="ε = 1 is a uniformly random walker"),
        ui.FloatSlider(name="alpha", label="Step size α of the Q-learners", min=0.05, max=1.0,
                       value=0.5, step=0.05),
        ui.FloatSlider(name="beta", label="Bonus scale β (reward + β/√N)", min=0.0, max=3.0,
                       value=0.5, step=0.1, help="β = 0 plans in the empirical model "
                       "(untried moves still count as the best reward)"),
        ui.IntSlider(name="n", label="Deep-sea size N", min=4, max=12, value=10,
                     disabled=top.problem != "deep_sea", scales_work=True,
                     help="Columns and steps of the deep sea (used when the deep sea is chosen)"),
        ui.SelectSlider(name="episodes", label="Episodes per run", options=[50, 100, 200],
                        value=100, scales_work=True),
        ui.IntSlider(name="runs", label="Independent runs", min=2, max=20, value=20,
                     scales_work=True),
        ui.Section("N sweep (deep sea)", expanded=False, controls=[
            ui.SelectSlider(name="sweep_n", label="Largest N", options=list(SWEEP_SIZES),
                            value=12, scales_work=True),
            ui.SelectSlider(name="cap", label="Give up after (episodes)", options=[100, 150, 300],
                            value=150, scales_work=True),
            ui.IntSlider(name="sweep_runs", label="Runs per size", min=2, max=10, value=10,
                         scales_work=True),
        ]),
        ui.Seed(),
    ])
    if not p.learners:
        raise ex.InputError("Choose at least one learner.")
    learners = tuple(k for k in ex.LEARNERS if k in p.learners)
    args = (top.problem, p.n, learners, p.runs, p.episodes, p.seed, p.epsilon, p.alpha, p.beta)
    sweep_args = (p.sweep_n, p.cap, p.sweep_runs, p.seed, p.epsilon, p.alpha, p.beta, learners)
    res = study(*args)
    problem = res.problem
    regret_fig, visit_figs = study_charts(args)

    page.section(f"Regret on {problem.label}: what exploring costs")
    ui.chart(regret_fig, key="exploration.regret")
    st.caption(
        f"{p.runs} runs × {p.episodes} episodes of {problem.horizon} steps; band: 95% interval "
        f"of the mean over runs. Optimal expected return V*(s₀) = {res.optimal_value:.4f}. "
        + reach_summary(res)
    )

    page.section("Where each learner has been")
    for pair in range(0, len(res.kinds), 2):  # row by row, so a phone keeps the order
        for col, kind in zip(st.columns(2), res.kinds[pair : pair + 2], strict=False):
            with col:
                ui.chart(visit_figs[kind], key=f"exploration.visits.{kind}")
    st.caption("Share of all episodes that passed through each (step, position), over every run. "
               + ("On the deep sea this is the grid itself: one row per step, the treasure at "
                  "the bottom right." if problem.key == "deep_sea" else
                  "The big reward is for swimming right at position 5."))

    page.section("Episodes until the first treasure, against the deep sea's size N")
    sw = sweep(*sweep_args)
    sweep_fig = sweep_chart(sweep_args)
    ui.chart(sweep_fig, key="exploration.sweep")
    st.caption(
        f"Log scale; N is the episode length and the depth. {p.sweep_runs} runs per size; each "
        f"stops at its first treasure or after {p.cap:,} episodes (dotted line). Filled: mean "
        "with its 95% interval. Open triangle: some runs did not find it within "
        f"{p.cap:,} episodes, so the mean is at least this. Cross: not reached within "
        f"{p.cap:,} episodes in any run. Grey: ε-greedy with ε = 1."
    )

    page.read_it(
        "**Regret** is, episode by episode, what the optimal policy collects on the same dice "
        "minus what the learner collects, added up; a learner that has found the optimal policy "
        "adds nothing, one that never leaves the nearby small reward climbs the dotted line. "
        "ε-greedy explores by coin flips at every step: to reach the far end it needs a long run "
        "of lucky flips, which almost never comes, so its regret stays a straight line. The "
        "optimistic Q-learner believes every untried step could pay the most, so it goes "
        "everywhere, but each table entry loses its optimism only one visit at a time, so it "
        "keeps exploring for long. The count bonus and posterior sampling plan with a model: "
        "they head for what they have not tried, then stop exploring where they are sure.  \n"
        "**The sweep** is on a log scale: a straight line there is exponential growth. The "
        "dashed 2ᴺ is exact for a random walker: the treasure needs N rights in a row, chance "
        "2⁻ᴺ per episode."
    )
    page.try_this([
        "Predict where ε-greedy's points land in the N sweep at ε = 1, then set ε to 1.",
        "Set β = 0 (no bonus: plan in the empirical model). Predict the bonus learner's regret, "
        "then move β back up.",
        "Choose the deep sea and raise N from 4 to 12. Which learner's map stops reaching the "
        "bottom right first?",
    ])

    page.known_answer(known_answers(args, sweep_args))

    page.equations([
        ("Regret after K episodes, and its paired estimate on the same dice (G*: the optimal "
         "policy's return)", r"\begin{aligned} \mathrm{Regret}(K) &= \textstyle\sum_{k=1}^{K} "
         r"\big(V^*(s_0) - V^{\pi_k}(s_0)\big) \\ \widehat{\mathrm{Regret}}(K) &= "
         r"\textstyle\sum_{k=1}^{K} \big(G^*_k - G_k\big) \end{aligned}"),
        ("Backward induction: value iteration from V₀ = 0, one sweep per step to go; step h acts "
         "on the value with H − h − 1 steps left",
         r"\begin{aligned} V_k(s) &= \max_a \Big[r(s, a) + \textstyle\sum_{s'} P(s' \mid s, a)"
         r"\, V_{k-1}(s')\Big] \\ \pi_h(s) &\in \arg\max_a \Big[r(s, a) + "
         r"\textstyle\sum_{s'} P(s' \mid s, a)\, V_{H-h-1}(s')\Big] \end{aligned}"),
        ("Finite-horizon Q-learning; nothing follows the last step (ε-greedy starts from Q = 0; "
         "the optimistic learner is greedy from the upper bound)",
         r"\begin{aligned} Q_h(s, a) &\leftarrow Q_h(s, a) + \alpha\big[r + \max_{a'} "
         r"Q_{h+1}(s', a') - Q_h(s, a)\big] \\ Q^{\text{opt}}_h(s, a) &\leftarrow "
         r"(H - h)\, r_{\max} \ \text{at the start} \end{aligned}"),
        ("Count bonus (MBIE-EB): plan in the empirical model with an optimistic reward",
         r"\tilde r(s, a) = \hat r(s, a) + \frac{\beta}{\sqrt{N(s, a)}}, \qquad \tilde P = "
         r"\hat P = \frac{N(s, a, \cdot)}{N(s, a)}"),
        ("Posterior sampling: one model per episode, followed for the whole episode (σ = 1/2)",
         r"\begin{aligned} \tilde P(\cdot \mid s, a) &\sim \mathrm{Dir}\big(1 + N(s, a, \cdot)"
         r"\big) \\ \tilde r(s, a) &\sim \mathcal N\Big(\frac{\sum r / \sigma^2}{1 + N / "
         r"\sigma^2}, \frac{1}{1 + N / \sigma^2}\Big) \end{aligned}"),
        ("The random walker on the deep sea: N rights in a row, then a geometric first success",
         r"p = 2^{-N}, \qquad \mathbb E[\text{episodes}] = \frac{1}{p} = 2^{N}"),
        ("Bands: the t-interval of the mean over R runs",
         r"\bar x \pm t_{0.975,\,R-1}\, s / \sqrt{R}"),
    ])
    page.source(ex.choose_actions, ex.q_learning_step, td.td_update, ex.bonus_model,
                ex.posterior_sample, ex.plan_models, ex.finite_horizon_plan, ex.simulate,
                ex.first_reach_probability)
    page.export(
        figures={"regret": regret_fig, "first_treasure_vs_n": sweep_fig,
                 **{f"visits_{k}": f for k, f in visit_figs.items()}},
        data=lambda: {
            "regret": figs.regret_frame(res), "sweep": figs.sweep_frame(sw),
            "visit_share": {k: res.visit_share[i] for i, k in enumerate(res.kinds)},
            "optimal": {"V_star": res.optimal_value, "values_to_go": res.plan.values,
                        "optimal_actions": res.plan.greedy},
        },
    )
