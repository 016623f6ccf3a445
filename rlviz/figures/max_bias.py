"""Figures of the maximization-bias page: % left from A, Q(A, ·), the estimators, one update."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rlviz import max_bias as mb
from rlviz.figures.td import LABELS
from rlviz.figures.theme import INK, MUTED, color, figure, hex_to_rgba

__all__ = [
    "EQUATIONS",
    "LABELS",
    "actions_figure",
    "left_caption",
    "left_figure",
    "samples_figure",
    "study_caption",
    "tables",
    "values_caption",
    "values_figure",
    "worked_figure",
    "worked_steps",
]

BAND_ALPHA = 0.18
SINGLE, DOUBLE = "q_learning", "double_q"  # the estimators wear their learners' colours
DECIMALS = 4


def _band(fig: go.Figure, x, curve: mb.Curve, c: str, name: str, scale: float = 1.0) -> None:
    fig.add_trace(go.Scatter(
        x=np.concatenate([x, x[::-1]]), y=scale * np.concatenate([curve.high, curve.low[::-1]]),
        fill="toself", fillcolor=hex_to_rgba(c, BAND_ALPHA), line=dict(width=0),
        hoverinfo="skip", showlegend=False, name=f"{name} 95% band",
    ))


def left_figure(methods: Mapping[str, mb.MethodResult], *, epsilon: float) -> go.Figure:
    """% of runs going left from A in each episode, per method, with the ε-greedy optimum."""
    fig = figure(xaxis_title="episode", yaxis_title="% left actions from A",
                 hovermode="x unified", height=420)
    for name, res in methods.items():
        x = np.arange(1, res.episodes + 1)
        c = color(name)
        _band(fig, x, res.left, c, LABELS[name], scale=100)
        fig.add_trace(go.Scatter(x=x, y=100 * res.left.mean, mode="lines", name=LABELS[name],
                                 line=dict(color=c, width=2.4), hovertemplate="%{y:.1f}%"))
    best = 100 * mb.MaxBiasMDP.optimal_left_fraction(epsilon)
    fig.add_hline(y=best, line=dict(color=INK, dash="dash", width=1.4),
                  annotation=dict(text=f"optimal under ε-greedy: ε/2 = {best:.3g}%",
                                  font=dict(color=INK, size=12)),
                  annotation_position="bottom right")
    fig.update_yaxes(range=[0, 100], ticksuffix="%", dtick=20)
    return fig


def values_figure(methods: Mapping[str, mb.MethodResult], *, true_left: float) -> go.Figure:
    """Q(A, left) (solid) and Q(A, right) (dotted) over the episodes, mean over runs, 95% bands."""
    fig = figure(xaxis_title="episode", yaxis_title="action value (mean over runs)",
                 hovermode="x unified", height=420)
    for name, res in methods.items():
        x = np.arange(1, res.episodes + 1)
        c = color(name)
        _band(fig, x, res.q_left, c, f"{LABELS[name]} Q(A, left)")
        fig.add_trace(go.Scatter(x=x, y=res.q_left.mean, mode="lines",
                                 name=f"{LABELS[name]}: Q(A, left)", line=dict(color=c, width=2.4),
                                 hovertemplate="%{y:.4f}"))
    for name, res in methods.items():
        x = np.arange(1, res.episodes + 1)
        fig.add_trace(go.Scatter(x=x, y=res.q_right.mean, mode="lines",
                                 name=f"{LABELS[name]}: Q(A, right)",
                                 line=dict(color=color(name), width=1.6, dash="dot"),
                                 hovertemplate="%{y:.4f}", legendgroup="right",
                                 showlegend=False))
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name="Q(A, right), dotted",
                             line=dict(color=MUTED, width=1.6, dash="dot"), legendgroup="right",
                             hoverinfo="skip"))
    fig.add_hline(y=true_left, line=dict(color=INK, dash="dash", width=1.4),
                  annotation=dict(text=f"true Q(A, left) = γμ = {_minus(f'{true_left:.4g}')}",
                                  font=dict(color=INK, size=12)),
                  annotation_position="bottom right")
    fig.update_layout(legend=dict(entrywidth=0, entrywidthmode="pixels"))
    return fig


def _log_ticks(values) -> dict:
    """A log axis labelled at the grid's own values (no minor labels to misread)."""
    values = sorted(set(int(v) for v in values))
    return dict(type="log", tickvals=values, ticktext=[f"{v:,}" for v in values],
                minor=dict(showgrid=False))


