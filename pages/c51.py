import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import pandas as pd
import streamlit as st

from rlviz import distributional as dist
from rlviz import ui
from rlviz.figures import distributional as figs

INTRO = (
    "C51 stores a return distribution as probabilities on fixed atoms z. The Bellman target "
    "r + γz moves and shrinks those atoms off the grid, so each one's probability is split "
    "between its two neighbouring atoms: watch the mass stay at one and the mean stay put "
    "unless atoms are clipped at V_min or V_max."
)
PAPER = "Bellemare, Dabney & Munos (2017), Alg. 1"
SHAPES = {"gaussian": "Gaussian", "bimodal": "Bimodal", "uniform": "Uniform",
          "point": "Point mass", "custom": "Custom weights"}
CUSTOM = {"w": [0.0, 1.0, 4.0, 8.0, 5.0, 2.0, 1.0, 0.0, 3.0, 6.0, 2.0]}


@ui.cached(max_entries=64)
def compute(shape, mu, sigma, sep, weights, v_min, v_max, n_atoms, reward, gamma, done):
    custom = shape == "custom"
    z = dist.make_support(v_min, v_max, len(weights) if custom else n_atoms)
    p = dist.source_distribution(shape, z, mean=mu, width=sigma, separation=sep,
                                 weights=weights if custom else None)
    return dist.walkthrough(p, reward=reward, gamma=gamma, done=done, support=z)


@ui.cached_figures()
def panels(inputs, atom, naive):
    return figs.projection_panels(compute(*inputs), atom=atom, show_naive=naive)


def preset(**values):
    st.session_state.update({f"c51.{k}": v for k, v in values.items()})


