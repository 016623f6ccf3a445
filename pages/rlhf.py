import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import numpy as np
import pandas as pd
import streamlit as st

from rlviz import preferences as pref
from rlviz import ui
from rlviz.figures import preferences as figs

INTRO = (
    "A reward model fitted to pairwise preferences, the KL-regularised optimum π* ∝ π_ref·e^(r/β), "
    "DPO and a KL-penalised policy gradient, on one prompt whose candidate answers (64 of them "
    "at first) can all be enumerated, so every KL and expected reward is exact. Push the learned "
    "reward hard (small β, large n) and watch the proxy keep rising while the hidden gold "
    "reward peaks and falls."
)
BETAS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
NS = [2**k for k in range(11)]
PAIRS = [25, 50, 100, 200, 500, 1000, 2000, 5000]
DEGREES = {1: "1: linear", 2: "2: quadratic", 3: "3: cubic", 4: "4", 5: "5", 6: "6"}
POLICIES = {"features": "on the RM's features", "table": "one logit per response"}
GAO = figs.GAO


@ui.cached(max_entries=16, show_spinner="Sampling pairs and fitting the reward model…")
def data(k, degree, width, pairs, flip, seed):
    return pref.preference_data(k, degree, width, pairs, flip, seed)


@ui.cached(max_entries=32, show_spinner="Training DPO and the policy gradient…")
def policies(args, beta, n, policy, dpo_steps, pg_steps, batch, runs):
    return pref.alignment(data(*args), beta=beta, n=n, policy=policy, dpo_steps=dpo_steps,
                          pg_steps=pg_steps, batch=batch, runs=runs, seed=args[-1])


@ui.cached(max_entries=32, show_spinner="Checking against a numerical optimiser…")
def verification(args, settings):
    return pref.verify(data(*args), policies(args, *settings))


# The data, policies and verification ride along unhashed: their arguments identify them.
@ui.cached(max_entries=32, show_spinner=False, copy=True)
def policy_table(args, settings, _run, _d):
    return figs.policy_table(_run, _d)


@ui.cached(max_entries=32, show_spinner=False)
def known_answers(args, settings, worked, _d, _run, _v):
    return figs.known_answers(_d, _run, _v, worked=worked)


@ui.cached_figures()
def view_figures(args, settings):
    d, run = data(*args), policies(args, *settings)
    return {"reward_model": figs.reward_figure(d), "policies": figs.policies_figure(run, d),
            "overoptimisation": figs.frontier_figure(d, run),
            "training": figs.training_figure(run, d),
            "implicit_reward": figs.implicit_reward_figure(run, d)}


def rounded(x: float) -> float:
    return round(float(x), 3)  # what the boxes show (3 decimals) is what the arithmetic uses