def _estimator_traces(fig: go.Figure, x, single, single_half, double, double_half,
                      single_exact, double_exact) -> None:
    for key, mc, half, exact, label in (
        (SINGLE, single, single_half, single_exact, "single (max of the sample means)"),
        (DOUBLE, double, double_half, double_exact, "double (half A picks, half B values)"),
    ):
        c = color(key)
        fig.add_trace(go.Scatter(x=x, y=exact, mode="lines", line=dict(color=c, width=2),
                                 name=f"{label}: closed form", legendgroup=key,
                                 hovertemplate="closed form %{y:.4f}<extra></extra>"))
        fig.add_trace(go.Scatter(
            x=x, y=mc, mode="markers", name=f"{label}: Monte Carlo", legendgroup=key,
            marker=dict(color=c, size=8, symbol="circle-open", line=dict(width=2)),
            error_y=dict(type="data", array=half, color=c, thickness=1.4, width=4),
            hovertemplate="Monte Carlo %{y:.4f} ± %{error_y.array:.4f}<extra></extra>",
        ))
    fig.add_hline(y=0, line=dict(color=INK, width=1.2))


def actions_figure(study: mb.EstimatorStudy) -> go.Figure:
    """Bias of the single and double estimators against the number of actions m."""
    fig = figure(xaxis_title="number of actions m (log axis)",
                 yaxis_title="estimate − true max", height=400,
                 title=f"n = {study.samples} samples per action, σ = {study.sigma:g}")
    x = np.array(study.actions)
    _estimator_traces(fig, x, study.single_mc, study.single_half, study.double_mc,
                      study.double_half, study.single_exact, study.double_exact)
    fig.update_xaxes(**_log_ticks(x))
    fig.update_layout(legend=dict(y=-0.3, yanchor="top"), margin=dict(t=40, b=150))
    return fig


def samples_figure(study: mb.EstimatorStudy) -> go.Figure:
    """Bias of the two estimators against the samples per action n (at m actions)."""
    fig = figure(xaxis_title="samples per action n (log axis)",
                 yaxis_title="estimate − true max", height=400,
                 title=f"m = {study.m} actions, σ = {study.sigma:g}")
    x = np.array(study.sample_grid)
    _estimator_traces(fig, x, study.by_samples_single_mc, study.by_samples_single_half,
                      study.by_samples_double_mc, study.by_samples_double_half,
                      study.by_samples_single_exact, study.by_samples_double_exact)
    fig.update_xaxes(**_log_ticks(x))
    fig.update_layout(legend=dict(y=-0.3, yanchor="top"), margin=dict(t=40, b=150))
    return fig


# --------------------------------------------------------------------------- captions
def left_caption(methods: Mapping[str, mb.MethodResult], *, epsilon: float) -> str:
    """The peak and the last 50 episodes of each curve, in words."""
    parts = []
    for name, res in methods.items():
        peak = int(res.left.mean.argmax())
        tail = max(1, res.episodes - 49)
        parts.append(f"**{LABELS[name]}** peaks at {100 * res.left.mean[peak]:.1f}% (episode "
                     f"{peak + 1}) and goes left {100 * res.left_fraction(tail, res.episodes):.1f}%"
                     f" of the time over episodes {tail}–{res.episodes}")
    best = 100 * mb.MaxBiasMDP.optimal_left_fraction(epsilon)
    return "; ".join(parts) + f". Knowing the values, ε-greedy would go left {best:.3g}%."


def values_caption(methods: Mapping[str, mb.MethodResult], *, true_left: float) -> str:
    """The highest mean Q(A, left) of each method, against its true value."""
    parts = []
    for name, res in methods.items():
        top = int(res.q_left.mean.argmax())
        parts.append(f"{LABELS[name]} {_n(res.q_left.mean[top], '+.3f')} (episode {top + 1})")
    return ("Highest mean Q(A, left): " + ", ".join(parts) + f"; its true value is "
            f"{_n(true_left, '.3g')}. Q(A, right) stays exactly 0: its target is always the "
            "reward 0.")


def study_caption(study: mb.EstimatorStudy) -> str:
    """The closed form at the chosen m, worked out, against its Monte Carlo estimate."""
    i = study.actions.index(study.m)
    e = mb.expected_max_of_normals(study.m)
    s = study.sigma / np.sqrt(study.samples)
    if study.gap == 0:
        single = (f"E[max of {study.m} N(0, 1)] = {e:.4f}, so the single estimator is "
                  f"σ/√n × {e:.4f} = {s:.4f} × {e:.4f} ≈ {_n(study.single_exact[i], '.4f')} too "
                  "high on average (all true values equal)")
    else:
        single = (f"with the best true value {study.gap:g} above the others the single "
                  f"estimator is {_n(study.single_exact[i], '.4f')} too high on average "
                  "(closed form by integration)")
    return (f"At m = {study.m}: {single}; Monte Carlo: {_n(study.single_mc[i], '.4f')} ± "
            f"{study.single_half[i]:.4f} over {study.trials:,} trials. The double estimator: "
            f"{_n(study.double_mc[i], '.4f')} ± {study.double_half[i]:.4f} (closed form "
            f"{_n(study.double_exact[i], '.4f')}).")


