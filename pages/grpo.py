import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import pandas as pd
import streamlit as st

from rlviz import llm, ui
from rlviz.errors import InputError
from rlviz.figures import llm as figs
from rlviz.interview.whiteboard import grpo as wb

INTRO = (
    "Five trainers fine-tune the same toy language model (a 5×5 table of next-token "
    "probabilities) to answer four prompts with a response that contains **ab**. Every response "
    "can be enumerated, so each curve is the exact expected reward, KL to the reference and "
    "length, not a sample estimate; the trainers share prompts, random numbers and optimiser "
    "and differ only in the algorithm."
)
BETAS = [0.0, 0.01, 0.02, 0.04, 0.1, 0.2, 0.5, 1.0]
LRS = [0.005, 0.01, 0.02, 0.05, 0.1]
GROUPS = [2, 4, 8, 16, 32]
PROMPTS = dict(enumerate(llm.PROMPTS))
PRESETS = {"1, 0, 0, 1": "1, 0, 0, 1", "all equal": "1, 1, 1, 1"}
READ_IT = (
    "**Curves:** the exact expected reward and KL of each trainer's policy (mean over seeds, "
    "band: 95% interval). GRPO divides by the group's std, so rare successes on hard prompts "
    "get large advantages: it learns fastest and drifts furthest. RLOO and Dr. GRPO differ by "
    "the constant G/(G−1), which Adam's step normalisation erases.  \n"
    "**Length:** GRPO averages each response's tokens (1/|o|), so a long wrong response is "
    "pushed down less per token than a short one: wrong responses stay longer (right chart).  \n"
    "**Group:** bars are one number per response; the grid shows each token's push w·A. "
    "A group whose rewards are all equal gives GRPO, Dr. GRPO and RLOO zero advantage, so no "
    "signal (REINFORCE still pushes every response up by its reward).  \n"
    "**Estimators:** k1 and k3 are unbiased for KL(π‖π_ref), k2 is not; k3 is never negative "
    "and spreads least while π stays near π_ref, but a rare token that π_ref likes far more "
    "than π makes ρ huge: far from π_ref its spread grows past k1's. As a loss term k1 has "
    "zero expected gradient (∇ log π averages to 0), so k1 *in the loss* holds nothing back."
)
TRY_THIS = [
    "Predict which trainers suffer when every reward is shifted up by 1, then set the reward "
    "offset to 1. Why do three of them not move at all, and why does PPO recover?",
    "Set β = 0.2 and switch the estimator between k3 and k1 (KL in the loss). Which one holds "
    "the KL curve down? Then put the KL in the reward instead.",
    "Turn off *Mask the prompt*. Predict which trainer breaks, and why a group baseline "
    "protects the others (the prompt's tokens are the same in every response of a group).",
]
EQUATIONS = [
    ("The toy model: a response's probability given its prompt (a bigram table θ)",
     r"\pi_\theta(y \mid q) = \prod_{t=1}^{|y|} \mathrm{softmax}(\theta[y_{t-1}])_{y_t},"
     r"\quad \mathbb{E}[r] = \sum_{y} \pi_\theta(y \mid q)\, r(y)"),
    ("Group advantages (group of G responses to one prompt)",
     r"A^{\text{GRPO}}_i = \frac{r_i - \bar r}{\operatorname{std}(r) + \epsilon},\quad "
     r"A^{\text{Dr}}_i = r_i - \bar r,\quad A^{\text{RLOO}}_i = r_i - \frac{1}{G-1}"
     r"\sum_{j \ne i} r_j = \frac{G}{G-1}(r_i - \bar r),\quad A^{\text{RF}}_i = r_i"),
    ("GRPO's objective (DeepSeekMath eq. 3): clipped ratio per token, averaged over each "
     "response, KL in the loss",
     r"J = \frac{1}{G}\sum_{i=1}^{G} \frac{1}{|o_i|}\sum_{t=1}^{|o_i|} \Big[\min\big("
     r"\rho_{i,t} A_i,\ \mathrm{clip}(\rho_{i,t}, 1-\varepsilon, 1+\varepsilon) A_i\big) - "
     r"\beta\, k_3\Big],\quad \rho_{i,t} = \frac{\pi_\theta(o_{i,t})}{\pi_{\text{old}}"
     r"(o_{i,t})}"),
    ("Token aggregation: GRPO 1/|o_i|, Dr. GRPO 1/T (a constant), PPO 1/Σ|o_j| (every token "
     "alike), REINFORCE and RLOO the sum", r"w^{\text{GRPO}}_{i,t} = \frac{m_{i,t}}{G\,|o_i|},"
     r"\quad w^{\text{Dr}}_{i,t} = \frac{m_{i,t}}{G\,T},\quad w^{\text{PPO}}_{i,t} = "
     r"\frac{m_{i,t}}{\sum_{j,s} m_{j,s}}"),
    ("KL estimators with ρ = π_ref(x)/π(x), x ~ π; the exact value sums over every response",
     r"k_1 = -\log\rho,\quad k_2 = \tfrac12(\log\rho)^2,\quad k_3 = (\rho - 1) - "
     r"\log\rho,\qquad \mathrm{KL}(\pi\Vert\pi_{\text{ref}}) = \sum_y \pi(y)\log"
     r"\frac{\pi(y)}{\pi_{\text{ref}}(y)}"),
    ("PPO: reward at the last token (minus β k per token when the KL is in the reward), "
     "GAE with γ = 1 and a value head V(t, previous token)",
     r"\delta_t = r_t + V(s_{t+1}) - V(s_t),\quad \hat A_t = \sum_{l \ge 0} \lambda^l "
     r"\delta_{t+l}"),
]


