import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import streamlit as st

from rlviz import planning as pl
from rlviz import ui
from rlviz.errors import InputError
from rlviz.figures import planning as figs

INTRO = (
    "Dyna-Q learns from each real step like Q-learning, writes the step into a table model, "
    "and then replays n remembered steps from that model: n extra updates per step of "
    "experience. Watch planning spread value through the Dyna maze in a few episodes, then "
    "change the maze under the agent and see why Dyna-Q+ pays a bonus for checking what it "
    "has not tried for a while. Last, prioritized sweeping: plan where the values are changing, "
    "not at random."
)
EXPERIMENTS = {"dyna": "Dyna maze", "blocking": "Blocking maze", "shortcut": "Shortcut maze",
               "sweeping": "Prioritized sweeping"}
NS = [0, 1, 5, 10, 20, 50]
CHANGING_NS = [0, 2, 5, 10]
KAPPAS = [0.0, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2]
SWEEP_NS = [1, 2, 5, 10]
THETAS = [0.0, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.3]
SIZES = {k: pl.states_at(k) for k in pl.LEVELS}
LAYOUT_HELP = ("One row per line: . floor, # wall, S start (one), G goal. At most "
               f"{pl.MAX_CELLS} cells.")
BOOK = pl.SOURCE


def strip(text: str) -> str:
    return text.strip("\n")


@ui.cached(max_entries=16, show_spinner=False)
def dyna_study(layout, ns, runs, episodes, epsilon, alpha, gamma, seed):
    bar = st.empty()  # made here, so that a cache hit replays it to nothing
    what = f"{runs} runs × {episodes} episodes for n = {', '.join(map(str, ns))}"
    res = pl.planning_study(layout, ns=ns, runs=runs, episodes=episodes, epsilon=epsilon,
                            alpha=alpha, gamma=gamma, seed=seed,
                            progress=lambda f: bar.progress(f, text=f"Training {what}… {f:.0%}"))
    bar.empty()
    return res


@ui.cached(max_entries=16, show_spinner="Checking the known answers…")
def dyna_checks(args):
    return pl.planning_known_answers(dyna_study(*args))


@ui.cached(max_entries=16, show_spinner="Training Dyna-Q and Dyna-Q+ on the changing maze…")
def changing(before, after, which, n, kappa, runs, epsilon, alpha, gamma, seed):
    _, change_at, steps = pl.CHANGES[which]
    return pl.changing_study(before, after, change_at=change_at, steps=steps, n=n, kappa=kappa,
                             runs=runs, epsilon=epsilon, alpha=alpha, gamma=gamma, seed=seed)


@ui.cached(max_entries=16, show_spinner=False)
def sweeping(levels, runs, n, theta, epsilon, alpha, gamma, seed):
    bar = st.empty()  # made here, so that a cache hit replays it to nothing
    what = f"Dyna-Q and prioritized sweeping, {runs} runs at each size"
    res = pl.sweeping_study(levels, runs=runs, n=n, theta=theta, epsilon=epsilon, alpha=alpha,
                            gamma=gamma, seed=seed,
                            progress=lambda f: bar.progress(f, text=f"Training {what}… {f:.0%}"))
    bar.empty()
    return res


@ui.cached_figures()
def sweeping_figures(args):
    return figs.sweeping_figure(sweeping(*args))


@ui.cached_figures()
def dyna_figures(args):
    st_ = dyna_study(*args)
    top = max(float(q.max()) for q, _, _ in st_.halfway.values())
    policies = {
        n: figs.policy_figure(st_.maze, q, zmax=top, title=f"{figs.n_label(n)}: {into} of "
                              f"{length} steps into episode 2")
        for n, (q, into, length) in st_.halfway.items()
    }
    return figs.steps_figure(st_.results, st_.maze.shortest[0]), policies


@ui.cached_figures()
def changing_figures(args):
    study = changing(*args)
    return (figs.cumulative_figure(study.result, study.change_at),
            {p: figs.model_figure(study.maze, study.result, p) for p in study.result.planners})


