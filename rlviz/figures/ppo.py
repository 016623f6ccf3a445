"""Figures of the PPO clip page: the clipped objective's surface and slices, and the live toy.

Multi-panel figures are laid out directly (axis domains, shapes and annotations as plain
dicts, one ``go.Figure`` call) rather than with ``make_subplots`` and ``add_vline``: the page
redraws them on every slider move, and plotly's helpers cost tens of milliseconds each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from rlviz.figures.theme import DIVERGING, INK, MUTED, color, diverging
from rlviz.ppo import ClipSurface, PointExplanation, ToyResult, ValueLossSlice

__all__ = [
    "LABELS",
    "batch_on_surface",
    "kl_estimates",
    "ratio_trajectories",
    "slices",
    "surface_3d",
    "surface_heatmap",
    "toy_summary",
    "value_loss",
]

LABELS = {"clipped": "Clipped (PPO)", "unclipped": "Unclipped r·A", "kl_penalty": "KL penalty"}
RATIO = "probability ratio r = π(a) / π_old(a)"
UP, DOWN = DIVERGING[-1][1], DIVERGING[0][1]  # positive advantage blue, negative red
FLAT = "#495057"
BAND = "rgba(28,126,214,0.09)"
POINT = "#fab005"
MIN_LOG_RATIO = 1e-3
LOG_TICKS = (0.001, 0.01, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
ESTIMATORS = {"kl_exact": ("exact KL", INK, "solid"), "kl_k3": ("k3 estimate", "#0c8599", "dash"),
              "kl_k1": ("k1 estimate", "#e67700", "dot")}


# --------------------------------------------------------------------------- layout helpers
def _axis_ids(i: int) -> tuple[str, str]:
    """Trace axis references of panel ``i`` (0-based): ``("x", "y")``, ``("x2", "y2")``, ..."""
    n = "" if i == 0 else str(i + 1)
    return f"x{n}", f"y{n}"


def _panels(titles: Sequence[str], *, shared_y: bool = False, gap: float = 0.05,
            **layout: Any) -> dict:
    """Layout of ``len(titles)`` side-by-side panels with a title above each."""
    n = len(titles)
    width = (1.0 - gap * (n - 1)) / n
    out: dict[str, Any] = dict(annotations=[], shapes=[])
    for i, title in enumerate(titles):
        x, y = _axis_ids(i)
        x0 = i * (width + gap)
        out[f"xaxis{x[1:]}"] = dict(domain=[x0, x0 + width], anchor=y)
        yaxis: dict[str, Any] = dict(anchor=x)
        if shared_y and i:
            yaxis.update(matches="y", showticklabels=False)
        out[f"yaxis{y[1:]}"] = yaxis
        out["annotations"].append(dict(
            text=title, x=x0 + width / 2, y=1.0, xref="paper", yref="paper", xanchor="center",
            yanchor="bottom", yshift=6, showarrow=False, font=dict(size=13),
        ))
    out.update(layout)
    return out


def _vline(x: float, i: int = 0, *, dash: str = "dash", colour: str = INK,
           width: float = 1.2) -> dict:
    xa, ya = _axis_ids(i)
    return dict(type="line", x0=x, x1=x, y0=0, y1=1, xref=xa, yref=f"{ya} domain",
                line=dict(color=colour, width=width, dash=dash))


def _band_x(x0: float, x1: float, i: int = 0) -> dict:
    xa, ya = _axis_ids(i)
    return dict(type="rect", x0=x0, x1=x1, y0=0, y1=1, xref=xa, yref=f"{ya} domain",
                fillcolor=BAND, line_width=0, layer="below")


def _band_y(y0: float, y1: float, i: int = 0) -> dict:
    xa, ya = _axis_ids(i)
    return dict(type="rect", x0=0, x1=1, y0=y0, y1=y1, xref=f"{xa} domain", yref=ya,
                fillcolor=BAND, line_width=0, layer="below")


def _label_top(x: float, text: str, i: int = 0) -> dict:
    xa, ya = _axis_ids(i)
    return dict(x=x, y=1, xref=xa, yref=f"{ya} domain", text=text, showarrow=False,
                yanchor="bottom", font=dict(size=11, color=INK))


def _edges(layout: dict, epsilon: float, i: int = 0, *, label: bool = True) -> None:
    """Dashed lines at r = 1 - eps and 1 + eps (with labels) in panel ``i``."""
    for x, text in ((1.0 - epsilon, "1 − ε"), (1.0 + epsilon, "1 + ε")):
        layout["shapes"].append(_vline(x, i))
        if label:
            layout["annotations"].append(_label_top(x, text, i))


def _flat_traces(epsilon: float, x_range, y_range, i: int = 0, *,
                 legend: bool = True) -> list[dict]:
    """The two zero-gradient rectangles (A > 0, r > 1+eps; A < 0, r < 1-eps), hatched."""
    (x0, x1), (y0, y1) = x_range, y_range
    hi, lo = 1.0 + epsilon, 1.0 - epsilon
    corners = []
    if x1 > hi and y1 > 0:
        corners.append(([hi, x1, x1, hi, hi], [0, 0, y1, y1, 0]))
    if x0 < lo and y0 < 0:
        corners.append(([x0, lo, lo, x0, x0], [y0, y0, 0, 0, y0]))
    xa, ya = _axis_ids(i)
    return [
        dict(
            type="scatter", x=xs, y=ys, xaxis=xa, yaxis=ya, mode="lines", fill="toself",
            fillcolor="rgba(0,0,0,0)", hoverinfo="skip", name="flat: ∂L/∂r = 0",
            fillpattern=dict(shape="/", fgcolor="rgba(73,80,87,0.55)", size=9, solidity=0.15),
            line=dict(color="rgba(73,80,87,0.7)", width=1), legendgroup="flat",
            showlegend=legend and k == 0,
        )
        for k, (xs, ys) in enumerate(corners)
    ]


def _padded(bounds: tuple[float, float], frac: float = 0.03) -> list[float]:
    """An axis range a little wider than the data, so markers on the edge stay whole."""
    lo, hi = bounds
    pad = (hi - lo) * frac
    return [lo - pad, hi + pad]


def _f32(a: np.ndarray) -> np.ndarray:
    """Single precision for drawing: half the bytes sent to the browser (exports stay exact)."""
    return np.asarray(a, dtype=np.float32)


# --------------------------------------------------------------------------- the surface
def _point_marker(point: PointExplanation) -> dict:
    return dict(
        type="scatter", x=[point.ratio], y=[point.advantage], mode="markers", name="your point",
        marker=dict(symbol="star", size=17, color=POINT, line=dict(color=INK, width=1.5)),
        hovertemplate=(f"r = {point.ratio:.3g}<br>A = {point.advantage:.3g}<br>"
                       f"L = {point.objective:.4g}<br>∂L/∂r = {point.grad:.4g}<extra></extra>"),
    )


def surface_heatmap(s: ClipSurface, *, point: PointExplanation | None = None,
                    gradient: bool = False, height: int = 470) -> go.Figure:
    """L(r, A) with level lines (or ∂L/∂r) as a heatmap, the zero-gradient regions hatched."""
    z = s.grad if gradient else s.objective
    name = "∂L/∂r" if gradient else "L(r, A)"
    x_range = (float(s.ratio[0]), float(s.ratio[-1]))
    y_range = (float(s.advantage[0]), float(s.advantage[-1]))
    data: list[Any] = [dict(
        type="heatmap", x=_f32(s.ratio), y=_f32(s.advantage), z=_f32(z), **diverging(z), name=name,
        colorbar=dict(title=dict(text=name, side="top"), thickness=12, len=0.85),
        hovertemplate=f"r = %{{x:.2f}}<br>A = %{{y:.2f}}<br>{name} = %{{z:.3f}}<extra></extra>",
    )]
    if not gradient:
        step = max(1, s.ratio.size // 100), max(1, s.advantage.size // 100)
        data.append(dict(
            type="contour", x=_f32(s.ratio[:: step[0]]), y=_f32(s.advantage[:: step[1]]),
            z=_f32(s.objective[:: step[1], :: step[0]]), showscale=False, hoverinfo="skip",
            contours=dict(coloring="lines", start=-2.0, end=2.0, size=0.2),
            colorscale=[[0, "rgba(31,36,48,0.3)"], [1, "rgba(31,36,48,0.3)"]],
            line=dict(width=0.8), name="level lines of L",
        ))
    data += _flat_traces(s.epsilon, x_range, y_range)
    if point is not None:
        data.append(_point_marker(point))
    layout = dict(
        height=height, shapes=[], annotations=[], legend=dict(y=1.08),
        xaxis=dict(title=RATIO, range=_padded(x_range), showgrid=False),
        yaxis=dict(title="advantage A", range=_padded(y_range), showgrid=False),
    )
    _edges(layout, s.epsilon)
    return go.Figure(data=data, layout=layout)


def surface_3d(s: ClipSurface, *, point: PointExplanation | None = None,
               height: int = 520) -> go.Figure:
    """L(r, A) as a 3-D surface coloured by ∂L/∂r, over the translucent plane r·A."""
    limit = float(np.abs(s.advantage).max()) or 1.0
    x, y = _f32(s.ratio), _f32(s.advantage)
    data: list[Any] = [
        dict(type="surface", x=x, y=y, z=_f32(s.unclipped), opacity=0.18, showscale=False,
             colorscale=[[0, MUTED], [1, MUTED]], name="r·A (unclipped)", hoverinfo="skip",
             showlegend=True),
        dict(type="surface", x=x, y=y, z=_f32(s.objective), surfacecolor=_f32(s.grad),
             colorscale=DIVERGING, cmin=-limit, cmax=limit, name="L(r, A)",
             colorbar=dict(title=dict(text="∂L/∂r", side="right"), thickness=12, len=0.7),
             hovertemplate="r = %{x:.2f}<br>A = %{y:.2f}<br>L = %{z:.3f}<extra></extra>"),
    ]
    a0, a1 = float(s.advantage[0]), float(s.advantage[-1])
    for r in (1.0 - s.epsilon, 1.0 + s.epsilon):
        data.append(dict(type="scatter3d", x=[r, r], y=[a0, a1], z=[r * a0, r * a1],
                         mode="lines", line=dict(color=INK, width=5, dash="dash"),
                         showlegend=False, hoverinfo="skip"))
    if point is not None:
        data.append(dict(
            type="scatter3d", x=[point.ratio], y=[point.advantage], z=[point.objective],
            mode="markers", marker=dict(size=7, color=POINT, line=dict(color=INK, width=2)),
            name="your point", hoverinfo="skip",
        ))
    layout = dict(
        height=height, margin=dict(l=0, r=0, t=30, b=0),
        scene=dict(xaxis_title="ratio r", yaxis_title="advantage A", zaxis_title="L(r, A)",
                   camera=dict(eye=dict(x=1.6, y=-1.5, z=0.9)), aspectmode="manual",
                   aspectratio=dict(x=1.3, y=1.0, z=0.7)),
    )
    return go.Figure(data=data, layout=layout)


def slices(s: ClipSurface, *, point: PointExplanation | None = None,
           height: int = 340) -> go.Figure:
    """The two classic slices of Schulman et al. (2017), Fig. 1: A > 0 and A < 0.

    ``s`` holds one positive and one negative advantage (its rows), on a fine ratio grid.
    """
    titles = [f"A = {a:+g}: {'a good action' if a > 0 else 'a bad action'}  "
              f"(band: {1 - s.epsilon:g} ≤ r ≤ {1 + s.epsilon:g})" for a in s.advantage]
    layout = _panels(titles, gap=0.08, height=height, legend=dict(y=1.16),
                     margin=dict(t=84))
    data: list[Any] = []
    for i, a in enumerate(s.advantage):
        xa, ya = _axis_ids(i)
        first = i == 0
        layout["shapes"].append(_band_x(1 - s.epsilon, 1 + s.epsilon, i))
        _edges(layout, s.epsilon, i, label=False)
        flat = s.flat[i]
        data += [
            dict(type="scatter", x=s.ratio, y=s.unclipped[i], xaxis=xa, yaxis=ya,
                 name="r·A (unclipped)", legendgroup="u", showlegend=first,
                 line=dict(color=color("unclipped"), dash="dash", width=1.6),
                 hovertemplate="r = %{x:.3f}<br>r·A = %{y:.3f}<extra></extra>"),
            dict(type="scatter", x=s.ratio, y=s.objective[i], xaxis=xa, yaxis=ya,
                 name="L = min(r·A, clip(r, 1−ε, 1+ε)·A)", legendgroup="c",
                 showlegend=first, line=dict(color=color("clipped"), width=3),
                 hovertemplate="r = %{x:.3f}<br>L = %{y:.3f}<extra></extra>"),
            dict(type="scatter", x=s.ratio[flat], y=s.objective[i][flat], xaxis=xa, yaxis=ya,
                 name="flat: ∂L/∂r = 0", legendgroup="f", showlegend=first, mode="lines",
                 hoverinfo="skip", line=dict(color=FLAT, width=9), opacity=0.35),
            dict(type="scatter", x=[1.0], y=[a], xaxis=xa, yaxis=ya, mode="markers",
                 name="r = 1 (π = π_old)", legendgroup="one", showlegend=first,
                 marker=dict(color=INK, size=8), hoverinfo="skip"),
        ]
        if point is not None and point.advantage != 0 and (point.advantage > 0) == (a > 0):
            layout["shapes"].append(_vline(point.ratio, i, dash="solid", colour=POINT, width=2.5))
        layout[f"xaxis{xa[1:]}"]["title"] = "ratio r"
    layout["yaxis"]["title"] = "objective"
    return go.Figure(data=data, layout=layout)


# --------------------------------------------------------------------------- the live toy
def _epoch_axes(layout: dict, res: ToyResult, panels: Sequence[int]) -> None:
    for i in panels:
        axis = layout[f"xaxis{_axis_ids(i)[0][1:]}"]
        axis.update(title="epoch", range=[-0.3, res.epochs + 0.3], dtick=max(1, res.epochs // 10))


def ratio_trajectories(res: ToyResult, *, epoch: int | None = None,
                       height: int = 380) -> go.Figure:
    """Each action's ratio (shared by all its samples) over the epochs, one panel per method."""
    layout = _panels([LABELS[r.method] for r in res.runs], shared_y=True, gap=0.03,
                     height=height, legend=dict(y=1.16), margin=dict(t=84))
    push, counts = res.action_advantage, res.action_counts
    epochs = np.arange(res.epochs + 1)
    lo, hi = 1.0 - res.epsilon, 1.0 + res.epsilon
    data: list[Any] = []
    shown: set[bool] = set()
    for i, run in enumerate(res.runs):
        xa, ya = _axis_ids(i)
        ratios = res.action_ratios(run.method)
        layout["shapes"] += [_band_y(lo, hi, i), *(_hline(y, i) for y in (lo, hi))]
        if epoch is not None:
            layout["shapes"].append(_vline(epoch, i, dash="dot", colour=MUTED, width=1))
        for k in np.flatnonzero(counts):
            up = bool(push[k] > 0)
            data.append(dict(
                type="scatter", x=epochs, y=ratios[:, k], xaxis=xa, yaxis=ya, mode="lines+markers",
                line=dict(color=UP if up else DOWN, width=1.2 + 2.8 * counts[k] / counts.max()),
                marker=dict(size=4), legendgroup=str(up), showlegend=up not in shown,
                name="actions with ΣA > 0 (pushed up)" if up else "actions with ΣA < 0",
                hovertemplate=(f"a{k}: μ = {res.true_rewards[k]:.3g}, {counts[k]} samples, "
                               f"ΣA = {push[k]:+.3g}<br>epoch %{{x}}: r = %{{y:.3f}}"
                               "<extra></extra>"),
            ))
            shown.add(up)
    _epoch_axes(layout, res, range(len(res.runs)))
    low = min(float(res.action_ratios(r.method)[:, counts > 0].min()) for r in res.runs)
    ticks = [t for t in LOG_TICKS if t >= low / 2]
    for i in range(len(res.runs)):
        layout[f"yaxis{_axis_ids(i)[1][1:]}"].update(type="log", tickvals=ticks)
    layout["yaxis"]["title"] = "ratio r (log scale)"
    return go.Figure(data=data, layout=layout)


