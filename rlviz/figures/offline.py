"""Figures of the CQL page: Q against the action, returns against α, training curves, grids.

Multi-panel figures are laid out directly (axis domains and shapes as plain dicts, one
``go.Figure`` call) rather than with ``make_subplots``: the page redraws them on every slider
move, and plotly's helpers cost tens of milliseconds each.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from rlviz.figures.grid import GridPath, grid_figure
from rlviz.figures.theme import INK, MUTED, SEQUENTIAL, color, hex_to_rgba, log_ticks
from rlviz.offline import GridResult, OneStateResult, Training, greedy_path

__all__ = [
    "NO_DATA",
    "grid_data",
    "grid_learner",
    "one_state",
    "error_range",
    "error_vs_alpha",
    "return_vs_alpha",
    "training_curves",
]

NO_DATA = "rgba(134,142,150,0.13)"
"""Shading of the actions (or region) the data never covers."""


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``(first, last)`` index of each run of True in a 1-D mask."""
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _num(x: float) -> str:
    """Two decimals, without a minus sign on a value that rounds to zero."""
    return f"{round(float(x), 2) + 0.0:.2f}"


def _axis(title: str, **extra) -> dict:
    return dict(title=dict(text=title), **extra)


def one_state(
    result: OneStateResult, index: int, *, fixed_point: bool = False, height: int = 560
) -> go.Figure:
    """Q against the action: truth, naive and CQL values, the data, the argmaxes.

    Args:
        result: The one-state experiment.
        index: Which learner is "CQL" (an index into ``ALPHAS``); learner 0 is the naive one.
        fixed_point: Also draw the exact fixed point of the tabular loss (on seen actions).
        height: Figure height in pixels.

    Returns:
        Two stacked panels sharing the action axis: values above, the data's histogram below.
    """
    prob = result.problem
    x = prob.positions
    truth = prob.true_reward
    counts = result.counts
    seen = counts > 0
    naive, cql = result.training.q[0, 0], result.training.q[index, 0]
    alpha = result.training.alphas[index]
    rbar = result.data.mean_rewards[0]
    dx = float(x[1] - x[0])

    # A y-range that keeps the truth readable; values far below it sit on the floor as ▼.
    core = np.concatenate([truth, rbar[seen], naive, cql[seen]])
    lo, hi = float(core.min()), float(core.max())
    pad = 0.12 * max(hi - lo, 1.0)
    floor = lo - pad
    y_range = [floor - 0.5 * pad, hi + pad]

    traces: list[go.BaseTraceType] = [
        go.Scatter(
            x=x, y=truth, name="true mean reward r(a)", mode="lines",
            line=dict(color=INK, width=2.5, dash="dash"),
            hovertemplate="a = %{x:.2f}<br>r(a) = %{y:.3f}<extra>truth</extra>",
        ),
        go.Scatter(
            x=x[seen], y=rbar[seen], name="data: mean reward", mode="markers",
            marker=dict(color=MUTED, size=6, symbol="circle"),
            customdata=counts[seen],
            hovertemplate="a = %{x:.2f}<br>r̄ = %{y:.3f} from %{customdata} samples"
            "<extra>data</extra>",
        ),
    ]
    if fixed_point:
        fp = result.fixed_points[index]
        traces.append(go.Scatter(
            x=x[seen], y=fp[seen], name=f"exact fixed point, α = {alpha:g}", mode="markers",
            marker=dict(color=color("cql"), size=11, symbol="circle-open", line=dict(width=1.5)),
            hovertemplate="a = %{x:.2f}<br>fixed point %{y:.4f}<extra></extra>",
        ))
    for name, q, role in (("naive offline Q", naive, "naive"),
                          (f"CQL Q, α = {alpha:g}", cql, "cql")):
        c = color(role)
        below = q < floor
        traces.append(go.Scatter(
            x=x, y=np.where(below, np.nan, q), name=name, mode="lines+markers",
            line=dict(color=c, width=2.2), marker=dict(size=4, color=c),
            hovertemplate="a = %{x:.2f}<br>Q = %{y:.3f}<extra>" + role + "</extra>",
        ))
        if below.any():
            traces.append(go.Scatter(
                x=x[below], y=np.full(below.sum(), floor), mode="markers", showlegend=False,
                marker=dict(symbol="triangle-down", size=8, color=c),
                customdata=q[below], name=f"{role} values below the axis",
                hovertemplate="a = %{x:.2f}<br>Q = %{customdata:.3f} (below the axis)"
                "<extra>" + role + "</extra>",
            ))
    best = int(np.argmax(truth))
    for name, q, role in (("naive", naive, "naive"), ("CQL", cql, "cql")):
        pick = int(np.argmax(q))
        c = color(role)
        shown_q = max(float(q[pick]), floor)
        traces.append(go.Scatter(
            x=[x[pick], x[pick]], y=[shown_q, truth[pick]], mode="lines+markers",
            line=dict(color=c, width=1.5, dash="dot"),
            marker=dict(symbol=["star", "x"], size=[17, 10], color=c,
                        line=dict(color="white", width=1)),
            name=f"{name}'s pick: really earns {_num(truth[pick])}",
            hovertemplate="a = %{x:.2f}<br>%{y:.3f}<extra>" + name + "'s argmax</extra>",
        ))
    traces.append(go.Scatter(
        x=[x[best]], y=[truth[best]], mode="markers",
        name=f"best action: {_num(truth[best])}",
        marker=dict(symbol="star-diamond", size=13, color=INK, line=dict(color="white", width=1)),
        hovertemplate="best action a = %{x:.2f}<br>r = %{y:.3f}<extra></extra>",
    ))
    traces.append(go.Bar(
        x=x, y=counts, xaxis="x2", yaxis="y2", name="samples per action",
        marker=dict(color=color("behaviour")), width=0.8 * dx, showlegend=False,
        hovertemplate="a = %{x:.2f}<br>%{y} samples<extra>data</extra>",
    ))

    shapes = [
        dict(type="rect", xref="x", yref="paper", x0=x[a] - dx / 2, x1=x[b] + dx / 2,
             y0=0, y1=1, fillcolor=NO_DATA, line=dict(width=0), layer="below")
        for a, b in _runs(~seen)
    ]
    annotations = [
        dict(xref="x", yref="paper", x=(x[a] + x[b]) / 2, y=0.995, yanchor="top",
             text="no data", showarrow=False, font=dict(color=MUTED, size=12))
        for a, b in _runs(~seen) if b - a >= 2
    ]
    span = [float(x[0] - dx), float(x[-1] + dx)]
    layout = go.Layout(
        height=height, bargap=0,
        xaxis=dict(domain=[0, 1], anchor="y2", range=span, showticklabels=False),
        yaxis=_axis("value", domain=[0.3, 1.0], range=y_range),
        xaxis2=_axis("action a (its position on the line)", domain=[0, 1], anchor="y2",
                     matches="x", range=span),
        yaxis2=_axis("samples", domain=[0.0, 0.22], rangemode="tozero"),
        shapes=shapes, annotations=annotations,
        legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0, font=dict(size=12)),
        margin=dict(l=60, r=20, t=80, b=50), hovermode="closest",
    )
    return go.Figure(data=traces, layout=layout)


