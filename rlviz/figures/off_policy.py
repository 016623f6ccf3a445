"""Figures of the importance-sampling page: Figure 5.3, Figure 5.4, the estimator comparison."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rlviz.figures.theme import INK, MUTED, PALETTE, figure, hex_to_rgba
from rlviz.off_policy import (
    ESTIMATORS,
    ONE_STATE_VALUE,
    BlackjackStudy,
    EstimatorStudy,
    InfiniteVarianceStudy,
    PerDecisionWorked,
)

__all__ = [
    "COLORS",
    "CRITIC_LABELS",
    "CRITIC_NOTES",
    "EQUATIONS",
    "LABELS",
    "bias_figure",
    "blackjack_figure",
    "ess_figure",
    "estimator_table",
    "export_tables",
    "infinite_variance_figure",
    "mse_figure",
    "per_decision_figure",
    "per_decision_latex",
    "weights_figure",
]

COLORS = {
    "ordinary": PALETTE[1],  # orange: the noisy one
    "weighted": PALETTE[0],  # blue
    "per_decision": PALETTE[2],  # green
    "doubly_robust": PALETTE[3],  # violet
}
LABELS = {
    "ordinary": "ordinary IS",
    "weighted": "weighted IS",
    "per_decision": "per-decision IS",
    "doubly_robust": "doubly robust",
}
TRUTH = INK
CRITIC_LABELS = {
    "cross_fitted": "cross-fitted model",
    "same_data": "model of the same data",
    "true": "true q_π (oracle)",
    "zero": "none (Q̂ = 0)",
}
"""Short names of the critics of doubly robust, for the page's controls."""
CRITIC_NOTES = {
    "cross_fitted": "each run's episodes are split into even and odd; a maximum-likelihood model "
                    "(transition counts, mean rewards) is fitted on each half, Q̂ of π is computed "
                    "on it by backward induction, and every episode is corrected by the critic of "
                    "the other half.",
    "same_data": "one maximum-likelihood model per run, fitted on the very episodes it corrects, "
                 "with Q̂ of π by backward induction (a little bias).",
    "true": "the exact q_π, computed on the true chain (the best a critic can be).",
    "zero": "none, Q̂ = 0, so doubly robust is exactly per-decision IS.",
}
"""How each critic of doubly robust is made, for the page's caption."""
EQUATIONS = [
    ("The importance ratio of the steps t to T − 1 (eq. 5.3), and why it works",
     r"\rho_{t:T-1} = \prod_{k=t}^{T-1} \frac{\pi(A_k \mid S_k)}{b(A_k \mid S_k)}"),
    ("", r"\mathbb{E}_b[\rho_{t:T-1}\, G_t \mid S_t = s] = v_\pi(s)"),
    ("Ordinary and weighted importance sampling over n episodes (eqs. 5.5 and 5.6)",
     r"V_{\text{ord}} = \frac{1}{n}\sum_{i=1}^{n} \rho_i\, G_i"),
    ("", r"V_{\text{wtd}} = \frac{\sum_{i} \rho_i\, G_i}{\sum_i \rho_i}"),
    ("Per-decision importance sampling (Precup et al. 2000; eq. 5.15)",
     r"V_{\text{pd}} = \frac{1}{n}\sum_{i=1}^{n} \sum_{t=0}^{T-1} \gamma^t\, "
     r"\rho^{(i)}_{0:t}\, R^{(i)}_{t+1}"),
    ("Doubly robust, with a critic Q̂ and V̂(s) = Σₐ π(a|s) Q̂(s, a), ρ₀:₋₁ = 1 "
     "(Jiang & Li 2016)",
     r"V_{\text{DR}} = \frac{1}{n}\sum_{i}\sum_{t} \gamma^t \Big[\rho_{0:t}\big(R_{t+1} - "
     r"\hat Q(S_t, A_t)\big) + \rho_{0:t-1}\, \hat V(S_t)\Big]"),
    ("Kish's effective sample size, and its population version on the chain",
     r"n_{\text{eff}} = \frac{\big(\sum_i w_i\big)^2}{\sum_i w_i^2} \approx "
     r"\frac{n}{\mathbb{E}_b[\rho^2]}"),
    ("", r"\mathbb{E}_b[\rho^2] = \Big(\sum_a \frac{\pi(a)^2}{b(a)}\Big)^{T} "
         r"= (1 + \delta^2)^T"),
    ("Example 5.5: the second moment of ordinary IS diverges",
     r"\mathbb{E}_b\big[\rho^2 G^2\big] = \sum_{k=1}^{\infty} \big(\tfrac12 \cdot 0.9\big)"
     r"^{k-1} \tfrac12 \cdot 0.1 \cdot 2^{2k} = 0.2 \sum_{k=0}^{\infty} 1.8^k = \infty"),
    ("Bias, variance and MSE over R runs; bands are t-intervals of a mean",
     r"\mathrm{MSE} = \frac1R\sum_r (V_r - v_\pi)^2 = \text{bias}^2 + \text{variance}"),
    ("", r"\bar x \pm t_{0.975,\,R-1}\, s/\sqrt{R}"),
]
"""The page's equations: (caption, LaTeX) pairs, each rendered on its own line."""