def _hline(y: float, i: int = 0) -> dict:
    xa, ya = _axis_ids(i)
    return dict(type="line", x0=0, x1=1, y0=y, y1=y, xref=f"{xa} domain", yref=ya,
                line=dict(color=INK, width=1, dash="dash"))


def batch_on_surface(res: ToyResult, epoch: int, *, height: int = 360) -> go.Figure:
    """Every sample of the batch at (r_i, A_i) after ``epoch`` epochs, over the flat regions."""
    runs = res.runs
    all_r = np.concatenate([r.ratios.ravel() for r in runs])
    # Log axis: ratios that underflowed to (almost) zero fall off its left edge at 1e-3.
    x_range = (max(min(float(all_r.min()), 1 - res.epsilon) * 0.85, MIN_LOG_RATIO),
               max(float(all_r.max()), 1 + res.epsilon) * 1.15)
    a_lim = float(np.abs(res.advantages).max()) * 1.1 or 1.0
    ticks = [t for t in LOG_TICKS if x_range[0] <= t <= x_range[1]]
    titles = [f"{LABELS[run.method]}: {run.flat_fraction[epoch]:.0%} flat, "
              f"{run.clip_fraction[epoch]:.0%} outside" for run in runs]
    layout = _panels(titles, shared_y=True, gap=0.03, height=height, legend=dict(y=1.18),
                     margin=dict(t=88))
    data: list[Any] = []
    for i, run in enumerate(runs):
        xa, ya = _axis_ids(i)
        data += _flat_traces(res.epsilon, x_range, (-a_lim, a_lim), i, legend=i == 0)
        _edges(layout, res.epsilon, i, label=False)
        flat, r, a = run.flat[epoch], run.ratios[epoch], res.advantages
        for mask, name, colour in (
            (~flat & (a >= 0), "A ≥ 0, gradient pushes r up", UP),
            (~flat & (a < 0), "A < 0, gradient pushes r down", DOWN),
            (flat, "in a flat region: zero gradient under the clip", FLAT),
        ):
            data.append(dict(
                type="scatter", x=r[mask], y=a[mask], xaxis=xa, yaxis=ya, mode="markers", name=name,
                legendgroup=name, showlegend=i == 0,
                marker=dict(color=colour, size=8, opacity=0.75,
                            line=dict(color="white", width=0.6)),
                customdata=np.stack([res.actions[mask], np.flatnonzero(mask)], axis=-1),
                hovertemplate=("sample %{customdata[1]} (a%{customdata[0]})<br>r = %{x:.3f}"
                               "<br>A = %{y:.3f}<extra></extra>"),
            ))
        layout[f"xaxis{xa[1:]}"].update(type="log", range=np.log10(x_range).tolist(),
                                         title="ratio r (log scale)", tickvals=ticks)
    layout["yaxis"].update(range=[-a_lim, a_lim], title="advantage A")
    return go.Figure(data=data, layout=layout)


