"""Figures of the n-step TD and TD(λ) page: Example 6.2, the sweeps, one n-step backup, the views.

Example 6.2's two panels; the α sweeps with their heatmaps; one setting up close; one n-step
return drawn as a backup; the forward and backward views of one episode.

Colours: one-step TD is orange and Monte Carlo violet, as on every page; the curves of an n or λ
sweep run from one to the other (n = 1 or λ = 0 orange, n = 512 or λ = 1 violet). The three
λ-methods have their own colours. Errors are RMS errors over the walk's states; bands and error
bars are 95% t-intervals over the runs. A run that diverged is never drawn: its curve stops, and
a cross at the top of the chart marks where.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from rlviz.figures.theme import INK, MUTED, color, figure, hex_to_rgba
from rlviz.prediction import (
    METHODS,
    Backup,
    Identities,
    SweepSummary,
    TdVsMc,
)

__all__ = [
    "EQUATIONS",
    "METHOD_COLORS",
    "backup_figure",
    "backup_latex",
    "by_episode_figure",
    "estimates_figure",
    "example_errors_figure",
    "example_estimates_figure",
    "export_tables",
    "heatmap_figure",
    "methods_figure",
    "ramp",
    "sweep_caption",
    "sweep_figure",
    "views_figure",
]

TD = color("td")
MC = color("monte_carlo")
METHOD_COLORS = {
    "n_step": "#c2255c",
    "offline_lambda_return": color("gae"),  # the λ-return, as GAE's on its page
    "td_lambda": "#e67700",
    "true_online": "#0c8599",
}
TRUTH = INK
TOP = 0.58  # the sweep charts end just above √0.3 = 0.548, where α = 0 leaves every curve
STATE_NAMES_5 = "ABCDE"



def ramp(count: int) -> list[str]:
    """``count`` colours from orange (one-step TD's end) to deep violet (Monte Carlo's end).

    A stretch of the perceptually even plasma scale, so that neighbouring n or λ stay apart.
    """
    stops = [0.82 - 0.72 * i / max(count - 1, 1) for i in range(count)]
    return sample_colorscale("Plasma", stops, colortype="rgb")


def _rgba(rgb: str, alpha: float) -> str:
    if rgb.startswith("#"):
        return hex_to_rgba(rgb, alpha)
    return rgb.replace("rgb(", "rgba(").replace(")", f",{alpha})")


def _band(x, lo, hi, colour: str) -> go.Scatter:
    return go.Scatter(x=np.r_[x, x[::-1]], y=np.r_[hi, lo[::-1]], fill="toself", mode="lines",
                      line=dict(width=0), fillcolor=_rgba(colour, 0.18), hoverinfo="skip",
                      showlegend=False)


def _param(s: SweepSummary, p: int) -> str:
    return f"n = {int(s.params[p])}" if s.method == "n_step" else f"λ = {s.params[p]:g}"


def _kind(s: SweepSummary) -> str:
    return "n" if s.method == "n_step" else "λ"


# --------------------------------------------------------------------------- Example 6.2
def example_estimates_figure(ex: TdVsMc, *, height: int = 380) -> go.Figure:
    """Example 6.2, left: TD(0)'s estimates (run 1, α = 0.1) after 0, 1, 10 and 100 episodes."""
    x = list(STATE_NAMES_5)
    fig = figure(height=height, hovermode="x unified",
                 xaxis=dict(title="state"), yaxis=dict(title="estimated value",
                                                       range=[0, 1], dtick=0.2))
    shades = sample_colorscale([[0, "#ffc078"], [1, TD]],
                               [i / max(len(ex.shown) - 1, 1) for i in range(len(ex.shown))],
                               colortype="rgb")
    for k, (e, v) in enumerate(zip(ex.shown, ex.estimates, strict=True)):
        fig.add_trace(go.Scatter(x=x, y=v, name=f"after {e}", mode="lines+markers",
                                 line=dict(color=shades[k], width=2), marker=dict(size=7),
                                 hovertemplate=f"after {e}: %{{y:.3f}}<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=ex.true_values, name="true values", mode="lines+markers",
                             line=dict(color=TRUTH, width=2, dash="dash"), marker=dict(size=6),
                             hovertemplate="true: %{y:.3f}<extra></extra>"))
    fig.update_layout(legend=dict(title=dict(text="episodes")))
    return fig


