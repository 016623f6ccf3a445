"""Figures of the TD-control page: learning curves, greedy paths, heatmaps, the worked update."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rlviz import td
from rlviz.figures.grid import GridPath, grid_figure
from rlviz.figures.theme import INK, MUTED, SEQUENTIAL, color, figure, hex_to_rgba
from rlviz.mdp import TabularMDP

__all__ = [
    "LABELS",
    "episodes_frame",
    "greedy_paths",
    "heatmaps",
    "learning_curves",
    "max_q_map",
    "path_states",
    "path_summary",
    "summary",
    "visits_map",
    "worked_update_figure",
    "worked_update_steps",
]

LABELS: dict[str, str] = {
    "q_learning": "Q-learning",
    "sarsa": "SARSA",
    "expected_sarsa": "Expected SARSA",
    "double_q": "Double Q-learning",
}
ARROWS = ("↑", "→", "↓", "←")
BAND_ALPHA = 0.18


def learning_curves(
    results: Mapping[str, td.ControlResult],
    *,
    window: int = 1,
    optimal: float | None = None,
    floor_below_optimal: float = 90.0,
) -> go.Figure:
    """Sum of rewards per episode: mean over runs with a 95% band, one colour per algorithm.

    The y-axis starts ``floor_below_optimal`` below the optimal return, as in the book's figure,
    so the early, very negative episodes do not flatten the late differences (double-click the
    chart to see everything); lower if a curve stays below that after its first tenth.
    """
    smoothing = f" ({window}-episode average)" if window > 1 else ""
    fig = figure(
        xaxis_title="episode",
        yaxis_title="sum of rewards per episode" + smoothing,
        hovermode="x unified",
        height=430,
    )
    lows, highs = [], []
    for name, res in results.items():
        curve = td.learning_curve(res.returns, window=window)
        played = ~np.isnan(curve.mean)  # episodes no run reached are left off
        x = np.arange(1, res.episodes + 1)[played]
        curve = td.Curve(curve.mean[played], curve.low[played], curve.high[played])
        c = color(name)
        if res.runs > 1:
            fig.add_trace(go.Scatter(
                x=np.concatenate([x, x[::-1]]), y=np.concatenate([curve.high, curve.low[::-1]]),
                fill="toself", fillcolor=hex_to_rgba(c, BAND_ALPHA), line=dict(width=0),
                hoverinfo="skip", showlegend=False, name=f"{LABELS[name]} 95% band",
            ))
        fig.add_trace(go.Scatter(
            x=x, y=curve.mean, mode="lines", line=dict(color=c, width=2.4), name=LABELS[name],
            hovertemplate="%{y:.1f}",
        ))
        late = curve.mean[len(curve.mean) // 10 :]
        lows.append(np.min(late) if late.size else np.min(curve.mean))
        highs.append(np.max(curve.mean))
    if optimal is not None:
        fig.add_hline(
            y=optimal, line=dict(color=INK, dash="dash", width=1.4),
            annotation=dict(text=f"optimal {optimal:.4g}", font=dict(color=INK, size=12)),
            annotation_position="top left",
        )
    if lows:
        top = max(max(highs), optimal if optimal is not None else -np.inf)
        bottom = min(lows)
        if optimal is not None:
            bottom = min(bottom, optimal - floor_below_optimal)
        pad = 0.05 * max(top - bottom, 1.0)
        fig.update_yaxes(range=[bottom - pad, top + pad])
    return fig


def path_states(mdp: TabularMDP, path: td.GreedyPath) -> list[int]:
    """States to draw for a greedy path: a last move into the cliff ends in the cliff cell.

    Stepping into the cliff sends the agent back to the start, so in the model the move lands on
    S; drawn that way the path would jump across the grid. It is drawn into the cliff instead.
    """
    states = [int(s) for s in path.states]
    grid = mdp.grid
    if grid is None or path.reaches_goal or path.length == 0:
        return states
    target = grid.cells[states[-2]] + grid.action_deltas[path.actions[-1]]
    rows, cols = grid.shape
    if 0 <= target[0] < rows and 0 <= target[1] < cols and grid.char(*target) == "C":
        states[-1] = int(grid.state_of_cell[target[0], target[1]])
    return states


def greedy_paths(mdp: TabularMDP, results: Mapping[str, td.ControlResult]) -> go.Figure:
    """The grid with each algorithm's greedy path (from its run-averaged Q) drawn from S."""
    paths = [
        GridPath(
            name=f"{LABELS[name]}: {res.path.length} moves" if res.path.reaches_goal
            else LABELS[name],
            states=path_states(mdp, res.path),
            color=color(name),
            reaches_goal=res.path.reaches_goal,
        )
        for name, res in results.items()
    ]
    fig = grid_figure(mdp.grid, paths=paths)
    fig.update_layout(legend=dict(y=-0.02, yanchor="top", orientation="h"))
    fig.update_layout(margin=dict(l=10, r=10, t=10, b=10))
    return fig