def kl_estimates(res: ToyResult, *, epoch: int | None = None, height: int = 320) -> go.Figure:
    """KL[π_old, π] per epoch for each method: exact, and the k1 and k3 estimates."""
    layout = _panels([LABELS[r.method] for r in res.runs], gap=0.06, height=height,
                     legend=dict(y=1.2), margin=dict(t=84))
    epochs = np.arange(res.epochs + 1)
    data: list[Any] = []
    for i, run in enumerate(res.runs):
        xa, ya = _axis_ids(i)
        for field, (name, colour, dash) in ESTIMATORS.items():
            data.append(dict(
                type="scatter", x=epochs, y=getattr(run, field), xaxis=xa, yaxis=ya, name=name,
                legendgroup=field, showlegend=i == 0, line=dict(color=colour, dash=dash),
                hovertemplate=f"{name}<br>epoch %{{x}}: %{{y:.4g}}<extra></extra>",
            ))
        if epoch is not None:
            layout["shapes"].append(_vline(epoch, i, dash="dot", colour=MUTED, width=1))
    _epoch_axes(layout, res, range(len(res.runs)))
    layout["yaxis"]["title"] = "KL[π_old, π]"
    return go.Figure(data=data, layout=layout)


def toy_summary(res: ToyResult, epoch: int, *, height: int = 340) -> go.Figure:
    """Clip fraction, true expected return, and the action probabilities after ``epoch``."""
    layout = _panels(
        ["Clip fraction (solid) and flat fraction (dotted)", "True expected return J(π)",
         f"Action probabilities after epoch {epoch}"],
        gap=0.08, height=height, legend=dict(y=1.2), margin=dict(t=84), barmode="group",
    )
    epochs = np.arange(res.epochs + 1)
    data: list[Any] = []
    for run in res.runs:
        c, name = color(run.method), LABELS[run.method]
        data += [
            dict(type="scatter", x=epochs, y=run.clip_fraction, name=name,
                 legendgroup=run.method, line=dict(color=c),
                 hovertemplate="epoch %{x}: %{y:.0%} outside<extra></extra>"),
            dict(type="scatter", x=epochs, y=run.flat_fraction, name=name,
                 legendgroup=run.method, showlegend=False, line=dict(color=c, dash="dot"),
                 hovertemplate="epoch %{x}: %{y:.0%} flat<extra></extra>"),
            dict(type="scatter", x=epochs, y=run.expected_return, xaxis="x2", yaxis="y2",
                 name=name, legendgroup=run.method, showlegend=False, line=dict(color=c),
                 hovertemplate="epoch %{x}: J = %{y:.4f}<extra></extra>"),
        ]
    labels = [f"a{k}<br>μ={m:.2g}" for k, m in enumerate(res.true_rewards)]
    data.append(dict(type="bar", x=labels, y=res.old_probs, xaxis="x3", yaxis="y3",
                     name="π_old", marker_color=MUTED,
                     hovertemplate="%{x}: %{y:.3f}<extra>π_old</extra>"))
    for run in res.runs:
        data.append(dict(
            type="bar", x=labels, y=run.probs[epoch], xaxis="x3", yaxis="y3",
            name=LABELS[run.method], legendgroup=run.method, showlegend=False,
            marker_color=color(run.method),
            hovertemplate=f"%{{x}}: %{{y:.3f}}<extra>{LABELS[run.method]}</extra>",
        ))
    layout["shapes"] += [_vline(epoch, i, dash="dot", colour=MUTED, width=1) for i in (0, 1)]
    layout["shapes"].append(dict(type="line", x0=0, x1=1, y0=res.best_return,
                                 y1=res.best_return, xref="x2 domain", yref="y2",
                                 line=dict(color=INK, width=1, dash="dash")))
    layout["annotations"].append(dict(x=1, y=res.best_return, xref="x2 domain", yref="y2",
                                      text="best action", showarrow=False, xanchor="right",
                                      yanchor="bottom", font=dict(size=11)))
    _epoch_axes(layout, res, (0, 1))
    layout["yaxis"].update(range=[0, 1.02], tickformat=".0%")
    layout["yaxis3"].update(range=[0, 1.0])
    layout["xaxis3"].update(tickangle=0)  # two-line labels: slanted, they ran off the bottom
    return go.Figure(data=data, layout=layout)