def dyna_view(page, p):
    q = page.controls([ui.Section("Dyna maze (Figures 8.2 and 8.3)", expanded=True, controls=[
        ui.MultiChoice(name="ns", label="Planning steps n per real step (up to 3)", options=NS,
                       value=list(pl.BOOK_NS), max_selections=3, labels=figs.n_short,
                       help="n = 0 is one-step Q-learning: no planning."),
        ui.IntSlider(name="episodes", label="Episodes per run", min=20, max=50, value=50,
                     step=5, scales_work=True),
        ui.IntSlider(name="runs", label="Independent runs", min=2, max=30, value=30,
                     scales_work=True),
        ui.FloatSlider(name="alpha", label="Step size α", min=0.05, max=1.0, value=0.1,
                       step=0.05),
        ui.Text(name="layout", label="Maze", value=strip(pl.DYNA_MAZE), max_chars=400,
                height=180, help=LAYOUT_HELP),
    ])])
    if not q.ns:
        raise InputError("Choose at least one planning budget n.")
    ns = tuple(sorted(q.ns))
    args = (q.layout, ns, q.runs, q.episodes, p.epsilon, q.alpha, p.gamma, p.seed)
    study = dyna_study(*args)
    fig_steps, policies = dyna_figures(args)

    page.section("Steps per episode (Figure 8.2)")
    ui.chart(fig_steps, key="dyna.steps")
    st.caption(figs.steps_caption(study))
    page.section("Halfway through the second episode (Figure 8.3)")
    cols = st.columns(len(policies), gap="medium")
    for col, (n, fig) in zip(cols, policies.items(), strict=True):
        with col:
            ui.chart(fig, key=f"dyna.policy.{n}")
    st.caption(figs.halfway_caption(study))
    page.read_it(
        "**Curves:** steps to reach G in each episode, mean over the runs with a 95% band; the "
        "dashed line is the shortest path (value iteration). Episode 1 is left off, as in the "
        "book: until the first reward every value is 0, so every agent makes the same random "
        "walk and planning replays nothing but zeros.  \n"
        "**Policies:** the greedy action of run 1 halfway through its second episode; a cell "
        "without an arrow still has all its values equal, colour is max Q. After the first "
        "reward, Q-learning (n = 0) has learned one value, next to G. Dyna-Q replays the "
        "remembered steps n times per step, so the value walks back along the whole route "
        "while the agent is still on its way."
    )
    page.try_this([
        "Predict how many episodes n = 5 needs before its curve is flat, then compare with "
        "n = 0 and n = 50. How many updates (real and planned) did each spend per step?",
        "Set the budgets to n = 0 and n = 1 only. Does one replay per step already halve the "
        "number of episodes?",
        "Draw a wall across the maze with one gap (edit the text). Which curve suffers most "
        "from a longer first walk, and which one recovers fastest?",
    ])
    page.known_answer([ui.Check(**vars(k)) for k in dyna_checks(args)])
    page.equations(figs.EQUATIONS[:4] + figs.EQUATIONS[5:])
    page.source(pl.q_update, pl.sample_model, pl.plan, pl.run_dyna)
    page.export(
        figures={"steps_per_episode": fig_steps,
                 **{f"policy_n{n}": fig for n, fig in policies.items()}},
        data=lambda: {"episodes": figs.episodes_frame(study.results)},
    )


def changing_view(page, p, which):
    (before0, after0), _, _ = pl.CHANGES[which]
    prefix = which[0]
    q = page.controls([ui.Section(f"{EXPERIMENTS[which]} ({figs.FIGURES[which]})",
                                  expanded=True, controls=[
        ui.SelectSlider(name="n", label="Planning steps n per real step", options=CHANGING_NS,
                        value=10, scales_work=True),
        ui.SelectSlider(name="kappa", label="Dyna-Q+ bonus κ", options=KAPPAS, value=1e-3,
                        labels=lambda k: f"{k:g}",
                        help="Planning reward R + κ√τ, τ = steps since the move was tried."),
        ui.IntSlider(name="c_runs", label="Independent runs", min=2, max=10, value=10,
                     scales_work=True),
        ui.FloatSlider(name="c_alpha", label="Step size α", min=0.05, max=1.0, value=1.0,
                       step=0.05, help="The mazes are deterministic: one sample of a move is "
                       "the truth, so α = 1 is safe."),
        ui.Text(name=f"{prefix}_before", label="Maze before the change",
                value=strip(before0), max_chars=400, height=180, help=LAYOUT_HELP),
        ui.Text(name=f"{prefix}_after", label="Maze after the change (same size)",
                value=strip(after0), max_chars=400, height=180, help=LAYOUT_HELP),
    ])])
    args = (q[f"{prefix}_before"], q[f"{prefix}_after"], which, q.n, q.kappa, q.c_runs,
            p.epsilon, q.c_alpha, p.gamma, p.seed)
    study = changing(*args)
    fig_reward, models = changing_figures(args)

    page.section(f"Cumulative reward ({figs.FIGURES[which]})")
    ui.chart(fig_reward, key="dyna.cumulative")
    st.caption(figs.changing_caption(study))
    page.section("What each agent's model believes at the end")
    cols = st.columns(len(models), gap="medium")
    for col, (name, fig) in zip(cols, models.items(), strict=True):
        with col:
            ui.chart(fig, key=f"dyna.model.{name}")
    st.caption(figs.model_caption(study))
    page.read_it(
        "**Curve:** reward collected so far (one per visit to G), mean over the runs with a "
        "95% band; a steeper line is a shorter route. Both agents share their dice, run by "
        "run.  \n"
        "**Mazes:** the world after the change (dotted orange: the cells the change opened "
        "or walled up), shaded by how often the agent stood in each cell, with a line for "
        "every move its model knows (a stub: a move into a wall). A red line is a move the "
        "model still remembers from the old world.  \n"
        "**Why Dyna-Q+ wins:** Dyna-Q plans with what it saw. Its model is wrong only where "
        "it has not looked since the change, and its greedy policy never sends it to look. "
        "Dyna-Q+ adds κ√τ to the reward of a replayed move untried for τ steps, so long-"
        "ignored moves come to look worth a visit, and the model gets corrected. Even at "
        "κ = 0 it is not Dyna-Q: it replays moves it never tried as 'stay, reward 0', which "
        "values them at γ·max Q, a milder optimism that still sends it to look."
    )
    page.try_this([
        "Predict what happens to Dyna-Q+ at κ = 0. Set it: is it now the same as Dyna-Q? "
        "(It still replays untried moves, as 'stay, reward 0'.)",
        "In the shortcut maze raise κ to 0.01. Does Dyna-Q+ find the shortcut sooner, and "
        "what does its curve lose before the change?",
        "Set n = 0 (both agents are Q-learning). Which agent still finds the shortcut?",
    ])
    page.known_answer([ui.Check(**vars(k)) for k in pl.changing_known_answers(study, which)])
    page.equations(figs.EQUATIONS)
    page.source(pl.q_update, pl.exploration_bonus, pl.sample_model, pl.plan, pl.run_dyna)
    page.export(
        figures={"cumulative_reward": fig_reward,
                 **{f"model_{name}": fig for name, fig in models.items()}},
        data=lambda: {"cumulative_reward": figs.rewards_frame(study.result)},
    )