def example_errors_figure(ex: TdVsMc, *, height: int = 380) -> go.Figure:
    """Example 6.2, right: RMS error after each episode, TD(0) and constant-α MC, 95% bands."""
    e = np.arange(ex.episodes + 1)
    fig = figure(height=height, hovermode="x unified",
                 xaxis=dict(title="episodes"), yaxis=dict(title="RMS error (5 states)",
                                                          rangemode="tozero"))
    groups = [("TD(0)", ex.td_alphas, ex.td_error, ex.td_half, TD, "solid"),
              ("MC", ex.mc_alphas, ex.mc_error, ex.mc_half, MC, "dot")]
    for name, alphas, err, half, base, dash in groups:
        shades = sample_colorscale([[0, _light(base)], [1, base]],
                                   [i / max(len(alphas) - 1, 1) for i in range(len(alphas))],
                                   colortype="rgb")
        for a, c in zip(range(len(alphas)), shades, strict=True):
            fig.add_trace(_band(e, err[a] - half[a], err[a] + half[a], c))
            label = f"{name} α = {alphas[a]:g}"
            fig.add_trace(go.Scatter(x=e, y=err[a], name=label, mode="lines",
                                     line=dict(color=c, width=2, dash=dash),
                                     hovertemplate=f"{label}: %{{y:.3f}}<extra></extra>"))
    return fig