def _n(x: float, fmt: str) -> str:
    """A number for reading: formatted, with a typographic minus sign."""
    text = format(float(x), fmt)
    if text.startswith("-") and not text.strip("-0.+"):  # "-0.0000" is just zero
        text = text[1:]
    return _minus(text)


# --------------------------------------------------------------------------- worked update
def _minus(text: str) -> str:
    """A typographic minus sign in numbers written for reading."""
    return text.replace("-", "−")


def _res(x: float) -> str:
    """A computed number, rounded to ``DECIMALS`` decimals (trailing zeros dropped)."""
    text = f"{x:.{DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _eq(x: float) -> str:
    """``= x``, or ``≈ x`` when the shown digits are not the whole number."""
    exact = abs(x - float(_res(x))) <= 1e-12 * max(1.0, abs(x))
    return ("= " if exact else r"\approx ") + _res(x)


def _par(x: float) -> str:
    """A rounded number ready to be multiplied or subtracted: negatives in parentheses."""
    text = _res(x)
    return f"({text})" if text.startswith("-") else text


def worked_steps(w: mb.WorkedTargets) -> dict[str, str]:
    """The target of Q(A, left) worked by each method, as LaTeX: value of B, target, new value.

    Settings appear exactly as used; a computed number is shown to ``DECIMALS`` decimals, after
    ``≈`` when that rounds it. Every line is short, so that a block fits a third of the page.
    """
    g, a = f"{w.gamma:g}", f"{w.alpha:g}"
    blocks = {}
    for name, value in w.value.items():
        y, q, new = w.target[name], w.q_left[name], w.new_q_left[name]
        b = rf"b_{{{w.chosen[name] + 1}}}"
        if name == "q_learning":
            head = rf"v_B &= \max_b Q(B, b) \\ &= Q(B, {b}) {_eq(value)} \\"
        elif name == "double_q":
            head = (rf"b^* &= \arg\max_b Q_1(B, b) = {b} \\"
                    rf"v_B &= Q_2(B, b^*) {_eq(value)} \\")
        else:
            head = (rf"v_B &= \textstyle\sum_b \pi(b \mid B)\, Q(B, b) \\"
                    rf"&= {_res(1 - w.epsilon)} \max_b Q + {_res(w.epsilon)}\, \overline{{Q}} \\"
                    rf"&{_eq(value)} \\")
        q_name = r"Q_1(A, \text{left})" if name == "double_q" else r"Q(A, \text{left})"
        blocks[name] = (
            r"\begin{aligned}" + head
            + rf"y &= 0 + \gamma\, v_B \\ &= {g} \cdot {_par(value)} {_eq(y)} \\"
            + rf"{q_name} &\leftarrow Q + \alpha\,(y - Q) \\"
            + rf"&= {_res(q)} + {a} \cdot ({_res(y)} - {_par(q)}) \\"
            + rf"&{_eq(new)}"
            + r"\end{aligned}"
        )
    return blocks


def worked_figure(w: mb.WorkedTargets, name: str) -> go.Figure:
    """One method's Q(B, ·) in run 1 at the start of the episode, and the value it bootstraps on."""
    q_b = w.q_b[name]
    m = q_b.shape[-1]
    x = [f"b{k + 1}" for k in range(m)]
    c = color(name)
    # in a third of the page a legend of three entries takes three rows under the title
    fig = figure(height=340, yaxis_title="Q(B, b)", title=LABELS[name], bargap=0.15,
                 margin=dict(l=70, r=16, t=112, b=40))
    if name == "double_q":
        for t, (shade, label) in enumerate(((c, "Q₁"), (hex_to_rgba(c, 0.45), "Q₂"))):
            fig.add_trace(go.Bar(x=x, y=q_b[t], name=label, marker=dict(color=shade),
                                 hovertemplate=f"{label}(B, %{{x}}) = %{{y:.4f}}<extra></extra>"))
        fig.update_layout(barmode="group")
    else:
        fig.add_trace(go.Bar(x=x, y=q_b[0], name="Q(B, b)", marker=dict(color=c),
                             hovertemplate="Q(B, %{x}) = %{y:.4f}<extra></extra>"))
    ends = [x[0], x[-1]]
    fig.add_trace(go.Scatter(x=ends, y=[w.value[name]] * 2, mode="lines",
                             line=dict(color=INK, width=2), name="v_B, in its target",
                             hovertemplate="v_B = %{y:.4f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=ends, y=[w.mean] * 2, mode="lines",
                             line=dict(color=INK, width=1.2, dash="dash"), name="true μ",
                             hovertemplate="true value μ = %{y:.4g}<extra></extra>"))
    if m > 12:
        fig.update_xaxes(showticklabels=False, title_text=f"B's {m} actions")
    return fig


