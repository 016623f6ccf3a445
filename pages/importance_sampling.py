import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import numpy as np
import streamlit as st

from rlviz import off_policy as op
from rlviz import ui
from rlviz.errors import InputError
from rlviz.figures import off_policy as figs
from rlviz.interview.whiteboard.importance_sampling import off_policy_estimates

BOOK = "Sutton & Barto (2018)"
INTRO = (
    "How do you value a policy you have never run? Reweight another policy's episodes by the "
    "importance ratio π/b — the same ratio that sits inside PPO's surrogate and off-policy TD. "
    "Ordinary importance sampling is unbiased but can have huge, even infinite, variance; the "
    "weighted, per-decision and doubly robust estimators each buy some of that variance back."
)
PD_COLUMNS = [
    ui.TableColumn("pi", "π(Aₜ|Sₜ)", help="The target's probability of the action taken"),
    ui.TableColumn("b", "b(Aₜ|Sₜ)", help="The behaviour's probability of it (it was taken, "
                   "so it is positive)"),
    ui.TableColumn("r", "Rₜ₊₁", help="The reward after the action"),
]
PD_PRESETS = op.WORKED_EPISODES
PD_DEFAULT = PD_PRESETS["Rewards along the way"]


@ui.cached(max_entries=16)
def blackjack(runs: int, episodes: int, player: int, usable: bool, dealer: int, seed: int):
    state = op.BlackjackState(player_sum=player, usable_ace=usable, dealer_card=dealer)
    return op.blackjack_study(runs=runs, episodes=episodes, state=state, seed=seed)


@ui.cached(max_entries=16)
def infinite_variance(runs: int, episodes: int, seed: int):
    return op.infinite_variance_study(runs=runs, episodes=episodes, seed=seed)


@ui.cached(max_entries=32)
def chain(delta: float, horizon: int, episodes: int, runs: int, critic: str, seed: int):
    return op.estimator_study(delta=delta, horizon=horizon, episodes=episodes, runs=runs,
                              critic=critic, seed=seed)


@ui.cached(max_entries=32, show_spinner=False, copy=True)
def estimator_table(ch_args: tuple, _ch):  # the study rides along unhashed: ch_args name it
    return figs.estimator_table(_ch)


@ui.cached_figures()
def blackjack_chart(*args):
    return figs.blackjack_figure(blackjack(*args))


@ui.cached_figures()
def infinite_variance_chart(*args):
    return figs.infinite_variance_figure(infinite_variance(*args))


@ui.cached_figures()
def chain_charts(*args):
    res = chain(*args)
    return {"bias": figs.bias_figure(res), "mse": figs.mse_figure(res),
            "ess": figs.ess_figure(res), "weights": figs.weights_figure(res)}


@ui.cached_figures()
def worked_chart(table: tuple, gamma: float):
    return figs.per_decision_figure(op.worked_per_decision(*table, gamma=gamma))