with ui.page("c51", intro=INTRO) as page:
    p = page.controls([
        ui.FloatSlider(name="r", label="Reward r", min=-20.0, max=20.0, value=0.5, step=0.1),
        ui.FloatSlider(name="gamma", label="Discount γ", min=0.0, max=1.0, value=0.9,
                       step=0.01),
        ui.Toggle(name="done", label="Episode ended (done): the target is r alone"),
        ui.Toggle(name="naive", label="Compare with a naive floor/ceil projection"),
    ])
    st.sidebar.button("Exact-hit case: r = 0, γ = 1", icon=":material/target:",
                      key=page.key("_exact_hit"),
                      on_click=preset, kwargs=dict(r=0.0, gamma=1.0, done=False, naive=True),
                      help="Every atom lands on a support point, where floor = ceil.")
    box = st.sidebar.expander("Source distribution p", expanded=True)
    shape = page.controls([ui.Choice(name="shape", label="Shape", options=list(SHAPES),
                                     value="gaussian", labels=SHAPES)], container=box).shape
    custom = shape == "custom"
    s = page.controls([
        ui.FloatSlider(name="mu", label="Centre μ", min=-30.0, max=30.0, value=1.0, step=0.1,
                       disabled=shape in ("uniform", "custom")),
        ui.FloatSlider(name="sigma", label="Width σ (standard deviation)", min=0.1, max=20.0,
                       value=2.5, step=0.1, disabled=shape not in ("gaussian", "bimodal")),
        ui.FloatSlider(name="sep", label="Gap between the two modes", min=0.0, max=40.0,
                       value=8.0, step=0.1, disabled=shape != "bimodal"),
    ], container=box)
    copy_slot = box.empty()
    table = page.controls([ui.Table(
        name="weights", label="One weight per atom; the rows set the number of atoms. Weights "
        "are divided by their sum.", columns=[ui.TableColumn("w", "weight")], value=CUSTOM,
        max_rows=201)], container=st.sidebar.expander("Custom weights", expanded=custom))
    sup = page.controls([
        ui.Number(name="v_min", label="V_min", min=-100.0, max=100.0, value=-10.0, step=1.0),
        ui.Number(name="v_max", label="V_max", min=-100.0, max=100.0, value=10.0, step=1.0),
        ui.IntSlider(name="atoms", label="Number of atoms N", min=2, max=201, value=21,
                     disabled=custom, help="With custom weights, the table's rows set N."),
    ], container=st.sidebar.expander("Support z", expanded=True))

    weights = tuple(table.weights["w"])
    inputs = (shape, s.mu, s.sigma, s.sep, weights, sup.v_min, sup.v_max, sup.atoms,
              p.r, p.gamma, p.done)
    w = compute(*inputs)
    copy_slot.button(
        "Edit this shape as custom weights", icon=":material/edit:", disabled=custom,
        key=page.key("_to_custom"),
        on_click=preset, kwargs=dict(shape="custom", weights={"w": [
            float(f"{x:.6g}") for x in w.source]}))
    if custom:
        st.caption(f"Custom weights: {w.n_atoms} atoms; the weights summed to "
                   f"{sum(weights):.6g} and were divided by that sum so p sums to one.")

    (m0, v0), (mt, vt), (m1, v1) = w.before, w.target, w.after
    means, variances = st.columns(3), st.columns(3)  # two rows, so no label is cut short
    means[0].metric("Mean of p", f"{m0:.4f}")
    means[1].metric("Target mean r + γ·E[p]", f"{mt:.4f}")
    means[2].metric("Projected mean", f"{m1:.4f}", "= target" if abs(m1 - mt) < 1e-9 else
                    f"{m1 - mt:+.4f} (clipped)", delta_color="off", delta_arrow="off")
    variances[0].metric("Variance of p", f"{v0:.4f}")
    variances[1].metric("Target variance γ²·Var[p]", f"{vt:.4f}")
    variances[2].metric("Projected variance", f"{v1:.4f}", f"{v1 - vt:+.4f} vs target",
                        delta_color="off", delta_arrow="off",
                        help=f"The split adds Δz²·Σ p·(u − b)(b − l) = {w.split_variance:.4g}.")

    default_atom = int(w.source.argmax())
    j = page.controls([ui.IntSlider(
        name="atom", label="Follow atom j through the three panels", min=0,
        max=w.n_atoms - 1, value=default_atom)], container=st.container()).atom
    fig = panels(inputs, j, p.naive)
    ui.chart(fig, key="c51.panels")

    st.markdown(figs.atom_story(w, j))
    hits = int(w.exact_hits[w.source > 0].sum())
    if p.naive and hits == 0:
        st.info("The naive floor/ceil projection agrees with the correct one here: no atom "
                "with p > 0 lands exactly on a support point. Press *Exact-hit case*, or push "
                "r until atoms clip, to see it lose mass.", icon=":material/info:")
    elif p.naive:
        st.warning(
            f"The naive floor/ceil projection keeps **{w.naive_mass:.4g}** of the mass and loses "
            f"{1 - w.naive_mass:.4g}: {hits} atom(s) with p > 0 land exactly on a support point "
            "(clipped atoms always do), where ⌊b⌋ = ⌈b⌉ and both weights u − b and b − l are "
            "zero. The correct version keeps l = ⌊b⌋ and u = l + 1.", icon=":material/warning:")

    ident = compute(shape, s.mu, s.sigma, s.sep, weights, sup.v_min, sup.v_max, sup.atoms,
                    0.0, 1.0, False)
    scale = 1e-9 * max(abs(sup.v_min), abs(sup.v_max), 1.0)
    mean_check = (
        ui.Check(f"Projected mean = E[clip(r + γz)]: {w.n_clipped} atom(s) clipped, so "
                 f"r + γ·E[p] = {mt:.4g} no longer holds", value=m1,
                 reference=w.clipped_target[0], tol=scale, source=PAPER, fmt=".6g")
        if w.n_clipped else
        ui.Check("Projected mean = r + γ·E[p] (nothing clipped)", value=m1, reference=mt,
                 tol=scale, source=PAPER, fmt=".6g"))
    checks = [
        ui.Check("r = 0, γ = 1, not done is the identity: ‖m − p‖∞",
                 value=float(abs(ident.projected - ident.source).max()), reference=0.0,
                 tol=1e-12, source=PAPER),
        ui.Check("Mass preserved: Σ m = Σ p", value=w.mass_after, reference=w.mass_before,
                 tol=1e-12, source=PAPER, fmt=".12g"),
        mean_check,
        ui.Check("Variance: Var[m] = Var[clip(r + γz)] + Δz²·Σ p·(u − b)(b − l)", value=v1,
                 reference=w.clipped_target[1] + w.split_variance, tol=scale * 100,
                 source="mean-preserving split of each atom", fmt=".6g"),
    ]
    if w.done:
        lo, up = w.lower[0], w.upper[0]  # with done every atom moves to r
        checks.append(ui.Check(f"done: all mass on the two atoms around r (z = "
                               f"{w.support[lo]:.4g}, {w.support[up]:.4g})",
                               value=w.projected[[lo, up]].sum(), reference=1.0, tol=1e-12,
                               source=PAPER))
    page.known_answer(checks, title="Live checks against known answers")

    page.read_it(
        "**①** is the next-state distribution p on the fixed support. **②** moves every atom "
        "to r + γz (orange); atoms that leave [V_min, V_max] are clipped onto the nearest end "
        "(red ✕ where they would have gone, diamond where they land). The green lines show "
        "each atom's probability splitting between its two neighbouring support points "
        "(faint grey lines), ending at the height of the share each receives — the nearer "
        "neighbour gets more. **③** adds up those shares. Dotted lines mark the means: the "
        "split never moves a mean, but it adds variance, because mass is spread over two "
        "points instead of one.")
    page.try_this([
        "Predict the projected mean if you push r up to 3 (some atoms pass V_max = 10). Move "
        "r and watch the mean check switch from r + γ·E[p] to the clipped mean.",
        "Press *Exact-hit case* and predict how much mass the naive version keeps with 21 "
        "atoms (Δz = 1). Then set N = 51: why does it keep some now?",
        "Choose a point mass and lower γ: predict how its single atom splits, and by how much "
        "the variance grows (Δz²·(u − b)(b − l)).",
    ])
    page.equations([
        ("Target atoms, clipped to the support (Δz = (V_max − V_min)/(N − 1))",
         r"\hat z_j = \big[r + \gamma (1 - d)\, z_j\big]_{V_{\min}}^{V_{\max}}, \quad "
         r"b_j = \frac{\hat z_j - V_{\min}}{\Delta z}"),
        ("Neighbours and split (l = ⌊b⌋ capped at N − 2, so u = l + 1 always exists)",
         r"m_{l_j} \mathrel{+}= p_j\,(u_j - b_j), \qquad m_{u_j} \mathrel{+}= p_j\,(b_j - l_j)"),
        ("The same projection as a triangular kernel (Bellemare et al. 2017, eq. 7)",
         r"(\Phi \hat{\mathcal T} Z)_i = \sum_j \Big[1 - \frac{|\hat z_j - z_i|}{\Delta z}"
         r"\Big]_0^1 p_j"),
        ("What is preserved: mass always, the mean of the clipped atoms, variance plus the "
         "split", r"\sum_i m_i = 1, \quad \mathbb E_m[z] = \sum_j p_j \hat z_j, \quad "
         r"\mathrm{Var}_m = \mathrm{Var}_p[\hat z] + \Delta z^2 \sum_j p_j (u_j - b_j)"
         r"(b_j - l_j)"),
        ("The C51 loss against predicted logits θ (log-softmax, numerically stable)",
         r"\mathcal L(\theta) = -\sum_i m_i \log \mathrm{softmax}(\theta)_i"),
    ])
    page.source(dist.categorical_projection, dist.source_distribution, dist.walkthrough,
                *([dist.naive_projection] if p.naive else []))
    page.export(figures={"projection": fig}, data=lambda: {"atoms": pd.DataFrame(w.columns())})
