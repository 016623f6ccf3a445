import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import math

import pandas as pd
import streamlit as st

from rlviz import bandits, ui
from rlviz.bandits.races import _race_chunk
from rlviz.errors import InputError
from rlviz.figures import bandits as figs

INTRO = (
    "Bandit algorithms race on the same problems: the same arms in every run and the same reward "
    "for the same pull. Exploration costs regret: ε-greedy's grows in a straight line while UCB "
    "and Thompson sampling bend toward the logarithmic lower bound."
)
TESTBEDS = {
    "gaussian": "Gaussian arms (Sutton & Barto testbed)",
    "bernoulli": "Bernoulli arms, the same in every run",
    "bernoulli_random": "Bernoulli arms, new ones each run",
    "random_walk": "Drifting arms (nonstationary random walk)",
}
RACERS = {
    "greedy": "greedy", "eps_a": "ε-greedy A", "eps_b": "ε-greedy B", "optimistic": "optimistic",
    "ucb": "UCB", "thompson": "Thompson sampling", "gradient_a": "gradient A",
    "gradient_b": "gradient B",
}
ALPHAS = [0.0, 0.01, 0.05, 0.1, 0.2, 0.4, 1.0]
EPSILONS = [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0]
LIVE_SECONDS = 1.6  # bandits.race_seconds: the worst allowed race takes under 2 s
RUNS = (20, 50, 100, 200, 500, 1000, 2000)
STEPS = (100, 200, 500, 1000, 2000, 5000, 10000)


def alpha_label(a):
    return "1/n (sample average)" if a == 0 else f"{a:g}"


def c_label(c):
    return "√2 (UCB1)" if math.isclose(c, math.sqrt(2)) else f"{c:g}"


def eps_controls(slot, eps):
    return ui.Section(f"{RACERS[slot]} settings", [
        ui.SelectSlider(name=f"{slot}_eps", label="ε", options=EPSILONS, value=eps),
        ui.SelectSlider(name=f"{slot}_alpha", label="step size α", options=ALPHAS, value=0.0,
                        labels=alpha_label),
        ui.SelectSlider(name=f"{slot}_decay", label="ε decay d: ε/(1 + d(t−1))",
                        options=[0.0, 0.001, 0.01, 0.1], value=0.0),
    ])


def gradient_controls(slot, baseline):
    return ui.Section(f"{RACERS[slot]} settings", [
        ui.SelectSlider(name=f"{slot}_alpha", label="step size α",
                        options=[0.025, 0.05, 0.1, 0.2, 0.4, 0.8], value=0.1),
        ui.Toggle(name=f"{slot}_baseline", label="subtract the average-reward baseline",
                  value=baseline),
    ])


BOOK = dict(testbed="gaussian", arms=10, runs=2000, steps=1000, mu=0.0, noise=1.0)
LESSONS = {
    "Fig. 2.2 · ε-greedy": BOOK | dict(racers=["greedy", "eps_a", "eps_b"], eps_a_eps=0.1,
                                       eps_b_eps=0.01, eps_a_alpha=0.0, eps_b_alpha=0.0),
    "Fig. 2.3 · optimism": BOOK | dict(racers=["optimistic", "eps_a"], optimistic_q1=5.0,
                                       optimistic_alpha=0.1, eps_a_eps=0.1, eps_a_alpha=0.1),
    "Fig. 2.4 · UCB": BOOK | dict(racers=["ucb", "eps_a"], ucb_c=2.0, eps_a_eps=0.1,
                                  eps_a_alpha=0.0),
    "Fig. 2.5 · baselines": BOOK | dict(mu=4.0, racers=["gradient_a", "gradient_b"],
                                        gradient_a_alpha=0.1, gradient_a_baseline=True,
                                        gradient_b_alpha=0.1, gradient_b_baseline=False),
    "Regret bounds": dict(testbed="bernoulli", probs="0.9, 0.5, 0.4, 0.2", runs=100, steps=5000,
                          racers=["eps_a", "ucb", "thompson"], eps_a_eps=0.1, eps_a_alpha=0.0,
                          ucb_c=math.sqrt(2)),
    "Ex. 2.5 · drift": dict(testbed="random_walk", arms=10, runs=200, steps=10000, noise=1.0,
                            racers=["eps_a", "eps_b"], eps_a_eps=0.1, eps_a_alpha=0.0,
                            eps_b_eps=0.1, eps_b_alpha=0.1),
}