with ui.page("importance_sampling", intro=INTRO) as page:
    p = page.controls([
        ui.Section("Blackjack (Figure 5.3)", expanded=True, controls=[
            ui.IntSlider(name="player", label="Player's sum", min=12, max=21, value=13),
            ui.Toggle(name="usable", label="Player has a usable ace", value=True),
            ui.IntSlider(name="dealer", label="Dealer shows (1 = ace)", min=1, max=10, value=2),
            ui.SelectSlider(name="bj_runs", scales_work=True, label="Runs",
                            options=[10, 20, 50, 100], value=100),
            ui.SelectSlider(name="bj_episodes", scales_work=True, label="Episodes per run",
                            options=[1000, 2000, 5000, 10000], value=10000),
        ]),
        ui.Section("Infinite variance (Figure 5.4)", controls=[
            ui.IntSlider(name="iv_runs", scales_work=True, label="Runs", min=1, max=10, value=10),
            ui.SelectSlider(name="iv_episodes", scales_work=True, label="Episodes per run",
                            options=[1000, 10000, 100000], value=100000,
                            labels=lambda v: f"{v:,}"),
        ]),
        ui.Section("Estimators on a small MDP", expanded=True, controls=[
            ui.FloatSlider(name="delta", label="Distance δ between π and b", min=0.0, max=1.0,
                           value=0.5, step=0.05,
                           help="b goes left or right with 1/2 each; π goes right with "
                                "probability (1 + δ)/2. δ = 0: π = b; δ = 1: π always goes "
                                "right."),
            ui.IntSlider(name="horizon", scales_work=True, label="Steps per episode T", min=1,
                         max=10, value=5),
            ui.SelectSlider(name="n", scales_work=True, label="Episodes per data set n",
                            options=[10, 20, 50, 100, 200], value=100),
            ui.SelectSlider(name="runs", scales_work=True, label="Data sets (runs)",
                            options=[50, 100, 200], value=200),
            ui.Choice(name="critic", label="Critic of doubly robust", options=list(op.CRITICS),
                      value="cross_fitted", labels=figs.CRITIC_LABELS,
                      help="Cross-fitted: a model of each half of a run's episodes corrects the "
                           "other half. Same data: one model of all of them. Oracle: the exact "
                           "q_π. None: doubly robust becomes per-decision IS."),
        ]),
        ui.Seed(),
    ])
    state = (p.player, p.usable, p.dealer)
    bj_args = (p.bj_runs, p.bj_episodes, *state, p.seed)
    iv_args = (p.iv_runs, p.iv_episodes, p.seed)
    ch_args = (p.delta, p.horizon, p.n, p.runs, p.critic, p.seed)
    bj, iv, ch = blackjack(*bj_args), infinite_variance(*iv_args), chain(*ch_args)
    book_state = op.BlackjackState(*state) == op.BLACKJACK_BOOK_STATE

    page.section("Blackjack: one state, valued from random play (Figure 5.3)")
    where = (f"dealer shows {'an ace' if p.dealer == 1 else p.dealer}, player "
             f"{p.player}{' with a usable ace' if p.usable else ', no usable ace'}")
    st.markdown(
        f"State: {where}. The behaviour policy hits or sticks at random; the target sticks "
        f"only on 20 or 21. Both estimators read the same {bj.runs} × {bj.episodes:,} episodes.")
    fig_bj = blackjack_chart(*bj_args)
    ui.chart(fig_bj, key="importance_sampling.blackjack")
    st.caption(
        f"Exact v_π = {bj.true_value:.5f} (recursion over the infinite deck). "
        f"{bj.consistent_share:.1%} of the episodes followed the target at every decision "
        f"(ρ > 0). After {bj.episodes:,} episodes: MSE {bj.mse['ordinary'][-1]:.2e} (ordinary) "
        f"and {bj.mse['weighted'][-1]:.2e} (weighted); dotted: the exact Var_b(ρG)/n = "
        f"{bj.per_episode_variance:.4f}/n.")

    page.section("Infinite variance: ordinary IS never settles (Figure 5.4)")
    st.markdown(
        "One state, two actions. *Right* ends the episode with 0; *left* ends it with +1 with "
        "probability 0.1 and otherwise comes back. The target always goes left (v_π = 1); "
        "the behaviour goes either way with 1/2. Each ratio doubles with every left step.")
    fig_iv = infinite_variance_chart(*iv_args)
    ui.chart(fig_iv, key="importance_sampling.infinite_variance")
    spread = ", ".join(f"{x:.3f}" for x in np.sort(iv.ordinary_final))
    st.caption(
        f"After {iv.episodes:,} episodes the ordinary estimates of the {iv.runs} runs are "
        f"{spread}; the largest single weight was {iv.largest_weight:,.0f}. Weighted IS is "
        "0 until a run's first episode that ends on *left*, then exactly 1 for good.")

    page.section("Four estimators as the policies drift apart")
    st.markdown(
        f"A five-state chain: start at the left end; *right* moves on with probability 0.7, "
        f"*left* moves back; reaching (or staying at) the left end pays 0.1, the right end 1. "
        f"Each of {ch.runs} data sets holds {ch.episodes} episodes of {ch.horizon} steps from the "
        "uniform behaviour policy, and every target π is valued on the same episodes.")
    charts = chain_charts(*ch_args)
    for column, name in zip(st.columns(2, gap="medium"), ("bias", "mse"), strict=True):
        with column:
            ui.chart(charts[name], key=f"importance_sampling.{name}")
    table = estimator_table(ch_args, ch)
    d = float(ch.deltas[ch.chosen])
    st.markdown(f"**At δ = {d:g}** (v_π = {ch.true_values[ch.chosen]:.4f}; critic: "
                f"{figs.CRITIC_LABELS[ch.critic]})")
    st.dataframe(table, hide_index=True, column_config={
        c: st.column_config.NumberColumn(format="%.4f") for c in table.columns if c != "estimator"
    })
    for column, name in zip(st.columns(2, gap="medium"), ("ess", "weights"), strict=True):
        with column:
            ui.chart(charts[name], key=f"importance_sampling.{name}")
    ess_mean = ch.mean_ess()[0][ch.chosen]
    st.caption(
        f"At δ = {d:g} a data set of {ch.episodes} episodes is worth about {ess_mean:.1f} "
        f"equally weighted ones (Kish); the weights' mean is {ch.mean_weight:.4f} "
        f"(its expectation is exactly 1). The doubly robust critic: "
        + figs.CRITIC_NOTES[ch.critic])

    page.section("Per-decision importance sampling, by hand")
    st.markdown(
        "One episode from b. The reward after step t depends only on the actions up to t, so "
        "per-decision IS weights it by ρ₀:t and drops the later ratios, whose expectation is 1 "
        "but which add variance.")
    left, right = st.columns([3, 2], gap="medium")
    with left:
        q = page.controls([ui.Table(
            name="pd", label="Edit cells, add or delete rows (at most 20 steps).",
            columns=PD_COLUMNS, value=PD_DEFAULT, max_rows=20)], container=st.container())

    def load(preset: dict) -> None:
        st.session_state[page.key("pd")] = {k: list(v) for k, v in preset.items()}

    with right:
        g = page.controls([ui.Number(name="pd_gamma", label="Discount γ", min=0.0, max=1.0,
                                     value=1.0, step=0.05)], container=st.container())
        st.caption("Start from")
        for i, (label, preset) in enumerate(PD_PRESETS.items()):
            st.button(label, key=page.key(f"pd_preset{i}"), on_click=load, args=(preset,),
                      width="stretch")
    # The arithmetic uses each input to the 6 significant digits it shows (an empty cell stays
    # empty, for the library to name).
    pd_table = tuple(tuple(float(f"{x:.6g}") if x == x else x for x in q.pd[c.name])
                     for c in PD_COLUMNS)
    try:
        worked = op.worked_per_decision(*pd_table, gamma=g.pd_gamma)
    except InputError as err:
        worked = None
        st.error(ui.chrome.escape_markdown(str(err)), icon=":material/error:")
    if worked is not None:
        for line in figs.per_decision_latex(worked):
            st.latex(line)
        st.caption("Inputs are used and shown to 6 significant digits; computed values are "
                   "shown rounded to 6 significant digits.")
        fig_pd = worked_chart(pd_table, g.pd_gamma)
        ui.chart(fig_pd, key="importance_sampling.worked")

    page.read_it(
        "**Blackjack:** mean squared error against the number of episodes, both axes "
        "logarithmic; bands are 95% intervals of the mean over runs (cut at the bottom of the "
        "axis). Ordinary IS follows its exact variance over n (dotted); weighted IS starts far "
        "lower and the two meet as n grows. **Infinite variance:** each thin orange line is one "
        "run of ordinary IS: rare long all-left episodes carry weights 2ᵏ and kick it up, and "
        "it keeps drifting between kicks however many episodes arrive. Weighted IS sits on 1 "
        "from the first episode it can weigh. **Chain:** the bias is the mean estimate minus the "
        "true v_π, band 95%; ordinary, per-decision and cross-fitted doubly robust hover at 0 "
        "while weighted IS drifts off it as the policies separate. MSE (log axis) grows "
        "fastest for ordinary IS. Kish's effective sample size falls roughly as n / E_b[ρ²] "
        "= n / (1 + δ²)ᵀ. The bars show why: at large δ a few episodes carry most of the "
        "weight.")
    page.try_this([
        "Predict which blackjack curve is lower after 10 episodes, and whether they still "
        "differ after 10,000. Then lower *Episodes per run* and *Runs* to see the early part "
        "more noisily.",
        "In the chain, set δ = 1 and T = 10. Predict what share of the episodes gets a "
        "non-zero weight, then check the bars and the effective sample size.",
        "Switch the critic to *true q_π (oracle)*, then to *none*. Which estimator does doubly "
        "robust become with no critic, and how far does its MSE fall with the oracle?",
    ])

    i0 = int(np.flatnonzero(ch.deltas == 0.0)[0])
    same = max(float(np.abs(ch.estimates[k][i0] - ch.on_policy).max())
               for k in ("ordinary", "weighted", "per_decision"))
    bias_o, _ = ch.bias("ordinary")
    se_o = ch.estimates["ordinary"][ch.chosen].std(ddof=1) / np.sqrt(ch.runs)
    bias_dr, _ = ch.bias("doubly_robust")
    se_dr = ch.estimates["doubly_robust"][ch.chosen].std(ddof=1) / np.sqrt(ch.runs)
    ex = ch.example
    board = off_policy_estimates(ex["ratios"], ex["rewards"], ex["q_taken"], ex["v_state"], 1.0)
    lib = [ch.estimates[k][ch.chosen, 0] for k in op.ESTIMATORS]
    se_bj = np.sqrt(bj.per_episode_variance / (bj.episodes * bj.runs))
    checks = []
    if book_state:
        var_target = op.blackjack_moment(bj.state, ratio_power=1, payoff=(1.0, 0.0, 1.0)) \
            - bj.true_value**2
        checks.append(ui.Check(
            "Blackjack: exact v_π (recursion) against the book's 100-million-episode estimate",
            value=bj.true_value, reference=op.BLACKJACK_BOOK_VALUE,
            tol=3 * float(np.sqrt(var_target / 1e8)), fmt=".5f",
            source=f"{BOOK}, Example 5.4"))
    checks += [
        ui.Check(f"Blackjack: ordinary IS is unbiased (mean of {bj.runs} final estimates vs "
                 "exact v_π, ±3 SE)", value=float(bj.final["ordinary"].mean()),
                 reference=bj.true_value, tol=3 * float(se_bj), fmt=".4f",
                 source=f"{BOOK}, §5.5"),
        ui.Check("Figure 5.4: largest gap between weighted IS and 1 after each run's first "
                 "episode that ends on left", value=iv.weighted_gap_after, reference=0.0, tol=0.0,
                 passed=bool(iv.weighted_gap_after == 0.0 and (iv.first_hit > 0).all()),
                 source=f"{BOOK}, Example 5.5"),
        ui.Check("Chain, π = b (δ = 0): largest gap between ordinary / weighted / per-decision "
                 "IS and the on-policy Monte-Carlo average (doubly robust adds its critic's "
                 "correction, of mean zero)", value=same, reference=0.0,
                 tol=1e-12, source=f"{BOOK}, §5.5 (ρ = 1)"),
        ui.Check(f"Chain, δ = {d:g}: ordinary IS is unbiased (mean over runs − v_π, ±3 SE)",
                 value=float(bias_o[ch.chosen]), reference=0.0, tol=3 * float(se_o), fmt=".4f",
                 source=f"{BOOK}, eq. 5.5"),
        ui.Check(f"Chain, δ = {d:g}: doubly robust is unbiased (mean over runs − v_π, ±3 SE)",
                 value=float(bias_dr[ch.chosen]), reference=0.0, tol=3 * float(se_dr),
                 fmt=".4f", source="Jiang & Li (2016), Theorem 1"),
        ui.Check(f"Chain, δ = {d:g}: mean importance weight (E_b[ρ] = 1, ±3 SE)",
                 value=ch.mean_weight, reference=1.0, tol=3 * ch.mean_weight_half / 1.96,
                 fmt=".4f", source=f"{BOOK}, §5.5"),
        ui.Check("Whiteboard version equals rlviz on this view (first data set, four "
                 "estimators)", value=float(np.max(np.abs(np.subtract(board, lib)))),
                 reference=0.0, tol=1e-12, source="rlviz.interview.whiteboard"),
    ]
    page.known_answer(checks)
    page.equations(figs.EQUATIONS)
    page.source(op.importance_ratio, op.ordinary_is, op.weighted_is, op.ordinary_is_running,
                op.weighted_is_running, op.per_decision_is, op.doubly_robust, op.kish_ess,
                op.blackjack_episodes, op.add_card, op.dealer_plays, op.blackjack_moment,
                op.one_state_episodes, op.sample_episodes, op.fit_models,
                op.finite_horizon_q, op.estimator_study, op.worked_per_decision)

    shown = {"blackjack_mse": fig_bj, "figure_5_4": fig_iv, **charts}
    if worked is not None:
        shown["worked_episode"] = fig_pd
    page.export(figures=shown, data=lambda: figs.export_tables(bj, iv, ch, worked))
