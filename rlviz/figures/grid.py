"""Gridworld drawings: a value heatmap with walls, special cells, policy arrows and paths."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from rlviz.figures.theme import DIVERGING, INK, diverging, figure
from rlviz.mdp import GridInfo

__all__ = ["GridPath", "grid_figure"]

WALL = "#343a40"
CLIFF = "#c92a2a"
HOLE = "#1b2a41"
ANNOTATE_MAX_CELLS = 144


@dataclass(frozen=True)
class GridPath:
    """A route through the grid to draw: states in order, and whether it reaches a goal."""

    name: str
    states: Sequence[int]
    color: str
    reaches_goal: bool = True


def _overlay(mask: np.ndarray, colour: str, opacity: float, name: str) -> go.Heatmap:
    z = np.where(mask, 1.0, np.nan)
    return go.Heatmap(
        z=z,
        colorscale=[[0.0, colour], [1.0, colour]],
        showscale=False,
        hoverinfo="skip",
        opacity=opacity,
        name=name,
        xgap=1,
        ygap=1,
    )


def _arrow_trace(grid: GridInfo, policy: np.ndarray, skip: np.ndarray) -> go.Scatter:
    """One scatter trace of short arrows: for each state, one per action in ``policy`` (ties)."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    sizes: list[float] = []
    n_actions = policy.shape[1]
    n_rows, n_cols = grid.shape
    big = max(n_rows, n_cols)
    tip = float(np.clip(110 / big, 4, 11))
    length = 0.34
    for s in np.flatnonzero(~skip):
        r, c = grid.cells[s]
        for a in range(n_actions):
            if not policy[s, a]:
                continue
            dr, dc = grid.action_deltas[a]
            xs += [c, c + length * dc, None]
            ys += [r, r + length * dr, None]
            sizes += [0, tip, 0]
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines+markers",
        line=dict(color=INK, width=1.4),
        marker=dict(symbol="arrow", size=sizes, angleref="previous", color=INK),
        hoverinfo="skip",
        showlegend=False,
        name="greedy action",
    )