def visits_map(
    mdp: TabularMDP, res: td.ControlResult, *, zmax: float | None = None, title: str | None = None
) -> go.Figure:
    """Visits per state during learning, averaged over runs."""
    visits = res.visits.mean(axis=0)
    top = float(zmax if zmax is not None else max(visits.max(), 1.0))
    return _readable_cells(grid_figure(
        mdp.grid, values=visits, title=title, value_label="visits", colorscale=SEQUENTIAL,
        zrange=(0.0, top), value_format=".0f",
    ))


def max_q_map(
    mdp: TabularMDP, res: td.ControlResult, *, limit: float | None = None,
    title: str | None = None,
) -> go.Figure:
    """``max_a Q(s, a)`` per state after learning, averaged over runs, diverging around 0."""
    values = res.mean_q.max(axis=1)
    bound = float(limit if limit is not None else max(np.abs(values).max(), 1.0))
    return _readable_cells(grid_figure(
        mdp.grid, values=values, title=title, value_label="max Q", zrange=(-bound, bound),
        value_format=".0f" if bound >= 10 else ".1f",
    ))


CELL_FONT = 12
"""Size of the numbers printed in heatmap cells (short formats keep them apart)."""


def _readable_cells(fig: go.Figure) -> go.Figure:
    """Numbers in cells at ``CELL_FONT`` px, and the S and G letters moved to a cell corner.

    The letters are drawn small in the top-left corner of their cell, clear of the cell's number
    in its centre.
    """
    fig.update_traces(textfont=dict(size=CELL_FONT), selector=dict(type="heatmap"))
    for trace in fig.data:
        if trace.type == "scatter" and trace.mode == "text":
            trace.x = [x - 0.3 for x in trace.x]
            trace.y = [y - 0.27 for y in trace.y]
            trace.textposition = "middle center"
            trace.textfont.size = 10
    return fig


def heatmaps(
    mdp: TabularMDP, results: Mapping[str, td.ControlResult]
) -> dict[str, dict[str, go.Figure]]:
    """Visit counts and ``max_a Q`` per algorithm, each kind on one colour scale for all."""
    top = max(max(r.visits.mean(axis=0).max(), 1.0) for r in results.values())
    limit = max(max(np.abs(r.mean_q.max(axis=1)).max(), 1.0) for r in results.values())
    return {
        "visits": {
            name: visits_map(mdp, res, zmax=top, title=f"{LABELS[name]}: visits per run")
            for name, res in results.items()
        },
        "value": {
            name: max_q_map(mdp, res, limit=limit, title=f"{LABELS[name]}: max<sub>a</sub> Q(s, a)")
            for name, res in results.items()
        },
    }