def live_size(agents, testbed, runs, steps):
    """The race this page runs live: the asked size, or the most runs (then steps) that fit."""
    def fits(r, t):
        return bandits.race_seconds(agents, testbed, runs=r, steps=t) <= LIVE_SECONDS
    for r in sorted((r for r in RUNS if r <= runs), reverse=True):
        if fits(r, steps):
            return r, steps
    fewest = min(RUNS)
    return fewest, max((t for t in STEPS if t <= steps and fits(fewest, t)), default=min(STEPS))


def make_testbed(p):
    if p.testbed == "gaussian":
        return bandits.GaussianTestbed(arms=p.arms, mean=p.mu, noise_sd=p.noise)
    if p.testbed == "bernoulli":
        return bandits.BernoulliTestbed(probs=bandits.parse_probs(p.probs))
    if p.testbed == "bernoulli_random":
        return bandits.BernoulliTestbed(arms=p.arms)
    return bandits.RandomWalkTestbed(arms=p.arms, walk_sd=p.walk, noise_sd=p.noise)


def make_racer(slot, p, testbed):
    if slot == "greedy":
        return bandits.EpsilonGreedy(epsilon=0.0)
    if slot in ("eps_a", "eps_b"):
        return bandits.EpsilonGreedy(epsilon=p[f"{slot}_eps"], decay=p[f"{slot}_decay"],
                                     step_size=p[f"{slot}_alpha"] or None)
    if slot == "optimistic":
        return bandits.Optimistic(initial=p.optimistic_q1, step_size=p.optimistic_alpha or None)
    if slot == "ucb":
        return bandits.UCB(c=p.ucb_c)
    if slot == "thompson":
        if testbed.binary_rewards:
            return bandits.BetaThompson()
        return bandits.GaussianThompson(prior_mean=p.mu if p.testbed == "gaussian" else 0.0,
                                        noise_sd=p.noise)
    return bandits.Gradient(alpha=p[f"{slot}_alpha"], baseline=p[f"{slot}_baseline"])


@ui.cached(max_entries=16, show_spinner="Racing…")
def run_race(agents, testbed, runs, steps, seed):
    return bandits.race(agents, testbed, runs=runs, steps=steps, seed=seed)


@ui.cached_figures()
def charts(agents, extra, testbed, runs, steps, seed, t):
    result = run_race(agents + extra, testbed, runs, steps, seed)
    result = result.select(agents) if extra else result
    return (figs.regret_race(result, step=t), figs.regret_race(result, step=t, log_axes=True),
            figs.reward_curves(result, step=t), figs.optimal_curves(result, step=t),
            figs.snapshot(result, t), figs.pull_shares(result))


@ui.cached(max_entries=8, show_spinner="Racing the book's testbed…")
def run_book(seed):
    return bandits.book_race(seed)