def _decades(lo: float, hi: float) -> dict:
    """A log axis over ``[lo, hi]`` with ticks at whole decades only (no minor labels).

    Labels are short: 0.001 to 1000 as plain numbers, 10k, and powers of ten beyond.
    """
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    vals = [10.0**k for k in range(a, b + 1)]

    def text(k: int) -> str:
        if -3 <= k <= 3:
            return f"{10.0**k:g}"
        if k == 4:
            return "10k"
        return f"10<sup>{k}</sup>".replace("-", "−")

    return dict(type="log", tickvals=vals, ticktext=[text(k) for k in range(a, b + 1)],
                range=[math.log10(lo), math.log10(hi)], minor=dict(ticks=""))


def _floor(values: np.ndarray) -> float:
    """The bottom of a log axis: a third of the smallest positive value shown."""
    positive = values[values > 0]
    return max(float(positive.min()) / 3, 1e-12) if positive.size else 1e-6


def _band(x, lo, hi, colour, name, *, xaxis="x", yaxis="y") -> go.Scatter:
    xs = np.concatenate([x, x[::-1]])
    ys = np.concatenate([hi, lo[::-1]])
    return go.Scatter(x=xs, y=ys, fill="toself", fillcolor=hex_to_rgba(colour, 0.16),
                      line=dict(width=0), hoverinfo="skip", showlegend=False, name=name,
                      legendgroup=name, xaxis=xaxis, yaxis=yaxis)


def _log_points(n: int, count: int = 300) -> np.ndarray:
    return np.unique(np.geomspace(1, n, count).round().astype(np.int64)) - 1


# --------------------------------------------------------------------------- Figure 5.3
def blackjack_figure(study: BlackjackStudy, *, height: int = 430) -> go.Figure:
    """MSE of ordinary and weighted IS against episodes (log-log), 95% bands over runs."""
    idx = _log_points(study.episodes)
    n = study.n[idx]
    exact = study.per_episode_variance / n
    positive = np.concatenate([study.mse[k][idx] for k in ("ordinary", "weighted")] + [exact])
    floor = _floor(positive)
    top = 1.5 * max(float(positive.max()), *(float((study.mse[k] + study.mse_half[k])[idx].max())
                                             for k in ("ordinary", "weighted")))
    fig = figure(
        height=height, hovermode="x unified",
        xaxis=dict(title="episodes (log scale)", **_decades(1, max(study.episodes, 10))),
        yaxis=dict(title=f"mean squared error (over {study.runs} runs)",
                   **_decades(floor, max(top, 1.0))),
        margin=dict(t=70),
    )
    for name in ("ordinary", "weighted"):
        mse, half = study.mse[name][idx], study.mse_half[name][idx]
        colour = COLORS[name]
        if study.runs > 1:
            fig.add_trace(_band(n, np.maximum(mse - half, floor), mse + half, colour,
                                LABELS[name]))
        fig.add_trace(go.Scatter(x=n, y=np.maximum(mse, floor), mode="lines",
                                 name=LABELS[name], legendgroup=LABELS[name],
                                 line=dict(color=colour, width=2.6),
                                 hovertemplate="%{y:.4g}"))
    fig.add_trace(go.Scatter(
        x=n, y=np.maximum(exact, floor), mode="lines", name="Var_b(ρG) / n, exact",
        line=dict(color=COLORS["ordinary"], dash="dot", width=1.6),
        hovertemplate="%{y:.4g}"))
    return fig


