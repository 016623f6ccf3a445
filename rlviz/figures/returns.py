"""Figures of the GAE page: advantages per step, the λ-weights, the bias-variance study."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from rlviz.figures.theme import INK, MUTED, color, figure, hex_to_rgba
from rlviz.returns import AdvantageBreakdown, StudyResult

__all__ = ["advantages_figure", "critic_figure", "study_figure", "weights_figure"]

BIAS = color("td")  # the one-step end of the dial is where a wrong critic shows
VARIANCE = color("monte_carlo")  # the Monte-Carlo end is where the noise is
MSE = color("gae")
TRUNCATION = "#e67700"
TERMINATION = "#c92a2a"


def _fmt(lam: float) -> str:
    return f"{lam:.2f}".rstrip("0").rstrip(".") if lam not in (0.0, 1.0) else f"{lam:.0f}"


def _episode_ends(b: AdvantageBreakdown) -> tuple[list[dict], list[dict]]:
    """A dashed line after every step that ends an episode, labelled by how it ended."""
    shapes, notes = [], []
    for t in np.flatnonzero(b.dones | b.truncated):
        terminal = bool(b.dones[t])
        c = TERMINATION if terminal else TRUNCATION
        shapes.append(dict(type="line", x0=t + 0.5, x1=t + 0.5, y0=0, y1=1, yref="paper",
                           line=dict(color=c, dash="dash", width=1.5)))
        notes.append(dict(x=t + 0.5, y=1, yref="paper", xshift=-8, yanchor="top",
                          showarrow=False, textangle=-90, font=dict(size=11, color=c),
                          text="terminal" if terminal else "time limit"))
    return shapes, notes


def advantages_figure(b: AdvantageBreakdown, *, flagged: AdvantageBreakdown | None = None,
                      height: int = 400) -> go.Figure:
    """δ_t (λ = 0), GAE(λ) and G_t − V(s_t) (λ = 1) per step, episode ends marked.

    ``flagged``: the same trajectory read as flagged, drawn as hollow markers when ``b`` reads
    it differently (truncations taken for terminations).
    """
    t = np.arange(b.advantages.size)
    fig = figure(
        height=height, barmode="group", bargap=0.25, bargroupgap=0.05,
        xaxis=dict(title="step t", dtick=1 if t.size <= 24 else None, range=[-0.6, t.size - 0.4]),
        yaxis=dict(title="advantage", zeroline=True, zerolinecolor="#ced4da"),
        margin=dict(t=70),
    )
    series = [
        ("δ_t  (λ = 0)", b.td_advantages, color("td")),
        (f"GAE  (λ = {_fmt(b.lam)})", b.advantages, color("gae")),
        ("G_t − V(s_t)  (λ = 1)", b.mc_advantages, color("monte_carlo")),
    ]
    for name, y, c in series:
        fig.add_trace(go.Bar(
            x=t, y=y, name=name, marker_color=c,
            hovertemplate=f"{name}<br>t = %{{x}}: %{{y:.4f}}<extra></extra>",
        ))
    if flagged is not None:
        fig.add_trace(go.Scatter(
            x=t, y=flagged.advantages, mode="markers", name="GAE with truncations bootstrapped",
            marker=dict(symbol="diamond-open", size=11, color=INK, line=dict(width=2)),
            hovertemplate="as flagged<br>t = %{x}: %{y:.4f}<extra></extra>",
        ))
    shapes, notes = _episode_ends(b)
    shapes.append(dict(type="rect", x0=b.step - 0.5, x1=b.step + 0.5, y0=0, y1=1, yref="paper",
                       fillcolor=hex_to_rgba(MSE, 0.08), line_width=0, layer="below"))
    fig.update_layout(shapes=shapes, annotations=notes)
    return fig


def weights_figure(b: AdvantageBreakdown, *, height: int = 420) -> go.Figure:
    """The λ-weights of the n-step advantages at one step, and those advantages with their mix."""
    n = np.arange(1, b.weights.size + 1)
    horizon = int(b.horizons[b.step])
    colours = [color("gae")] * (n.size - 1) + [color("monte_carlo")]  # the tail stands out
    mix = float(b.weights @ b.n_step_advantages)
    span = [0.5, n.size + 0.5]
    fig = figure(
        height=height, bargap=0.2, margin=dict(t=40, b=76),
        xaxis=dict(anchor="y", matches="x2", showticklabels=False, range=span),
        yaxis=dict(domain=[0.5, 1.0], title="weight wₙ", range=[0, 1.18]),
        xaxis2=dict(anchor="y2", range=span, dtick=1 if horizon <= 24 else None,
                    title="n (steps before bootstrapping)<br>"
                          f"n = N = {horizon} reaches the episode's end"),
        yaxis2=dict(domain=[0.0, 0.4], title=f"Â(n) at step {b.step}"),
        annotations=[
            dict(x=0.6, y=mix, xref="x2", yref="y2", xanchor="left", yanchor="bottom",
                 showarrow=False, text=f"GAE = Σ wₙ Â(n) = {mix:.4f}",
                 font=dict(size=11, color=color("gae"))),
            dict(x=horizon, y=b.weights[-1], xref="x", yref="y", yshift=26, showarrow=False,
                 text="tail λ^(N−1): the longest return" if horizon > 1 else "N = 1: one step",
                 font=dict(size=11, color=color("monte_carlo")),
                 xanchor="right" if horizon > 3 else "left"),
        ],
    )
    fig.add_traces([
        go.Bar(x=n, y=b.weights, marker_color=colours, name="weight (1 − λ) λ^(n−1)",
               text=[f"{w:.3f}" if w >= 0.005 else "" for w in b.weights],
               textposition="outside", cliponaxis=False, showlegend=False,
               hovertemplate="n = %{x}<br>weight %{y:.4f}<extra></extra>"),
        go.Scatter(x=n, y=b.n_step_advantages, mode="lines+markers", xaxis="x2", yaxis="y2",
                   name="n-step advantage Â(n)", line=dict(color=INK, width=1.5),
                   marker=dict(size=8, color=colours),
                   hovertemplate="n = %{x}<br>Â(n) = %{y:.4f}<extra></extra>"),
        go.Scatter(x=span, y=[mix, mix], mode="lines", xaxis="x2", yaxis="y2",
                   name="GAE = Σ wₙ Â(n)", showlegend=False,
                   line=dict(color=color("gae"), dash="dot", width=2),
                   hovertemplate=f"GAE = Σ wₙ Â(n) = {mix:.4f}<extra></extra>"),
    ])
    return fig


def study_figure(res: StudyResult, *, chosen: StudyResult | None = None,
                 height: int = 420) -> go.Figure:
    """Bias², variance and MSE of GAE against λ; the chosen λ marked, the best λ starred."""
    traces = [
        go.Scatter(x=res.lams, y=y, name=name, mode="lines+markers", marker=dict(size=5),
                   line=dict(color=c, width=width), hovertemplate="%{y:.5f}")
        for name, y, c, width in (
            ("bias²", res.bias2, BIAS, 2.2), ("variance", res.variance, VARIANCE, 2.2),
            ("MSE = bias² + variance", res.mse, MSE, 3.2),
        )
    ]
    traces.append(go.Scatter(
        x=[res.best_lam], y=[res.mse[res.best]], mode="markers",
        name=f"best λ = {_fmt(res.best_lam)}", hovertemplate="best: %{y:.5f}",
        marker=dict(symbol="star", size=18, color=MSE, line=dict(color="white", width=1)),
    ))
    shapes, notes, top = [], [], 0.0
    if chosen is not None:
        lam = float(chosen.lams[0])
        top = float(chosen.mse[0])
        shapes.append(dict(type="line", x0=lam, x1=lam, y0=0, y1=1, yref="paper",
                           line=dict(color=MUTED, dash="dot", width=1.5)))
        traces.append(go.Scatter(
            x=[lam] * 3, y=[chosen.bias2[0], chosen.variance[0], chosen.mse[0]],
            mode="markers", name=f"your λ = {_fmt(lam)}", hovertemplate="your λ: %{y:.5f}",
            marker=dict(size=11, color="white", line=dict(color=[BIAS, VARIANCE, MSE],
                                                           width=2.5)),
        ))
    # Keep the U of the MSE readable: a steep Monte-Carlo end may leave the frame, with a note.
    top = 1.12 * max(top, float(res.mse[0]), 3 * float(res.mse[res.best]))
    steep = res.mse > top
    yaxis = dict(title="squared error (per step)", rangemode="tozero")
    if top > 0 and steep.any():
        yaxis["range"] = [0, top]
        first = int(np.argmax(steep))
        last = float(res.lams[-1])
        notes.append(dict(
            x=last, y=top, ax=-70, ay=12, xanchor="right", showarrow=True, arrowhead=2,
            arrowcolor=MUTED, font=dict(size=11, color=MUTED),
            text=f"MSE reaches {res.mse.max():.3f} at λ = {_fmt(last)}"
            if first == res.lams.size - 1 else
            f"off the chart from λ = {_fmt(float(res.lams[first]))} (up to {res.mse.max():.3f})",
        ))
    fig = figure(height=height, hovermode="x unified", shapes=shapes, annotations=notes,
                 xaxis=dict(title="λ", range=[-0.02, 1.02], dtick=0.1), yaxis=yaxis)
    fig.add_traces(traces)
    return fig


def critic_figure(res: StudyResult, *, height: int = 420) -> go.Figure:
    """The true values v(s) of the walk and the critic V^(s) the study scores with."""
    s = np.arange(1, res.true_values.size - 1)
    fig = figure(height=height, xaxis=dict(title="state s", dtick=1 if s.size <= 9 else 2),
                 yaxis=dict(title="value"), hovermode="x unified")
    fig.add_trace(go.Scatter(x=s, y=res.true_values[1:-1], name="true v(s)", mode="lines+markers",
                             line=dict(color=INK, width=2), hovertemplate="%{y:.3f}"))
    fig.add_trace(go.Scatter(x=s, y=res.critic[1:-1], name="critic V̂(s)", mode="markers",
                             marker=dict(color=BIAS, size=9, symbol="circle-open",
                                         line=dict(width=2)), hovertemplate="%{y:.3f}"))
    gaps_x = np.repeat(s, 3).astype(float)
    gaps_y = np.stack([res.true_values[1:-1], res.critic[1:-1], np.full(s.size, np.nan)], 1)
    gaps_x[2::3] = np.nan
    fig.add_trace(go.Scatter(x=gaps_x, y=gaps_y.ravel(), mode="lines", showlegend=False,
                             line=dict(color=BIAS, width=1), hoverinfo="skip",
                             connectgaps=False))
    return fig