with ui.page("bandits", intro=INTRO) as page:
    def load(lesson):
        for name, value in LESSONS[lesson].items():
            st.session_state[page.key(name)] = value
        st.session_state.pop(page.key("t"), None)

    top = page.controls([ui.Choice(name="testbed", label="Testbed", options=list(TESTBEDS),
                                   value="gaussian", labels=TESTBEDS)])
    fixed = top.testbed == "bernoulli"
    p = page.controls([
        ui.IntSlider(name="arms", scales_work=True, label="Arms k", min=2, max=20, value=10,
                     disabled=fixed,
                     help="With fixed Bernoulli arms, k is the number of probabilities given."),
        ui.SelectSlider(name="runs", scales_work=True, label="Runs (independent problems)",
                        options=list(RUNS), value=2000),
        ui.SelectSlider(name="steps", scales_work=True, label="Steps per run",
                        options=list(STEPS), value=1000),
        ui.MultiChoice(name="racers", label="Racers", options=list(RACERS), labels=RACERS,
                       value=["greedy", "eps_a", "ucb", "thompson", "gradient_a"]),
        ui.Seed(),
        ui.Section("Testbed settings", [
            ui.FloatSlider(name="mu", label="Gaussian: mean μ of the true values q*", min=-2.0,
                           max=6.0, value=0.0, step=0.5),
            ui.SelectSlider(name="noise", label="Gaussian and random walk: reward noise σ",
                            options=[0.1, 0.5, 1.0, 2.0, 4.0], value=1.0),
            ui.Text(name="probs", label="Bernoulli: success probability of each arm",
                    value="0.9, 0.5, 0.4, 0.2", max_chars=400, area=False),
            ui.SelectSlider(name="walk", label="Random walk: step sd w",
                            options=[0.001, 0.01, 0.05, 0.1], value=0.01),
        ]),
        eps_controls("eps_a", 0.1),
        eps_controls("eps_b", 0.01),
        ui.Section("optimistic settings", [
            ui.SelectSlider(name="optimistic_q1", label="initial estimate Q₁",
                            options=[1.0, 2.0, 5.0, 10.0], value=5.0),
            ui.SelectSlider(name="optimistic_alpha", label="step size α", options=ALPHAS,
                            value=0.1, labels=alpha_label),
        ]),
        ui.Section("UCB settings", [
            ui.SelectSlider(name="ucb_c", label="exploration weight c", labels=c_label, value=2.0,
                            options=[0.0, 0.25, 0.5, 1.0, math.sqrt(2), 2.0, 3.0, 4.0]),
        ]),
        gradient_controls("gradient_a", True),
        gradient_controls("gradient_b", False),
    ])
    p = ui.Params({**top, **p})

    st.caption("Load a lesson from the book:")
    per_row = 3  # six buttons in one row cut their labels at 1280 px
    for first in range(0, len(LESSONS), per_row):
        row = list(LESSONS)[first:first + per_row]
        for i, (col, lesson) in enumerate(zip(st.columns(per_row), row, strict=False), first):
            col.button(lesson, on_click=load, args=(lesson,), width="stretch",
                       key=page.key(f"lesson.{i}"))

    if not p.racers:
        raise InputError("Choose at least one racer in the sidebar.")
    testbed = make_testbed(p)
    agents = tuple(make_racer(slot, p, testbed) for slot in p.racers)
    runs, steps = live_size(agents, testbed, p.runs, p.steps)
    if (runs, steps) != (p.runs, p.steps):
        st.info(f"{p.runs} runs × {p.steps} steps with {testbed.arms} arms and {len(agents)} "
                f"racer{'s' * (len(agents) > 1)} is more than this page races live, so it races "
                f"**{runs} runs × {steps} steps**, the most that fit. Fewer racers, arms or steps "
                "leave room for more runs.", icon=":material/speed:")
    # The known answer needs the book's race. At the book's size and testbed it is one race with
    # this one (a racer's curves do not depend on who else races): race only the book's missing
    # racers alongside, instead of all four again.
    book_size = testbed == bandits.GaussianTestbed() and (runs, steps) == (2000, 1000)
    extra = tuple(a for a in bandits.BOOK_AGENTS if a not in agents) if book_size else ()
    both = run_race(agents + extra, testbed, runs, steps, p.seed)
    result = both.select(agents) if extra else both
    st.caption(f"{testbed.label} · {runs} runs × {steps} steps · bands: 95% confidence "
               "intervals of the mean")

    page.section("Cumulative regret")
    regret_lin, regret_log = st.columns(2)
    bounds_note = st.empty()
    page.section("Average reward and optimal action")
    reward_box, optimal_box = st.columns(2)
    page.section("Who is winning at step t")
    q = page.controls([ui.IntSlider(name="t", label="Scrub to step t", min=1, max=steps,
                                    value=min(100, steps))], container=st.container())
    regret, regret_loglog, reward, optimal, snapshot, pulls = charts(
        agents, extra, testbed, runs, steps, p.seed, q.t)
    with regret_lin:
        ui.chart(regret, key="bandits.regret")
    with regret_log:
        ui.chart(regret_loglog, key="bandits.regret_log")
    if testbed.fixed_means is None or not testbed.binary_rewards:
        bounds_note.caption("The Lai–Robbins and UCB1 bounds are drawn for Bernoulli arms that "
                            "are the same in every run (the *Regret bounds* lesson).")
    with reward_box:
        ui.chart(reward, key="bandits.reward")
    with optimal_box:
        ui.chart(optimal, key="bandits.optimal")
    ui.chart(snapshot, key="bandits.snapshot")
    page.section("Where the pulls went")
    ui.chart(pulls, key="bandits.pulls")

    page.read_it(
        "**Regret** is what exploring costs: after each step, the best arm's mean minus the mean "
        "of the arm pulled, summed. On linear axes (left) a method that never stops exploring "
        "(ε-greedy with a constant ε) climbs in a straight line. On **log–log axes** (right) "
        "that is a line of slope 1, while regret that grows like ln t flattens out; the "
        "Lai–Robbins curve is the slowest growth any consistent method can have in the long "
        "run (a rate, not a floor: a good method can sit below it early on and then runs "
        "parallel to it). Bands are 95% confidence intervals of the mean over runs. **Who is "
        "winning** ranks the racers by regret so far and shows where their pulls went, arms "
        "sorted by their true means (the diamonds)."
    )
    page.try_this([
        "Load **Fig. 2.2**. Predict which of greedy, ε = 0.01 and ε = 0.1 leads at step 100 "
        "and at step 1000, then scrub t from 1 to 1000.",
        "Load **Regret bounds**: on the log–log chart, which racer runs parallel to the "
        "Lai–Robbins curve, and which climbs at slope 1? Now set UCB's c to 0.5, then 4.",
        "Load **Fig. 2.5**: predict what removing the baseline does when every arm pays about "
        "+4. Then set μ to 0 in the testbed settings: does the baseline still matter?",
    ])
    book = both.select(bandits.BOOK_AGENTS) if book_size else run_book(p.seed)
    page.known_answer(
        [ui.Check(v.label, value=v.ours(book), reference=v.value, tol=v.tol, fmt=".3f",
                  source=v.source) for v in bandits.BOOK_VALUES],
        title="Known answer: the book's 10-armed testbed, 2000 runs × 1000 steps, this seed",
    )
    page.equations(bandits.EQUATIONS)
    # Each agent's select (act) and update (learn) steps first: the race calls exactly these.
    steps = (x for kind in dict.fromkeys(type(a) for a in agents)
             for x in (kind, *bandits.compiled_steps(kind)))
    page.source(*dict.fromkeys(steps), bandits.race, _race_chunk, type(testbed), bandits.Noise)
    page.export(
        figures={"regret": regret, "regret-log-log": regret_loglog, "reward": reward,
                 "optimal": optimal, "snapshot": snapshot, "pulls": pulls},
        data=lambda: {"curves": pd.DataFrame(result.curves()),
              "pull-shares": pd.DataFrame(result.pull_shares(), index=result.labels,
                                          columns=[figs.rank_name(j) for j in range(testbed.arms)])
              .rename_axis("racer").reset_index(),
              "final-regret": pd.DataFrame(result.final_regret.T, columns=result.labels)},
    )