# --------------------------------------------------------------------------- Figure 5.4
def infinite_variance_figure(study: InfiniteVarianceStudy, *, height: int = 430,
                             top: float = 3.0) -> go.Figure:
    """Each run's ordinary IS estimate (thin orange) and weighted IS (blue) against episodes."""
    x = study.at
    fig = figure(
        height=height,
        xaxis=dict(title="episodes (log scale)", **_decades(1, max(study.episodes, 10))),
        yaxis=dict(title="estimate of v_π(s)", range=[-0.05, top]),
        margin=dict(t=70),
    )
    for r in range(study.runs):
        fig.add_trace(go.Scatter(
            x=x, y=study.ordinary[r], mode="lines", name="ordinary IS (one line per run)",
            legendgroup="ordinary", showlegend=r == 0,
            line=dict(color=COLORS["ordinary"], width=1.2), opacity=0.8,
            hovertemplate=f"run {r + 1}: %{{y:.4g}} after %{{x}} episodes<extra></extra>"))
    for r in range(study.runs):
        fig.add_trace(go.Scatter(
            x=x, y=study.weighted[r], mode="lines", name="weighted IS (every run)",
            legendgroup="weighted", showlegend=r == 0, line=dict(color=COLORS["weighted"],
                                                                  width=2.4, shape="hv"),
            hovertemplate=f"run {r + 1}: %{{y:.4g}} after %{{x}} episodes<extra></extra>"))
    fig.add_trace(go.Scatter(x=[1, study.episodes], y=[ONE_STATE_VALUE] * 2, mode="lines",
                             name="v_π(s) = 1", line=dict(color=TRUTH, dash="dash", width=1.5),
                             hoverinfo="skip"))
    peak = float(study.ordinary.max())
    if peak > top:
        fig.add_annotation(x=1, y=top, xref="paper", yref="y", xanchor="right",
                           yanchor="top", showarrow=False, font=dict(size=11, color=MUTED),
                           text=f"ordinary estimates reach up to {peak:,.3g}, off the chart")
    return fig


# --------------------------------------------------------------------------- the chain
def _delta_axis(study: EstimatorStudy) -> dict:
    return dict(title="δ: how far π is from b", range=[-0.03, 1.03], dtick=0.2)


def _chosen_line(study: EstimatorStudy) -> dict:
    d = float(study.deltas[study.chosen])
    return dict(type="line", x0=d, x1=d, y0=0, y1=1, yref="paper",
                line=dict(color=MUTED, dash="dot", width=1.5))


def bias_figure(study: EstimatorStudy, *, height: int = 400) -> go.Figure:
    """Bias of each estimator against δ, with the 95% band of the mean over runs."""
    fig = figure(height=height, hovermode="x unified", xaxis=_delta_axis(study),
                 yaxis=dict(title="bias (mean estimate − v_π)", zeroline=True,
                            zerolinecolor="#adb5bd"),
                 shapes=[_chosen_line(study)], margin=dict(t=90))
    x = study.deltas
    for name in ESTIMATORS:
        bias, half = study.bias(name)
        fig.add_trace(_band(x, bias - half, bias + half, COLORS[name], LABELS[name]))
        fig.add_trace(go.Scatter(x=x, y=bias, mode="lines+markers", name=LABELS[name],
                                 legendgroup=LABELS[name], marker=dict(size=5),
                                 line=dict(color=COLORS[name]), hovertemplate="%{y:.4f}"))
    return fig


def mse_figure(study: EstimatorStudy, *, height: int = 400) -> go.Figure:
    """Mean squared error of each estimator against δ (log scale), 95% bands over runs."""
    x = study.deltas
    curves = {name: study.mse(name) for name in ESTIMATORS}
    values = np.concatenate([m for m, _ in curves.values()])
    floor = _floor(values)
    top = float(max((m + h).max() for m, h in curves.values()))
    fig = figure(height=height, hovermode="x unified", xaxis=_delta_axis(study),
                 yaxis=dict(title=f"mean squared error (over {study.runs} runs)",
                            **_decades(floor, max(1.5 * top, floor * 10))),
                 shapes=[_chosen_line(study)], margin=dict(t=90))
    for name, (mse, half) in curves.items():
        fig.add_trace(_band(x, np.maximum(mse - half, floor), mse + half, COLORS[name],
                            LABELS[name]))
        fig.add_trace(go.Scatter(x=x, y=np.maximum(mse, floor), mode="lines+markers",
                                 name=LABELS[name], legendgroup=LABELS[name],
                                 marker=dict(size=5), line=dict(color=COLORS[name]),
                                 hovertemplate="%{y:.4g}"))
    return fig