def grid_figure(
    grid: GridInfo,
    *,
    values: np.ndarray | None = None,
    policy: np.ndarray | None = None,
    paths: Sequence[GridPath] = (),
    title: str | None = None,
    value_label: str = "V(s)",
    colorscale: list | str | None = None,
    zrange: tuple[float, float] | None = None,
    annotate: bool | None = None,
    value_format: str = ".2f",
    height: int | None = None,
) -> go.Figure:
    """Draw a grid-shaped MDP.

    Args:
        grid: Where the states sit (``mdp.grid``).
        values: ``[S]`` numbers to colour each cell by (diverging around 0 unless
            ``colorscale`` is given); None for a plain grid.
        policy: ``[S, A]`` boolean mask of the actions to draw as arrows (several where tied).
        paths: Routes to draw on top.
        title: Figure title.
        value_label: Name of the value in hover text and on the colour bar.
        colorscale: Plotly colour scale; defaults to the shared diverging scale.
        zrange: Fixed colour limits (e.g. to keep colours steady while scrubbing sweeps).
        annotate: Print values in cells; by default only when the grid is small.
        value_format: d3 format of printed values.
        height: Figure height in pixels; by default from the grid's aspect ratio.

    Returns:
        The figure.
    """
    n_rows, n_cols = grid.shape
    chars = np.array([list(row) for row in grid.layout])
    wall = chars == "#"
    cliff = chars == "C"
    hole = chars == "H"
    n_states = len(grid.cells)
    if annotate is None:
        annotate = n_rows * n_cols <= ANNOTATE_MAX_CELLS

    fig = figure(title=title)
    if values is not None:
        v = np.asarray(values, dtype=np.float64)
        if v.shape != (n_states,):
            raise ValueError(f"values must have shape [{n_states}]; got {v.shape}")
        z = grid.to_grid(v)
        z[cliff | wall] = np.nan
        if zrange is not None:
            colours = dict(
                colorscale=colorscale or DIVERGING, zmin=zrange[0], zmax=zrange[1],
            )
            if colorscale is None:
                colours["zmid"] = 0.0
        elif colorscale is None:
            colours = diverging(v)
        else:
            colours = dict(colorscale=colorscale)
        shown = np.where(np.isfinite(z), z, 0.0)
        fig.add_trace(
            go.Heatmap(
                z=z,
                **colours,
                xgap=1,
                ygap=1,
                colorbar=dict(title=dict(text=value_label, side="right"), thickness=12),
                customdata=np.dstack([np.indices(z.shape)[0], np.indices(z.shape)[1]]),
                hovertemplate=(
                    "row %{customdata[0]}, col %{customdata[1]}<br>"
                    + value_label + " = %{z:" + value_format + "}<extra></extra>"
                ),
                text=shown if annotate else None,
                texttemplate=("%{z:" + value_format + "}") if annotate else None,
                textfont=dict(size=11 if n_cols <= 8 else 9),
                name=value_label,
            )
        )
    else:
        floor = np.where(wall, np.nan, 0.0)
        fig.add_trace(
            go.Heatmap(
                z=floor, colorscale=[[0, "#f8f9fa"], [1, "#f8f9fa"]], showscale=False,
                hoverinfo="skip", xgap=1, ygap=1,
            )
        )
    if wall.any():
        fig.add_trace(_overlay(wall, WALL, 1.0, "wall"))
    if cliff.any():
        fig.add_trace(_overlay(cliff, CLIFF, 0.55, "cliff"))
    if hole.any():
        fig.add_trace(_overlay(hole, HOLE, 0.85, "hole"))

    if policy is not None:
        pol = np.asarray(policy, dtype=bool)
        cell_char = chars[grid.cells[:, 0], grid.cells[:, 1]]
        skip = np.isin(cell_char, ["G", "H", "C"])
        fig.add_trace(_arrow_trace(grid, pol, skip))

    # Letters for the special cells.
    special = np.argwhere(np.isin(chars, ["S", "G", "H"]))
    marks = [(r, c, chars[r, c]) for r, c in special]
    if marks:
        fig.add_trace(
            go.Scatter(
                x=[c for _, c, _ in marks],
                y=[r for r, _, _ in marks],
                mode="text",
                text=[f"<b>{ch}</b>" for _, _, ch in marks],
                textfont=dict(
                    size=14 if max(n_rows, n_cols) <= 16 else 10,
                    color=["white" if ch == "H" else INK for _, _, ch in marks],
                ),
                textposition="top left" if annotate and values is not None else "middle center",
                hoverinfo="skip",
                showlegend=False,
            )
        )

    for i, path in enumerate(paths):
        states = np.asarray(path.states, dtype=np.int64)
        if states.size == 0:
            continue
        offset = (i - (len(paths) - 1) / 2) * 0.12
        xy = grid.cells[states]
        fig.add_trace(
            go.Scatter(
                x=xy[:, 1] + offset,
                y=xy[:, 0] + offset,
                mode="lines+markers",
                line=dict(
                    color=path.color, width=3.5, dash="solid" if path.reaches_goal else "dot"
                ),
                marker=dict(
                    size=[9] + [0] * (len(states) - 2) + [12] if len(states) > 1 else [9],
                    symbol=["circle"] + ["circle"] * max(len(states) - 2, 0)
                    + (["star" if path.reaches_goal else "x"] if len(states) > 1 else []),
                    color=path.color,
                ),
                name=path.name + ("" if path.reaches_goal else " (never reaches the goal)"),
                hovertemplate=path.name + "<extra></extra>",
            )
        )

    fig.update_xaxes(
        range=[-0.5, n_cols - 0.5], showgrid=False, showticklabels=False, ticks="",
        showline=False, zeroline=False, constrain="domain",
    )
    fig.update_yaxes(
        range=[n_rows - 0.5, -0.5], showgrid=False, showticklabels=False, ticks="",
        showline=False, zeroline=False, scaleanchor="x", scaleratio=1, constrain="domain",
    )
    if height is None:
        height = int(np.clip(90 + 620 * n_rows / max(n_cols, 1), 240, 680))
    fig.update_layout(height=height, margin=dict(l=10, r=10, t=56 if title else 30, b=10))
    if paths:
        fig.update_layout(showlegend=True)
    return fig