@ui.cached(max_entries=16, show_spinner=False)
def train(trainers: tuple, steps: int, seeds: int, seed: int, task: tuple,
          settings: tuple) -> llm.Comparison:
    bar = st.empty()  # made here, so that a cache hit replays it to nothing
    runs = f"{len(trainers)} trainers × {seeds} seeds × {steps} steps"
    res = llm.compare(trainers, task=llm.Task(*task), settings=llm.Settings(*settings),
                      steps=steps, seeds=seeds, seed=seed,
                      progress=lambda f: bar.progress(f, text=f"Training {runs}… {f:.0%}"))
    bar.empty()
    return res


# The comparison itself rides along unhashed (``_res``): ``args`` already identifies it.
@ui.cached(max_entries=32)
def group(args: tuple, trainer: str, step: int, prompt: int, _res) -> llm.GroupView:
    return llm.replay_group(_res, trainer, step, prompt)


@ui.cached(max_entries=32)
def estimators(args: tuple, trainer: str, samples: int, seed: int, _res) -> llm.KLStudy:
    return llm.kl_study(_res, trainer, n_samples=samples, seed=seed)


@ui.cached(max_entries=32, show_spinner=False)
def known(args: tuple, trainer: str, step: int, prompt: int, samples: int, seed: int, _res,
          _view, _study) -> list[dict]:
    return figs.checks(_res, _view, _study, wb)


@ui.cached_figures()
def curve_figures(args: tuple, _res):
    return {m: figs.curves(_res, m) for m in figs.METRICS}


@ui.cached_figures()
def group_figures(args: tuple, trainer: str, step: int, prompt: int, loss_of: str, _view):
    return figs.group_advantages(_view), figs.token_mask(_view, loss_of)


@ui.cached_figures()
def detail_figures(args: tuple, trainer: str, samples: int, seed: int, _study, _res):
    return (*figs.kl_estimators(_study), *figs.policy_tables(_res, trainer))


