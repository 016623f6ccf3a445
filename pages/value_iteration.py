import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import math

import pandas as pd
import streamlit as st

from rlviz import dp, ui
from rlviz.envs import LEGEND
from rlviz.figures import dp as figs

SLUG = "value_iteration"
ALGORITHMS = {"policy_evaluation": "Evaluate the random policy",
              "value_iteration": "Value iteration", "policy_iteration": "Policy iteration"}
SLIPS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 2 / 3, 0.8, 0.9, 1.0)
THETAS = (1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 1e-2, 1e-1)
MAX_EPISODES, MAX_EPISODE_STEPS = 4000, 1000
GAMMAS = (0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 1.0)
CUSTOM = "S...#....\n.##.#.##.\n.#..H..#.\n.#.####.G\n...#....."
INTRO = (
    "Dynamic programming backs up every state from its successors, sweep after sweep: watch the "
    "values spread out from the rewards, and notice that the greedy arrows settle long before "
    "the numbers do. Move γ to see how far the future reaches and how many sweeps it costs."
)
READ_IT = (
    "**The grid** shows the values V_k after sweep k (red below zero, blue above, one colour "
    "scale for every sweep) and the actions greedy with respect to them; several arrows in a "
    "cell are ties. ▶ plays the sweeps; the slider above picks one and goes into the link. "
    "**The log plot** shows the largest change of each sweep: for γ < 1 it stays under the "
    "dotted γ^k line, because the backup is a contraction. The black line marks the last "
    "sweep that changed the greedy policy; the star, the sweep whose change fell below θ. "
    "**Sweeps against γ**: how many sweeps each γ needs, synchronous and in place, beside "
    "what the contraction alone guarantees (dotted) and the sweep from which the greedy "
    "policy was already final (dashed)."
)


def load_standard_settings() -> None:
    problem = dp.PROBLEMS[st.session_state[f"{SLUG}.env"]]
    for name in ("slip", "step_reward", "goal_reward", "gamma"):
        st.session_state[f"{SLUG}.{name}"] = getattr(problem, name)


def run(algorithm, mdp, **kw):
    if algorithm == "policy_evaluation":
        return dp.policy_evaluation(mdp, dp.uniform_policy(mdp), **kw)
    return getattr(dp, algorithm)(mdp, **kw)


@ui.cached(max_entries=16)
def solve(env, algorithm, slip, step, goal, gamma, theta, in_place, max_sweeps, layout):
    mdp = dp.make_problem(env, slip=slip, step_reward=step, goal_reward=goal, layout=layout)
    trace = run(algorithm, mdp, gamma=gamma, theta=theta, in_place=in_place,
                max_sweeps=max_sweeps)
    return mdp, trace, dp.compare_with_exact(mdp, trace)


@ui.cached(max_entries=128, show_spinner="Counting the sweeps each γ needs…")
def sweeps_at(env, algorithm, slip, step, goal, theta, max_sweeps, layout, gamma):
    mdp = dp.make_problem(env, slip=slip, step_reward=step, goal_reward=goal, layout=layout)
    return dp.sweeps_by_gamma(mdp, (gamma,), algorithm=algorithm, theta=theta,
                              max_sweeps=max_sweeps)


def by_gamma(*settings):
    # One γ at a time: a rerun that interrupts the count keeps the γ already counted.
    return dp.join_sweeps([sweeps_at(*settings, g) for g in GAMMAS])


@ui.cached(max_entries=16)
def episode_length(env, slip, step, goal, actions):
    mdp = dp.make_problem(env, slip=slip, step_reward=step, goal_reward=goal)
    return dp.expected_episode_length(mdp, actions, max_steps=MAX_EPISODE_STEPS)


@ui.cached(max_entries=16, show_spinner="Playing episodes in gymnasium…")
def rollouts(env, slip, step, goal, actions, gamma, episodes, seed):
    kwargs = dp.PROBLEMS[env].gym_kwargs(slip=slip, step_reward=step, goal_reward=goal)
    return dp.greedy_rollouts("FrozenLake-v1", kwargs, actions, gamma=gamma, episodes=episodes,
                              seed=seed)


@ui.cached_figures()
def grid_and_convergence(settings, k):
    mdp, trace, _ = solve(*settings)
    return figs.sweep_figure(mdp, trace, sweep=k), figs.convergence_figure(trace, sweep=k)


@ui.cached_figures()
def gamma_chart(model, theta, max_sweeps, layout, gamma, sweeps, in_place):
    curve = by_gamma(*model, theta, max_sweeps, layout)
    return figs.gamma_figure(curve, gamma=gamma, sweeps=sweeps, in_place=in_place)


