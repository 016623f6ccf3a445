import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import pandas as pd
import streamlit as st

from rlviz import offline, ui
from rlviz.figures import offline as figs

INTRO = (
    "Learning Q from a fixed dataset, the max in the Bellman target reaches for actions the data "
    "never tried, so naive offline Q-learning overestimates them and its greedy policy picks "
    "them. Conservative Q-learning adds α·(log Σₐ exp Q − Q(data)): watch the unsupported "
    "actions sink as α grows, and the policy's true return recover."
)
VIEWS = {"one_state": "One state, many actions", "grid": "Gridworld"}
MODELS = {"mlp": "Small MLP", "table": "Table"}
CURVES = {name: f"{name.replace('_', ' ')}: {text}" for name, (text, _) in offline.CURVES.items()}
SIZES = [20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000]
STEPS = ["auto", 250, 500, 1000, 1500]  # 2000 MLP steps on the largest grid take over 2 s


@ui.cached(max_entries=16)
def one_state(curve, n_actions, coverage, centre, noise, size, model, steps, init_std, seed):
    return offline.one_state_experiment(
        curve, n_actions=n_actions, coverage=coverage, centre=centre, noise=noise, size=size,
        model=model, steps=steps, init_std=init_std, seed=seed)


@ui.cached(max_entries=16)
def grid(name, epsilon, size, gamma, slip, model, steps, init_std, seed):
    return offline.grid_experiment(name, epsilon=epsilon, size=size, gamma=gamma, slip=slip,
                                   model=model, steps=steps, init_std=init_std, seed=seed)


@ui.cached(max_entries=32, show_spinner="Solving fitted Q-iteration exactly…")
def grid_exact(name, epsilon, size, gamma, slip, steps, init_std, seed, index):
    res = grid(name, epsilon, size, gamma, slip, "table", steps, init_std, seed)
    return res.fixed_point_gap(0), res.fixed_point_gap(index)


@ui.cached_figures()
def view_figures(one, args, i, alpha_txt):
    """Every figure of one view, built once per setting and shared (read-only)."""
    res = one_state(*args) if one else grid(*args)
    unit = "reward" if one else "return"
    if one:
        figures = {"q_vs_action": figs.one_state(res, i, fixed_point=args[6] == "table")}
    else:
        rows, width = res.problem.mdp.grid.shape
        height = 300 if width >= 2 * rows else 460  # wide grids stack, squarer ones sit in a row
        zr = figs.error_range(res, (0, i))
        figures = {
            "data": figs.grid_data(res),
            "naive": figs.grid_learner(res, 0, role="naive", zrange=zr,
                                       title="Naive: Q̂ − Q* where it acts"),
            "cql": figs.grid_learner(res, i, role="cql", zrange=zr,
                                     title=f"CQL, {alpha_txt}: Q̂ − Q* where it acts"),
        }
        for fig in figures.values():
            fig.update_layout(height=height)
    figures["return_vs_alpha"] = figs.return_vs_alpha(
        res.training.alphas, res.true_return, chosen=i, naive=res.true_return[0],
        behaviour=res.behaviour_return, optimal=res.optimal_return, value_label=unit)
    figures["error_vs_alpha"] = figs.error_vs_alpha(
        res.training.alphas, *res.error_split(), chosen=i, truth_label="r" if one else "Q*")
    for name, fig in figs.training_curves(res.training, i, res.return_history,
                                          value_label=unit).items():
        figures[f"training_{name}"] = fig
    return figures