with ui.page("rlhf", intro=INTRO) as page:
    p = page.controls([
        ui.SelectSlider(name="beta", label="KL coefficient β", options=BETAS, value=0.2,
                        labels=lambda b: f"{b:g}", help="Small β lets the policy move far "
                        "from π_ref to chase the reward model."),
        ui.SelectSlider(name="n", label="Best-of-n: n", options=NS, value=16),
        ui.Section("Preference data", expanded=True, controls=[
            ui.SelectSlider(name="pairs", label="Labelled pairs", options=PAIRS, value=200,
                            scales_work=True),
            ui.FloatSlider(name="flip", label="Label flip rate", min=0.0, max=0.5, value=0.0,
                           step=0.05, help="Share of labels flipped after the Bradley–Terry "
                           "draw on the gold reward (a careless labeller)."),
            ui.FloatSlider(name="width", label="π_ref's spread σ (coverage)", min=0.05,
                           max=0.3, value=0.1, step=0.01),
            ui.SelectSlider(name="responses", label="Responses K", options=[16, 32, 64, 128,
                                                                             256], value=64,
                            scales_work=True),
        ]),
        ui.Section("Reward model and policies", expanded=True, controls=[
            ui.Choice(name="degree", label="Reward model: polynomial degree in length",
                      options=list(DEGREES), value=1, labels=DEGREES),
            ui.Choice(name="policy", label="DPO and PG policy", options=list(POLICIES),
                      value="features", labels=POLICIES, widget="segmented"),
        ]),
        ui.Section("Training", controls=[
            ui.SelectSlider(name="dpo_steps", label="DPO steps (Adam)",
                            options=[250, 500, 1000], value=500, scales_work=True),
            ui.SelectSlider(name="pg_steps", label="Policy-gradient steps (Adam)",
                            options=[100, 200, 300, 500], value=300,
                            scales_work=True),
            ui.SelectSlider(name="batch", label="PG samples per step", options=[8, 16, 32, 64,
                                                                                 128, 256],
                            value=64, scales_work=True),
            ui.IntSlider(name="runs", label="PG runs (seeds)", min=1, max=16, value=8,
                         scales_work=True),
        ]),
        ui.Seed(),
    ])
    args = (p.responses, p.degree, p.width, p.pairs, p.flip, p.seed)
    settings = (p.beta, p.n, p.policy, p.dpo_steps, p.pg_steps, p.batch, p.runs)
    d, run = data(*args), policies(args, *settings)
    v = verification(args, settings)
    shown = view_figures(args, settings)
    frontier, table, space = d.frontier, run.table(d), d.space

    page.section("The pairs and the reward model")
    ui.chart(shown["reward_model"], key="rlhf.reward_model")
    st.caption(
        f"{d.pairs.n:,} pairs from π_ref, labelled by Bradley–Terry on the gold reward"
        f"{f' with {p.flip:.0%} of labels flipped' if p.flip else ''}; grey: responses in no "
        f"pair. Expected accuracy on fresh pairs: reward model {d.accuracy:.1%}, the gold "
        f"reward itself {d.ceiling:.1%} (the labels are noisy). The reward model orders pairs "
        f"as gold does {v.agree_ref:.1%} of the time on pairs from π_ref, {v.agree_star:.1%} on "
        f"pairs from π* at β = {p.beta:g}.")

    page.section(f"The policies at β = {p.beta:g}, and best-of-{p.n}")
    ui.chart(shown["policies"], key="rlhf.policies")
    st.caption(figs.policies_caption(run, v))
    policies_table = policy_table(args, settings, run, d)
    st.dataframe(policies_table, hide_index=True, width="stretch",
                 column_config={c: st.column_config.NumberColumn(format="%.4f")
                                for c in policies_table.columns[1:]})

    page.section("Over-optimisation: proxy and gold reward against KL")
    ui.chart(shown["overoptimisation"], key="rlhf.overoptimisation")
    peak = frontier.peak
    st.caption(
        f"Along the β sweep the gold reward peaks at β ≈ {frontier.betas[peak]:.2g} "
        f"(√KL = {frontier.sweep.sqrt_kl[peak]:.2f}, gold {frontier.sweep.gold[peak]:+.3f}); "
        f"at β = {p.beta:g} π* has √KL = {float(table['closed_form'].sqrt_kl):.2f}, proxy "
        f"{float(table['closed_form'].proxy):+.3f}, gold {float(table['closed_form'].gold):+.3f}."
        f" Best-of-{p.n}: exact KL {run.bon.kl:.4f} nats against the formula log n − (n−1)/n = "
        f"{run.bon.kl_bound:.4f} (an upper bound on a finite space). Dotted: the functional "
        f"forms of {GAO} fitted to each gold curve.")

    left, right = st.columns([3, 2], gap="medium")
    with left:
        page.section("Training: DPO and the KL-penalised policy gradient")
        ui.chart(shown["training"], key="rlhf.training")
    with right:
        page.section("DPO's implicit reward")
        ui.chart(shown["implicit_reward"], key="rlhf.implicit_reward")
        st.caption(f"β·log π_DPO/π_ref against r̂, each shifted (rewards are known only up to a "
                   f"constant). Total variation between DPO's policy and π*: "
                   f"{figs.distance(v.tv_dpo)}.")

    page.section("One loss by hand")
    st.markdown("Type the numbers of one pair; every step uses exactly the values shown.")
    bt_col, dpo_col = st.columns(2, gap="medium")
    with bt_col, st.container(border=True):
        st.markdown("**Bradley–Terry loss** (reward model)")
        q = page.controls([
            ui.Number(name="bt_w", label="r(y_w), the chosen response's reward", min=-100.0,
                      max=100.0, value=1.0, step=0.1, format="%.3f"),
            ui.Number(name="bt_l", label="r(y_l), the rejected one's", min=-100.0, max=100.0,
                      value=0.0, step=0.1, format="%.3f")], container=st.container())
        r_w, r_l = rounded(q.bt_w), rounded(q.bt_l)
        for line in figs.worked_bt(r_w, r_l, float(pref.bradley_terry_loss(r_w, r_l))):
            st.latex(line)
    with dpo_col, st.container(border=True):
        st.markdown("**DPO loss** (log-probabilities; at π = π_ref it is log 2 = 0.693147)")
        a, b = st.columns(2)
        logs = [page.controls([ui.Number(name=name, label=label, min=-50.0, max=0.0,
                                         value=value, step=0.1, format="%.3f")], container=col)
                [name] for name, label, value, col in (
                    ("dpo_w", "log π(y_w)", -1.0, a), ("dpo_l", "log π(y_l)", -2.0, a),
                    ("dpo_rw", "log π_ref(y_w)", -1.5, b), ("dpo_rl", "log π_ref(y_l)", -1.5, b))]
        q2 = page.controls([ui.Number(name="dpo_beta", label="β", min=0.001, max=10.0,
                                      value=0.1, step=0.05, format="%.3f")],
                           container=st.container())
        lw, ll, rw, rl = (rounded(x) for x in logs)
        beta_w = rounded(q2.dpo_beta)
        for line in figs.worked_dpo(lw, ll, rw, rl, beta_w,
                                    float(pref.dpo_loss(lw, ll, rw, rl, beta=beta_w))):
            st.latex(line)

    page.read_it(
        "**Rewards:** the hidden gold reward (amber) rises with length up to the dotted line and "
        "falls after it; the reward model (teal) is fitted to pairs from π_ref, so it is right "
        "where π_ref writes and extrapolates its trend beyond. **Policies:** π* tilts π_ref by "
        "e^(r̂/β); DPO (from the pairs alone) and the policy gradient (from samples scored by r̂) "
        "aim at the same π*. **Over-optimisation:** each curve runs from π_ref (√KL = 0) to ever "
        "harder optimisation of r̂; dashed is what the reward model promises, solid what the gold "
        "reward delivers; the black dotted line is the best gold reward any policy gets at that "
        "KL. **Paired randomness:** the reward model and DPO learn from the same pairs, and "
        "each policy-gradient run draws the same random numbers at every β, so what changes "
        "with a control is the algorithm's input, not the luck. "
        "**Training:** bands are 95% t-intervals over the runs. PPO would add clipping, "
        "inactive here with one gradient step per batch, and a critic, whose work as a baseline "
        "the leave-one-out mean does."
    )
    page.try_this([
        "Predict where the gold reward of π* goes as β falls from 5 to 0.01, then move β. Does "
        "the proxy ever stop rising?",
        "Set the reward model's degree to 2. Does the gold curve still turn down, and why does "
        "the grey band matter less now? Then widen π_ref's spread.",
        "Switch the DPO and PG policy to one logit per response. Which responses does DPO leave "
        "at π_ref's odds, and why does the policy gradient now fall short of π*?",
    ])
    checks = known_answers(args, settings, (lw, ll, rw, rl, beta_w), d, run, v)
    page.known_answer([ui.Check(**c) for c in checks])
    page.equations(figs.EQUATIONS)
    page.source(pref.dpo_loss, pref.bradley_terry_loss, pref.sampled_kl, pref.best_of_n,
                pref.kl_optimal_policy, pref.kl_penalised_advantages, pref.train_dpo,
                pref.train_policy_gradient, pref.fit_reward_model)
    page.export(
        figures=shown,
        data=lambda: {
            "responses": pd.DataFrame({
                "length": space.x, "gold": space.gold, "reward_model": d.proxy,
                "pi_ref": space.p_ref, "in_pairs": d.counts,
                **{f"pi_{name}": np.exp(lp) for name, lp in run.logp.items()}}),
            "pairs": pd.DataFrame({"chosen": d.pairs.chosen, "rejected": d.pairs.rejected}),
            "policies": policies_table,
            "overoptimisation": pd.DataFrame({
                "beta": frontier.betas, "sqrt_kl": frontier.sweep.sqrt_kl,
                "proxy": frontier.sweep.proxy, "gold": frontier.sweep.gold}),
            "best_of_n": pd.DataFrame({
                "n": frontier.ns, "sqrt_kl": frontier.bon.sqrt_kl,
                "kl_bound": frontier.bon_kl_bound, "proxy": frontier.bon.proxy,
                "gold": frontier.bon.gold}),
        },
    )
