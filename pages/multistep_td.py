import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import streamlit as st

from rlviz import prediction as pr
from rlviz import ui
from rlviz.figures import prediction as figs

INTRO = (
    "Between one-step TD and Monte Carlo lie the n-step returns and their λ-weighted mix. On the "
    "book's random walks, see which n or λ learns fastest at which step size, open one n-step "
    "return up, and check live that the forward and backward views of TD(λ) make the same "
    "updates."
)
RUNS = [10, 20, 50, 100]
EPISODES = [5, 10, 20]
LAMBDA_WORK = pr.BOOK_RUNS * pr.BOOK_EPISODES
"""The λ sweeps train at most the book's 100 runs × 10 episodes (runs × episodes): 100 runs of
20 episodes take TD(λ) or true online TD(λ) past two seconds. n-step TD is not capped."""
SPINNER = {"n_step": "10 n", "offline_lambda_return": "8 λ", "td_lambda": "8 λ",
           "true_online": "8 λ"}


@st.cache_resource(max_entries=8, show_spinner=False)
def walk(n_states: int, runs: int, episodes: int, seed: int) -> pr.Runs:
    """The episodes every method and setting shares (read-only)."""
    return pr.sample_runs(n_states, runs=runs, episodes=episodes, seed=seed)


@ui.cached(max_entries=8, show_spinner="Example 6.2: 7 step sizes × 100 episodes…")
def example(runs: int, seed: int) -> pr.TdVsMc:
    return pr.td_vs_mc(runs=runs, seed=seed)


@ui.cached(max_entries=16, show_spinner=False)
def sweep(method: str, runs: int, episodes: int, seed: int) -> pr.SweepSummary:
    params = pr.NS if method == "n_step" else pr.LAMBDAS
    return pr.run_sweep(method, walk(19, runs, episodes, seed), params=params,
                        alphas=pr.ALPHAS).summary()


@ui.cached(max_entries=16, show_spinner=False)
def one_lambda(method: str, lam: float, runs: int, episodes: int,
               seed: int) -> pr.SweepSummary:
    return pr.run_sweep(method, walk(19, runs, episodes, seed), params=[lam],
                        alphas=pr.ALPHAS).summary()


def compare(method: str, lam: float, runs: int, episodes: int,
            seed: int) -> dict[str, pr.SweepSummary]:
    """The three λ methods at one λ; the method being swept is read from its sweep."""
    grid = (runs, episodes, seed)
    return {m: sweep(m, *grid).only(pr.LAMBDAS.index(lam)) if m == method
            else one_lambda(m, lam, *grid)
            for m in ("offline_lambda_return", "td_lambda", "true_online")}


@ui.cached(max_entries=16, show_spinner=False)
def n_step_at_one(runs: int, episodes: int, seed: int) -> pr.SweepSummary:
    """n-step TD at α = 1 only: what Figure 12.3's check compares the λ-return with."""
    return pr.run_sweep("n_step", walk(19, runs, episodes, seed), params=pr.NS,
                        alphas=[1.0]).summary()


@ui.cached(max_entries=16, show_spinner=False)
def identities(runs: int, episodes: int, seed: int, lam: float, alpha: float) -> pr.Identities:
    return pr.identities(walk(19, runs, episodes, seed), lam=lam, alpha=alpha)


@ui.cached(max_entries=32, show_spinner=False)
def backup(runs: int, episodes: int, seed: int, n: int, alpha: float, episode: int,
           tau: int) -> pr.Backup:
    return pr.n_step_backup(walk(19, runs, episodes, seed), n=n, alpha=alpha, episode=episode,
                            tau=tau)


@ui.cached(max_entries=32, show_spinner=False)
def whiteboard(method: str, runs: int, episodes: int, seed: int, p: int, a: int) -> float | None:
    params = pr.NS if method == "n_step" else pr.LAMBDAS
    return pr.whiteboard_gap(walk(19, runs, episodes, seed), method, params[p], pr.ALPHAS[a],
                             sweep(method, runs, episodes, seed).first_run[p, a, -1])