with ui.page("grpo", intro=INTRO) as page:
    p = page.controls([
        ui.MultiChoice(name="trainers", label="Trainers", options=llm.TRAINERS,
                       value=list(llm.TRAINERS), labels=figs.LABELS),
        ui.SelectSlider(name="group", scales_work=True, label="Group size G (responses per "
                        "prompt)", options=GROUPS, value=8),
        ui.IntSlider(name="seeds", scales_work=True, label="Seeds per trainer", min=1, max=10,
                     value=5),
        ui.SelectSlider(name="lr", label="Learning rate (Adam)", options=LRS, value=0.02),
        ui.Section("KL to the reference, clip, mask", expanded=True, controls=[
            ui.SelectSlider(name="beta", label="KL coefficient β", options=BETAS, value=0.04),
            ui.Choice(name="kl_in", label="KL penalty goes in the", options=list(llm.KL_PLACES),
                      value="loss", widget="segmented"),
            ui.Choice(name="estimator", label="KL estimator", options=["k1", "k3"], value="k3",
                      widget="segmented"),
            ui.IntSlider(name="updates", scales_work=True, label="Updates per batch μ", min=1,
                         max=4, value=1,
                         help="From the second update on the ratios leave 1 and the clip acts."),
            ui.FloatSlider(name="eps", label="Clip range ε", min=0.05, max=0.5, value=0.2,
                           step=0.05),
            ui.Toggle(name="mask", label="Mask the prompt", value=True,
                      help="Off: the loss also counts the prompt's two tokens."),
            ui.FloatSlider(name="lam", label="PPO's GAE λ", min=0.0, max=1.0, value=0.95,
                           step=0.05),
        ]),
        ui.Section("Reward", controls=[
            ui.FloatSlider(name="penalty", label="Length penalty (per token, × 1/5)", min=0.0,
                           max=0.5, value=0.0, step=0.05),
            ui.FloatSlider(name="offset", label="Reward offset c (added to every reward)",
                           min=-1.0, max=1.0, value=0.0, step=0.25),
        ]),
        ui.Seed(),
    ])
    trainers = tuple(t for t in llm.TRAINERS if t in p.trainers)
    if not trainers:
        raise InputError("Choose at least one trainer.")
    limit = llm.max_steps(len(trainers), p.seeds, p.group, p.updates)
    key = page.key("steps")
    if st.session_state.get(key, 0) > limit:
        st.session_state[key] = limit
    s = page.controls([ui.IntSlider(name="steps", scales_work=True, label="Training steps",
                                    min=20, max=limit, value=min(200, limit), step=10)])
    if limit < llm.MAX_STEPS:
        st.sidebar.caption(f"At most {limit} steps with these settings (about 2 s of training).")
    task = (llm.Task().pattern, p.penalty, p.offset)
    settings = (p.group, p.lr, p.eps, p.updates, p.beta, p.kl_in, p.estimator, p.mask, p.lam)
    args = (trainers, s.steps, p.seeds, p.seed, task, settings)
    res = train(*args)
    shown = curve_figures(args, res)

    page.section("Exact expected reward and KL to the reference")
    left, right = st.columns(2, gap="medium")
    with left:
        ui.chart(shown["reward"], key="grpo.fig.reward")
    with right:
        ui.chart(shown["kl"], key="grpo.fig.kl")
    flat = res.flat_groups.mean(axis=(1, 2))
    st.caption(figs.summary(res, "reward") + "  \nGroups whose rewards were all equal (no "
               "signal for GRPO, Dr. GRPO, RLOO), over training: " + ", ".join(
                   f"{figs.LABELS[t]} {f:.0%}" for t, f in zip(trainers, flat, strict=True)))

    page.section("Response length")
    left, right = st.columns(2, gap="medium")
    with left:
        ui.chart(shown["length"], key="grpo.fig.length")
    with right:
        ui.chart(shown["wrong_length"], key="grpo.fig.wrong_length")
    st.caption(figs.summary(res, "wrong_length") + " (wrong responses).")

    page.section("One sampled group, every trainer's advantages")
    c1, c2, c3 = st.columns([2, 3, 2])
    q = page.controls([
        ui.Choice(name="inspect", label="Sampled by", options=list(trainers),
                  value="grpo" if "grpo" in trainers else trainers[0], labels=figs.LABELS),
    ], container=c1)
    q2 = page.controls([ui.IntSlider(name="step", label="At training step", min=0,
                                     max=s.steps - 1, value=min(50, s.steps - 1))], container=c2)
    q3 = page.controls([ui.Choice(name="prompt", label="Prompt", options=list(PROMPTS), value=0,
                                  labels=PROMPTS, widget="segmented")], container=c3)
    step = min(q2.step, s.steps - 1)
    view = group(args, q.inspect, step, q3.prompt, res)
    losses = [*llm.GROUP_TRAINERS, *(["ppo"] if "ppo" in trainers else [])]
    m = page.controls([ui.Choice(name="loss_of", label="Token weights of", options=losses,
                                 value="grpo", labels=figs.LABELS, widget="segmented")],
                      container=st.container())
    fig_group, fig_mask = group_figures(args, q.inspect, step, q3.prompt, m.loss_of, view)
    ui.chart(fig_group, key="grpo.fig.group")
    ui.chart(fig_mask, key="grpo.fig.mask")
    st.caption("Bars: one advantage per response (PPO's are per token: pick it above the grid). "
               "Grid colour: w·A, how hard the first update pushes that token's log-probability "
               "(blue up, red down); grey: tokens the loss does not count.")

    page.section("The whiteboard question")
    st.markdown("“A group's rewards are [1, 0, 0, 1]. What are the GRPO advantages?” "
                "Type any group, or start from:")

    def load(text: str) -> None:
        st.session_state[page.key("rewards")] = text

    sampled = ", ".join(f"{r:.4g}" for r in view.seq_rewards)
    cols = st.columns(3)
    for col, (label, text) in zip(cols, [*PRESETS.items(), ("the sampled group", sampled)],
                                  strict=True):
        col.button(label, key=page.key(f"preset.{label}"), on_click=load, args=(text,),
                   width="stretch")
    w = page.controls([ui.Text(name="rewards", label="Rewards of one group", value="1, 0, 0, 1",
                               area=False, max_chars=400)], container=st.container())
    try:  # a mistake here is shown here; the rest of the page does not depend on it
        worked = llm.worked_group(llm.parse_rewards(w.rewards))
    except InputError as err:
        worked = None
        st.error(str(err), icon=":material/error:")
    if worked is not None:
        left, right = st.columns([2, 3], gap="medium")
        with left:
            for block in figs.worked_latex(worked):
                st.latex(block)
        right.dataframe(pd.DataFrame(figs.advantage_table(worked)), hide_index=True,
                        column_config={c: st.column_config.NumberColumn(format="%.4f")
                                       for c in figs.LABELS.values()})

    page.section("Estimating the KL: k1, k2, k3 against the exact value")
    e = page.controls([ui.SelectSlider(name="samples", scales_work=True,
                                       label="Responses per estimate",
                                       options=[64, 256, 1024, 4096], value=1024)],
                      container=st.container())
    study = estimators(args, q.inspect, e.samples, p.seed, res)
    fig_mean, fig_spread, fig_ref, fig_model = detail_figures(args, q.inspect, e.samples,
                                                              p.seed, study, res)
    left, right = st.columns(2, gap="medium")
    with left:
        ui.chart(fig_mean, key="grpo.fig.kl_mean")
    with right:
        ui.chart(fig_spread, key="grpo.fig.kl_spread")
    st.caption(figs.kl_caption(study))
    page.section("The whole language model, before and after")
    left, right = st.columns(2, gap="medium")
    with left:
        ui.chart(fig_ref, key="grpo.fig.reference")
    with right:
        ui.chart(fig_model, key="grpo.fig.model")

    page.read_it(READ_IT)
    page.try_this(TRY_THIS)
    page.known_answer([ui.Check(**c) for c in known(args, q.inspect, step, q3.prompt,
                                                      e.samples, p.seed, res, view, study)])
    page.equations(EQUATIONS)
    page.source(llm.train_step, llm.grpo_advantages, llm.dr_grpo_advantages,
                llm.rloo_advantages, llm.reinforce_advantages, llm.token_weights,
                llm.policy_loss, llm.kl_estimates, llm._gae_advantages,
                llm.sample_responses, llm.exact_metrics, llm.compare)
    page.export(
        figures={"reward": shown["reward"], "kl": shown["kl"], "length": shown["length"],
                 "wrong_length": shown["wrong_length"], "group": fig_group, "mask": fig_mask,
                 "kl_estimators": fig_mean, "kl_spread": fig_spread, "reference": fig_ref,
                 "model": fig_model},
        data=lambda: {"curves": pd.DataFrame(res.table()),
                      "group": pd.DataFrame(figs.group_table(view)),
                      "kl_estimators": pd.DataFrame(figs.kl_table(study)),
                      **({"whiteboard": pd.DataFrame(figs.advantage_table(worked))}
                         if worked is not None else {})},
    )
