import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import time

import streamlit as st

from rlviz import max_bias as mb
from rlviz import td, ui
from rlviz.figures import max_bias as figs

INTRO = (
    "From A, left leads to B, whose actions all pay −0.1 on average but with noise; right pays "
    "0. The largest of B's noisy estimates is too high, so Q-learning goes left far too often; "
    "Double Q-learning picks B's action with one table and values it with the other, and does "
    "not."
)
EPISODES = [50, 100, 200, 300, 500, 1000]
RUNS = [100, 200, 500, 1000, 2000, 3000, 5000, 10_000]
DEFAULT_RUNS = 2000
SAMPLES = [2, 4, 6, 10, 20, 50, 100, 200, 500, 1000]
TRIALS = [500, 1000, 2000, 4000, 10_000, 20_000]


def cost(runs: int, episodes: int, n_actions: int) -> float:
    """What training the three methods costs: CPU ms on the development machine at ε = 0.5.

    A fit to measurements (only its ratio to ``BUDGET`` matters): each episode has a fixed part
    (numpy calls for every method, a loop over B's actions) and a part for every run.
    """
    m = n_actions
    return episodes * (0.65 + 0.011 * m + runs * (3.5e-4 + 1.5e-5 * m))


BUDGET = cost(10_000, 300, 10)
"""The most the page trains: the book's protocol (10 actions, 10,000 runs of 300 episodes)."""
TARGETS = {"q_learning": td.q_learning_target, "double_q": td.double_q_target,
           "expected_sarsa": td.expected_sarsa_target}


@ui.cached(max_entries=48, show_spinner=False)
def train(algorithm, n_actions, sigma, epsilon, alpha, episodes, runs, seed):
    result = mb.run(mb.MaxBiasMDP(n_actions=n_actions, sigma=sigma), algorithms=(algorithm,),
                    episodes=episodes, runs=runs, epsilon=epsilon, alpha=alpha, seed=seed)
    return result.methods[algorithm]


@ui.cached(max_entries=32, show_spinner="Sampling the estimators…")
def study(m, sigma, samples, gap, trials, seed):
    return mb.estimator_study(m=m, sigma=sigma, samples=samples, gap=gap, trials=trials,
                              seed=seed)


def clamp(key: str, allowed: list[int]) -> None:
    """Bring a capped count the session holds down to the largest value still allowed."""
    if st.session_state.get(key, 0) > allowed[-1]:
        st.session_state[key] = allowed[-1]


def train_all(settings) -> mb.Result:
    """Every method, one cached run each; once one takes a while, a bar shows how many are done.

    The runs draw the same dice, once: the later ones reuse what the first drew.
    """
    bar = None
    methods = {}
    with mb.shared_dice():
        for k, algo in enumerate(mb.METHODS, start=1):
            start = time.perf_counter()
            methods[algo] = train(algo, *settings)
            if bar is None and k < len(mb.METHODS) and time.perf_counter() - start > 0.25:
                bar = st.progress(0.0)
            if bar is not None:
                bar.progress(k / len(mb.METHODS),
                             text=f"Trained {figs.LABELS[algo]} ({k} of {len(mb.METHODS)})")
    if bar is not None:
        bar.empty()
    return assemble(settings, methods)


def assemble(settings, methods=None) -> mb.Result:
    """The three methods' (cached) runs as one result."""
    n_actions, sigma, epsilon, alpha, episodes, runs, seed = settings
    if methods is None:
        methods = {a: train(a, *settings) for a in mb.METHODS}
    return mb.Result(mdp=mb.MaxBiasMDP(n_actions=n_actions, sigma=sigma), methods=methods,
                     epsilon=epsilon, alpha=alpha, gamma=1.0, episodes=episodes, runs=runs,
                     seed=seed)


@ui.cached(max_entries=32, show_spinner=False)
def checks(settings, sargs):
    return mb.known_answers(assemble(settings), study(*sargs))


@ui.cached_figures()
def learning_figures(settings):
    result = assemble(settings)
    return {"left": figs.left_figure(result.methods, epsilon=result.epsilon),
            "values": figs.values_figure(result.methods, true_left=result.mdp.q_left())}


@ui.cached_figures()
def study_figures(args):
    s = study(*args)
    return {"actions": figs.actions_figure(s), "samples": figs.samples_figure(s)}


@ui.cached_figures()
def worked_figures(settings, episode):
    w = mb.worked_targets(assemble(settings), episode)
    return {name: figs.worked_figure(w, name) for name in mb.METHODS}