with ui.page("cql", intro=INTRO) as page:
    v = page.controls([ui.Choice(name="view", label="Problem", options=list(VIEWS),
                                 value="one_state", labels=VIEWS, widget="segmented")])
    one = v.view == "one_state"
    p = page.controls([
        ui.SelectSlider(name="alpha", label="CQL weight α", options=list(offline.ALPHAS),
                        value=1.0, labels=lambda a: f"{a:g}",
                        help="0 is the naive learner. Every α is trained at once, so moving "
                        "this slider costs nothing."),
        ui.SelectSlider(name="size", label="Dataset size (transitions)", options=SIZES,
                        value=500, scales_work=True),
        ui.Choice(name="model", label="Q-function", options=list(MODELS), value="mlp",
                  labels=MODELS, widget="segmented"),
        ui.Section("One state, many actions", expanded=one, controls=[
            ui.FloatSlider(name="coverage", label="Coverage: share of actions in the data",
                           min=0.05, max=1.0, value=0.4, step=0.05),
            ui.FloatSlider(name="centre", label="Where the data sits on the line", min=-1.0,
                           max=1.0, value=-0.5, step=0.05),
            ui.Choice(name="curve", label="True reward curve", options=list(CURVES),
                      value="hill", labels=CURVES),
            ui.IntSlider(name="actions", label="Actions", min=5, max=201, value=41, step=2,
                         scales_work=True),
            ui.FloatSlider(name="noise", label="Reward noise σ", min=0.0, max=1.0, value=0.3,
                           step=0.05),
        ]),
        ui.Section("Gridworld", expanded=not one, controls=[
            ui.Choice(name="grid", label="Grid", options=list(offline.GRIDS), value="cliff",
                      labels=offline.GRIDS),
            ui.FloatSlider(name="epsilon", label="Coverage: behaviour's ε off the safe path",
                           min=0.0, max=1.0, value=0.2, step=0.05),
            ui.FloatSlider(name="gamma", label="Discount γ", min=0.5, max=0.99, value=0.95,
                           step=0.01),
            ui.FloatSlider(name="slip", label="Slip probability", min=0.0, max=0.3, value=0.0,
                           step=0.05),
        ]),
        ui.Section("Training", controls=[
            ui.SelectSlider(name="steps", label="Gradient steps", options=STEPS, value="auto",
                            help="auto: 2000 (one-state table), 1500 (grid table), 1000 (MLP)",
                            scales_work=True),
            ui.FloatSlider(name="init", label="Spread of the table's initial values",
                           min=0.0, max=3.0, value=1.0, step=0.1),
        ]),
        ui.Seed(),
    ])
    steps = None if p.steps == "auto" else p.steps
    i = offline.ALPHAS.index(p.alpha)
    alpha_txt = f"α = {p.alpha:g}"
    o_args = (p.curve, p.actions, p.coverage, p.centre, p.noise, p.size)
    o_full = (*o_args, p.model if one else "table", steps if one else None, p.init, p.seed)
    o = one_state(*o_full)
    if one:
        args, res = o_full, o
    else:
        g_args = (p.grid, p.epsilon, p.size, p.gamma, p.slip)
        args = (*g_args, p.model, steps, p.init, p.seed)
        res = grid(*args)
    figures = view_figures(one, args, i, alpha_txt)
    cols = st.columns(4)
    cols[0].metric("Naive policy really earns", f"{res.true_return[0]:.3f}")
    cols[1].metric(f"CQL policy ({alpha_txt}) really earns", f"{res.true_return[i]:.3f}",
                   delta=f"{res.true_return[i] - res.true_return[0]:+.3f} vs naive")
    cols[2].metric("Behaviour policy earns", f"{res.behaviour_return:.3f}")
    cols[3].metric("Best possible", f"{res.optimal_return:.3f}")
    if one:
        ui.chart(figures["q_vs_action"], key="cql.fig.one_state")
    else:
        rows, width = res.problem.mdp.grid.shape
        wide = width >= 2 * rows
        places = [st.container()] * 3 if wide else st.columns(3, gap="small")
        for place, key in zip(places, ("data", "naive", "cql"), strict=True):
            with place:
                ui.chart(figures[key], key=f"cql.fig.grid_{key}")
    left, right = st.columns(2, gap="medium")
    with left:
        ui.chart(figures["return_vs_alpha"], key="cql.fig.alpha")
    with right:
        ui.chart(figures["error_vs_alpha"], key="cql.fig.split")
    for place, name in zip(st.columns(3, gap="small"), ("return", "td_loss", "cql_gap"),
                           strict=True):
        with place:
            ui.chart(figures[f"training_{name}"], key=f"cql.fig.training_{name}")

    if one:
        page.read_it(
            "The dashed black curve is the truth; grey dots are what the data says about each "
            "action it covers; grey bands are actions the data never tried. The **naive** "
            "learner (red) is corrected only where there is data: elsewhere it keeps whatever "
            "it started with, or whatever the network extrapolates, and its argmax (★) lands "
            "there. **CQL** (blue) pushes values down wherever its own softmax puts mass and "
            "up on the data, so unsupported actions sink (▼ marks values below the axis) and "
            "its argmax stays inside the data. The ✕ under each star is what that pick really "
            "earns.")
    else:
        page.read_it(
            "The top grid is the data: how often each state was visited, and the safe path "
            "the behaviour follows. The next two colour each state by how much the learner "
            "over- (blue) or under- (red) estimates the action it would take there, with its "
            "greedy arrows and route from S. Naive offline Q-learning bootstraps from the "
            "untried actions' made-up values, so its route chases them; CQL's stays where the "
            "data is. Below: the true return of every α's greedy policy.")
    page.try_this([
        "At α = 0 the blue and red curves coincide. Predict where the CQL argmax goes at "
        "α = 0.01, then at α = 10 — is more pessimism always better?",
        "Raise the coverage (or ε on the grid) to 1: the data now covers everything. Does the "
        "naive learner still go wrong? What does CQL cost you now?",
        "Pick the *two peaks* curve: the best action lies outside the data. Which learner "
        "finds it, and why can CQL never?",
    ])

    mass = p.alpha * o.unseen_mass(i)
    checks = [ui.Check(
        f"One-state table, {alpha_txt}: largest gap to the fixed point, seen actions",
        value=o.fit_error(i), reference=0.0, tol=0.01,
        source="Kumar et al. (2020), eq. 4, solved exactly (Wright ω)"),
        ui.Check("… α × softmax mass still on unseen actions (0 at the fixed point)",
                 value=mass, reference=0.0, tol=0.01, source="the same fixed point")]
    if not one and p.model == "table":
        err0, err = grid_exact(*g_args, steps, p.init, p.seed, i)
        checks += [
            ui.Check("Grid table, α = 0: vs value iteration on the data's empirical MDP",
                     value=err0, reference=0.0, tol=1e-3, source="Ernst et al. (2005), FQI"),
            ui.Check(f"Grid table, {alpha_txt}: vs fitted Q-iteration solved exactly",
                     value=err, reference=0.0, tol=0.05, source="Kumar et al. (2020), eq. 4"),
        ]
    page.known_answer(checks)
    st.caption("Trained values reach the fixed point only as training converges and the unseen "
               "actions' softmax mass vanishes, which takes about 1/(α · steps): with few steps "
               "or a tiny α the check can differ — train longer.")
    page.equations([
        ("The loss, for every α at once (y is held fixed: no gradient flows through it). The "
         "table averages each state's terms over that state's samples, which leaves its "
         "minimiser unchanged: states decouple in a table.",
         r"L(\theta) = \mathbb{E}_{D}\big[\tfrac12 (Q_\theta(s,a) - y)^2\big] + \alpha\,"
         r"\mathbb{E}_{s\sim D}\Big[\log\sum_{a'} e^{Q_\theta(s,a')} - "
         r"\mathbb{E}_{a\sim D(\cdot|s)} Q_\theta(s,a)\Big],\quad "
         r"y = r + \gamma (1-d) \max_{a'} Q_{\bar\theta}(s',a')"),
        ("The regulariser is never negative",
         r"\log\sum_{a'} e^{Q(s,a')} \;\ge\; \max_{a'} Q(s,a') \;\ge\; Q(s,a)"),
        ("Its gradient, the step every learner takes (p̂(s, a): the weight of the pair's "
         "transitions, ȳ(s, a): their mean target; the network passes it on to its weights by "
         "the chain rule)",
         r"\frac{\partial L}{\partial Q(s,a)} = \hat p(s,a)\big(Q(s,a) - \bar y(s,a)\big) + "
         r"\alpha\big(\hat p(s)\,\pi(a|s) - \hat p(s,a)\big),\quad "
         r"\pi = \mathrm{softmax}\,Q(s,\cdot)"),
        ("One state: set the gradient to zero (p̂ₐ = nₐ/N, π = softmax Q)",
         r"\hat p_a (Q_a - \bar r_a) + \alpha(\pi_a - \hat p_a) = 0 \;\Rightarrow\; "
         r"Q_a = \bar r_a + \alpha\Big(1 - \frac{\pi_a}{\hat p_a}\Big),\qquad "
         r"\hat p_a = 0 \Rightarrow \pi_a = 0,\; Q_a \to -\infty"),
        ("Solved exactly: with c = log Σ e^Q, each seen action has a closed form (Wright ω)",
         r"Q_a(c) = \bar r_a + \alpha - \omega\big(\log\tfrac{\alpha}{\hat p_a} + "
         r"\bar r_a + \alpha - c\big),\qquad \sum_a e^{Q_a(c) - c} = 1"),
    ])
    learners = [offline.train_table] if (one or p.model == "table") else []
    learners += [offline.train_mlp] if p.model == "mlp" else []
    page.source(offline.offline_loss, offline.offline_loss_grad, *learners, offline.cql_gap,
                offline.cql_fixed_point,
                offline.one_state_experiment if one else offline.grid_experiment)
    d = res.data
    page.export(figures=figures, data=lambda: {
        "dataset": pd.DataFrame({"s": d.states, "a": d.actions, "r": d.rewards,
                                 "s_next": d.next_states, "done": d.dones}),
        "returns_by_alpha": pd.DataFrame({"alpha": res.training.alphas,
                                          "true_return": res.true_return}),
        "q_tables": {f"alpha={a:g}": q for a, q in zip(res.training.alphas, res.training.q,
                                                      strict=True)},
    }, settings=page.settings)