with ui.page(SLUG, intro=INTRO) as page:
    top = page.controls([ui.Choice(
        name="env", label="Environment", options=list(dp.PROBLEMS), value="sutton_barto_4x4",
        labels={k: p.label for k, p in dp.PROBLEMS.items()}, on_change=load_standard_settings,
        help="Picking an environment loads its usual slip, rewards and γ.")])
    problem = dp.PROBLEMS[top.env]
    text = page.controls([ui.Section("Custom layout", [ui.Text(
        name="layout", label="Layout, one line per row (used by Custom layout)", value=CUSTOM,
        max_chars=1000, height=160)], expanded=problem.custom)]).layout
    if problem.custom:
        st.sidebar.caption("Legend: " + " · ".join(f"`{c}` {w}" for c, w in LEGEND.items()))
    p = page.controls([
        ui.Choice(name="algorithm", label="Algorithm", options=list(ALGORITHMS),
                  value="policy_evaluation", labels=ALGORITHMS, widget="radio"),
        ui.SelectSlider(name="slip", label="Slip probability", options=SLIPS, value=0.0,
                        labels=lambda s: "2/3" if math.isclose(s, 2 / 3) else f"{s:g}",
                        help="Chance of moving to one side of the intended direction instead."),
        ui.FloatSlider(name="step_reward", label="Reward per move", min=-2.0, max=1.0,
                       value=-1.0, step=0.1),
        ui.FloatSlider(name="goal_reward", label="Reward for entering the goal", min=-2.0,
                       max=10.0, value=-1.0, step=0.5),
        ui.FloatSlider(name="gamma", label="Discount γ", min=0.0, max=1.0, value=1.0, step=0.01),
        ui.SelectSlider(name="theta", label="Stop when the largest change < θ", options=THETAS,
                        value=1e-4, labels=lambda t: f"{t:.0e}"),
        ui.Toggle(name="in_place", label="In-place sweeps (one array, row by row)"),
        ui.Section("Advanced", [
            ui.IntSlider(name="max_sweeps", label="Sweep limit", min=10, max=2000, value=1000,
                         step=10),
        ]),
    ])
    st.caption(problem.about)
    layout = text if problem.custom else None
    model = (top.env, p.algorithm, p.slip, p.step_reward, p.goal_reward)
    settings = (*model, p.gamma, p.theta, p.in_place, p.max_sweeps, layout)
    mdp, trace, exact = solve(*settings)
    (st.caption if trace.converged else st.warning)(trace.message)
    if st.session_state.get(page.key("_run"), settings) != settings:
        st.session_state[page.key("sweep")] = trace.n_sweeps  # a new run opens at its end
    st.session_state[page.key("_run")] = settings
    metrics = st.container()

    left, right = st.columns([1.1, 1], gap="medium")
    k = page.controls([ui.IntSlider(
        name="sweep", label="Sweep k shown", min=0, max=trace.n_sweeps, value=trace.n_sweeps,
        help="Scrub through the sweeps; ▶ under the grid plays them.")], container=left).sweep
    sweeps_fig, conv_fig = grid_and_convergence(settings, k)
    with left:
        ui.chart(sweeps_fig, key=f"{SLUG}.chart.sweeps")
    with right:
        ui.chart(conv_fig, key=f"{SLUG}.chart.convergence")
    start = mdp.start_state
    cols = metrics.columns(4)
    cols[0].metric("Sweeps to converge" if trace.converged else "Sweeps (limit reached)",
                   trace.n_sweeps)
    cols[1].metric("Greedy policy final from sweep", trace.policy_last_changed)
    cols[2].metric(f"V_{k}(start)", f"{trace.values[k, start]:.4g}")
    cols[3].metric("Largest gap to exact values", "n/a" if exact.exact is None
                   else f"{exact.error:.2g}", help="Against a linear solve for the exact values "
                   "of the policy (the evaluated one, or the final greedy one); n/a when that "
                   "policy never ends from some states with γ = 1.")

    left, right = st.columns([1.1, 1], gap="medium")
    with left:
        page.section("How γ sets the number of sweeps")
        gamma_fig = gamma_chart(model, p.theta, p.max_sweeps, layout, p.gamma, trace.n_sweeps,
                                p.in_place)
        ui.chart(gamma_fig, key=f"{SLUG}.chart.gamma")
    with right:
        if p.algorithm == "policy_iteration":
            page.section("Policy iteration's cycles")
            ui.chart(figs.cycles_figure(trace), key=f"{SLUG}.chart.cycles")
        else:
            page.read_it(READ_IT)

    checks, most = [], MAX_EPISODES
    if problem.frozen_lake:
        best, best_exact = (trace, exact) if p.algorithm != "policy_evaluation" else solve(
            top.env, "value_iteration", *settings[2:])[1:]
        actions = tuple(best.greedy_actions.tolist())
        length = episode_length(top.env, p.slip, p.step_reward, p.goal_reward, actions)
        most = dp.episodes_within_budget(length, most=MAX_EPISODES)  # what the check can play
        key = page.key("episodes")
        if st.session_state.get(key, 0) > most:
            st.session_state[key] = most
    g = page.controls([ui.Section("Gymnasium check (FrozenLake)", [
        ui.IntSlider(name="episodes", label="Episodes to play", min=100, max=most,
                     value=min(2000, most), step=100, disabled=not problem.frozen_lake,
                     help=f"At most {most:,} here: the greedy policy's episodes last about "
                     f"{length:.0f} steps, and a check plays at most "
                     f"{dp.ROLLOUT_STEP_BUDGET:,} steps." if problem.frozen_lake else
                     "Used by the FrozenLake environments only."),
        ui.Seed(disabled=not problem.frozen_lake)], expanded=bool(problem.frozen_lake))])
    if problem.frozen_lake:
        page.section("Check in gymnasium: play the greedy policy")
        check = rollouts(top.env, p.slip, p.step_reward, p.goal_reward, actions, p.gamma,
                         g.episodes, g.seed)
        low, high = check.success_interval
        cols = st.columns(4)
        cols[0].metric("V*(start) by value iteration", f"{best.final_values[start]:.4f}")
        cols[1].metric("Average discounted return", f"{check.mean_return:.4f}",
                       f"± {check.return_halfwidth:.4f} (99%)", delta_color="off",
                       delta_arrow="off")
        cols[2].metric("Success rate", f"{check.success_rate:.1%}",
                       f"99%: {low:.1%} to {high:.1%}", delta_color="off", delta_arrow="off")
        cols[3].metric("Episodes cut off at 1000 steps", int(check.truncated.sum()))
        if check.truncated.any() or check.episodes < g.episodes:
            st.caption(f"{int(check.truncated.sum())} of {check.episodes} episodes hit the "
                       f"{MAX_EPISODE_STEPS}-step limit (and play stops after "
                       f"{dp.ROLLOUT_STEP_BUDGET:,} steps in all): from some states this "
                       "greedy policy wanders forever. With γ = 1 waiting costs nothing, so a "
                       "policy greedy for V* may do just that: a reason to discount.")
        ui.chart(figs.rollout_figure(check, best.final_values[start]),
                 key=f"{SLUG}.chart.rollouts")
        if best_exact.exact is not None:
            checks.append(ui.Check(
                f"{check.episodes} greedy episodes in gymnasium (seed {g.seed}): average "
                "discounted return against the exact value of that policy",
                value=check.mean_return, reference=float(best_exact.exact[start]),
                tol=check.return_halfwidth + 1e-9, source="99% confidence interval"))

    if p.algorithm == "policy_iteration":
        page.read_it(READ_IT)
    page.try_this([
        "On the 4×4 grid, predict the first sweep whose greedy arrows are already optimal. "
        "Scrub the sweep slider, then compare with the black line (the book says k = 3).",
        "Pick *Corridor* with value iteration. The start is 19 moves from the goal: predict "
        "V(start) at γ = 0.9, and how many cells stay visibly blue at γ = 0.5. Then move γ.",
        "Switch on in-place sweeps on the 4×4 grid, then on *Corridor*, whose goal is at the "
        "right end. Why does reading the states row by row help one and not the other?",
    ])
    book = solve("sutton_barto_4x4", "policy_evaluation", 0.0, -1.0, -1.0, 1.0, 1e-10, False,
                 1000, None)[1]
    page.known_answer([
        ui.Check("Fig. 4.1, k = ∞: largest gap between v_π and the book over the 16 cells "
                 "(the book prints whole numbers, so ±0.5)", fmt=".2g",
                 value=float(abs(book.exact - dp.FIGURE_4_1[math.inf].ravel()).max()),
                 reference=0.0, tol=0.5, source="Sutton & Barto (2018), Fig. 4.1"),
        ui.Check("Fig. 4.1, k = 3: largest gap between v_3 and the book (one decimal, so ±0.05)",
                 value=float(abs(book.values[3] - dp.FIGURE_4_1[3].ravel()).max()), fmt=".2g",
                 reference=0.0, tol=0.05 + 1e-9, source="Sutton & Barto (2018), Fig. 4.1"),
        ui.Check("This run: largest gap between V_K and the exact values of its policy",
                 value=exact.error if exact.exact is not None else "none: it never ends",
                 reference=0.0,
                 tol=exact.bound.bound * (1 + 1e-9) + 1e-12, fmt=".3g",
                 passed=None if exact.exact is not None else False,
                 source="a-posteriori bound: horizon × residual (see the equations)"),
        *checks,
    ])
    page.equations(figs.EQUATIONS)
    page.source(dp._Backup, getattr(dp, p.algorithm), dp._iterate, dp.compare_with_exact,
                dp.evaluation_error_bound)
    page.export(
        figures={"sweeps": sweeps_fig, "convergence": conv_fig, "sweeps_by_gamma": gamma_fig},
        data=lambda: {name: pd.DataFrame(table)
                      for name, table in dp.trace_tables(mdp, trace).items()},
        settings=page.settings,
    )
