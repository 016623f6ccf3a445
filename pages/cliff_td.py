import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import time

import streamlit as st

from rlviz import td, ui
from rlviz.envs import cliff_walking
from rlviz.errors import InputError
from rlviz.figures import td as figs
from rlviz.mdp import action_values

BOOK = "Sutton & Barto (2018), Example 6.6"
# Steps per run: bounds the work when a learner wanders. The book's protocol never needs it
# (Double Q, the slowest, took at most 26,158 steps in 13,000 runs); every algorithm at the
# largest settings, each run using it all, takes under 1 s.
STEP_BUDGET = 30_000
MAX_RUNS = 60
LEARNERS = {"q_learning": td.q_learning_run, "sarsa": td.sarsa_run,
            "expected_sarsa": td.expected_sarsa_run, "double_q": td.double_q_run}
INTRO = (
    "Q-learning and SARSA learn to cross the cliff while exploring with ε-greedy. Off-policy "
    "Q-learning learns the shortest path along the edge but keeps falling in while it explores; "
    "on-policy SARSA learns a safer path and earns more on the way."
)


@ui.cached(max_entries=48, show_spinner="Training…")
def train(algorithm, rows, cols, slip, epsilon, alpha, gamma, episodes, runs, decay, max_steps,
          seed):
    return td.run_control(
        cliff_walking(rows=rows, cols=cols, slip=slip), algorithm=algorithm, episodes=episodes,
        runs=runs, epsilon=epsilon, alpha=alpha, gamma=gamma, seed=seed, max_steps=max_steps,
        epsilon_decay=decay, max_total_steps=STEP_BUDGET,
    )


@ui.cached(max_entries=16)
def optimum(rows, cols, slip):
    mdp = cliff_walking(rows=rows, cols=cols, slip=slip)
    v = td.optimal_values(mdp)
    return float(v[mdp.start_state]), td.greedy_return(mdp, action_values(mdp, v, 1.0))


def train_all(algos, settings):
    """Every learner, one at a time; once a fresh one takes a while, a bar shows how many are done.

    Each learner is its own cached run of at most a few tenths of a second, so the page stays
    responsive between them even at the heaviest settings.
    """
    results, bar = {}, None
    for k, algo in enumerate(algos, start=1):
        start = time.perf_counter()
        results[algo] = train(algo, *settings)
        if bar is None and k < len(algos) and time.perf_counter() - start > 0.25:
            bar = st.progress(0.0)
        if bar is not None:
            bar.progress(k / len(algos), text=f"Trained {figs.LABELS[algo]} ({k} of {len(algos)})")
    if bar is not None:
        bar.empty()
    return results


# Figures are built once per view and shared read-only: building them costs more than a rerun.
@st.cache_resource(max_entries=24, show_spinner=False)
def charts(algos, window, settings):
    mdp = cliff_walking(rows=settings[0], cols=settings[1], slip=settings[2])
    results = {a: train(a, *settings) for a in algos}
    best = optimum(*settings[:3])[0]
    return {"curves": figs.learning_curves(results, window=window, optimal=best),
            "paths": figs.greedy_paths(mdp, results), "maps": figs.heatmaps(mdp, results)}


@st.cache_resource(max_entries=32, show_spinner=False)
def worked_chart(worked):
    return figs.worked_update_figure(worked)