def _light(hex_color: str) -> str:
    """The colour mixed halfway with white."""
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgb({(r + 255) // 2},{(g + 255) // 2},{(b + 255) // 2})"


# --------------------------------------------------------------------------- the α sweep
def sweep_figure(s: SweepSummary, *, chosen: tuple[int, int] | None = None,
                 height: int = 460) -> go.Figure:
    """RMS error against α, one curve per n or λ, each curve's best dotted, the best starred."""
    colours = ramp(s.params.size)
    finite = s.curve[np.isfinite(s.curve)]
    bottom = min(0.25, float(finite.min()) - 0.02) if finite.size else 0.0
    fig = figure(height=height, hovermode="closest",
                 xaxis=dict(title="step size α", range=[-0.02, 1.02]),
                 yaxis=dict(title="average RMS error", range=[bottom, TOP]),
                 legend=dict(title=dict(text=_kind(s))))
    best_a = s.best_alpha
    crosses = ([], [], [], [])
    for p in range(s.params.size):
        y = np.where(np.isfinite(s.curve[p]), s.curve[p], np.nan)
        label = _param(s, p).split(" = ")[1]
        fig.add_trace(go.Scatter(
            x=s.alphas, y=[None if np.isnan(v) else v for v in y], name=label,
            mode="lines+markers", legendgroup=label, line=dict(color=colours[p], width=2),
            marker=dict(size=5), connectgaps=False,
            error_y=dict(type="data", array=np.where(y <= TOP, s.curve_half[p], 0.0),
                         thickness=1, width=0, color=_rgba(colours[p], 0.6)),
            customdata=s.curve_half[p],
            hovertemplate=f"{_param(s, p)}, α = %{{x}}: %{{y:.3f}} ± %{{customdata:.3f}}"
                          "<extra></extra>"))
        if best_a[p] >= 0:
            a = best_a[p]
            fig.add_trace(go.Scatter(
                x=[s.alphas[a]], y=[s.curve[p, a]], mode="markers", legendgroup=label,
                showlegend=False, marker=dict(size=11, color=colours[p],
                                              line=dict(color="white", width=1.5)),
                hovertemplate=f"best for {_param(s, p)}: α = {s.alphas[a]:g}, "
                              f"{s.curve[p, a]:.3f}<extra></extra>"))
        gone = np.flatnonzero(~np.isfinite(s.curve[p]))
        if gone.size:
            crosses[0].append(float(s.alphas[gone[0]]))
            crosses[1].append(colours[p])
            crosses[2].append(f"{_param(s, p)} diverges from α = {s.alphas[gone[0]]:g}")
            crosses[3].append(p)
    if crosses[0]:
        fig.add_trace(go.Scatter(
            x=crosses[0], y=[TOP - 0.004 - 0.006 * (k % 3) for k in range(len(crosses[0]))],
            mode="markers", name="diverges", showlegend=True, text=crosses[2],
            marker=dict(symbol="x-thin", size=11, line=dict(width=2.5, color=crosses[1])),
            hovertemplate="%{text}<extra></extra>"))
    p, a = s.best
    if np.isfinite(s.curve[p, a]):
        fig.add_trace(go.Scatter(
            x=[s.alphas[a]], y=[s.curve[p, a]], mode="markers", name="best",
            marker=dict(symbol="star", size=18, color=colours[p], line=dict(color=INK, width=1)),
            hovertemplate=f"best: {_param(s, p)}, α = {s.alphas[a]:g}: {s.curve[p, a]:.3f}"
                          "<extra></extra>"))
    if chosen is not None and np.isfinite(s.curve[chosen]):
        cp, ca = chosen
        fig.add_trace(go.Scatter(
            x=[s.alphas[ca]], y=[s.curve[cp, ca]], mode="markers", name="up close",
            marker=dict(symbol="circle-open", size=20, color=INK, line=dict(width=2)),
            hovertemplate=f"up close: {_param(s, cp)}, α = {s.alphas[ca]:g}<extra></extra>"))
    return fig


def heatmap_figure(s: SweepSummary, *, height: int = 420) -> go.Figure:
    """The same errors as a grid of n (or λ) × α; dark is low, past 0.55 is white, × diverged."""
    x = [f"{a:g}" for a in s.alphas]
    y = [_param(s, p).split(" = ")[1] for p in range(s.params.size)]
    z = [[float(v) if np.isfinite(v) else None for v in row] for row in s.curve]
    finite = s.curve[np.isfinite(s.curve)]
    low = float(finite.min()) if finite.size else 0.0
    scale = [[0.0, "#0b3d6e"], [0.25, "#1864ab"], [0.55, "#74c0fc"], [0.85, "#e7f5ff"],
             [1.0, "#ffffff"]]
    fig = figure(height=height, xaxis=dict(title="step size α", type="category",
                                           tickangle=-45, showgrid=False),
                 yaxis=dict(title=_kind(s), type="category", showgrid=False),
                 hovermode="closest")
    fig.add_trace(go.Heatmap(
        x=x, y=y, z=z, zmin=low, zmax=0.55, colorscale=scale, xgap=1, ygap=1,
        colorbar=dict(title=dict(text="RMS<br>error", side="top"), thickness=12, len=0.9),
        hovertemplate=f"{_kind(s)} = %{{y}}, α = %{{x}}: %{{z:.3f}}<extra></extra>"))
    rows, cols = np.nonzero(~np.isfinite(s.curve))
    if rows.size:
        fig.add_trace(go.Scatter(
            x=[x[c] for c in cols], y=[y[r] for r in rows], mode="markers", name="diverged",
            marker=dict(symbol="x-thin", size=8, line=dict(width=1.5, color=MUTED)),
            hovertemplate="diverged<extra></extra>", showlegend=False))
    best_a = s.best_alpha
    keep = best_a >= 0
    fig.add_trace(go.Scatter(
        x=[x[a] for a in best_a[keep]], y=[y[p] for p in np.flatnonzero(keep)],
        mode="markers", showlegend=False, marker=dict(size=7, color="white",
                                                      line=dict(color=INK, width=1)),
        hovertemplate="best α for this row<extra></extra>"))
    p, a = s.best
    fig.add_trace(go.Scatter(x=[x[a]], y=[y[p]], mode="markers", showlegend=False,
                             marker=dict(symbol="star", size=15, color="#ffd43b",
                                         line=dict(color=INK, width=1)),
                             hovertemplate="best of all<extra></extra>"))
    fig.update_layout(margin=dict(t=20))
    return fig


def sweep_caption(s: SweepSummary) -> str:
    """One sentence: the best setting, each curve's best α, and what diverged."""
    p, a = s.best
    best_a = s.best_alpha
    per = ", ".join(f"{_param(s, i).split(' = ')[1]} → {s.alphas[j]:g}"
                    for i, j in enumerate(best_a) if j >= 0)
    text = (f"Lowest error {s.curve[p, a]:.3f} ± {s.curve_half[p, a]:.3f} at {_param(s, p)}, "
            f"α = {s.alphas[a]:g} (mean of {s.runs} runs, 95% interval). Best α for each "
            f"{_kind(s)}: {per}.")
    gone = int((s.diverged > 0).sum())
    if gone:
        text += (f" {gone} of the {s.curve.size} settings diverged in at least one run "
                 "(values past 10⁶); their curves stop there.")
    return text


def methods_figure(compare: dict[str, SweepSummary], *, height: int = 400) -> go.Figure:
    """The three λ methods at one λ, against α."""
    any_s = next(iter(compare.values()))
    lam = float(any_s.params[0])
    fig = figure(height=height, hovermode="x unified",
                 xaxis=dict(title="step size α", range=[-0.02, 1.02]),
                 yaxis=dict(title="average RMS error",
                            range=[min(0.25, _floor(compare) - 0.02), TOP]))
    for method, s in compare.items():
        c = METHOD_COLORS[method]
        y = np.where(np.isfinite(s.curve[0]), s.curve[0], np.nan)
        ok = np.isfinite(y) & (y <= TOP)  # a band off the chart would only smear across it
        fig.add_trace(_band(s.alphas[ok], (y - s.curve_half[0])[ok],
                            np.minimum(y + s.curve_half[0], TOP)[ok], c))
        fig.add_trace(go.Scatter(
            x=s.alphas, y=[None if np.isnan(v) else v for v in y], name=METHODS[method],
            mode="lines+markers", line=dict(color=c, width=2.4), marker=dict(size=6),
            connectgaps=False, hovertemplate=f"{METHODS[method]}: %{{y:.3f}}<extra></extra>"))
    fig.update_layout(legend=dict(title=dict(text=f"λ = {lam:g}")))
    return fig


def _floor(compare: dict[str, SweepSummary]) -> float:
    vals = np.concatenate([s.curve.ravel() for s in compare.values()])
    vals = vals[np.isfinite(vals)]
    return float(vals.min()) if vals.size else 0.25


# --------------------------------------------------------------------------- up close
def estimates_figure(s: SweepSummary, p: int, a: int, k: int, *,
                     height: int = 400) -> go.Figure:
    """Estimates after ``k`` episodes at one setting: mean over runs with its band, and run 1."""
    n = s.true_values.size
    x = np.arange(1, n + 1)
    c = ramp(s.params.size)[p]  # the colour of this n or λ in the sweep
    fig = figure(height=height, hovermode="x unified",
                 xaxis=dict(title="state", tick0=1, dtick=1 if n <= 9 else 2,
                            range=[0.4, n + 0.6]),
                 yaxis=dict(title="value", range=[-1.15, 1.15] if n > 5 else [0, 1]))
    mean, half, run = s.values[p, a, k], s.values_half[p, a, k], s.first_run[p, a, k]
    if np.isfinite(mean).all():
        fig.add_trace(_band(x, mean - half, mean + half, c))
        fig.add_trace(go.Scatter(x=x, y=mean, name=f"mean of {s.runs} runs",
                                 mode="lines+markers", line=dict(color=c, width=2.4),
                                 hovertemplate="mean: %{y:.3f}<extra></extra>"))
    if np.isfinite(run).all():
        fig.add_trace(go.Scatter(x=x, y=run, name="run 1", mode="markers",
                                 marker=dict(size=8, symbol="circle-open", color=c,
                                             line=dict(width=2)),
                                 hovertemplate="run 1: %{y:.3f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=s.true_values, name="true values", mode="lines",
                             line=dict(color=TRUTH, width=2, dash="dash"),
                             hovertemplate="true: %{y:.3f}<extra></extra>"))
    if not np.isfinite(mean).all():
        fig.add_annotation(x=0.5, y=0.95, xref="paper", yref="paper", showarrow=False,
                           text=f"{int(s.diverged[p, a])} of {s.runs} runs diverged by here: "
                                "no mean to draw", font=dict(color=MUTED))
    return fig


def by_episode_figure(s: SweepSummary, p: int, a: int, *, height: int = 400) -> go.Figure:
    """RMS error after each episode at one setting, with its 95% band."""
    e = np.arange(s.episodes + 1)
    c = ramp(s.params.size)[p]
    y, half = s.by_episode[p, a], s.by_episode_half[p, a]
    ok = np.isfinite(y)
    fig = figure(height=height, hovermode="x unified",
                 xaxis=dict(title="episodes", dtick=1 if s.episodes <= 10 else 2),
                 yaxis=dict(title="RMS error (19 states)", rangemode="tozero"))
    fig.add_trace(_band(e[ok], (y - half)[ok], (y + half)[ok], c))
    fig.add_trace(go.Scatter(x=e[ok], y=y[ok], name=f"{_param(s, p)}, α = {s.alphas[a]:g}",
                             mode="lines+markers", line=dict(color=c, width=2.4),
                             hovertemplate="%{y:.3f}<extra></extra>"))
    if ok[1:].all():
        mean = float(y[1:].mean())
        fig.add_trace(go.Scatter(x=[0, s.episodes], y=[mean, mean], mode="lines",
                                 name=f"average of episodes 1–{s.episodes}: {mean:.3f}",
                                 line=dict(color=MUTED, dash="dot", width=1.5),
                                 hoverinfo="skip"))
    return fig


# --------------------------------------------------------------------------- the backup
def backup_figure(b: Backup, *, n_states: int, colour: str | None = None,
                  height: int = 420) -> go.Figure:
    """One episode of the walk (time across, state up), the n-step return of step τ on it.

    The states whose rewards the return adds are drawn thick, the state it updates and the one
    it bootstraps from are marked (or the terminal, where the episode ends first). ``colour``:
    the n's colour in the sweep.
    """
    t = np.arange(b.states.size)
    c = colour or METHOD_COLORS["n_step"]
    end = b.tau + b.used
    fig = figure(height=height, hovermode="closest", showlegend=True, margin=dict(l=140),
                 xaxis=dict(title=f"time step t of episode {b.episode + 1}",
                            range=[-1, b.states.size + 0.5]),
                 yaxis=dict(title="state", range=[-0.8, n_states + 1.8],
                            tickvals=[0, (n_states + 1) // 2, n_states + 1],
                            ticktext=["0 (left end)", f"{(n_states + 1) // 2} (start)",
                                      f"{n_states + 1} (right end)"]))
    # (shapes set on the layout directly: add_vrect and add_hline cost more than the traces)
    fig.update_layout(shapes=[
        dict(type="rect", xref="x", yref="paper", x0=b.tau, x1=end, y0=0, y1=1,
             fillcolor=_rgba(c, 0.08), line_width=0, layer="below"),
        *(dict(type="line", xref="paper", yref="y", x0=0, x1=1, y0=y, y1=y,
               line=dict(color=MUTED, dash="dot", width=1)) for y in (0, n_states + 1)),
    ])
    fig.add_trace(go.Scatter(x=t, y=b.states, mode="lines", name="the episode",
                             line=dict(color="#adb5bd", width=1.5),
                             hovertemplate="t = %{x}: state %{y}<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=t[b.tau : end + 1], y=b.states[b.tau : end + 1], mode="lines+markers",
        name=f"rewards R<sub>τ+1</sub> … R<sub>τ+{b.used}</sub> added", line=dict(color=c,
                                                                                   width=3.5),
        marker=dict(size=5, color=c), customdata=np.r_[np.nan, b.rewards[b.tau : end]],
        hovertemplate="t = %{x}: state %{y}<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=[b.tau], y=[b.states[b.tau]], mode="markers", name=f"S<sub>τ</sub>, updated: "
        f"{_num(b.old_value)} → {_num(b.new_value)}".replace("-", "−"),
        marker=dict(size=15, symbol="circle-open", color=INK, line=dict(width=2.5)),
        hovertemplate="S_τ (updated)<extra></extra>"))
    if b.bootstraps:
        label = f"S<sub>τ+n</sub>, bootstrap V = {_num(b.boot_value)}".replace("-", "−")
        symbol = "square"
    else:
        label = f"terminal: R<sub>T</sub> = {b.rewards[-1]:g}, no bootstrap"
        symbol = "diamond"
    fig.add_trace(go.Scatter(x=[end], y=[b.states[end]], mode="markers", name=label,
                             marker=dict(size=14, symbol=symbol, color=c,
                                         line=dict(color=INK, width=1.5)),
                             hovertemplate="%{y}<extra></extra>"))
    paid = np.flatnonzero(b.rewards[b.tau : end]) + b.tau  # the walk pays only at an end
    if paid.size:
        fig.add_trace(go.Scatter(
            x=paid + 0.5, y=(b.states[paid] + b.states[paid + 1]) / 2 + 1.2, mode="text",
            text=[f"R = {_num(b.rewards[k])}" for k in paid], showlegend=False,
            textfont=dict(size=12, color=c), hoverinfo="skip"))
    fig.update_layout(legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0,
                                  font=dict(size=11)), margin=dict(t=90))
    return fig


def _num(x: float, *, paren: bool = False) -> str:
    """A number of the worked update, to 4 decimals; in parentheses if negative and ``paren``."""
    text = f"{x:.4f}".rstrip("0").rstrip(".") if abs(x) < 1e6 else f"{x:.4g}"
    text = "0" if text in ("-0", "") else text
    return f"({text})" if paren and text.startswith("-") else text


def backup_latex(b: Backup) -> list[str]:
    """The update worked out: which rewards, which bootstrap, the target and the new value.

    Two aligned blocks of short lines (they fit a phone). Values are shown to 4 decimals; the
    arithmetic uses them unrounded (the page says so).
    """
    tau, m = b.tau, b.used
    idx = list(range(tau + 1, tau + m + 1))
    shown = idx if len(idx) <= 4 else idx[:2] + [None] + idx[-1:]
    sym = " + ".join(r"\dots" if i is None else f"R_{{{i}}}" for i in shown)
    vals = " + ".join(r"\dots" if i is None else _num(b.rewards[i - 1], paren=True)
                      for i in shown)
    g = rf"G_{{{tau}:{tau + b.n}}}"
    if b.bootstraps:
        ret = (rf"\begin{{aligned}}{g} &= {sym} + \gamma^{{{b.n}}}\, V(S_{{{tau + b.n}}}) \\ "
               rf"&= {vals} + {_num(b.discount)} \times {_num(b.boot_value, paren=True)} \\ "
               rf"&= {_num(b.target)}\end{{aligned}}")
    else:
        ret = (rf"\begin{{aligned}}{g} &= {sym} \\ &= {vals} \\ &= {_num(b.target)}"
               r"\end{aligned}")
    update = (rf"\begin{{aligned}}V(S_{{{tau}}}) &\leftarrow V(S_{{{tau}}}) + \alpha\,"
              rf"\big[{g} - V(S_{{{tau}}})\big] \\ &= {_num(b.old_value)} + "
              rf"{_num(b.alpha)}\,\big[{_num(b.target)} - {_num(b.old_value, paren=True)}"
              rf"\big] \\ &= {_num(b.new_value)}\end{{aligned}}")
    return [ret, update]


# --------------------------------------------------------------------------- the views
def views_figure(ident: Identities, *, height: int = 360) -> go.Figure:
    """Run 1's first episode from the start: the forward and the backward view, state by state."""
    n = ident.forward.size
    x = np.arange(1, n + 1)
    fig = figure(height=height, hovermode="x unified", barmode="overlay",
                 xaxis=dict(title="state", tick0=1, dtick=1 if n <= 9 else 2,
                            range=[0.4, n + 0.6]),
                 yaxis=dict(title="change of V over the episode", zeroline=True,
                            zerolinecolor="#ced4da"))
    fig.add_trace(go.Bar(x=x, y=ident.forward, name="forward: Σ α[G<sup>λ</sup> − V(S)]",
                         marker_color=_rgba(METHOD_COLORS["offline_lambda_return"], 0.75),
                         hovertemplate="forward: %{y:.6f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=x, y=ident.backward, name="backward: Σ α δ z", mode="markers",
                             marker=dict(symbol="diamond", size=10,
                                         color=METHOD_COLORS["td_lambda"],
                                         line=dict(color=INK, width=1)),
                             hovertemplate="backward: %{y:.6f}<extra></extra>"))
    return fig


# --------------------------------------------------------------------------- words and data
EQUATIONS = [
    ("Example 6.2: TD(0), and constant-α Monte Carlo with the return to the episode's end",
     r"\begin{aligned}V(S_t) &\leftarrow V(S_t) + \alpha\,\big[R_{t+1} + \gamma V(S_{t+1}) - "
     r"V(S_t)\big] \\ V(S_t) &\leftarrow V(S_t) + \alpha\,\big[G_t - V(S_t)\big]\end{aligned}"),
    ("The n-step return (it stops at the end T if that comes first) and n-step TD",
     r"\begin{aligned}G_{t:t+n} &= R_{t+1} + \gamma R_{t+2} + \dots \\ &\quad + \gamma^{n-1} "
     r"R_{t+n} + \gamma^{n} V(S_{t+n}) \\ V(S_t) &\leftarrow V(S_t) + \alpha\,\big[G_{t:t+n} - "
     r"V(S_t)\big]\end{aligned}"),
    ("The λ-return: every n-step return, weighted (1 − λ)λⁿ⁻¹, the rest on the full return",
     r"\begin{aligned}G^{\lambda}_t &= (1-\lambda) \sum_{n=1}^{T-t-1} \lambda^{n-1} G_{t:t+n} "
     r"+ \lambda^{T-t-1} G_t \\ &= R_{t+1} + \gamma\big[(1-\lambda)V(S_{t+1}) + \lambda "
     r"G^{\lambda}_{t+1}\big]\end{aligned}"),
    ("Offline λ-return (Figure 12.3): at the episode's end, for t = 0 … T − 1 in turn",
     r"V(S_t) \leftarrow V(S_t) + \alpha\,\big[G^{\lambda}_t - V(S_t)\big]"),
    ("TD(λ) with accumulating traces (Figure 12.6)",
     r"\begin{aligned}z &\leftarrow \gamma\lambda z + \mathbf{x}(S_t) \\ \delta_t &= R_{t+1} + "
     r"\gamma V(S_{t+1}) - V(S_t) \\ V &\leftarrow V + \alpha\,\delta_t\, z\end{aligned}"),
    ("Forward = backward: with the values held for the episode, the summed updates agree",
     r"\begin{aligned}\textstyle\sum_{t} \alpha\,\delta_t\, z_t &= \textstyle\sum_{t} \alpha\,"
     r"\big[G^{\lambda}_t - V(S_t)\big]\,\mathbf{x}(S_t) \\ G^{\lambda}_t - V(S_t) &= "
     r"\textstyle\sum_{k=t}^{T-1} (\gamma\lambda)^{k-t}\,\delta_k\end{aligned}"),
    ("True online TD(λ) with dutch traces (Figure 12.8); it equals the online λ-return "
     "algorithm step by step",
     r"\begin{aligned}z &\leftarrow \gamma\lambda z + (1 - \alpha\gamma\lambda\, z^\top "
     r"\mathbf{x})\,\mathbf{x} \\ V &\leftarrow V + \alpha(\delta + V_t - V_{old})\, z \\ "
     r"&\quad - \alpha(V_t - V_{old})\,\mathbf{x}\end{aligned}"),
    ("Error measure of the sweeps: RMS over the n states at the end of each episode, averaged "
     "over the first E episodes and the runs", r"\overline{\mathrm{RMS}} = \frac{1}{E}"
     r"\sum_{e=1}^{E} \sqrt{\frac{1}{n}\sum_{s=1}^{n}\big(V_e(s) - v_\pi(s)\big)^2}"),
]
"""The page's equations, each with its caption."""


def export_tables(ex: TdVsMc, s: SweepSummary) -> dict[str, pd.DataFrame]:
    """Example 6.2's curves and the α sweep as tables."""
    rows = []
    for name, alphas, err, half in (("td0", ex.td_alphas, ex.td_error, ex.td_half),
                                    ("mc", ex.mc_alphas, ex.mc_error, ex.mc_half)):
        for a, alpha in enumerate(alphas):
            for e in range(ex.episodes + 1):
                rows.append({"method": name, "alpha": float(alpha), "episodes": e,
                             "rms": float(err[a, e]), "half_width_95": float(half[a, e])})
    sweep = []
    for p, param in enumerate(s.params):
        for a, alpha in enumerate(s.alphas):
            v = s.curve[p, a]
            sweep.append({_kind(s): float(param), "alpha": float(alpha),
                          "rms": float(v) if np.isfinite(v) else None,
                          "half_width_95": float(s.curve_half[p, a]),
                          "runs_diverged": int(s.diverged[p, a])})
    return {"example_6_2": pd.DataFrame(rows),
            f"sweep_{s.method}": pd.DataFrame(sweep)}

