import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import math

import pandas as pd
import streamlit as st

from rlviz import ppo, ui
from rlviz.figures import ppo as figs

INTRO = (
    "PPO maximises min(r·A, clip(r, 1−ε, 1+ε)·A): once the probability ratio r has moved past "
    "the trust region in the direction the advantage wants, the objective goes **flat** and its "
    "gradient is exactly zero. Below, see that surface, ask any point why its gradient is what "
    "it is, and watch a live policy train for several epochs on one batch with and without the "
    "clip."
)
LRS = [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
MU = {"mu": [1.0, 0.5, 0.0, -0.5, -1.0]}
VIEWS = {"heatmap": "Heatmap of L", "gradient": "Heatmap of ∂L/∂r", "3d": "3-D surface"}
MINIBATCHES = [4, 8, 16, 32, 64, 128, 256]
MAX_EPOCHS, MAX_STEPS = 50, 2000  # 2000 minibatch steps of the three runs take about a second


@ui.cached(max_entries=64)
def surface(eps: float) -> ppo.ClipSurface:
    return ppo.clip_surface(ppo.ratio_grid(), ppo.advantage_grid(), epsilon=eps)


@ui.cached(max_entries=64)
def slice_pair(eps: float) -> ppo.ClipSurface:
    return ppo.clip_surface(ppo.ratio_grid(400, low=0.005), [1.0, -1.0], epsilon=eps)


@ui.cached(max_entries=32)
def toy(mu: tuple[float, ...], **settings) -> ppo.ToyResult:
    return ppo.run_toy(mu, **settings)


@ui.cached(max_entries=64, show_spinner=False)
def surface_checks(eps: float) -> ppo.SurfaceChecks:
    return ppo.surface_checks(surface(eps))


@ui.cached_figures()
def surface_charts(eps: float, r: float, a: float, view: str):
    point = ppo.explain_point(r, a, epsilon=eps)
    surf = surface(eps)
    main = (figs.surface_3d(surf, point=point) if view == "3d" else
            figs.surface_heatmap(surf, point=point, gradient=view == "gradient"))
    return main, figs.slices(slice_pair(eps), point=point)


@ui.cached_figures()
def ratio_chart(mu: tuple[float, ...], settings: tuple):
    return figs.ratio_trajectories(toy(mu, **dict(settings)))


@ui.cached_figures()
def epoch_charts(mu: tuple[float, ...], settings: tuple, epoch: int):
    res = toy(mu, **dict(settings))
    return (figs.batch_on_surface(res, epoch), figs.kl_estimates(res, epoch=epoch),
            figs.toy_summary(res, epoch))


@ui.cached_figures()
def value_chart(eps: float):
    return figs.value_loss(ppo.value_loss_slice(value_old=0.0, target=1.0, epsilon=eps))


with ui.page("ppo_clip", intro=INTRO) as page:
    def clamp(name, most, top):
        """Hold a control (or a link's value for it, up to ``top``) to a limit the others set."""
        key = page.key(name)
        try:
            if most < float(st.session_state.get(key, st.query_params.get(name))) <= top:
                st.session_state[key] = most
        except (TypeError, ValueError):
            pass

    b = page.controls([
        ui.FloatSlider(name="eps", label="Clip range ε", min=0.05, max=0.5, value=0.2, step=0.01,
                       help="The trust region is 1 − ε ≤ r ≤ 1 + ε."),
        ui.SelectSlider(name="lr", label="Learning rate", options=LRS, value=0.05),
        ui.SelectSlider(name="batch", label="Batch size N", options=[16, 32, 64, 128, 256],
                        value=64, scales_work=True),
    ])
    clamp("minibatch", b.batch, MINIBATCHES[-1])
    sizes = [m for m in MINIBATCHES if m <= b.batch]
    m = page.controls([ui.SelectSlider(name="minibatch", label="Minibatch size", options=sizes,
                                       value=min(16, b.batch), help="At most the batch size.")])
    per_epoch = math.ceil(b.batch / m.minibatch)
    most = min(MAX_EPOCHS, MAX_STEPS // per_epoch)
    clamp("epochs", most, MAX_EPOCHS)
    p = page.controls([
        ui.IntSlider(name="epochs", label="Epochs on the batch", min=1, max=most, value=10,
                     help=f"At most {most} here: {per_epoch} minibatch steps an epoch, and "
                     f"a run takes at most {MAX_STEPS:,} steps.", scales_work=True),
        ui.Toggle(name="norm", label="Normalise advantages", value=True,
                  help="Standardise the batch's advantages to mean 0, standard deviation 1."),
        ui.Seed(),
        ui.Section("KL-penalty run", [
            ui.SelectSlider(name="beta", label="Initial β", options=[0.1, 0.3, 1.0, 3.0, 10.0],
                            value=1.0),
            ui.Toggle(name="adaptive", label="Adapt β after each epoch", value=True),
            ui.SelectSlider(name="kl_target", label="KL target d_targ",
                            options=[0.003, 0.01, 0.03, 0.1], value=0.01),
        ]),
        ui.Section("Rewards and optimiser", [
            ui.FloatSlider(name="noise", label="Reward noise σ", min=0.0, max=3.0, value=1.0,
                           step=0.1),
            ui.Choice(name="opt", label="Optimiser", options=["adam", "sgd"], value="adam",
                      labels={"adam": "Adam (as in the paper)", "sgd": "Plain SGD"},
                      widget="radio"),
        ]),
    ])
    p = ui.Params({**b, **m, **p})
    eps = round(p.eps, 2)

    page.section("The clipped objective L(r, A)")
    left, right = st.columns([3, 2], gap="large")
    with right:
        st.markdown("**Explain this point**")
        q = page.controls([
            ui.FloatSlider(name="r", label="Ratio r", min=0.01, max=2.0, value=1.5, step=0.01),
            ui.FloatSlider(name="a", label="Advantage A", min=-1.0, max=1.0, value=1.0, step=0.05),
        ], container=st.container())
        point = ppo.explain_point(round(q.r, 2), round(q.a, 2), epsilon=eps)
        m1, m2 = st.columns(2)
        m1.metric("L(r, A)", f"{point.objective:.4g}")
        m2.metric("∂L/∂r (autograd)", f"{point.grad:.4g}")
        picks = {"both": "a tie: both terms are equal", "clipped": "the clipped term",
                 "unclipped": "the unclipped term"}[point.branch]
        st.markdown(f"r·A = {point.unclipped_term:.4g} and clip(r, {1 - eps:g}, {1 + eps:g})·A = "
                    f"{point.clipped_term:.4g}, so the min picks **{picks}**.\n\n"
                    f"**{point.region.capitalize()}.** {point.reason}")
    with left:
        view = page.controls([ui.Choice(name="view", label="View", options=list(VIEWS),
                                        value="heatmap", labels=VIEWS, widget="segmented")],
                             container=st.container()).view
        main, slice_fig = surface_charts(eps, round(q.r, 2), round(q.a, 2), view)
        ui.chart(main, key="ppo_clip.chart.surface")
    ui.chart(slice_fig, key="ppo_clip.chart.slices")

    page.section("The live toy: several epochs on one batch")
    with st.expander("The bandit: true mean reward μ(a) of each action (2 to 8 rows)"):
        table = page.controls([ui.Table(name="mu", label="", columns=[ui.TableColumn("mu", "μ(a)")],
                                        value=MU, max_rows=8)], container=st.container()).mu
    minibatch = p.minibatch
    settings = tuple(dict(
        batch_size=p.batch, epochs=p.epochs, minibatch_size=minibatch, lr=p.lr, epsilon=eps,
        beta=p.beta, adaptive_beta=p.adaptive, kl_target=p.kl_target,
        normalize_advantages=p.norm, reward_noise=p.noise, optimizer=p.opt, seed=p.seed,
    ).items())
    mu = tuple(table["mu"])
    res = toy(mu, **dict(settings))
    st.caption(f"A uniform softmax policy over {res.true_rewards.size} actions drew {p.batch} "
               f"samples; each method then took {res.steps_per_epoch} minibatch steps per epoch "
               f"for {p.epochs} epochs on that same batch. Every sample of an action shares its "
               "ratio, so each line below is one action (thicker: more samples).")
    ratio_fig = ratio_chart(mu, settings)
    ui.chart(ratio_fig, key="ppo_clip.chart.ratios")
    shown, last = page.key("epoch"), page.key("_last_epochs")
    before = st.session_state.get(last)
    if shown in st.session_state and before not in (None, p.epochs):
        # A new maximum makes Streamlit start the slider afresh: carry the epoch over, and keep
        # showing the final one if it was showing the final one.
        old = st.session_state[shown]
        st.session_state[shown] = p.epochs if old == before else min(old, p.epochs)
    st.session_state[last] = p.epochs
    epoch = page.controls([ui.IntSlider(name="epoch", label="Epoch shown below", min=0,
                                        max=p.epochs, value=p.epochs)],
                          container=st.container()).epoch
    batch_fig, kl_fig, summary_fig = epoch_charts(mu, settings, epoch)
    ui.chart(batch_fig, key="ppo_clip.chart.batch")
    ui.chart(kl_fig, key="ppo_clip.chart.kl")
    ui.chart(summary_fig, key="ppo_clip.chart.summary")
    with st.expander("The same clip on the critic: the clipped value loss"):
        value_fig = value_chart(eps)
        ui.chart(value_fig, key="ppo_clip.chart.value")
        st.caption("One sample with V_old = 0 and target R = 1, clipped with the same ε. Once V "
                   "has moved more than ε toward the target, the clipped branch is the larger "
                   "and the gradient is zero: the critic is held near V_old just like the policy.")

    page.read_it(
        "- **Surface.** Colour is L(r, A); hatching marks where ∂L/∂r = 0. Top right (A > 0, "
        "r > 1 + ε) and bottom left (A < 0, r < 1 − ε) are flat: the policy already moved the way "
        "the advantage asked, by the full ε. The other two corners keep the unclipped slope, so a "
        "step that went the *wrong* way is always pulled back: the min is a pessimistic bound.\n"
        "- **Slices.** Schulman et al.'s Fig. 1: dashed is r·A, solid is L, the band is the "
        "trust region.\n"
        "- **Ratios.** Blue lines are actions the batch says are good, red bad. Under the clip "
        "they level off just past the band (the bad actions are pushed down to 1 − ε and "
        "their freed probability flows to the good ones; Adam's momentum coasts a few steps "
        "after the gradient vanishes); unclipped they run off.\n"
        "- **KL.** k3 tracks the exact KL closely; k1 has the same mean but more variance, and "
        "can dip below zero.\n"
        "- **Return.** In this one-state bandit the surrogate's only error is the batch's noise, "
        "so the runaway often *helps* J(π) here. In a real task the advantages were estimated "
        "for π_old and go stale as π moves away: that is what the trust region protects."
    )
    page.try_this([
        "Predict the clip fraction after 10 epochs, then double the epochs. Does the clipped "
        "policy move further? Does the unclipped one?",
        "Set the reward noise to 0, turn off advantage normalisation and switch to plain SGD "
        "with learning rate 1: the clipped run freezes after one epoch (every sample flat or "
        "with A = 0). Switch back to Adam: its momentum keeps drifting past the edge.",
        "Set the reward noise σ to 3 and try seeds 11, 13 and 16: the batch now misleads, and "
        "the unclipped run bets everything on it. What happens to J(π) under the clip?",
    ])
    checks = surface_checks(eps)
    page.known_answer([
        ui.Check("L(r, A) = r·A inside [1 − ε, 1 + ε] (max gap)", value=checks.inside_gap,
                 reference=0.0, source="Schulman et al. (2017), eq. 7"),
        ui.Check("∂L/∂r in the flat regions (largest autograd value)", value=checks.flat_grad,
                 reference=0.0, source="Schulman et al. (2017), Fig. 1"),
        ui.Check("autograd − closed-form ∂L/∂r (max gap)", value=checks.analytic_gap,
                 reference=0.0, source="eq. 7 differentiated by hand"),
        ui.Check("loss at r = 1, advantages (1, −1, 0.5, −0.5)", value=checks.cancel_loss,
                 reference=0.0, source="−mean A = 0"),
    ])
    page.equations([
        ("Probability ratio (Schulman et al., 2017, eq. 6)",
         r"r_t(\theta)=\frac{\pi_\theta(a_t\mid s_t)}{\pi_{\theta_\text{old}}(a_t\mid s_t)},\qquad "
         r"L^{CPI}(\theta)=\hat{\mathbb{E}}_t\left[r_t(\theta)\,\hat A_t\right]"),
        ("Clipped surrogate (eq. 7)",
         r"L^{CLIP}(\theta)=\hat{\mathbb{E}}_t\left[\min\left(r_t\hat A_t,\;"
         r"\operatorname{clip}(r_t,1-\epsilon,1+\epsilon)\,\hat A_t\right)\right]"),
        ("Its gradient; at the kinks r = 1 ± ε autograd returns the slope from inside the range "
         "(torch.clamp passes the gradient at its bounds, torch.minimum splits a tie evenly)",
         r"\frac{\partial L}{\partial r}=\begin{cases}0 & A>0,\ r>1+\epsilon\ \text{ or }\ "
         r"A<0,\ r<1-\epsilon\\ A & \text{otherwise}\end{cases}"),
        ("KL penalty (eq. 8) and the adaptive β of section 4, with d = KL after the update",
         r"L^{KLPEN}=\hat{\mathbb{E}}_t\left[r_t\hat A_t-\beta\,\mathrm{KL}[\pi_{\theta_\text{old}}"
         r"(\cdot\mid s_t),\pi_\theta(\cdot\mid s_t)]\right],\quad \beta\leftarrow\begin{cases}"
         r"\beta/2 & d<d_\text{targ}/1.5\\ 2\beta & d>1.5\,d_\text{targ}\end{cases}"),
        ("KL estimators from samples a ~ π_old, with r = π(a)/π_old(a) (Schulman, "
         "\"Approximating KL divergence\", 2020)",
         r"k_1=-\log r,\qquad k_3=(r-1)-\log r\ \ (\ge 0)"),
        ("Clipped value loss (OpenAI Baselines ppo2)",
         r"L^{V}=\tfrac12\,\hat{\mathbb{E}}_t\max\left[(V_t-R_t)^2,\,(V_{\text{old},t}+"
         r"\operatorname{clip}(V_t-V_{\text{old},t},-\epsilon,\epsilon)-R_t)^2\right]"),
        ("The toy: a softmax bandit with a perfect critic",
         r"\pi(a)=\operatorname{softmax}(\theta)_a,\quad R_i=\mu(a_i)+\sigma z_i,\quad "
         r"\hat A_i=R_i-J(\pi_\text{old}),\quad J(\pi)=\textstyle\sum_a\pi(a)\mu(a)"),
    ])
    page.source(ppo.clipped_surrogate, ppo.clip_surface, ppo.explain_point, ppo.run_toy,
                ppo._losses, ppo._measure, ppo.ppo_clip_loss, ppo.surrogate_loss,
                ppo.kl_penalty_loss, ppo.categorical_kl, ppo.adapt_beta, ppo.value_loss_slice,
                ppo._value_loss_terms)
    page.export(
        figures={"surface": main, "slices": slice_fig, "ratios": ratio_fig, "batch": batch_fig,
                 "kl": kl_fig, "summary": summary_fig, "value_loss": value_fig},
        data=lambda: {"surface": pd.DataFrame(surface(eps).table()),
                      "toy_epochs": pd.DataFrame(res.epoch_table()),
                      "toy_samples": pd.DataFrame(res.sample_table()), "point": vars(point)},
    )