with ui.page("cliff_td", intro=INTRO) as page:
    p = page.controls([
        ui.MultiChoice(name="algos", label="Algorithms", options=td.ALGORITHMS,
                       value=["q_learning", "sarsa"], labels=figs.LABELS),
        ui.FloatSlider(name="epsilon", label="Exploration ε", min=0.0, max=0.5, value=0.1,
                       step=0.01),
        ui.FloatSlider(name="alpha", label="Step size α", min=0.05, max=1.0, value=0.5, step=0.05),
        ui.FloatSlider(name="gamma", label="Discount γ", min=0.5, max=1.0, value=1.0, step=0.01),
        ui.Toggle(name="decay", label="Decay ε linearly to 0", value=False,
                  help="ε falls from its value to 0 at the last episode."),
        ui.IntSlider(name="episodes", scales_work=True, label="Episodes per run", min=50,
                     max=500, value=500, step=10),
        ui.IntSlider(name="runs", scales_work=True, label="Independent runs", min=1,
                     max=MAX_RUNS, value=50),
        ui.IntSlider(name="window", label="Smoothing (episodes)", min=1, max=50, value=10),
        ui.Section("Grid", [
            ui.IntSlider(name="rows", scales_work=True, label="Rows", min=2, max=8, value=4),
            ui.IntSlider(name="cols", scales_work=True, label="Columns", min=3, max=16, value=12),
            ui.FloatSlider(name="slip", label="Slip probability", min=0.0, max=0.3, value=0.0,
                           step=0.05, help="Chance of moving to either side of the intended "
                           "direction (half each)."),
        ]),
        ui.Section("Advanced", [
            ui.SelectSlider(name="max_steps", scales_work=True, label="Cut episodes after (steps)",
                            options=[100, 250, 500, 1000], value=td.DEFAULT_MAX_STEPS),
            ui.Seed(),
        ]),
    ])
    if not p.algos:
        raise InputError("Choose at least one algorithm to train.")
    settings = (p.rows, p.cols, p.slip, p.epsilon, p.alpha, p.gamma, p.episodes, p.runs, p.decay,
                p.max_steps, p.seed)
    results = train_all(p.algos, settings)
    best, best_check = optimum(p.rows, p.cols, p.slip)
    shown = charts(tuple(p.algos), p.window, settings)
    last = min(100, p.episodes)

    page.section("Sum of rewards per episode")
    ui.chart(shown["curves"], key="cliff_td.curves")
    st.caption(figs.summary(results, last=last))

    page.section("Greedy paths after training")
    ui.chart(shown["paths"], key="cliff_td.paths")
    st.caption(figs.path_summary(results))

    page.section("Where each learner went, and what it learned")
    per_row = 2 if p.cols <= 8 else 1  # a wide grid needs the whole width for legible cells
    for kind, figures in shown["maps"].items():
        items = list(figures.items())
        for start in range(0, len(items), per_row):
            row = items[start : start + per_row]
            for col, (name, fig) in zip(st.columns(per_row), row, strict=False):
                with col:
                    ui.chart(fig, key=f"cliff_td.{kind}.{name}")

    page.section("One update by hand")
    st.markdown("The interview question: one transition $(s, a, r, s')$, three targets.")
    left, mid, right = st.columns(3)
    wb = page.controls([
        ui.Number(name="wb_q", label="Q(s, a)", min=-1000.0, max=1000.0, value=-2.0, step=0.5,
                  format="%g"),
        ui.Number(name="wb_r", label="Reward r", min=-1000.0, max=1000.0, value=-1.0, step=0.5,
                  format="%g"),
        ui.Toggle(name="wb_terminal", label="s′ is terminal", value=False),
    ], container=left)
    wb_next = page.controls([
        ui.Number(name=f"wb_q{k}", label=f"Q(s′, {arrow})", min=-1000.0, max=1000.0,
                  value=value, step=0.5, format="%g")
        for k, (arrow, value) in enumerate(zip(figs.ARROWS, (-3.0, -1.0, -4.0, -2.0),
                                               strict=True))
    ], container=mid)
    wb_set = page.controls([
        ui.Choice(name="wb_a", label="Next action a′ (SARSA's)", options=[0, 1, 2, 3], value=0,
                  labels=dict(enumerate(figs.ARROWS)), widget="segmented"),
        ui.Number(name="wb_gamma", label="γ", min=0.0, max=1.0, value=0.9, step=0.05,
                  format="%g"),
        ui.Number(name="wb_alpha", label="α", min=0.01, max=1.0, value=0.5, step=0.05,
                  format="%g"),
        ui.Number(name="wb_eps", label="ε (Expected SARSA's policy)", min=0.0, max=1.0,
                  value=0.1, step=0.05, format="%g"),
    ], container=right)
    worked = td.worked_update(
        wb.wb_q, wb.wb_r, [wb_next[f"wb_q{k}"] for k in range(4)], wb_set.wb_a,
        gamma=wb_set.wb_gamma, alpha=wb_set.wb_alpha, epsilon=wb_set.wb_eps,
        terminal=wb.wb_terminal,
    )
    for name, steps in figs.worked_update_steps(worked).items():
        with st.container(border=True):
            st.markdown(f"**{figs.LABELS[name]}**")
            st.latex(steps)
    ui.chart(worked_chart(worked), key="cliff_td.worked")

    page.read_it(
        "**Curves:** the sum of rewards of each episode, averaged over the runs (band: 95% "
        "confidence interval of that mean) and over the smoothing window. The dashed line is the "
        "best possible return. As in the book, the axis starts 90 below it; double-click the "
        "chart to see the long first episodes.  \n"
        "**Paths:** each learner's greedy path from S, using its Q averaged over runs and each "
        "move's likeliest outcome. A dotted path ending in × never reaches the goal.  \n"
        "**Heatmaps:** visits count every step taken from a state during learning (each fall "
        "sends the agent back to S); max Q is the value a learner gives each state. Colours are "
        "shared between learners.  \n"
        f"**Limits:** episodes are cut short after the *Advanced* step cap, and each run stops "
        f"after {STEP_BUDGET:,} steps in all. The book's settings stay within both; "
        "settings under which a learner wanders (γ well below 1, heavy exploration on a big "
        "slippery grid) reach them, and the caption under the curves says so."
    )
    page.try_this([
        "Predict how the gap between the curves changes at ε = 0.01, then move ε.",
        "Switch on *Decay ε linearly to 0*. Where do the curves end, and does SARSA's path move "
        "to the edge?",
        "In the worked update, set a′ to → (the greedy action). Which targets now agree? Then set "
        "its ε to 0: which one joins them?",
    ])
    checks = []
    if p.slip == 0:
        checks.append(ui.Check(
            f"Optimal return from S on the {p.rows}×{p.cols} cliff (value iteration)",
            value=best, reference=-(p.cols + 1), tol=1e-9,
            source=f"1 up, {p.cols - 1} right, 1 down; −13 on 4×12 in {BOOK}",
        ))
        if "q_learning" in results:
            path = results["q_learning"].path
            checks.append(ui.Check(
                "Q-learning's greedy path: moves from S to G",
                value=path.length if path.reaches_goal else "never reaches G",
                reference=p.cols + 1, source=BOOK,
            ))
    else:
        checks.append(ui.Check(
            "Optimal return from S: value iteration vs exact value of its greedy policy",
            value=best, reference=best_check if best_check is not None else "none", tol=1e-6,
            source="Bellman optimality, Sutton & Barto (2018), §4.4",
        ))
    if "q_learning" in results and "sarsa" in results:
        q_ret, s_ret = (results[a].mean_return(last) for a in ("q_learning", "sarsa"))
        checks.append(ui.Check(
            f"SARSA's online return beats Q-learning's (last {last} episodes)",
            value=f"{s_ret:.1f} vs {q_ret:.1f}", reference="≈ −25 vs ≈ −50 at ε = 0.1, α = 0.5",
            passed=s_ret > q_ret, source="Sutton & Barto (2018), Figure 6.4",
        ))
    page.known_answer(checks)
    page.equations([
        ("ε-greedy behaviour (ties share the greedy part)",
         r"\pi(a \mid s) = \frac{\varepsilon}{|\mathcal A|} + (1 - \varepsilon)\,"
         r"\frac{[a \in \arg\max_b Q(s, b)]}{|\arg\max_b Q(s, b)|}"),
        ("Q-learning (off-policy: bootstraps on the greedy action)",
         r"Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + \gamma \max_a Q(S', a) - Q(S, A)\big]"),
        ("SARSA (on-policy: bootstraps on the action A′ it will actually take)",
         r"Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + \gamma Q(S', A') - Q(S, A)\big]"),
        ("Expected SARSA (the expectation of that action under π)",
         r"Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + \gamma \textstyle\sum_a \pi(a \mid S')"
         r"Q(S', a) - Q(S, A)\big]"),
        ("Double Q-learning (a fair coin picks the table to update; acts on Q₁ + Q₂)",
         r"Q_1(S, A) \leftarrow Q_1(S, A) + \alpha\big[R + \gamma\, Q_2\big(S', \arg\max_a "
         r"Q_1(S', a)\big) - Q_1(S, A)\big]"),
        ("At a terminal S′ every target is just R. The band is the t-interval of the mean over "
         "R runs.", r"\bar x \pm t_{0.975,\,R-1}\, s / \sqrt{R}"),
    ])
    page.source(*(LEARNERS[a] for a in p.algos), td.run_control, td.worked_update,
                td.q_learning_target, td.sarsa_target, td.expected_sarsa_target, td.td_update)
    page.export(
        figures={"learning_curves": shown["curves"], "greedy_paths": shown["paths"]},
        data=lambda: {"episodes": figs.episodes_frame(results, window=p.window),
              "final_q": {a: r.mean_q for a, r in results.items()}},
    )