def return_vs_alpha(
    alphas: np.ndarray,
    returns: np.ndarray,
    *,
    chosen: int,
    naive: float,
    behaviour: float,
    optimal: float,
    value_label: str = "true return",
    height: int = 360,
) -> go.Figure:
    """The true return of the CQL policy against α, beside the naive and behaviour policies.

    Args:
        alphas: ``[B]`` the α values; α = 0 (the naive learner) is drawn as a line.
        returns: ``[B]`` true return of each learner's greedy policy.
        chosen: Index of the α selected on the page.
        naive: True return of the naive learner's greedy policy.
        behaviour: True return of the behaviour policy.
        optimal: The best achievable return.
        value_label: The y-axis title.
        height: Figure height.

    Returns:
        The figure (log α axis).
    """
    alphas = np.asarray(alphas, dtype=float)
    returns = np.asarray(returns, dtype=float)
    pos = alphas > 0
    xa = alphas[pos]
    x_line = [xa.min() / 1.6, xa.max() * 1.6]
    traces = [
        go.Scatter(x=x_line, y=[optimal] * 2, mode="lines", name=f"optimal {_num(optimal)}",
                   line=dict(color=color("optimal"), width=1.2, dash="dashdot"),
                   hoverinfo="skip"),
        go.Scatter(x=x_line, y=[behaviour] * 2, mode="lines", name=f"behaviour {_num(behaviour)}",
                   line=dict(color=color("behaviour"), width=2, dash="dot"), hoverinfo="skip"),
        go.Scatter(x=x_line, y=[naive] * 2, mode="lines", name=f"naive (α = 0) {_num(naive)}",
                   line=dict(color=color("naive"), width=2, dash="dash"), hoverinfo="skip"),
        go.Scatter(x=xa, y=returns[pos], mode="lines+markers", name="CQL",
                   line=dict(color=color("cql"), width=2.4), marker=dict(size=7),
                   hovertemplate="α = %{x:g}<br>" + value_label + " %{y:.3f}<extra>CQL</extra>"),
    ]
    if alphas[chosen] > 0:
        traces.append(go.Scatter(
            x=[alphas[chosen]], y=[returns[chosen]], mode="markers", showlegend=False,
            marker=dict(size=17, color="rgba(0,0,0,0)", line=dict(color=color("cql"), width=2.5)),
            hovertemplate="this α<extra></extra>", name="chosen α",
        ))
    layout = go.Layout(
        height=height, title=dict(text="What each policy really earns"),
        xaxis=_axis("CQL weight α (log scale)", **log_ticks(xa, max_ticks=4)),
        yaxis=_axis(value_label),
        legend=dict(orientation="h", y=-0.22, yanchor="top", x=0),
        margin=dict(l=60, r=20, t=48, b=100),
    )
    return go.Figure(data=traces, layout=layout)


