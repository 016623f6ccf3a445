"""Figures of the C51 projection: source, shifted atoms with their splits, projection."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rlviz.distributional import Walkthrough
from rlviz.figures.theme import MUTED, color, hex_to_rgba

__all__ = ["atom_story", "projection_panels"]

CLIPPED = "#c92a2a"
GRID_LINE = "#dee2e6"
OUTSIDE = "#f1f3f5"
INK = "#212529"
TITLES = (
    "① source p on the support z",
    "② target atoms r + γz, split in two",
    "③ projection Φ(r + γZ) onto the support",
)


def _segments(x0, y0, x1, y1) -> tuple[list, list]:
    """Line segments (x0, y0)–(x1, y1) as one trace's coordinates, separated by gaps."""
    n = len(x0)
    xs: list = [None] * (3 * n)
    ys: list = [None] * (3 * n)
    xs[0::3], xs[1::3] = np.asarray(x0, float).tolist(), np.asarray(x1, float).tolist()
    ys[0::3], ys[1::3] = np.asarray(y0, float).tolist(), np.asarray(y1, float).tolist()
    return xs, ys


def _x_range(w: Walkthrough) -> list[float]:
    lo = min(float(w.support[0]), float(w.target_atoms.min()))
    hi = max(float(w.support[-1]), float(w.target_atoms.max()))
    pad = max(w.delta_z, 0.04 * (hi - lo))
    return [lo - pad, hi + pad]


def _axes(row: int) -> tuple[str, str]:
    """The x and y axis references of a panel (``x``, ``x2``, …)."""
    suffix = "" if row == 1 else str(row)
    return f"x{suffix}", f"y{suffix}"


def _vline(row: int, x: float, line: dict) -> dict:
    xref, yref = _axes(row)
    return dict(type="line", xref=xref, yref=f"{yref} domain", x0=x, x1=x, y0=0, y1=1,
                line=line)