def sweeping_view(page, p):
    q = page.controls([ui.Section("Prioritized sweeping (Example 8.4)", expanded=True, controls=[
        ui.MultiChoice(name="sizes", label="Maze sizes (the Dyna maze, each cell a block)",
                       options=list(pl.LEVELS), value=list(pl.LEVELS),
                       labels=lambda k: f"{SIZES[k]} states",
                       help="Each cell becomes a 1 × 1, 1 × 2 or 2 × 2 block: 47, 94, 188 states."),
        ui.IntSlider(name="w_runs", label="Independent runs", min=2, max=5, value=4,
                     scales_work=True),
        ui.SelectSlider(name="w_n", label="Planning updates n per real step", options=SWEEP_NS,
                        value=5, help="Dyna-Q makes 1 + n; prioritized sweeping at most n."),
        ui.SelectSlider(name="theta", label="Threshold θ", options=THETAS,
                        value=pl.BOOK_THETA, labels=lambda t: f"{t:g}",
                        help="A pair is queued only if its priority is above θ."),
    ])])
    if not q.sizes:
        raise InputError("Choose at least one maze size.")
    # α = 1: the maze is deterministic, so one sample of a move is the truth.
    args = (tuple(sorted(q.sizes)), q.w_runs, q.w_n, q.theta, p.epsilon, 1.0, p.gamma, p.seed)
    study = sweeping(*args)
    fig = sweeping_figures(args)

    page.section("Updates until the greedy path is optimal (Example 8.4)")
    ui.chart(fig, key="dyna.sweeping")
    st.caption(figs.sweeping_caption(study))
    page.read_it(
        "**Curves:** for each maze size, the number of updates (real and planned) each method "
        "made before the greedy path from S became a shortest path, geometric mean over the "
        "runs with a 95% band; dots are single runs, open triangles runs stopped by their "
        "budget. Both axes are logarithmic, and the two methods read the same dice, run by "
        "run.  \n"
        "**Why prioritized sweeping wins:** Dyna-Q replays remembered moves at random, and "
        "until value has spread, almost every replay computes 0 + γ·0 − 0. Prioritized "
        "sweeping updates only pairs whose value would change by more than θ, the largest "
        "change first, and after each update queues the moves that lead into the state it "
        "just changed: value runs backwards from the goal along the routes the model knows. "
        "During the first walk it makes no update at all; Dyna-Q makes 1 + n per step."
    )
    page.try_this([
        "Predict the ratio of the two counts at 188 states, then read it off the caption. "
        "Does it grow or shrink with the size?",
        "Raise θ to 0.01, then to 0.3. With γ = 0.95 the priority of a pair d moves from the "
        "goal is about γ^d, and the largest maze's start is 27 moves away: predict which θ "
        "leaves its runs unsolved (open triangles), and why 0.01 changes no count.",
        "Set n = 1. Prioritized sweeping's count hardly moves: why does Dyna-Q's?",
    ])
    page.known_answer([ui.Check(**vars(k)) for k in pl.sweeping_known_answers(study)])
    page.equations(figs.SWEEP_EQUATIONS)
    page.source(pl.priority, pl.push, pl.sweep_step, pl.replay, pl.run_sweeping,
                pl.sweeping_study)
    page.export(figures={"updates_until_optimal": fig},
                data=lambda: {"sweeping_runs": figs.sweeping_frame(study)})


with ui.page("dyna", intro=INTRO) as page:
    p = page.controls([
        ui.Choice(name="exp", label="Experiment", options=list(EXPERIMENTS), value="dyna",
                  labels=EXPERIMENTS),
        ui.FloatSlider(name="epsilon", label="Exploration ε", min=0.0, max=0.3, value=0.1,
                       step=0.01),
        ui.FloatSlider(name="gamma", label="Discount γ", min=0.5, max=0.99, value=0.95,
                       step=0.01),
        ui.Seed(),
    ])
    if p.exp == "dyna":
        dyna_view(page, p)
    elif p.exp == "sweeping":
        sweeping_view(page, p)
    else:
        changing_view(page, p, p.exp)