def summary(results: Mapping[str, td.ControlResult], *, last: int = 100) -> str:
    """One line under the curves: late online returns, and how many episodes were cut short."""
    parts = [f"{LABELS[n]} {r.mean_return(last):.1f}" for n, r in results.items()]
    text = f"Mean return over the last {last} episodes: " + " · ".join(parts) + "."
    cut = sum(int(r.truncated.sum()) for r in results.values())
    total = sum(int(r.played.sum()) for r in results.values())
    first = next(iter(results.values()))
    if cut:
        text += f" {cut:,} of {total:,} episodes were cut short at {first.max_steps:,} steps."
    stopped = [f"{LABELS[n]} {int(r.stopped_early.sum())} of {r.runs}"
               for n, r in results.items() if r.stopped_early.any()]
    if stopped:
        text += (f" Runs that used up their {first.max_total_steps:,} steps before the last "
                 "episode: " + ", ".join(stopped) + ".")
    return text


def path_summary(results: Mapping[str, td.ControlResult]) -> str:
    """How the runs' own greedy paths compare with the one drawn (from the averaged Q)."""
    parts = []
    for name, res in results.items():
        reach = res.path_lengths >= 0
        text = f"{LABELS[name]}: {int(reach.sum())} of {res.runs}"
        if reach.any():
            text += f" (median {np.median(res.path_lengths[reach]):.0f} moves)"
        parts.append(text)
    return "Runs whose own greedy path reaches G — " + " · ".join(parts) + "."


def episodes_frame(results: Mapping[str, td.ControlResult], *, window: int = 1) -> pd.DataFrame:
    """Tidy per-episode table: algorithm, episode, mean return with its band, mean length."""
    parts = []
    for name, res in results.items():
        curve = td.learning_curve(res.returns, window=window)
        parts.append(pd.DataFrame({
            "algorithm": name,
            "episode": np.arange(1, res.episodes + 1),
            "mean_return": res.returns.mean(axis=0),
            "smoothed_return": curve.mean,
            "band_low": curve.low,
            "band_high": curve.high,
            "mean_length": res.lengths.mean(axis=0),
            "epsilon": res.epsilons,
        }))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# --------------------------------------------------------------------------- worked update
DECIMALS = 4
"""Decimals of the computed numbers in the worked update; an input is shown as it was typed."""


def _num(x: float) -> str:
    """An input, as the number box shows it (``%g``: up to six significant digits)."""
    text = f"{x:g}"
    return "0" if text == "-0" else text


def _res(x: float) -> str:
    """A computed number, rounded to ``DECIMALS`` decimals (trailing zeros dropped)."""
    text = f"{x:.{DECIMALS}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _eq(x: float) -> str:
    """``= x``, or ``≈ x`` when the shown digits are not the whole number."""
    exact = abs(x - float(_res(x))) <= 1e-12 * max(1.0, abs(x))
    return ("= " if exact else r"\approx ") + _res(x)


def _par(text: str, x: float) -> str:
    """A number ready to be multiplied: negatives in parentheses."""
    return f"({text})" if x < 0 else text