# --------------------------------------------------------------------------- export
def tables(methods: Mapping[str, mb.MethodResult], study: mb.EstimatorStudy) -> dict:
    """The data behind the figures, as tidy tables."""
    rows = []
    for name, res in methods.items():
        for k in range(res.episodes):
            rows.append({
                "method": name, "episode": k + 1,
                "left": res.left.mean[k], "left_low": res.left.low[k],
                "left_high": res.left.high[k],
                "q_left": res.q_left.mean[k], "q_left_low": res.q_left.low[k],
                "q_left_high": res.q_left.high[k], "q_right": res.q_right.mean[k],
            })
    by_m = pd.DataFrame({
        "m": study.actions, "single_mc": study.single_mc, "single_half_width": study.single_half,
        "single_closed_form": study.single_exact, "double_mc": study.double_mc,
        "double_half_width": study.double_half, "double_closed_form": study.double_exact,
    })
    by_n = pd.DataFrame({
        "n": study.sample_grid, "single_mc": study.by_samples_single_mc,
        "single_half_width": study.by_samples_single_half,
        "single_closed_form": study.by_samples_single_exact,
        "double_mc": study.by_samples_double_mc,
        "double_half_width": study.by_samples_double_half,
        "double_closed_form": study.by_samples_double_exact,
    })
    return {"episodes": pd.DataFrame(rows), "estimators_by_actions": by_m,
            "estimators_by_samples": by_n}


EQUATIONS: tuple[tuple[str, str], ...] = (
    ("The MDP (Example 6.7): right ends with 0; left gives 0 and leads to B, whose m actions "
     "each end with a fresh draw", r"R \mid B, b \;\sim\; \mathcal N(\mu, \sigma^2), \qquad "
     r"q_*(A, \text{left}) = \gamma\mu, \qquad q_*(A, \text{right}) = 0"),
    ("ε-greedy in A when the values are known: left only when exploring, half of the time",
     r"P(\text{left}) = \varepsilon / 2"),
    ("Why the max is biased: the max of the estimates is at least the estimate of any one action, "
     "so in expectation it is at least the largest true value (Jensen)",
     r"\mathbb E\big[\max_b \hat Q(B, b)\big] \;\ge\; \max_b \mathbb E\big[\hat Q(B, b)\big]"
     r" = \max_b q(B, b)"),
    ("Q-learning's target for Q(A, left) uses that max",
     r"Q(A, \text{left}) \leftarrow Q(A, \text{left}) + \alpha\big[0 + \gamma \max_b Q(B, b)"
     r" - Q(A, \text{left})\big]"),
    ("Expected SARSA's uses the ε-greedy expectation, still mostly the max",
     r"\textstyle\sum_b \pi(b \mid B)\, Q(B, b) = (1 - \varepsilon) \max_b Q(B, b) + "
     r"\varepsilon\, \tfrac{1}{m} \sum_b Q(B, b)"),
    ("Double Q-learning: one table picks, the other (independent) values; a coin swaps roles",
     r"Q_1(A, \text{left}) \leftarrow Q_1(A, \text{left}) + \alpha\big[0 + \gamma\, Q_2\big(B, "
     r"\arg\max_b Q_1(B, b)\big) - Q_1(A, \text{left})\big]"),
    ("The single estimator's bias for m equal true values, n samples each (closed form by "
     "integration)", r"\mathbb E\big[\max_i \bar X_i\big] - \mu = \frac{\sigma}{\sqrt n}"
     r"\int_{-\infty}^{\infty} m\, x\, \varphi(x)\, \Phi(x)^{m-1}\, dx"),
    ("The double estimator: unbiased when the true values are equal, otherwise too low",
     r"\mathbb E\big[\bar X^B_{a^*}\big] = \sum_i P(a^* = i)\, \mu_i \le \max_i \mu_i, \qquad"
     r" a^* = \arg\max_i \bar X^A_i"),
    ("Bands: a fraction of R runs (Wilson interval), a mean over runs (t-interval)",
     r"\frac{\hat p + \frac{z^2}{2R} \pm z\sqrt{\frac{\hat p(1-\hat p)}{R} + \frac{z^2}{4R^2}}}"
     r"{1 + \frac{z^2}{R}}, \qquad \bar x \pm t_{0.975,\,R-1}\, \frac{s}{\sqrt R}"),
)
