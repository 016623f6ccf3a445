"""Figures of the policy-gradient page: the corridor, J(p), learning curves, the gradient cloud."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rlviz import policy_gradient as pg
from rlviz.figures.theme import INK, MUTED, PALETTE, color, figure, hex_to_rgba

__all__ = [
    "ESTIMATOR_COLORS",
    "LABELS",
    "corridor_figure",
    "curves_figure",
    "estimator_labels",
    "estimator_names",
    "EQUATIONS",
    "export_tables",
    "final_policies",
    "stop_notes",
    "cloud_figure",
    "log_policy_figure",
    "method_color",
    "method_label",
    "parabola_figure",
    "policy_figure",
    "power",
    "value_figure",
    "variance_figure",
    "worked_steps",
]

LABELS = {
    "reinforce": "REINFORCE",
    "reinforce_with_baseline": "REINFORCE with baseline",
    "actor_critic": "Actor-critic",
}
ESTIMATOR_COLORS = {
    "none": color("reinforce"),
    "constant": PALETTE[4],
    "learned": color("reinforce_with_baseline"),
    "true_v": PALETTE[0],
    "optimal": PALETTE[3],
    "td_true": color("actor_critic"),
    "td_one": color("naive"),
}
BAND_ALPHA = 0.18
OPTIMUM = INK
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def power(x: float) -> str:
    """``2⁻¹³`` for 2**-13; other numbers as they are."""
    k = math.log2(x)
    if abs(k - round(k)) < 1e-12:
        return "2" + str(int(round(k))).translate(SUPERSCRIPT)
    return f"{x:g}"


def method_label(m: pg.Method, *, short: bool = False) -> str:
    """``REINFORCE, α = 2⁻¹³``; with ``short`` only the step sizes."""
    if m.kind == "reinforce":
        sizes = f"α = {power(m.alpha_theta)}"
    else:
        sizes = f"α_θ = {power(m.alpha_theta)}, α_w = {power(m.alpha_w)}"
    if m.kind == "actor_critic" and m.critic == "one_value":
        sizes += ", one-value critic"
    return sizes if short else f"{LABELS[m.kind]}, {sizes}"


def _shade(hex_color: str, amount: float) -> str:
    """Mix with black (amount < 0) or white (amount > 0)."""
    h = hex_color.lstrip("#")
    rgb = np.array([int(h[i:i + 2], 16) for i in (0, 2, 4)], dtype=float)
    target = 255.0 if amount > 0 else 0.0
    rgb = rgb + (target - rgb) * abs(amount)
    return "#" + "".join(f"{int(round(c)):02x}" for c in rgb)


def method_color(m: pg.Method, methods: Sequence[pg.Method] = ()) -> str:
    """The learner's colour.

    Several REINFORCE step sizes get shades of REINFORCE's colour, darker for larger steps.
    """
    base = color(m.kind)
    same = sorted({x.alpha_theta for x in methods if x.kind == m.kind}, reverse=True)
    if len(same) <= 1 or m.kind != "reinforce":
        return base
    rank = same.index(m.alpha_theta)
    return _shade(base, -0.35 + 0.8 * rank / (len(same) - 1))


# --------------------------------------------------------------------------- the corridor
def corridor_figure(*, height: int = 190) -> go.Figure:
    """The four cells and where each action leads (right above the cells, left below)."""
    fig = figure(height=height, margin=dict(l=10, r=10, t=10, b=10), showlegend=False,
                 xaxis=dict(visible=False, range=[-0.75, 3.6]),
                 yaxis=dict(visible=False, range=[-1.0, 1.0]))
    names = ["S", "2", "3", "G"]
    notes = ["start", "reversed", "", "goal"]
    shapes, ann = [], []
    for i, (name, note) in enumerate(zip(names, notes, strict=True)):
        fill = "#fff3bf" if i == 1 else ("#d3f9d8" if i == 3 else "#f1f3f5")
        shapes.append(dict(type="rect", x0=i - 0.37, x1=i + 0.37, y0=-0.28, y1=0.28,
                           line=dict(color="#adb5bd"), fillcolor=fill, layer="below"))
        ann.append(dict(x=i, y=0.05, text=f"<b>{name}</b>", showarrow=False,
                        font=dict(size=16, color=INK)))
        if note:
            ann.append(dict(x=i, y=-0.16, text=note, showarrow=False,
                            font=dict(size=10, color=MUTED)))
    right, left = color("reinforce_with_baseline"), color("actor_critic")

    def arrow(x0, x1, y, c):
        ann.append(dict(x=x1, y=y, ax=x0, ay=y, xref="x", yref="y", axref="x", ayref="y",
                        showarrow=True, arrowhead=3, arrowsize=1.1, arrowwidth=2,
                        arrowcolor=c, text=""))

    arrow(0.2, 0.8, 0.45, right)  # S → 2
    arrow(0.8, 0.2, 0.7, right)  # 2 → S (reversed)
    arrow(2.2, 2.8, 0.45, right)  # 3 → G
    arrow(1.2, 1.8, -0.45, left)  # 2 → 3 (reversed)
    arrow(1.8, 1.2, -0.7, left)  # 3 → 2
    ann.append(dict(x=0, y=-0.55, text="↺", showarrow=False, font=dict(size=18, color=left)))
    ann.append(dict(x=-0.72, y=0.57, text="right", xanchor="left", showarrow=False,
                    font=dict(size=12, color=right)))
    ann.append(dict(x=-0.72, y=-0.57, text="left", xanchor="left", showarrow=False,
                    font=dict(size=12, color=left)))
    ann.append(dict(x=3.55, y=0.62, text="−1 per step", xanchor="right", showarrow=False,
                    font=dict(size=11, color=MUTED)))
    fig.update_layout(shapes=shapes, annotations=ann)
    return fig


# --------------------------------------------------------------------------- J(p)
def value_figure(*, learned: Sequence[tuple[str, float, str]] = (), study_p: float | None = None,
                 height: int = 380) -> go.Figure:
    """``J(p)`` from the linear system, the optimum and the two ε-greedy policies (ε = 0.1).

    Optional markers: the learners' final π(right) and the gradient study's policy.
    """
    p = np.linspace(0.01, 0.99, 393)
    j = pg.start_value(p)
    star = pg.optimal_probability()
    eps = pg.epsilon_greedy_values(0.1)
    fig = figure(height=height, hovermode="closest",
                 xaxis=dict(title="π(right) = p, the same in every state", range=[0, 1],
                            dtick=0.1),
                 yaxis=dict(title="J(p) = v_π(S)", range=[-105, 0]),
                 margin=dict(t=40))
    fig.add_trace(go.Scatter(x=p, y=j, mode="lines", line=dict(color=INK, width=2.4),
                             name="J(p), exact", hovertemplate="p = %{x:.3f}: %{y:.2f}"
                             "<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=[star], y=[pg.start_value(star)], mode="markers+text", name="optimum p* = 2 − √2",
        marker=dict(symbol="star", size=16, color=INK), text=[
            f"p* = {star:.4f}, J = {pg.start_value(star):.2f}"], textposition="top center",
        hovertemplate="optimum: p = %{x:.4f}, J = %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=[0.05, 0.95], y=[eps["left"], eps["right"]], mode="markers+text",
        name="ε-greedy (ε = 0.1)", marker=dict(size=10, color=MUTED, symbol="circle"),
        text=[f"ε-greedy left {eps['left']:.1f}", f"ε-greedy right {eps['right']:.1f}"],
        textposition=["middle right", "middle left"],
        hovertemplate="ε-greedy: p = %{x}, J = %{y:.2f}<extra></extra>"))
    for label, pr, c in learned:
        if math.isfinite(pr):
            fig.add_trace(go.Scatter(
                x=[pr], y=[pg.start_value(pr)], mode="markers", name=label,
                marker=dict(size=11, color=c, symbol="diamond", line=dict(color="white",
                                                                          width=1)),
                hovertemplate=f"{label}<br>p = %{{x:.3f}}, J = %{{y:.2f}}<extra></extra>"))
    if study_p is not None:
        fig.add_shape(type="line", x0=study_p, x1=study_p, y0=0, y1=1, yref="paper",
                      line=dict(color=MUTED, dash="dot", width=1.5))
        fig.add_annotation(x=study_p, y=1, yref="paper", yanchor="bottom", showarrow=False,
                           text=f"gradient study p = {study_p:g}", font=dict(size=11,
                                                                              color=MUTED))
    fig.update_layout(showlegend=False)
    return fig


# --------------------------------------------------------------------------- curves
def _band(fig: go.Figure, x: np.ndarray, curve: pg.Curve, c: str, name: str) -> None:
    ok = ~np.isnan(curve.mean)
    x, mean, low, high = x[ok], curve.mean[ok], curve.low[ok], curve.high[ok]
    fig.add_trace(go.Scatter(
        x=np.concatenate([x, x[::-1]]), y=np.concatenate([high, low[::-1]]), fill="toself",
        fillcolor=hex_to_rgba(c, BAND_ALPHA), line=dict(width=0), hoverinfo="skip",
        showlegend=False, name=f"{name}, 95% band"))
    fig.add_trace(go.Scatter(x=x, y=mean, mode="lines", line=dict(color=c, width=2.2),
                             name=name, hovertemplate="%{y:.2f}"))


def curves_figure(training: pg.Training, *, window: int = 1, height: int = 460) -> go.Figure:
    """Return per episode: the mean over runs with its 95% band, and the optimum v*(S)."""
    e = np.arange(1, training.episodes + 1)
    smoothing = f", {window}-episode average" if window > 1 else ""
    fig = figure(height=height, hovermode="x unified",
                 xaxis=dict(title="episode", range=[0, training.episodes + 1]),
                 yaxis=dict(title=f"total reward per episode (mean of {training.runs} runs"
                                  f"{smoothing})"),
                 legend=dict(y=1.02, yanchor="bottom"), margin=dict(t=80))
    lowest, lowest_mean = -90.0, -90.0
    for m in training.methods:
        curve = pg.learning_curve(training.returns[training.index(m)], window=window)
        _band(fig, e, curve, method_color(m, training.methods), method_label(m))
        if np.isfinite(curve.mean).any():
            lowest = min(lowest, float(np.nanmin(curve.low)))
            lowest_mean = min(lowest_mean, float(np.nanmin(curve.mean)))
    best = pg.start_value(pg.optimal_probability())
    fig.add_shape(type="line", x0=0, x1=1, xref="paper", y0=best, y1=best,
                  line=dict(color=OPTIMUM, dash="dash", width=1.5))
    fig.add_annotation(x=1, xref="paper", y=best, xanchor="right", yanchor="bottom", yshift=6,
                       showarrow=False, text=f"v*(S) = {best:.2f}, at p*",
                       font=dict(size=12, color=OPTIMUM), bgcolor="rgba(255,255,255,0.85)")
    floor = max(lowest, -150.0)
    fig.update_yaxes(range=[floor - 3, -5])
    if lowest_mean < floor:
        fig.add_annotation(x=0, xref="paper", y=floor, yanchor="bottom", xanchor="left",
                           showarrow=False, font=dict(size=11, color=MUTED),
                           text=f"some means fall to {lowest_mean:.0f}, off the chart")
    return fig


def policy_figure(training: pg.Training, *, height: int = 330) -> go.Figure:
    """π(right) after each episode: the mean over runs with its 95% band, and p*."""
    e = np.arange(1, training.episodes + 1)
    fig = figure(height=height, hovermode="x unified",
                 xaxis=dict(title="episode", range=[0, training.episodes + 1]),
                 yaxis=dict(title="π(right), mean of the runs", range=[0, 1]),
                 showlegend=False, margin=dict(t=30))
    for m in training.methods:
        curve = pg.learning_curve(training.p_right[training.index(m)])
        _band(fig, e, curve, method_color(m, training.methods), method_label(m))
    star = pg.optimal_probability()
    fig.add_shape(type="line", x0=0, x1=1, xref="paper", y0=star, y1=star,
                  line=dict(color=OPTIMUM, dash="dash", width=1.5))
    fig.add_annotation(x=1, xref="paper", y=star, xanchor="right", yanchor="bottom",
                       yshift=4, showarrow=False, text=f"p* = {star:.3f}",
                       font=dict(size=12, color=OPTIMUM), bgcolor="rgba(255,255,255,0.85)")
    return fig


# --------------------------------------------------------------------------- the study
def estimator_labels(study: pg.GradientStudy) -> dict[str, str]:
    """Short two-line category labels (they must fit a phone), values where they are numbers."""
    return {
        "none": "no<br>baseline",
        "constant": f"b =<br>{study.constant:g}",
        "learned": f"learned<br>{study.learned:.1f}",
        "true_v": "true<br>v_π(s)",
        "optimal": "best<br>b*(s)",
        "td_true": "δ, true<br>v_π",
        "td_one": "δ, one<br>value",
    }


def estimator_names(study: pg.GradientStudy) -> dict[str, str]:
    """One-line names for hover texts and tables."""
    return {
        "none": "no baseline", "constant": f"constant b = {study.constant:g}",
        "learned": f"learned w = {study.learned:.2f}", "true_v": "true v_π(s)",
        "optimal": "optimal b*(s)", "td_true": "TD error δ with the true v_π",
        "td_one": "TD error δ with a one-value critic",
    }


def cloud_figure(study: pg.GradientStudy, *, shown: int = 400, seed: int = 0,
                 height: int = 470) -> go.Figure:
    """Single-episode estimates of ∂J/∂θ_right, their means with 95% intervals, the exact one.

    A sample of ``shown`` estimates per estimator is drawn, jittered sideways.
    """
    labels, names = estimator_labels(study), estimator_names(study)
    rng = np.random.default_rng(seed)
    pick = rng.choice(study.n, size=min(shown, study.n), replace=False)
    fig = figure(height=height, hovermode="closest", showlegend=False, margin=dict(t=40, b=70),
                 xaxis=dict(tickmode="array", tickvals=list(range(len(pg.ESTIMATORS))),
                            ticktext=[labels[k] for k in pg.ESTIMATORS], tickfont=dict(size=11),
                            tickangle=0, range=[-0.6, len(pg.ESTIMATORS) - 0.4],
                            showgrid=False),
                 yaxis=dict(title="one episode's estimate of ∂J/∂θ(right)"))
    means, half = study.means, study.half_widths
    for i, k in enumerate(pg.ESTIMATORS):
        y = study.samples[i, pick]
        x = i + rng.uniform(-0.3, 0.3, size=y.size)
        c = ESTIMATOR_COLORS[k]
        fig.add_trace(go.Scatter(
            x=x, y=y, mode="markers", marker=dict(size=4, color=hex_to_rgba(c, 0.35)),
            name=names[k], hovertemplate=f"{names[k]}: %{{y:.2f}}<extra></extra>"))
        fig.add_trace(go.Scatter(
            x=[i], y=[means[i]], mode="markers",
            marker=dict(size=11, color=c, symbol="diamond", line=dict(color=INK, width=1.5)),
            error_y=dict(type="data", array=[half[i]], color=INK, thickness=2, width=8),
            name=f"{names[k]}: mean",
            hovertemplate=f"mean {means[i]:.3f} ± {half[i]:.3f}<extra></extra>"))
    fig.add_shape(type="line", x0=0, x1=1, xref="paper", y0=study.exact, y1=study.exact,
                  line=dict(color=INK, dash="dash", width=1.5))
    mc = study.samples[: pg.ESTIMATORS.index("optimal") + 1, pick]
    lo, hi = np.percentile(mc, [1, 99])
    span = max(hi - lo, 1.0)
    lo, hi = min(lo, study.exact) - 0.05 * span, max(hi, study.exact) + 0.12 * span
    outside = int(((study.samples[:, pick] < lo) | (study.samples[:, pick] > hi)).sum())
    fig.update_yaxes(range=[lo, hi])
    note = f"dashed line: the exact ∂J/∂θ(right) = {study.exact:.3f}"
    if outside:
        note += f"<br>{outside} of the {pick.size * len(pg.ESTIMATORS):,} points lie outside"
    fig.add_annotation(x=0, xref="paper", y=1, yref="paper", xanchor="left", yanchor="bottom",
                       showarrow=False, align="left", font=dict(size=11, color=MUTED), text=note)
    for k in ("td_true", "td_one"):
        i = pg.ESTIMATORS.index(k)
        top = float(np.max(study.samples[i, pick]))
        fig.add_annotation(x=i, y=min(top, hi), yanchor="bottom", yshift=4, showarrow=False,
                           text=f"bias {means[i] - study.exact:+.2f}",
                           font=dict(size=11, color=ESTIMATOR_COLORS[k]))
    return fig


def variance_figure(study: pg.GradientStudy, *, height: int = 360) -> go.Figure:
    """The variance of each estimator over the episodes, on a log axis labelled by decade."""
    labels = estimator_labels(study)
    var = study.variances
    lo = math.floor(math.log10(max(float(var.min()), 1e-6)))
    hi = math.ceil(math.log10(float(var.max()) * 3))
    fig = figure(height=height, showlegend=False, margin=dict(t=30, b=70),
                 xaxis=dict(tickfont=dict(size=11), tickangle=0),
                 yaxis=dict(title="variance (log scale)", type="log", range=[lo, hi], dtick=1,
                            exponentformat="power"))
    fig.add_trace(go.Bar(
        x=[labels[k] for k in pg.ESTIMATORS], y=var,
        marker_color=[ESTIMATOR_COLORS[k] for k in pg.ESTIMATORS],
        text=[_compact(v) for v in var], textposition="outside", cliponaxis=False,
        hovertemplate="%{x}: variance %{y:.4g}<extra></extra>"))
    return fig


def _compact(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:.3g}"


def parabola_figure(study: pg.GradientStudy, *, height: int = 360) -> go.Figure:
    """Variance of the constant-baseline estimator against the constant.

    A parabola whose lowest point is Cov(X, Y)/Var(Y); the per-state baselines for comparison.
    """
    best = study.best_constant
    # Frame the parabola from its minimum to three times it, wider if the marked b lie outside.
    lowest = float(study.variance_at(np.array(best)))
    half = math.sqrt(2.0 * max(lowest, 1e-9) / max(float(study.moments[2]), 1e-12))
    marks = (best, study.constant, study.learned)
    b = np.linspace(min(best - half, min(marks) - 0.1 * half),
                    max(best + half, max(marks) + 0.1 * half), 300)
    fig = figure(height=height, hovermode="closest", margin=dict(t=30),
                 xaxis=dict(title="constant baseline b"),
                 yaxis=dict(title="variance of the estimate", rangemode="tozero"),
                 legend=dict(y=1.02, yanchor="bottom"))
    fig.add_trace(go.Scatter(x=b, y=study.variance_at(b), mode="lines",
                             line=dict(color=ESTIMATOR_COLORS["constant"], width=2.4),
                             name="b constant", hovertemplate="b = %{x:.1f}: %{y:.4g}"
                             "<extra></extra>"))
    points = [("your b", study.constant, "constant", "circle"),
              ("best constant", best, "optimal", "star"),
              ("learned w", study.learned, "learned", "diamond")]
    for name, x, key, symbol in points:
        fig.add_trace(go.Scatter(
            x=[x], y=[study.variance_at(np.array(x))], mode="markers",
            marker=dict(size=13 if symbol == "star" else 10, color=ESTIMATOR_COLORS[key],
                        symbol=symbol, line=dict(color="white", width=1)),
            name=f"{name} = {x:.1f}", hovertemplate=f"{name}: b = {x:.2f}, variance "
            "%{y:.4g}<extra></extra>"))
    curve = study.variance_at(b)
    floor = min(float(curve.min()), float(study.variances[study.index("optimal")]))
    fig.update_yaxes(range=[0.8 * floor, float(curve.max()) * 1.02], rangemode=None)
    for key, label in (("true_v", "true v_π(s)"), ("optimal", "optimal b*(s)")):
        y = float(study.variances[study.index(key)])
        fig.add_shape(type="line", x0=0, x1=1, xref="paper", y0=y, y1=y,
                      line=dict(color=ESTIMATOR_COLORS[key], dash="dot", width=1.5))
        fig.add_annotation(x=0, xref="paper", y=y, xanchor="left",
                           yanchor="top" if key == "optimal" else "bottom", showarrow=False,
                           text=f"{label}: {_compact(y)}", font=dict(size=11,
                                                                      color=ESTIMATOR_COLORS[key]))
    return fig


# --------------------------------------------------------------------------- worked score
def _num(x: float, digits: int = 4) -> str:
    """A computed number, rounded to ``digits`` decimals (LaTeX minus)."""
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".") if abs(x) < 1e6 else f"{x:.4g}"
    return text if text not in ("-0", "") else "0"


def _given(x: float) -> str:
    """A number the user typed, exactly as it is used."""
    return np.format_float_positional(float(x), trim="-")


def _par(text: str) -> str:
    return f"({text})" if text.startswith("-") else text


def _vec(values, digits: int = 4) -> str:
    return r"\begin{bmatrix}" + r"\\".join(_num(v, digits) for v in values) + r"\end{bmatrix}"


def worked_steps(w: pg.WorkedScore) -> list[tuple[str, str]]:
    """The softmax gradient worked with the user's numbers, as (caption, LaTeX) pairs.

    Numbers the user typed appear exactly as used; computed ones are rounded to four decimals.
    Each line is short enough for a phone.
    """
    tr, tl = _given(w.theta[0]), _given(w.theta[1])
    a = pg.ACTIONS[w.action]
    gap = w.ret - w.baseline
    given = r"\begin{bmatrix}" + tr + r"\\" + tl + r"\end{bmatrix}"
    return [
        ("Action preferences with one-hot features, h(s, a, θ) = θᵀx(s, a), and the softmax",
         rf"\begin{{aligned}}\pi(\text{{right}}) &= \frac{{e^{{{tr}}}}}{{e^{{{tr}}} + "
         rf"e^{{{tl}}}}} = {_num(w.pi[0])} \\ \pi(\text{{left}}) &= 1 - \pi(\text{{right}}) = "
         rf"{_num(w.pi[1])}\end{{aligned}}"),
        (f"The score of the action taken ({a}): its features minus the policy's mean features",
         rf"\begin{{aligned}}\nabla_\theta \ln \pi(\text{{{a}}}) &= x(s, \text{{{a}}}) - "
         rf"\textstyle\sum_b \pi(b)\,x(s, b) \\ &= {_vec(w.x)} - {_vec(w.pi)} = "
         rf"{_vec(w.score)}\end{{aligned}}"),
        ("Checked against central finite differences of ln π(a)",
         rf"\frac{{\partial \ln \pi(\text{{{a}}})}}{{\partial \theta}} \approx "
         rf"{_vec(w.finite_difference, 6)}"),
        ("The REINFORCE step with baseline b: θ ← θ + α (G − b) ∇ln π(a)",
         rf"\begin{{aligned}}G - b &= {_given(w.ret)} - {_par(_given(w.baseline))} = "
         rf"{_num(gap)} \\ \theta &\leftarrow {given} + {_given(w.alpha)} \cdot "
         rf"{_par(_num(gap))} \cdot {_vec(w.score)} \\ &= {_vec(w.new_theta)}\end{{aligned}}"),
        ("The new policy: the action taken gains probability when G − b > 0",
         rf"\pi(\text{{{a}}}) = {_num(w.pi[w.action])} \;\to\; {_num(w.new_pi[w.action])}"),
    ]


def log_policy_figure(w: pg.WorkedScore, *, height: int = 300) -> go.Figure:
    """The log-probability ln π(a) as θ(right) moves (θ(left) fixed), with its tangent.

    The tangent's slope at the current θ is the score's first entry.
    """
    span = np.linspace(w.theta[0] - 4, w.theta[0] + 4, 161)
    theta = np.stack([span, np.full_like(span, w.theta[1])], axis=1)
    logp = np.log(pg.softmax(theta)[:, w.action])
    here = float(np.log(w.pi[w.action]))
    slope = float(w.score[0])
    a = pg.ACTIONS[w.action]
    fig = figure(height=height, hovermode="closest", showlegend=False, margin=dict(t=30),
                 xaxis=dict(title="θ(right), θ(left) held fixed"),
                 yaxis=dict(title=f"ln π({a})"))
    fig.add_trace(go.Scatter(x=span, y=logp, mode="lines", line=dict(color=INK, width=2.2),
                             name=f"ln π({a})", hovertemplate="θ(right) = %{x:.2f}: %{y:.3f}"
                             "<extra></extra>"))
    t = np.array([w.theta[0] - 1.5, w.theta[0] + 1.5])
    fig.add_trace(go.Scatter(x=t, y=here + slope * (t - w.theta[0]), mode="lines",
                             line=dict(color=color("reinforce"), width=2, dash="dash"),
                             name="tangent", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=[w.theta[0]], y=[here], mode="markers",
                             marker=dict(size=10, color=color("reinforce")),
                             hovertemplate="θ(right) = %{x}, ln π = %{y:.4f}<extra></extra>"))
    fig.add_annotation(x=0.02, xref="paper", y=0.02, yref="paper", xanchor="left",
                       yanchor="bottom", showarrow=False, font=dict(size=12,
                                                                    color=color("reinforce")),
                       text=f"slope at θ(right) = {_given(w.theta[0])}: {_num(slope)}",
                       bgcolor="rgba(255,255,255,0.85)")
    return fig


EQUATIONS: list[tuple[str, str]] = [
    ("The value of the coin p, from the Bellman equations of the three states (γ = 1)",
     r"\begin{aligned} v(S) &= -1 + p\,v(2) + (1-p)\,v(S) \\ v(2) &= -1 + p\,v(S) + "
     r"(1-p)\,v(3) \\ v(3) &= -1 + (1-p)\,v(2) \end{aligned}"),
    ("Solved: the start value and its best coin",
     r"\begin{gathered} J(p) = v(S) = \frac{2p - 4}{p(1-p)} \\ J'(p) = 0 \iff "
     r"p^2 - 4p + 2 = 0 \iff p^* = 2 - \sqrt{2} \end{gathered}"),
    ("Softmax over action preferences with the book's one-hot features (eq. 13.2)",
     r"\begin{gathered} \pi(a \mid s, \theta) = \frac{e^{\theta^\top x(s,a)}}"
     r"{\sum_b e^{\theta^\top x(s,b)}} \\ x(s, \text{right}) = \begin{bmatrix}1\\0"
     r"\end{bmatrix},\; x(s, \text{left}) = \begin{bmatrix}0\\1\end{bmatrix}"
     r"\end{gathered}"),
    ("The score (eq. 13.9); its mean under π is zero",
     r"\begin{gathered} \nabla_\theta \ln \pi(a \mid s, \theta) = x(s,a) - \sum_b "
     r"\pi(b \mid s, \theta)\, x(s,b) = \mathrm{onehot}(a) - \pi \\ \sum_a \pi(a)\,"
     r"\nabla \ln \pi(a) = \nabla \sum_a \pi(a) = 0 \end{gathered}"),
    ("REINFORCE, with a baseline, after each episode (γ = 1); the baseline moves every step",
     r"\begin{gathered} \theta \leftarrow \theta + \alpha \sum_{t=0}^{T-1} \big(G_t - "
     r"b(S_t)\big)\, \nabla_\theta \ln \pi(A_t \mid S_t, \theta) \\ w \leftarrow w + "
     r"\alpha_w (G_t - w) \end{gathered}"),
    ("One-step actor-critic, every step (I = 1 since γ = 1)",
     r"\begin{gathered} \delta = R + \hat v(S') - \hat v(S) \\ \hat v(S) \leftarrow "
     r"\hat v(S) + \alpha_w \delta \\ \theta \leftarrow \theta + \alpha_\theta\, \delta\,"
     r"\nabla_\theta \ln \pi(A \mid S, \theta) \end{gathered}"),
    ("Baselines in the study: with X the estimate without one and Y_s the scores summed "
     "over the visits to s, the estimate is linear in b, so its variance is quadratic",
     r"\begin{gathered} \hat g_b = X - \sum_s b(s)\,Y_s, \qquad b^*(s) = "
     r"\frac{\mathbb E[X\,Y_s]}{\mathbb E[Y_s^2]} \\ \mathrm{Var}(X - bY) \text{ is least "
     r"at } b = \frac{\mathrm{Cov}(X, Y)}{\mathrm{Var}(Y)} \end{gathered}"),
    ("A critic with one value w for all states: every δ but the last is −1, and the last "
     "action is always right",
     r"\begin{gathered} \mathbb E\Big[\sum_t \delta_t\, \frac{\partial \ln \pi(A_t)}"
     r"{\partial \theta_{\text{right}}}\Big] = -w\,(1 - p) \\ > 0 \text{ for } w = J(p) "
     r"< 0 \end{gathered}"),
    ("Bands: the t-interval of the mean over R runs",
     r"\bar x \pm t_{0.975,\,R-1}\; s / \sqrt{R}"),
]
"""The page's equations: (caption, LaTeX), each line short enough for a phone."""


