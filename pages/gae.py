import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import pandas as pd
import streamlit as st

from rlviz import returns, ui
from rlviz.figures import returns as figs

INTRO = (
    "GAE mixes every n-step advantage with weights (1 − λ)λ^(n−1): λ = 0 is the one-step TD "
    "error, λ = 1 the Monte-Carlo return minus the critic. Edit the trajectory and move λ, then "
    "see on a random walk how the best λ depends on how wrong the critic is."
)
COLUMNS = [
    ui.TableColumn("r", "r_t", help="Reward after acting in s_t"),
    ui.TableColumn("v", "V(s_t)", help="The critic's value of s_t"),
    ui.TableColumn("done", "terminal", kind="bool", help="s_t+1 is terminal: no bootstrap"),
    ui.TableColumn("trunc", "time limit", kind="bool",
                   help="Truncated: a time limit cut the episode at s_t+1, which still has a "
                        "value to bootstrap from"),
    ui.TableColumn("v_cut", "V(cut)",
                   help="V(s_t+1), the value of the state where the time limit cut the episode "
                        "(read on truncated rows only)"),
]
WALKS = {5: "5 states (S&B Ex. 6.2)", 19: "19 states (S&B Ex. 7.1)"}
GRID = tuple(round(0.05 * i, 2) for i in range(21))


def as_table(ex: returns.Example) -> dict[str, list]:
    return {"r": list(ex.rewards), "v": list(ex.values), "done": list(ex.dones),
            "trunc": list(ex.truncated), "v_cut": list(ex.truncated_values)}


@ui.cached(max_entries=64)
def explain(table: tuple, last_value: float, gamma: float, lam: float, step: int,
            as_terminal: bool):
    r, v, done, trunc, cut = table
    flagged = returns.breakdown(r, v, gamma=gamma, lam=lam, last_value=last_value, dones=done,
                                truncated=trunc, truncated_values=cut, step=step)
    if not as_terminal:
        return flagged, None
    ends = [d or t for d, t in zip(done, trunc, strict=True)]
    return returns.breakdown(r, v, gamma=gamma, lam=lam, last_value=last_value, dones=ends,
                             step=step), flagged


@ui.cached(max_entries=16)
def study(walk: int, gamma: float, bias: float, noise: float, episodes: int, seed: int,
          lams: tuple) -> returns.StudyResult:
    left, right = returns.SUTTON_BARTO_WALKS[walk]
    return returns.bias_variance_study(
        n_states=walk, left_reward=left, right_reward=right, gamma=gamma, lams=lams,
        critic_bias=bias, critic_noise=noise, n_episodes=episodes, seed=seed)


@ui.cached_figures()
def trajectory_figures(table: tuple, last_value: float, gamma: float, lam: float, step: int,
                       as_terminal: bool):
    b, flagged = explain(table, last_value, gamma, lam, step, as_terminal)
    return figs.advantages_figure(b, flagged=flagged), figs.weights_figure(b)


@ui.cached_figures()
def study_figures(args: tuple, lam: float):
    res, mine = study(*args, GRID), study(*args, (lam,))
    return figs.study_figure(res, chosen=mine), figs.critic_figure(res)