@ui.cached_figures()
def example_charts(runs: int, seed: int):
    ex = example(runs, seed)
    return figs.example_estimates_figure(ex), figs.example_errors_figure(ex)


@ui.cached_figures()
def sweep_charts(method: str, runs: int, episodes: int, seed: int, chosen: tuple[int, int]):
    s = sweep(method, runs, episodes, seed)
    return figs.sweep_figure(s, chosen=chosen), figs.heatmap_figure(s)


@ui.cached_figures()
def close_charts(method: str, runs: int, episodes: int, seed: int, p: int, a: int, k: int):
    s = sweep(method, runs, episodes, seed)
    return figs.estimates_figure(s, p, a, k), figs.by_episode_figure(s, p, a)


@ui.cached_figures()
def compare_chart(method: str, lam: float, runs: int, episodes: int, seed: int):
    return figs.methods_figure(compare(method, lam, runs, episodes, seed))


@ui.cached_figures()
def backup_chart(*args):
    colour = figs.ramp(len(pr.NS))[pr.NS.index(args[3])]
    return figs.backup_figure(backup(*args), n_states=19, colour=colour)


@ui.cached_figures()
def views_chart(*args):
    return figs.views_figure(identities(*args))


with ui.page("multistep_td", intro=INTRO) as page:
    p = page.controls([
        ui.Choice(name="method", label="α sweep on the 19-state walk", options=list(pr.METHODS),
                  value="n_step", labels=lambda m: f"{pr.METHODS[m]} ({pr.FIGURES[m]})"),
        ui.SelectSlider(name="episodes", label="Episodes averaged in the sweeps",
                        options=EPISODES, value=10, scales_work=True,
                        help="The book averages the first 10."),
    ])
    method, lam_method = p.method, p.method != "n_step"
    runs_ok = [r for r in RUNS if not lam_method or r * p.episodes <= LAMBDA_WORK]
    p = ui.Params({**p, **page.controls([
        ui.Section("Up close", expanded=True, controls=[
            ui.SelectSlider(name="n", label="n (n-step TD, and the backup below)",
                            options=list(pr.NS), value=4),
            ui.SelectSlider(name="lam", label="λ (the λ methods)", options=list(pr.LAMBDAS),
                            value=0.8),
            ui.SelectSlider(name="alpha", label="Step size α", options=list(pr.ALPHAS),
                            value=0.4),
        ]),
        ui.Section("Runs and seed", expanded=True, controls=[
            ui.SelectSlider(name="runs", label="Runs (every method sees the same episodes)",
                            options=runs_ok, value=min(100, runs_ok[-1]), scales_work=True),
            ui.Seed(),
        ]),
    ])})
    if runs_ok[-1] < RUNS[-1]:
        st.sidebar.caption(
            f"{pr.METHODS[method]} over {p.episodes} episodes: up to {runs_ok[-1]} runs. The λ "
            f"sweeps train at most {pr.BOOK_RUNS} runs × {pr.BOOK_EPISODES} episodes (the "
            "book's protocol), which keeps the page under two seconds; n-step TD takes 100 "
            "runs of 20.")
    grid = (p.runs, p.episodes, p.seed)
    params = pr.LAMBDAS if lam_method else pr.NS
    cp = params.index(p.lam if lam_method else p.n)
    ca = pr.ALPHAS.index(p.alpha)

    page.section("TD(0) or Monte Carlo? The 5-state walk (Example 6.2)")
    ex = example(p.runs, p.seed)
    left, right = st.columns(2, gap="medium")
    fig_ex_v, fig_ex_e = example_charts(p.runs, p.seed)
    with left:
        ui.chart(fig_ex_v, key="multistep_td.example_values")
    with right:
        ui.chart(fig_ex_e, key="multistep_td.example_errors")
    st.caption(
        f"Left: run 1 of TD(0) at α = 0.1, the estimates after 0, 1, 10 and 100 episodes (all "
        f"start at 0.5). Right: RMS error over the five states, mean of {ex.runs} runs with 95% "
        f"bands; every step size sees the same episodes. After {ex.episodes} episodes the best "
        f"TD(0) is at {ex.td_error[:, -1].min():.3f}, the best MC at "
        f"{ex.mc_error[:, -1].min():.3f}.")

    page.section(f"{pr.METHODS[method]} against α on the 19-state walk ({pr.FIGURES[method]})")
    with st.spinner(f"Running {SPINNER[method]} × {len(pr.ALPHAS)} α × {p.runs} runs × "
                    f"{p.episodes} episodes…"):
        s = sweep(method, *grid)
        fig_sweep, fig_heat = sweep_charts(method, *grid, (cp, ca))
    left, right = st.columns([3, 2], gap="medium")
    with left:
        ui.chart(fig_sweep, key="multistep_td.sweep")
    with right:
        ui.chart(fig_heat, key="multistep_td.heatmap")
    st.caption(figs.sweep_caption(s))

    comparison = None
    if lam_method:
        page.section(f"The three λ methods at λ = {p.lam:g}")
        with st.spinner("Running the other two λ methods at this λ…"):
            comparison = compare(method, p.lam, *grid)
            fig_cmp = compare_chart(method, p.lam, *grid)
        ui.chart(fig_cmp, key="multistep_td.compare")
        st.caption(
            "The same episodes for all three. The offline λ-return moves each visited state once "
            "per visit at the episode's end; TD(λ) spreads every TD error back along its trace "
            "at once, which a large α overshoots; true online TD(λ) corrects for that and tracks "
            "the online λ-return.")

    name = f"n = {p.n}" if not lam_method else f"λ = {p.lam:g}"
    page.section(f"Up close: {pr.METHODS[method]}, {name}, α = {p.alpha:g}")
    k = page.controls([ui.IntSlider(name="k", label="Estimates after k episodes", min=0,
                                    max=p.episodes, value=p.episodes)],
                      container=st.container()).k
    k = min(k, p.episodes)
    fig_v, fig_e = close_charts(method, *grid, cp, ca, k)
    left, right = st.columns(2, gap="medium")
    with left:
        ui.chart(fig_v, key="multistep_td.estimates")
    with right:
        ui.chart(fig_e, key="multistep_td.by_episode")

    page.section(f"One n-step return, drawn as a backup (n = {p.n}, α = {p.alpha:g})")
    runs_19 = walk(19, *grid)
    c1, c2 = st.columns(2)
    with c1:
        e = page.controls([ui.IntSlider(name="episode", label="Episode of run 1", min=1,
                                        max=p.episodes, value=min(5, p.episodes))],
                          container=st.container()).episode
    e = min(e, p.episodes) - 1
    length = int(runs_19.lengths[0, e])
    with c2:
        tau = page.controls([ui.IntSlider(name="tau", label="Step τ whose state is updated",
                                          min=0, max=max(length - 1, 1), value=0)],
                            container=st.container()).tau
    tau = min(tau, length - 1)
    b_args = (*grid, p.n, p.alpha, e, tau)
    b = backup(*b_args)
    ui.chart(backup_chart(*b_args), key="multistep_td.backup")
    st.markdown(
        f"Run 1's episode {e + 1} lasts T = {b.length} steps. The update of $S_{{{tau}}}$ "
        f"(state {b.states[tau]}) is made after step {b.made_at}: it adds {b.used} "
        f"reward{'s' if b.used != 1 else ''} and "
        + (f"bootstraps from $V(S_{{{tau + p.n}}})$, state {b.boot_state}, as estimated at "
           "that moment." if b.bootstraps else
           "reaches the end of the episode first, so it bootstraps from nothing: a "
           "Monte-Carlo return."))
    for line in figs.backup_latex(b):
        st.latex(line)
    st.caption("Values to 4 decimals; the arithmetic uses them unrounded.")

    page.section("Forward view = backward view, live")
    i_args = (*grid, p.lam, p.alpha)
    ident = identities(*i_args)
    left, right = st.columns([3, 2], gap="medium")
    with left:
        ui.chart(views_chart(*i_args), key="multistep_td.views")
    with right:
        st.markdown(
            f"Run 1's first episode at λ = {p.lam:g}, α = {p.alpha:g}, from the initial values. "
            "**Forward:** each visit's λ-return error $G^\\lambda_t - V(S_t)$, times α, added to "
            "its state. **Backward:** each TD error δ, times α, given to every state by its "
            "eligibility trace z. With the values held for the episode the two agree to the last "
            f"digit: the largest gap over {ident.runs} runs × {ident.episodes} episodes and every "
            f"λ and α is {ident.forward_backward:.1e} of the values in play.")

    page.read_it(
        "**Example 6.2:** TD(0) learns faster than constant-α Monte Carlo on the small walk; a "
        "larger α drops faster but levels off higher (it keeps chasing the latest returns).  \n"
        "**The sweep:** each point is the RMS error over the 19 states at the end of each of the "
        f"first {p.episodes} episodes, averaged, then averaged over {p.runs} runs (whiskers: 95% "
        "intervals). Every curve starts at √0.3 = 0.548 for α = 0, where nothing is learned; "
        "the book's axis stops at 0.55 too. A large dot is each curve's best α, the star the "
        "best of all; a cross at the top marks where a curve diverges. The heatmap shows the "
        "same numbers: dark is low.  \n"
        "**Backup:** the walk goes up and down between the two ends; the thick stretch is what "
        "one n-step return looks at: n rewards (all 0 here until an end is reached), then the "
        "current estimate of the state n steps on.")
    page.try_this([
        "In the n-step sweep, predict: which n is best at α = 0.1, and which at α = 0.8? Then "
        "hover over both columns of the heatmap.",
        "Switch to TD(λ) and then to true online TD(λ). Predict which curves survive α = 1, "
        "then look for the crosses.",
        "In the backup, set n = 512. What does the return use now, and what does that make "
        "n-step TD? Then set n = 1 and step τ along the episode.",
    ])
    book = (p.runs, p.episodes) == (pr.BOOK_RUNS, pr.BOOK_EPISODES)
    known = pr.known_answers(example=ex, sweep=s, ident=ident,
                             n_step=n_step_at_one(*grid) if book and method ==
                             "offline_lambda_return" else None, compare=comparison,
                             whiteboard=whiteboard(method, *grid, cp, ca))
    page.known_answer([ui.Check(**vars(row)) for row in known])
    if not book:
        st.caption("The book's figures are checked at 100 runs and 10 episodes.")
    page.equations(figs.EQUATIONS)
    steps = {"n_step": [pr.n_step_td_step, pr.n_step_td],
             "offline_lambda_return": [pr.offline_lambda_return_update,
                                       pr.offline_lambda_return],
             "td_lambda": [pr.td_lambda_step, pr.td_lambda],
             "true_online": [pr.true_online_td_lambda_step, pr.true_online_td_lambda]}
    shown = steps[method] + [pr.n_step_backup, pr.lambda_return_increments, pr.td_lambda_step,
                             pr.monte_carlo_increments, pr.online_lambda_return,
                             pr.true_online_td_lambda_step, pr.identities, pr.td_vs_mc]
    page.source(*dict.fromkeys(shown))
    charts = {"example_6_2_values": fig_ex_v, "example_6_2_errors": fig_ex_e,
              "sweep": fig_sweep, "heatmap": fig_heat, "estimates": fig_v,
              "errors_by_episode": fig_e, "backup": backup_chart(*b_args)}
    if comparison is not None:
        charts["three_lambda_methods"] = fig_cmp
    page.export(figures=charts, data=lambda: figs.export_tables(ex, s))