def projection_panels(
    w: Walkthrough, *, atom: int | None = None, show_naive: bool = False, height: int = 760
) -> go.Figure:
    """Three aligned panels on one return axis, the C51 projection from left to right.

    ① ``p`` on ``z``; ② the target atoms, clipped ones marked, with lines to the two support
    points each one's mass goes to (ending at the height of the share it sends); ③ the
    projected distribution, optionally beside the naive floor/ceil result. ``atom`` follows
    one atom through all three panels.
    """
    z, p, dz = w.support, w.source, w.delta_z
    width = 0.8 * dz
    src, shifted, proj = color("source"), color("shifted"), color("projected")
    top = 1.18 * max(float(p.max()), float(w.projected.max()), float(w.naive.max()), 1e-12)
    idx = np.arange(w.n_atoms)
    traces: list[tuple[int, go.Bar | go.Scatter]] = []

    # ① the source
    traces.append((1, go.Bar(
        x=z, y=p, width=width, marker_color=src, name="source p", customdata=idx,
        hovertemplate="atom %{customdata}<br>z = %{x:.4g}<br>p = %{y:.4g}<extra></extra>",
    )))

    # ② support grid, splits, shifted atoms, clipping
    gx, gy = _segments(z, np.zeros_like(z), z, np.full_like(z, top))
    traces.append((2, go.Scatter(x=gx, y=gy, mode="lines", line=dict(color=GRID_LINE, width=1),
                                 hoverinfo="skip", showlegend=False)))
    lx, ly, ends_x, ends_y, ends_text = [], [], [], [], []
    for index, share, side in ((w.lower, w.weight_lower, "l"), (w.upper, w.weight_upper, "u")):
        keep = (p > 0) & (share > 1e-9)  # not the rounding-size shares of near-exact hits
        sx, sy = _segments(w.clipped_atoms[keep], p[keep], z[index[keep]], (p * share)[keep])
        lx += sx
        ly += sy
        ends_x += z[index[keep]].tolist()
        ends_y += (p * share)[keep].tolist()
        ends_text += [
            f"atom {j} sends {s:.1%} of p = {pj:.4g}, that is {pj * s:.4g}, to z = {z[k]:.4g} "
            f"({side})"
            for j, s, pj, k in zip(idx[keep], share[keep], p[keep], index[keep], strict=True)
        ]
    traces.append((2, go.Scatter(
        x=lx, y=ly, mode="lines", line=dict(color=hex_to_rgba(proj, 0.55), width=1.4),
        name="split onto neighbours", legendgroup="split", hoverinfo="skip",
    )))
    traces.append((2, go.Scatter(
        x=ends_x, y=ends_y, mode="markers", marker=dict(color=proj, size=5),
        legendgroup="split", showlegend=False, hovertext=ends_text, hoverinfo="text",
    )))
    sx, sy = _segments(w.clipped_atoms, np.zeros_like(p), w.clipped_atoms, p)
    traces.append((2, go.Scatter(x=sx, y=sy, mode="lines", line=dict(color=shifted, width=2),
                                 hoverinfo="skip", legendgroup="shifted", showlegend=False)))
    hover = [
        f"atom {j}: z = {z[j]:.4g}, p = {p[j]:.4g}<br>r + γz = {w.target_atoms[j]:.4g}"
        + (f", clipped to {w.clipped_atoms[j]:.4g}" if w.clipped[j] else "")
        + f"<br>b = {w.position[j]:.4g}: {w.weight_lower[j]:.1%} → z = {z[w.lower[j]]:.4g}, "
        f"{w.weight_upper[j]:.1%} → z = {z[w.upper[j]]:.4g}"
        for j in idx
    ]
    traces.append((2, go.Scatter(
        x=w.clipped_atoms, y=p, mode="markers", name="target atom r + γz", legendgroup="shifted",
        marker=dict(color=shifted, size=7, symbol=np.where(w.clipped, "diamond", "circle"),
                    line=dict(color=np.where(w.clipped, CLIPPED, shifted), width=1.5)),
        hovertext=hover, hoverinfo="text",
    )))
    if w.clipped.any():
        c = w.clipped
        ax, ay = _segments(w.target_atoms[c], p[c], w.clipped_atoms[c], p[c])
        traces.append((2, go.Scatter(
            x=ax, y=ay, mode="lines", line=dict(color=CLIPPED, width=1, dash="dot"),
            hoverinfo="skip", legendgroup="clipped", showlegend=False,
        )))
        traces.append((2, go.Scatter(
            x=w.target_atoms[c], y=p[c], mode="markers", legendgroup="clipped",
            name=f"clipped ({w.n_clipped}): where r + γz would be",
            marker=dict(color=CLIPPED, size=8, symbol="x-thin-open", line=dict(width=2)),
            hovertext=[hover[j] for j in idx[c]], hoverinfo="text",
        )))

    # ③ the projection (and the naive one)
    traces.append((3, go.Bar(
        x=z, y=w.projected, width=width, marker_color=proj, name="projected m",
        customdata=idx,
        hovertemplate="atom %{customdata}<br>z = %{x:.4g}<br>m = %{y:.4g}<extra></extra>",
    )))
    if show_naive:
        traces.append((3, go.Bar(
            x=z, y=w.naive, width=0.4 * dz,
            marker_color=hex_to_rgba(color("naive_projection"), 0.85),
            name=f"naive floor/ceil (keeps {w.naive_mass:.3g} of the mass)",
            hovertemplate="z = %{x:.4g}<br>naive = %{y:.4g}<extra></extra>",
        )))

    # follow one atom through all three panels
    if atom is not None and 0 <= atom < w.n_atoms:
        j = int(atom)
        parts = [(k, s) for k, s in ((w.lower[j], w.weight_lower[j]),
                                     (w.upper[j], w.weight_upper[j])) if s > 0]
        hx, hy = _segments([w.clipped_atoms[j]] * len(parts), [p[j]] * len(parts),
                           [z[k] for k, _ in parts], [p[j] * s for _, s in parts])
        traces += [
            (1, go.Bar(x=[z[j]], y=[p[j]], width=width, name=f"atom {j}", legendgroup="atom",
                       marker=dict(color=src, line=dict(color=INK, width=2.5)),
                       hoverinfo="skip")),
            (2, go.Scatter(x=hx, y=hy, mode="lines+markers", line=dict(color=INK, width=2.5),
                           marker=dict(color=INK, size=7), legendgroup="atom",
                           showlegend=False, hoverinfo="skip")),
            (2, go.Scatter(x=[w.clipped_atoms[j]], y=[p[j]], mode="markers",
                           legendgroup="atom", showlegend=False, hovertext=[hover[j]],
                           hoverinfo="text",
                           marker=dict(color=shifted, size=13, line=dict(color=INK, width=2.5)))),
            (3, go.Bar(x=[z[k] for k, _ in parts], y=[p[j] * s for _, s in parts], width=width,
                       marker=dict(color=hex_to_rgba(INK, 0.25), line=dict(color=INK, width=2.5)),
                       legendgroup="atom", showlegend=False, hoverinfo="text",
                       hovertext=[f"from atom {j}: {p[j] * s:.4g}" for _, s in parts])),
        ]

    fig = make_subplots(
        rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.075, subplot_titles=TITLES
    )
    fig.add_traces([t for _, t in traces], rows=[r for r, _ in traces], cols=1)
    lo, hi = _x_range(w)
    shapes = [_vline(row, edge, dict(color=MUTED, width=1, dash="dash"))
              for row in (1, 2, 3) for edge in (z[0], z[-1])]
    xref, yref = _axes(2)
    shapes += [dict(type="rect", xref=xref, yref=f"{yref} domain", x0=a, x1=b, y0=0, y1=1,
                    fillcolor=OUTSIDE, line_width=0, layer="below")
               for a, b in ((lo, z[0]), (z[-1], hi)) if b > a]
    annotations = [dict(a.to_plotly_json(), font=dict(size=13), x=0.0, xanchor="left")
                   for a in fig.layout.annotations]  # the panel titles
    for row, (mean, hex_color) in enumerate(
        ((w.before[0], src), (w.clipped_target[0], shifted), (w.after[0], proj)), start=1
    ):
        shapes.append(_vline(row, mean, dict(color=hex_color, width=1.5, dash="dot")))
        xref, yref = _axes(row)
        annotations.append(dict(
            x=mean, xref=xref, y=1, yref=f"{yref} domain", text=f"mean {mean:.3g}",
            showarrow=False, xanchor="left", yanchor="top", xshift=3,
            font=dict(size=11, color=hex_color),
        ))
    fig.update_layout(
        height=height, barmode="overlay", bargap=0, legend=dict(y=1.05),
        margin=dict(t=90), shapes=shapes,
    )
    fig.layout.annotations = annotations  # replaced whole: update_layout would merge them
    fig.update_xaxes(range=[lo, hi])
    fig.update_xaxes(title_text="return z", row=3, col=1)
    fig.update_yaxes(range=[0, top])
    for row, label in ((1, "p(z)"), (2, "probability"), (3, "m(z)")):
        fig.update_yaxes(title_text=label, row=row, col=1)
    return fig