# --------------------------------------------------------------------------- tables and notes
def _column_mean(x: np.ndarray) -> np.ndarray:
    """Mean over runs of each episode, over the runs that played it (NaN where none did)."""
    seen = np.isfinite(x)
    total = np.where(seen, x, 0.0).sum(axis=0)
    count = seen.sum(axis=0)
    return np.divide(total, count, out=np.full(total.shape, np.nan), where=count > 0)


def export_tables(training: pg.Training, study: pg.GradientStudy, *,
                  window: int = 1) -> dict[str, pd.DataFrame]:
    """The page's data: learning curves, every single-episode estimate, the study's summary."""
    rows = []
    for i, m in enumerate(training.methods):
        curve = pg.learning_curve(training.returns[i], window=window)
        rows.append(pd.DataFrame({
            "learner": method_label(m), "episode": np.arange(1, training.episodes + 1),
            "mean_return": curve.mean, "band_low": curve.low, "band_high": curve.high,
            "mean_p_right": _column_mean(training.p_right[i])}))
    estimates = pd.DataFrame({k: study.samples[i] for i, k in enumerate(pg.ESTIMATORS)})
    estimates.insert(0, "episode_length", study.lengths)
    summary = pd.DataFrame({"estimator": pg.ESTIMATORS, "mean": study.means,
                            "half_width_95": study.half_widths, "variance": study.variances,
                            "exact": study.exact})
    return {"learning_curves": pd.concat(rows, ignore_index=True),
            "gradient_estimates": estimates, "gradient_summary": summary}