def error_vs_alpha(
    alphas: np.ndarray,
    inside: np.ndarray,
    outside: np.ndarray,
    *,
    chosen: int,
    truth_label: str = "Q*",
    height: int = 360,
) -> go.Figure:
    """Mean error of Q on the data's actions and off them, against α.

    Args:
        alphas: ``[B]`` the α values (α = 0, the naive learner, is drawn as a marker at the left).
        inside: ``[B]`` mean ``Q − truth`` on pairs the data covers.
        outside: ``[B]`` mean ``Q − truth`` on pairs it does not (NaN when it covers all).
        chosen: Index of the α selected on the page.
        truth_label: Name of the true values.
        height: Figure height.

    Returns:
        The figure (log α axis).
    """
    alphas = np.asarray(alphas, dtype=float)
    pos = alphas > 0
    xa = alphas[pos]
    x_line = [xa.min() / 1.6, xa.max() * 1.6]
    traces = [go.Scatter(x=x_line, y=[0, 0], mode="lines", line=dict(color=MUTED, width=1),
                         hoverinfo="skip", showlegend=False)]
    for name, values, dash in (("actions in the data", inside, "solid"),
                               ("actions outside the data", outside, "dash")):
        values = np.asarray(values, dtype=float)
        if not np.isfinite(values).all():
            continue
        traces.append(go.Scatter(
            x=xa, y=values[pos], mode="lines+markers", name=f"CQL, {name}",
            line=dict(color=color("cql"), width=2.4, dash=dash), marker=dict(size=7),
            hovertemplate="α = %{x:g}<br>mean error %{y:.3f}<extra>" + name + "</extra>",
        ))
        traces.append(go.Scatter(
            x=x_line, y=[values[0]] * 2, mode="lines", name=f"naive, {name}",
            line=dict(color=color("naive"), width=1.6, dash=dash), hoverinfo="skip",
        ))
        if alphas[chosen] > 0:
            traces.append(go.Scatter(
                x=[alphas[chosen]], y=[values[chosen]], mode="markers", showlegend=False,
                marker=dict(size=17, color="rgba(0,0,0,0)",
                            line=dict(color=color("cql"), width=2.5)),
                hovertemplate="this α<extra></extra>", name="chosen α",
            ))
    layout = go.Layout(
        height=height,
        title=dict(text=f"How wrong Q is: mean Q − {truth_label}"),
        xaxis=_axis("CQL weight α (log scale)", **log_ticks(xa, max_ticks=4)),
        yaxis=_axis(f"mean Q − {truth_label}"),
        legend=dict(orientation="h", y=-0.22, yanchor="top", x=0),
        margin=dict(l=60, r=20, t=48, b=100),
    )
    return go.Figure(data=traces, layout=layout)