def atom_story(w: Walkthrough, j: int) -> str:
    """One atom's trip through the projection, in words and numbers (markdown)."""
    z, lo, up = w.support, int(w.lower[j]), int(w.upper[j])
    target = f"{w.reward:g}" + ("" if w.done else f" + {w.gamma:g} × {z[j]:.4g}")
    clip = f", clipped to {w.clipped_atoms[j]:.4g}" if w.clipped[j] else ""
    if w.exact_hits[j]:
        k = lo if w.weight_lower[j] == 1 else up
        split = (f"That is exactly on z = {z[k]:.4g}, so all of p goes there (a naive "
                 "⌊b⌋/⌈b⌉ would give both neighbours weight zero and lose it).")
    else:
        split = (f"It sends u − b = {w.weight_lower[j]:.1%} "
                 f"({w.source[j] * w.weight_lower[j]:.4g}) to z = {z[lo]:.4g} and b − l = "
                 f"{w.weight_upper[j]:.1%} ({w.source[j] * w.weight_upper[j]:.4g}) to "
                 f"z = {z[up]:.4g}.")
    return (
        f"**Atom {j}** sits at z = {z[j]:.4g} with p = {w.source[j]:.4g}. Its target is "
        f"r + γ(1 − done)z = {target} = {w.target_atoms[j]:.4g}{clip}, at grid position "
        f"b = (ẑ − V_min) / Δz = {w.position[j]:.4g}, between l = {lo} and u = {up}. {split}"
    )