def value_loss(v: ValueLossSlice, *, height: int = 320) -> go.Figure:
    """The clipped value loss of one sample against the new prediction V."""
    flat = v.grad == 0
    data = [
        dict(type="scatter", x=v.value, y=v.unclipped, name="½(V − R)²",
             line=dict(color=color("unclipped"), dash="dash", width=1.6)),
        dict(type="scatter", x=v.value, y=v.clipped, name="½(V_old + clip(V − V_old, ±ε) − R)²",
             line=dict(color=MUTED, dash="dot", width=1.6)),
        dict(type="scatter", x=v.value, y=v.loss, name="loss = max of the two",
             line=dict(color=color("clipped"), width=3)),
        dict(type="scatter", x=v.value[flat], y=v.loss[flat], name="flat: gradient 0",
             mode="lines", line=dict(color=FLAT, width=9), opacity=0.35, hoverinfo="skip"),
    ]
    layout = dict(height=height, legend=dict(y=1.12),
                  xaxis=dict(title="new value prediction V"), yaxis=dict(title="loss"),
                  shapes=[_band_x(v.value_old - v.epsilon, v.value_old + v.epsilon)],
                  annotations=[])
    for x, text in ((v.value_old, "V_old"), (v.target, "target R")):
        layout["shapes"].append(_vline(x, dash="dash", width=1))
        layout["annotations"].append(_label_top(x, text))
    return go.Figure(data=data, layout=layout)