with ui.page("gae", intro=INTRO) as page:
    p = page.controls([
        ui.FloatSlider(name="lam", label="λ (GAE)", min=0.0, max=1.0, value=0.95, step=0.01),
        ui.FloatSlider(name="gamma", label="Discount γ", min=0.0, max=1.0, value=0.99, step=0.01),
        ui.Toggle(name="as_terminal", label="Treat truncations as terminations",
                  help="The classic bug: a time limit read as the end of the world, so the "
                       "return is not bootstrapped from the cut state's value."),
        ui.Section("Bias–variance study", expanded=True, controls=[
            ui.Choice(name="walk", label="Random walk", options=list(WALKS), value=19,
                      labels=WALKS, widget="segmented"),
            ui.FloatSlider(name="bias", label="Critic bias b", min=-0.5, max=0.5, value=0.1,
                           step=0.05, help="Added to every state's true value"),
            ui.FloatSlider(name="noise", label="Critic noise σ", min=0.0, max=0.5, value=0.2,
                           step=0.05, help="Spread of a fixed random error per state"),
            ui.SelectSlider(name="episodes", scales_work=True, label="Sampled episodes",
                            options=[500, 1000, 2000, 5000, 10000, 20000], value=5000),
            ui.Seed(),
        ]),
    ])

    page.section("A trajectory, three advantages")
    left, right = st.columns([5, 2], gap="medium")  # room for every column of the table
    default = returns.EXAMPLES["goal_and_time_limit"]
    with left:
        q = page.controls([ui.Table(
            name="traj", label="Edit cells, add or delete rows (at most 64). V(cut) is read "
            "only on rows with a time limit.", columns=COLUMNS, value=as_table(default),
            max_rows=64, height=463)], container=st.container())

    def load(ex: returns.Example) -> None:
        st.session_state[page.key("traj")] = as_table(ex)
        st.session_state[page.key("v_last")] = ex.last_value

    with right:
        last = page.controls([ui.Number(
            name="v_last", label="V(s_T), the state after the last row", min=-1e6, max=1e6,
            value=default.last_value, step=0.05)], container=st.container())
        st.caption("Start from")
        for i, ex in enumerate([*returns.EXAMPLES.values(), returns.random_example(p.seed)]):
            st.button(ex.label, key=page.key(f"preset{i}"), on_click=load, args=(ex,),
                      width="stretch")
        st.caption("**terminal**: s_t+1 ends the episode and is worth 0.  \n**time limit**: "
                   "the episode was cut at s_t+1, which is worth V(cut): bootstrap from it.")
    adv_box = st.container()
    rows = len(q.traj["r"])
    weights_box = st.container()
    with weights_box:
        page.section("GAE is a λ-weighted mix of n-step advantages")
        s = page.controls([ui.IntSlider(name="step", label="Split the advantage of step t",
                                        min=0, max=max(rows - 1, 1), value=0)],
                          container=st.container())
    step = min(s.step, max(rows - 1, 0))
    table = tuple(tuple(q.traj[c.name]) for c in COLUMNS)
    b, flagged = explain(table, last.v_last, p.gamma, p.lam, step, p.as_terminal)
    fig_adv, fig_w = trajectory_figures(table, last.v_last, p.gamma, p.lam, step,
                                        p.as_terminal)
    with adv_box:
        ui.chart(fig_adv, key="gae.advantages")
        if flagged is not None:
            change = abs(b.advantages - flagged.advantages).max()
            st.caption(f"Reading the truncations as terminations moves the advantages by up to "
                       f"{change:.4f}: diamonds show the correct, bootstrapped values.")

    with weights_box:
        ui.chart(fig_w, key="gae.weights")

    page.section("Bias and variance on a random walk")
    args = (p.walk, p.gamma, p.bias, p.noise, p.episodes, p.seed)
    res, mine = study(*args, GRID), study(*args, (p.lam,))
    st.caption(f"{res.n_episodes:,} episodes, {res.n_steps:,} steps. Error of each step's GAE "
               "against the true advantage Q(s_t, a_t) − V̂(s_t), averaged over (s, a).")
    c1, c2 = st.columns([3, 2], gap="large")
    fig_study, fig_critic = study_figures(args, p.lam)
    with c1:
        ui.chart(fig_study, key="gae.study")
    with c2:
        ui.chart(fig_critic, key="gae.critic")

    page.read_it(
        "**Top:** bars are the advantage of each step under three estimators; dashed lines mark "
        "episode ends (red: terminal, no bootstrap; amber: time limit, bootstrap from the cut "
        "state). **Middle:** the weight each n-step advantage gets at the chosen step; the last "
        "bar carries all the remaining mass λ^(N−1), on the longest one: the return to the "
        "episode's end (bootstrapped only at a time limit or the end of the rows). "
        "**Bottom:** λ = 0 is biased whenever the critic is wrong but has no variance here "
        "(moves are the only randomness); λ = 1 is unbiased and noisy. The star is the best λ."
    )
    page.try_this([
        "Set λ = 0 and then λ = 1: which bars do the GAE bars copy? Predict before you move it.",
        "Load *Cut by a time limit* and turn on *Treat truncations as terminations*. Which "
        "steps change, and why do earlier steps change less?",
        "In the study set the critic bias and noise to 0. Where is the best λ? Now raise the "
        "bias to 0.3: predict which way the star moves.",
    ])
    page.known_answer([
        ui.Check("λ = 0: largest gap between A_t and δ_t",
                 value=float(abs(b.td_advantages - b.td_errors).max()), reference=0.0,
                 tol=1e-12, source="Schulman et al. (2016), eq. 17"),
        ui.Check("λ = 1: largest gap between A_t and G_t − V(s_t)",
                 value=float(abs(b.mc_advantages - (b.returns - b.values)).max()), reference=0.0,
                 tol=1e-12, source="Schulman et al. (2016), eq. 18"),
        ui.Check(f"Σ wₙ Â(n) at step {step} equals GAE", value=float(b.weights @
                 b.n_step_advantages), reference=float(b.advantages[step]), tol=1e-12,
                 source="Sutton & Barto (2018), eq. 12.3"),
        ui.Check(f"Mean episode length of the {p.walk}-state walk", value=res.mean_length,
                 reference=returns.expected_episode_length(p.walk), tol=4 * res.length_se,
                 source="gambler's ruin, k(n+1−k): Feller (1968), §XIV.3"),
    ])
    page.equations([
        ("TD error; V(s_t+1) is 0 after a termination and the cut state's value after a "
         "truncation", r"\delta_t = r_t + \gamma\,V(s_{t+1}) - V(s_t)"),
        ("GAE, summed to the end of the episode (N_t steps) and as a backward recursion",
         r"\hat A_t = \sum_{l=0}^{N_t-1} (\gamma\lambda)^l\,\delta_{t+l}, \qquad "
         r"\hat A_t = \delta_t + \gamma\lambda\,(1-\mathrm{end}_t)\,\hat A_{t+1}"),
        ("The n-step advantage and the λ-mix", r"\hat A^{(n)}_t = \sum_{k=0}^{n-1}\gamma^k "
         r"r_{t+k} + \gamma^n V(s_{t+n}) - V(s_t), \qquad \hat A_t = (1-\lambda)\sum_{n=1}^"
         r"{N_t-1}\lambda^{n-1}\hat A^{(n)}_t + \lambda^{N_t-1}\hat A^{(N_t)}_t"),
        ("The study: error against the true advantage, split over state-action pairs g",
         r"\varepsilon_t = \hat A_t - \big(Q(s_t,a_t) - \hat V(s_t)\big), \quad "
         r"\mathrm{MSE} = \underbrace{\textstyle\sum_g p_g\,\bar\varepsilon_g^{\,2}}"
         r"_{\text{bias}^2} + \underbrace{\textstyle\sum_g p_g\,\mathrm{Var}_g(\varepsilon)}"
         r"_{\text{variance}}"),
    ])
    page.source(returns._backward_sums, returns.td_error, returns.gae, returns.breakdown,
                returns.bias_variance_study, returns._discounted_sum)
    page.export(
        figures={"advantages": fig_adv, "weights": fig_w, "study": fig_study,
                 "critic": fig_critic},
        data=lambda: {"trajectory": pd.DataFrame({
            "t": range(rows), **q.traj, "delta": b.td_errors, f"gae_{p.lam:g}": b.advantages,
            "gae_0": b.td_advantages, "gae_1": b.mc_advantages, "G": b.returns,
            "lambda_return": b.lambda_returns, "steps_to_end": b.horizons}), "study": pd.DataFrame({
            "lam": res.lams, "bias2": res.bias2, "variance": res.variance, "mse": res.mse})},
    )