def worked_update_steps(w: td.WorkedUpdate) -> dict[str, str]:
    """The worked update as LaTeX, one aligned block per algorithm: target, TD error, new value.

    Inputs appear exactly as they were entered and used; a computed number is shown to
    ``DECIMALS`` decimals, after ``≈`` when that rounds it. Long sums are broken over lines so
    that a block fits a narrow column.
    """
    qs = ", ".join(_num(v) for v in w.q_next)
    a_name = ARROWS[w.a_next] if len(w.q_next) == len(ARROWS) else str(w.a_next)
    g, r = _num(w.gamma), _num(w.reward)
    if w.terminal:
        rules = dict.fromkeys(w.targets, r"r \quad (s' \text{ is terminal: nothing follows})")
        sums = dict.fromkeys(w.targets, r)
    else:
        terms = [rf"{_res(p)} \cdot {_par(_num(v), v)}"
                 for p, v in zip(w.policy_next, w.q_next, strict=True)]
        weighted = r" \\ &\qquad + ".join(terms)  # one term a line: it fits a phone
        rules = {
            "q_learning": r"r + \gamma \max_{a'} Q(s', a')",
            "sarsa": rf"r + \gamma\, Q(s', a' {{=}} {a_name})",
            "expected_sarsa": r"r + \gamma \textstyle\sum_{a'} \pi(a' \mid s')\, Q(s', a')",
        }
        sums = {
            "q_learning": rf"{r} + {g} \cdot \max({qs}) \\ &= {r} + {g} \cdot "
                          rf"{_par(_num(w.max_next), w.max_next)}",
            "sarsa": rf"{r} + {g} \cdot {_par(_num(w.q_next[w.a_next]), w.q_next[w.a_next])}",
        }
        expected = w.expected_next
        sums["expected_sarsa"] = (
            rf"{r} + {g} \cdot [{weighted}] \\ &{_eq_prefix(expected)} {r} + {g} \cdot "
            rf"{_par(_res(expected), expected)}"
        )
    blocks = {}
    for k in w.targets:
        y, delta, new = w.targets[k], w.td_errors[k], w.new_values[k]
        blocks[k] = (
            r"\begin{aligned}"
            + rf"y &= {rules[k]} \\ &= {sums[k]} \\ &{_eq(y)} \\"
            + rf"\delta &= y - Q(s, a) \\ &= {_res(y)} - {_par(_num(w.q_sa), w.q_sa)} "
            + rf"\\ &{_eq(delta)} \\"
            + rf"Q(s, a) &\leftarrow Q(s, a) + \alpha \delta \\ &= {_num(w.q_sa)} + "
            + rf"{_num(w.alpha)} \cdot {_par(_res(delta), delta)} "
            + rf"\\ &{_eq_prefix(new)} \mathbf{{{_res(new)}}}"
            + r"\end{aligned}"
        )
    return blocks


def _eq_prefix(x: float) -> str:
    """``=`` or ``≈``, as ``_eq`` would write before ``x``."""
    return "=" if _eq(x).startswith("=") else r"\approx"


def worked_update_figure(w: td.WorkedUpdate) -> go.Figure:
    """A number line per algorithm: Q(s, a), the target y, and the new value α of the way there."""
    names = list(w.targets)
    fig = figure(height=90 + 60 * len(names), xaxis_title="value", hovermode="closest")
    for i, name in enumerate(names):
        c = color(name)
        y_val, new = w.targets[name], w.new_values[name]
        fig.add_annotation(
            x=new, y=i, ax=w.q_sa, ay=i, xref="x", yref="y", axref="x", ayref="y",
            showarrow=True, arrowhead=3, arrowwidth=2, arrowcolor=c, text="",
        )
        fig.add_trace(go.Scatter(
            x=[y_val], y=[i], mode="markers", marker=dict(symbol="diamond-open", size=14, color=c,
                                                         line=dict(width=2)),
            name="target y", legendgroup="target", showlegend=i == 0,
            hovertemplate=f"{LABELS[name]} target y = %{{x:.4g}}<extra></extra>",
        ))
        fig.add_trace(go.Scatter(
            x=[new], y=[i], mode="markers", marker=dict(size=12, color=c),
            name="new Q(s, a)", legendgroup="new", showlegend=i == 0,
            hovertemplate=f"{LABELS[name]} new Q(s, a) = %{{x:.4g}}<extra></extra>",
        ))
    fig.add_trace(go.Scatter(
        x=[w.q_sa] * len(names), y=list(range(len(names))), mode="markers",
        marker=dict(size=11, color="white", line=dict(color=MUTED, width=2)),
        name="old Q(s, a)", hovertemplate="old Q(s, a) = %{x:.4g}<extra></extra>",
    ))
    fig.update_yaxes(
        tickvals=list(range(len(names))), ticktext=[LABELS[n] for n in names],
        range=[len(names) - 0.4, -0.6], showgrid=False,
    )
    fig.update_layout(margin=dict(l=130, r=20, t=40, b=50))
    return fig