def training_curves(
    training: Training,
    index: int,
    return_history: np.ndarray,
    *,
    value_label: str = "true return",
    height: int = 300,
) -> dict[str, go.Figure]:
    """How the naive learner and the chosen CQL learner got there, step by step.

    Three figures, so that a page can set them side by side and a phone can stack them.

    Args:
        training: The training (curves for every α).
        index: The chosen learner.
        return_history: ``[B, R]`` true return of each learner's greedy policy over training.
        value_label: Name of the return.
        height: Height of each figure.

    Returns:
        ``{"return", "td_loss", "cql_gap"}``: the greedy policy's true return, the TD loss and
        the CQL gap against the gradient step.
    """
    steps = training.steps
    alpha = training.alphas[index]
    panels = {
        "return": ("true " + value_label.removeprefix("true "), return_history, False),
        "td_loss": ("TD loss ½(Q − y)²", training.td, True),
        "cql_gap": ("CQL gap: logsumexp Q − Q(data)", training.gap, True),
    }
    out = {}
    for key, (title, values, log) in panels.items():
        traces, shown = [], []
        for i, name, role in ((0, "naive", "naive"), (index, f"CQL α = {alpha:g}", "cql")):
            y = np.asarray(values[i], dtype=float)
            if log:
                y = np.maximum(y, 1e-12)
            shown.append(y)
            traces.append(go.Scatter(
                x=steps, y=y, mode="lines", name=name, line=dict(color=color(role), width=2),
                hovertemplate="step %{x}<br>%{y:.4g}<extra>" + name + "</extra>",
            ))
        out[key] = go.Figure(data=traces, layout=go.Layout(
            height=height, title=dict(text=title, font=dict(size=14)),
            xaxis=_axis("gradient step"),
            yaxis=log_ticks(np.concatenate(shown), max_ticks=5) if log else {},
            legend=dict(orientation="h", y=-0.3, yanchor="top", x=0),
            margin=dict(l=55, r=16, t=40, b=90),
        ))
    return out


def grid_data(result: GridResult, *, height: int | None = None) -> go.Figure:
    """Where the data is: visits per state, and the behaviour's safe path.

    Args:
        result: The grid experiment.
        height: Figure height.

    Returns:
        The figure.
    """
    prob = result.problem
    mdp = prob.mdp
    visits = np.bincount(result.data.states, minlength=mdp.n_states).astype(float)
    mask = np.eye(mdp.n_actions, dtype=bool)[prob.safe_actions]
    states, reaches = greedy_path(mdp, prob.safe_actions)
    return grid_figure(
        mdp.grid, values=visits, policy=mask, colorscale=SEQUENTIAL, value_label="visits",
        value_format=".0f", annotate=False,
        title=f"The data: {result.data.size} transitions, ε = {prob.epsilon:g}",
        paths=[GridPath("behaviour's safe path", states, hex_to_rgba(color("behaviour"), 0.9),
                        reaches)],
        height=height,
    )


def grid_learner(
    result: GridResult,
    index: int,
    *,
    title: str,
    role: str,
    zrange: tuple[float, float],
    height: int | None = None,
) -> go.Figure:
    """One learner on the grid: its error at its greedy action, its policy and its route.

    Args:
        result: The grid experiment.
        index: Which learner (index into ``ALPHAS``).
        title: Figure title.
        role: "naive" or "cql" (the route's colour).
        zrange: Shared colour limits, so naive and CQL read on one scale.
        height: Figure height.

    Returns:
        The figure.
    """
    mdp = result.problem.mdp
    q = result.training.q[index]
    greedy = q.argmax(axis=1)
    states, reaches = greedy_path(mdp, greedy)
    earns = result.true_return[index]
    return grid_figure(
        mdp.grid, values=result.greedy_error(index),
        policy=np.eye(mdp.n_actions, dtype=bool)[greedy],
        zrange=zrange, value_label="Q̂ − Q*", value_format=".2f", annotate=False, title=title,
        paths=[GridPath(f"route: earns {_num(earns)}", states, color(role), reaches)],
        height=height,
    )


def error_range(result: GridResult, indices: Sequence[int]) -> tuple[float, float]:
    """Symmetric colour limits for the greedy errors of several learners.

    The limit is the 90th percentile of the absolute errors, so a few huge errors (an action
    into the cliff believed to be worth its initial value) saturate instead of washing out the
    rest; hovering shows every value.
    """
    grid = result.problem.mdp.grid
    drawn = np.array([grid.char(r, c) not in "CGH" for r, c in grid.cells])
    errors = np.concatenate([np.abs(result.greedy_error(i))[drawn] for i in indices])
    top = float(np.percentile(errors, 90)) if errors.size else 1.0
    top = top if top > 0 else 1.0
    return (-top, top)