def ess_figure(study: EstimatorStudy, *, height: int = 400) -> go.Figure:
    """Kish's effective sample size of the episode weights against δ, and n / E_b[ρ²]."""
    x = study.deltas
    mean, half = study.mean_ess()
    fig = figure(height=height, hovermode="x unified", xaxis=_delta_axis(study),
                 yaxis=dict(title=f"effective episodes (of {study.episodes})",
                            range=[0, study.episodes * 1.05]),
                 shapes=[_chosen_line(study)], margin=dict(t=70))
    fig.add_trace(_band(x, np.maximum(mean - half, 0), mean + half, INK, "Kish ESS"))
    fig.add_trace(go.Scatter(x=x, y=mean, mode="lines+markers", name="Kish ESS (Σw)² / Σw²",
                             legendgroup="Kish ESS", line=dict(color=INK), marker=dict(size=5),
                             hovertemplate="%{y:.1f}"))
    fig.add_trace(go.Scatter(x=x, y=study.episodes / study.second_moment, mode="lines",
                             name="n / E_b[ρ²]", line=dict(color=MUTED, dash="dash"),
                             hovertemplate="%{y:.1f}"))
    return fig


def _weight_label(w: float) -> str:
    if w == 0:
        return "0"
    if 1000 <= w < 1e7:
        return f"{w:,.0f}"
    return f"{w:.3g}" if 1e-3 <= w < 1000 else f"{w:.2e}"


def weights_figure(study: EstimatorStudy, *, height: int = 400) -> go.Figure:
    """The distinct episode weights at the chosen δ: share of episodes and share of weight."""
    labels = [_weight_label(w) for w in study.weight_values]
    # room below for tick labels slanted on a narrow screen, and the title under them
    fig = figure(height=height, barmode="group", bargap=0.25, margin=dict(t=70, b=84),
                 xaxis=dict(title="episode weight ρ (its distinct values)", type="category",
                            title_standoff=12),
                 yaxis=dict(title="share", tickformat=".0%", rangemode="tozero"))
    fig.add_trace(go.Bar(x=labels, y=study.weight_episodes, name="share of episodes",
                         marker_color=MUTED, hovertemplate="ρ = %{x}: %{y:.2%} of episodes"
                         "<extra></extra>"))
    fig.add_trace(go.Bar(x=labels, y=study.weight_mass, name="share of the total weight",
                         marker_color=COLORS["ordinary"],
                         hovertemplate="ρ = %{x}: %{y:.2%} of the weight<extra></extra>"))
    return fig


def estimator_table(study: EstimatorStudy) -> pd.DataFrame:
    """Bias, variance, MSE (with 95% half-widths) of each estimator at the chosen δ."""
    i = study.chosen
    rows = []
    for name in ESTIMATORS:
        bias, bias_half = study.bias(name)
        mse, mse_half = study.mse(name)
        rows.append({
            "estimator": LABELS[name],
            "mean estimate": float(study.estimates[name][i].mean()),
            "bias": float(bias[i]), "bias ± (95%)": float(bias_half[i]),
            "variance": float(study.variance(name)[i]),
            "MSE": float(mse[i]), "MSE ± (95%)": float(mse_half[i]),
        })
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- worked example
def per_decision_figure(w: PerDecisionWorked, *, height: int = 440) -> go.Figure:
    """The running ratio ρ_{0:t}, then each step's reward term under both estimators."""
    t = np.arange(w.ratios.size)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.12,
                        row_heights=[0.45, 0.55])
    fig.update_layout(template="rlviz", height=height, barmode="group", bargap=0.3,
                      margin=dict(t=70), hovermode="x unified")
    fig.add_trace(go.Scatter(x=t, y=w.rho_upto, mode="lines+markers", name="ρ₀:t (ratios so far)",
                             line=dict(color=COLORS["per_decision"]),
                             hovertemplate="ρ₀:t = %{y:.4g}"), row=1, col=1)
    fig.add_trace(go.Scatter(x=[t[0] - 0.4, t[-1] + 0.4], y=[w.episode_ratio] * 2, mode="lines",
                             name="ρ₀:T−1 (whole episode)",
                             line=dict(color=COLORS["ordinary"], dash="dash"),
                             hovertemplate="ρ₀:T−1 = %{y:.4g}"), row=1, col=1)
    fig.add_trace(go.Bar(x=t, y=w.ordinary_terms, name="ordinary: γᵗ ρ₀:T−1 Rₜ₊₁",
                         marker_color=COLORS["ordinary"], hovertemplate="%{y:.4g}"),
                  row=2, col=1)
    fig.add_trace(go.Bar(x=t, y=w.per_decision_terms, name="per-decision: γᵗ ρ₀:t Rₜ₊₁",
                         marker_color=COLORS["per_decision"], hovertemplate="%{y:.4g}"),
                  row=2, col=1)
    fig.update_yaxes(title_text="ratio", row=1, col=1, rangemode="tozero")
    fig.update_yaxes(title_text="reward term", row=2, col=1, zeroline=True,
                     zerolinecolor="#adb5bd")
    fig.update_xaxes(title_text="step t", row=2, col=1, dtick=1 if t.size <= 24 else None)
    return fig