def final_policies(training: pg.Training) -> list[tuple[str, float, str]]:
    """(label, mean final π(right), colour) of each learner whose runs reached the end."""
    out = []
    for i, m in enumerate(training.methods):
        last = training.p_right[i, :, -1]
        last = last[np.isfinite(last)]  # runs that stopped early have none
        if last.size:
            out.append((method_label(m), float(last.mean()), method_color(m, training.methods)))
    return out


def stop_notes(training: pg.Training) -> list[str]:
    """Markdown notes on the runs that ran away or used up their steps."""
    notes = []
    for i, m in enumerate(training.methods):
        away, cut = int((training.ran_away[i] >= 0).sum()), int((training.cut[i] >= 0).sum())
        if away:
            notes.append(f"**{away} of {training.runs} runs of {method_label(m)} ran away**: "
                         f"an episode reached {training.max_steps:,} steps, so the run stops "
                         f"there and counts −{training.max_steps:,} per episode from then on.")
        if cut:
            first = int(training.cut[i][training.cut[i] >= 0].min()) + 1
            notes.append(f"**{cut} of {training.runs} runs of {method_label(m)} used their "
                         f"{training.budget_of(m):,} steps** before their last episode (the "
                         f"first before episode {first:,}); later means are over the runs left.")
    return notes