with ui.page("max_bias", intro=INTRO) as page:
    p = page.controls([
        ui.IntSlider(name="actions", label="Actions at B", min=1, max=mb.MAX_ACTIONS, value=10,
                     help="Every one pays N(−0.1, σ²). The book says \"many\"; 10 is usual."),
        ui.FloatSlider(name="sigma", label="Reward noise σ at B", min=0.0, max=3.0, value=1.0,
                       step=0.1),
        ui.FloatSlider(name="epsilon", label="Exploration ε", min=0.0, max=0.5, value=0.1,
                       step=0.01),
        ui.FloatSlider(name="alpha", label="Step size α", min=0.01, max=1.0, value=0.1,
                       step=0.01),
    ])
    # The training is capped at the cost of the book's protocol: the episodes and runs offered
    # are those that fit the number of actions (and the episodes) chosen.
    episodes_ok = [e for e in EPISODES if cost(RUNS[0], e, p.actions) <= BUDGET]
    clamp(page.key("episodes"), episodes_ok)
    p = ui.Params({**p, **page.controls([
        ui.SelectSlider(name="episodes", label="Episodes per run", options=episodes_ok,
                        value=min(300, episodes_ok[-1]), scales_work=True),
    ])})
    runs_ok = [r for r in RUNS if cost(r, p.episodes, p.actions) <= BUDGET]
    clamp(page.key("runs"), runs_ok)
    p = ui.Params({**p, **page.controls([
        ui.SelectSlider(name="runs", label="Independent runs (the same dice for every method)",
                        options=runs_ok, value=min(DEFAULT_RUNS, runs_ok[-1]), scales_work=True,
                        help="At most what the book's 10,000 runs of 300 episodes with 10 "
                             "actions cost: fewer with more episodes or actions."),
        ui.Seed(),
        ui.Section("Estimator study", [
            ui.SelectSlider(name="samples", label="Samples per action n", options=SAMPLES,
                            value=10),
            ui.FloatSlider(name="gap", label="Gap: the best true value above the others",
                           min=0.0, max=2.0, value=0.0, step=0.05,
                           help="0: all true values equal, as at B."),
            ui.SelectSlider(name="trials", label="Monte Carlo trials", options=TRIALS,
                            value=4000, scales_work=True),
        ]),
    ])})
    if episodes_ok[-1] < EPISODES[-1] or runs_ok[-1] < RUNS[-1]:
        st.sidebar.caption(f"With {p.actions} actions at B and {p.episodes:,} episodes: up to "
                           f"{episodes_ok[-1]:,} episodes and {runs_ok[-1]:,} runs, the cost of "
                           "the book's 10,000 runs of 300 episodes with 10 actions.")
    settings = (p.actions, p.sigma, p.epsilon, p.alpha, p.episodes, p.runs, p.seed)
    result = train_all(settings)
    shown = learning_figures(settings)
    methods = result.methods

    page.section("How often each learner goes left from A")
    ui.chart(shown["left"], key="max_bias.chart.left")
    st.caption(figs.left_caption(methods, epsilon=p.epsilon))

    page.section("Where the bias comes from: Q(A, left) and Q(A, right)")
    ui.chart(shown["values"], key="max_bias.chart.values")
    st.caption(figs.values_caption(methods, true_left=result.mdp.q_left()))

    page.section("The estimator underneath: the max of noisy means")
    sargs = (p.actions, p.sigma, p.samples, p.gap, p.trials, p.seed)
    est = study(*sargs)
    sshown = study_figures(sargs)
    left, right = st.columns(2, gap="medium")
    with left:
        ui.chart(sshown["actions"], key="max_bias.chart.actions")
    with right:
        ui.chart(sshown["samples"], key="max_bias.chart.samples")
    st.caption(figs.study_caption(est))

    page.section("One update by hand")
    st.markdown("Run 1 at the start of an episode: each learner's estimates of B's actions, and "
                "the target it would give Q(A, left) if the run goes left (Double Q as if its "
                "coin says Q₁).")
    pick = page.controls([
        ui.IntSlider(name="episode", label="Episode of run 1", min=1, max=p.episodes,
                     value=min(10, p.episodes)),
    ], container=st.container())
    worked = mb.worked_targets(result, pick.episode)
    wshown = worked_figures(settings, pick.episode)
    steps = figs.worked_steps(worked)
    for col, name in zip(st.columns(3), mb.METHODS, strict=True):
        with col:
            ui.chart(wshown[name], key=f"max_bias.chart.worked.{name}")
            st.latex(steps[name])

    page.read_it(
        "**% left:** in each episode, the share of runs whose first action was left, with a "
        "95% band. All methods start at 50% (Q is 0 for both actions, ties broken at random); "
        "the dashed line is what ε-greedy does once it knows right is better.  \n"
        "**Q(A, ·):** the mean over runs after each episode. Q-learning's Q(A, left) climbs above "
        "Q(A, right) = 0 although its true value is −0.1: its target is the largest of B's noisy "
        "estimates, and that is positive for a while. Double Q's target reads the action one "
        "table likes in the other, so the noise does not push it up.  \n"
        "**Estimators:** each point is the mean, over many trials, of an estimate minus the true "
        "largest mean (95% error bars); lines are the closed forms. The single estimator's bias "
        "grows with m and shrinks like 1/√n; the double estimator is unbiased with equal true "
        "values and too low when one action is better (move the gap).  \n"
        "**By hand:** bars are run 1's estimates; the solid line is the value of B its target "
        "uses, the dashed line the true value."
    )
    page.try_this([
        "Predict: with σ = 0 (no noise at B), does Q-learning still go left more than Double Q? "
        "Set σ to 0 and compare the curves.",
        "Predict where Q-learning's curve ends with 100 actions at B, then move the slider. "
        "Which estimator chart explains it?",
        "Double the samples per action in the estimator study: by what factor does the single "
        "estimator's bias shrink? Then set a gap of 0.5: which way is the double estimator off?",
    ])
    known = checks(settings, sargs)
    page.known_answer([ui.Check(**vars(k)) for k in known])
    if not mb.book_settings(result):
        st.caption("Figure 6.5 is checked at the book's settings: 10 actions, σ = 1, ε = α = 0.1, "
                   "300 episodes, and at least 1,000 runs.")
    page.equations(figs.EQUATIONS)
    page.source(mb.episode, mb.epsilon_greedy, *TARGETS.values(), td.td_update,
                mb.max_estimators, mb.expected_max_of_normals, mb.single_estimator_bias,
                mb.double_estimator_bias, mb.run, mb.estimator_study)
    page.export(
        figures={"left": shown["left"], "values": shown["values"],
                 "estimators_by_actions": sshown["actions"],
                 "estimators_by_samples": sshown["samples"]},
        data=lambda: figs.tables(methods, est),
    )