def _num(x: float, *, paren: bool = False) -> str:
    """A number for the worked arithmetic, with up to 6 significant digits."""
    text = f"{x:.6g}"
    return f"({text})" if paren and x < 0 else text


def _lines(items: list[str], joiner: str, per_line: int) -> str:
    """Items joined, with an aligned line break after every ``per_line`` of them."""
    rows = [joiner.join(items[k: k + per_line]) for k in range(0, len(items), per_line)]
    return (joiner.rstrip() + r" \\ &\quad ").join(rows)


def per_decision_latex(w: PerDecisionWorked) -> list[str]:
    """Two aligned blocks of arithmetic: this episode's ordinary and per-decision IS terms.

    Numbers appear with up to 6 significant digits (the page rounds inputs to those). Long sums
    break into lines of a few terms, left-aligned, so that the arithmetic fits a phone's width.
    """
    g = _num(w.gamma)
    plain = w.gamma == 1

    def discount(k: int) -> str:  # written out only where it is not 1
        return "" if k == 0 or plain else rf"{g}^{{{k}}}\cdot "

    factors = [rf"\tfrac{{{_num(p)}}}{{{_num(b)}}}" for p, b in zip(w.pi, w.b, strict=True)]
    ret_terms = [discount(k) + _num(r, paren=k > 0) for k, r in enumerate(w.rewards)]
    ordinary = (
        r"\begin{aligned}\rho_{0:T-1} &= " + _lines(factors, r" \cdot ", 6)
        + f" = {_num(w.episode_ratio)}"
        + r" \\ G_0 &= " + _lines(ret_terms, " + ", 6 if plain else 3)
        + f" = {_num(w.episode_return)}"
        + r" \\ \rho_{0:T-1}\,G_0 &= " + _num(w.episode_ratio) + r" \times "
        + _num(w.episode_return, paren=True) + f" = {_num(w.ordinary)}" + r"\end{aligned}"
    )
    pd_terms = [discount(k) + rf"{_num(rho)}\cdot {_num(r, paren=True)}"
                for k, (rho, r) in enumerate(zip(w.rho_upto, w.rewards, strict=True))]
    per_decision = (
        r"\begin{aligned}&\textstyle\sum_t \gamma^t \rho_{0:t} R_{t+1} \\ &= "
        + _lines(pd_terms, " + ", 3 if plain else 2) + rf" \\ &= {_num(w.per_decision)}"
        + r"\end{aligned}"
    )
    return [ordinary, per_decision]


def export_tables(bj: BlackjackStudy, iv: InfiniteVarianceStudy, ch: EstimatorStudy,
                  worked: PerDecisionWorked | None) -> dict[str, pd.DataFrame]:
    """The page's data as tables: the MSE curves, Figure 5.4's runs, the chain, the episode."""
    rows = []
    for j, d in enumerate(ch.deltas):
        row = {"delta": float(d), "v_pi": float(ch.true_values[j]),
               "ess": float(ch.mean_ess()[0][j])}
        for k in ESTIMATORS:
            row[f"{k}_bias"] = float(ch.bias(k)[0][j])
            row[f"{k}_variance"] = float(ch.variance(k)[j])
            row[f"{k}_mse"] = float(ch.mse(k)[0][j])
        rows.append(row)
    out = {
        "blackjack_mse": pd.DataFrame({"episodes": bj.n,
                                       **{f"mse_{k}": v for k, v in bj.mse.items()}}),
        "figure_5_4": pd.DataFrame({"episodes": iv.at, **{
            f"{k}_run{r + 1}": getattr(iv, k)[r] for k in ("ordinary", "weighted")
            for r in range(iv.runs)}}),
        "chain": pd.DataFrame(rows),
    }
    if worked is not None:
        out["worked_episode"] = pd.DataFrame({
            "t": np.arange(worked.ratios.size), "pi": worked.pi, "b": worked.b,
            "r": worked.rewards, "rho_t": worked.ratios, "rho_0_t": worked.rho_upto,
            "per_decision_term": worked.per_decision_terms,
            "ordinary_term": worked.ordinary_terms})
    return out
