"""Figures of dynamic programming: value sweeps on the grid, convergence, sweeps against γ."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rlviz.dp import NOT_IMPROVED, GammaSweeps, PolicyIterationTrace, RolloutCheck, SweepTrace
from rlviz.figures.grid import ANNOTATE_MAX_CELLS, grid_figure
from rlviz.figures.theme import INK, MUTED, color, figure, hex_to_rgba, log_ticks
from rlviz.mdp import TabularMDP

__all__ = [
    "EQUATIONS",
    "convergence_figure",
    "cycles_figure",
    "frame_sweeps",
    "gamma_figure",
    "rollout_figure",
    "sweep_figure",
]

MAX_FRAMES = 40
EQUATIONS: list[tuple[str, str]] = [
    ("Policy evaluation backs up the expected value under π (Sutton & Barto, eq. 4.5):",
     r"V_{k+1}(s)=\sum_a \pi(a|s)\Big[r(s,a)+\gamma\sum_{s'}p(s'|s,a)\,V_k(s')\Big]"),
    ("Value iteration backs up the best action (eq. 4.10):",
     r"V_{k+1}(s)=\max_a \Big[r(s,a)+\gamma\sum_{s'}p(s'|s,a)\,V_k(s')\Big]"),
    ("Policy iteration alternates evaluation with greedy improvement (section 4.3):",
     r"\pi'(s)=\arg\max_a \Big[r(s,a)+\gamma\sum_{s'}p(s'|s,a)\,v_\pi(s')\Big]"),
    ("Both backups are γ-contractions, so each sweep shrinks the change, and stopping at "
     "Δ < θ leaves a small error:",
     r"\|V_{k+1}-V_k\|_\infty \le \gamma\,\|V_k-V_{k-1}\|_\infty ,\qquad "
     r"\|V_{k+1}-V_*\|_\infty \le \frac{\gamma}{1-\gamma}\,\|V_{k+1}-V_k\|_\infty"),
    ("In place, state s already reads this sweep's values of the states before it:",
     r"V(s) \leftarrow \max_a \Big[r(s,a)+\gamma\!\!\sum_{s'<s}\!p\,V_{k+1}(s')+\gamma\!\!"
     r"\sum_{s'\ge s}\!p\,V_k(s')\Big]"),
    ("The check of this run, valid for γ = 1 too (the horizon is the expected number of "
     "discounted steps to the end):",
     r"\|V-v_\pi\|_\infty \le \max_s \mathbb{E}_\pi\Big[\sum_t \gamma^t\Big]\;"
     r"\|T_\pi V - V\|_\infty"),
]
"""Captions and LaTeX of the dynamic-programming page's equations panel."""


def frame_sweeps(n_sweeps: int, *, include: tuple[int, ...] = (), limit: int = MAX_FRAMES
                 ) -> np.ndarray:
    """Sweeps to animate: every one when there are few, else all early ones and a log spacing.

    Values change most in the first sweeps, so those are all kept; later sweeps are spaced
    geometrically. ``include`` sweeps (the selected one, policy changes) are always present.
    """
    if n_sweeps + 1 <= limit:
        return np.arange(n_sweeps + 1)
    early = np.arange(min(limit // 3, n_sweeps + 1))
    late = np.unique(np.round(np.geomspace(max(len(early), 1), n_sweeps, limit - len(early))))
    extra = [k for k in include if 0 <= k <= n_sweeps]
    return np.unique(np.concatenate([early, late.astype(np.int64), extra, [n_sweeps]]))


def _value_range(mdp: TabularMDP, trace: SweepTrace) -> tuple[float, float]:
    """Symmetric colour limits over the whole history, so colours mean the same in every frame."""
    limit = float(np.abs(trace.values[:, ~mdp.terminal]).max(initial=0.0))
    limit = limit if limit > 0 else 1.0
    return -limit, limit


def _arrows(grid, mask: np.ndarray, skip: np.ndarray, *, labelled: bool
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Arrow segments for the greedy actions (several per cell where tied).

    In cells that also print their value, the arrows fan out from a point below the number;
    otherwise from the centre. Returns x, y and marker sizes, segments separated by NaN.
    """
    states, actions = np.nonzero(mask & ~skip[:, None])
    rows, cols = grid.cells[states].T.astype(np.float64)
    d_row, d_col = grid.action_deltas[actions].T
    start_row = rows + (0.14 if labelled else 0.0)
    length = 0.26 if labelled else 0.36
    gap = np.full(len(states), np.nan)
    x = np.stack([cols, cols + length * d_col, gap], axis=1).ravel()
    y = np.stack([start_row, start_row + length * d_row, gap], axis=1).ravel()
    tip = float(np.clip(120 / max(grid.shape), 5, 11))
    sizes = np.tile([0.0, tip, 0.0], len(states))
    return x, y, sizes


def _value_format(trace: SweepTrace, n_cols: int) -> str:
    top = float(np.abs(trace.values).max(initial=0.0))
    if top >= 100:
        return ".0f"
    return ".2f" if top < 10 or n_cols <= 6 else ".1f"


def _labels(values: np.ndarray, shown: np.ndarray, limit: float, fmt: str
            ) -> tuple[list[str], list[str]]:
    """Printed values and their colours (white on dark cells)."""
    text = [format(v + 0.0, fmt) if keep else "" for v, keep in zip(values, shown, strict=True)]
    ink = np.where(np.abs(values) > 0.6 * limit, "white", INK).tolist()
    return text, ink


def sweep_figure(
    mdp: TabularMDP, trace: SweepTrace, *, sweep: int, max_frames: int = MAX_FRAMES
) -> go.Figure:
    """V_k on the grid with greedy arrows, and a play/pause scrubber over the sweeps.

    Args:
        mdp: The model (it must come from a grid layout).
        trace: The run.
        sweep: The sweep shown first (0..K).
        max_frames: Most frames to animate (the rest of the history is still in the trace).

    Returns:
        The figure, with one frame per animated sweep; the colour range is fixed across frames.
    """
    grid = mdp.grid
    if grid is None:
        raise ValueError("this figure needs a grid-shaped environment")
    k_max = trace.n_sweeps
    sweep = int(np.clip(sweep, 0, k_max))
    n_rows, n_cols = grid.shape
    labelled = n_rows * n_cols <= ANNOTATE_MAX_CELLS and n_cols <= 12  # numbers must fit
    zrange = _value_range(mdp, trace)
    fig = grid_figure(
        grid, values=trace.values[sweep], policy=np.zeros_like(trace.greedy[sweep]),
        zrange=zrange, value_label="V(s)", annotate=False,
        value_format=_value_format(trace, n_cols),
        height=int(np.clip(40 + 400 * n_rows / n_cols, 160, 560)) + 100,
    )
    chars = np.array([list(row) for row in grid.layout])
    masked = (chars == "C") | (chars == "#")
    cell_char = chars[grid.cells[:, 0], grid.cells[:, 1]]
    skip = np.isin(cell_char, ["G", "H", "C"])
    for t in fig.data:  # the S/G/H marks: the start's goes to a corner, clear of the arrows
        if getattr(t, "mode", None) == "text":
            start = np.array([str(m) == "<b>S</b>" for m in t.text])
            t.update(x=np.asarray(t.x, float) - 0.32 * start,
                     y=np.asarray(t.y, float) + 0.3 * start, textposition="middle center")
    heat_index = 0
    arrow_index = next(i for i, t in enumerate(fig.data) if t.name == "greedy action")
    x, y, sizes = _arrows(grid, trace.greedy[sweep], skip, labelled=labelled)
    fig.data[arrow_index].update(x=x, y=y, marker=dict(size=sizes))
    traces = [heat_index, arrow_index]
    fmt = _value_format(trace, n_cols)
    if labelled:
        text, ink = _labels(trace.values[sweep], ~skip, zrange[1], fmt)
        fig.add_trace(go.Scatter(
            x=grid.cells[:, 1], y=grid.cells[:, 0] - 0.2, mode="text", text=text,
            textfont=dict(size=12 if n_cols <= 8 else 10, color=ink), hoverinfo="skip",
            showlegend=False, name="values",
        ))
        traces.append(len(fig.data) - 1)

    shown = frame_sweeps(k_max, include=(sweep, trace.policy_last_changed), limit=max_frames)
    frames = []
    for k in shown:
        z = grid.to_grid(trace.values[k])
        z[masked] = np.nan
        x, y, sizes = _arrows(grid, trace.greedy[k], skip, labelled=labelled)
        # Plain dicts: plotly validates them once, where graph objects would be built twice.
        data = [dict(type="heatmap", z=z), dict(type="scatter", x=x, y=y, marker=dict(size=sizes))]
        if labelled:
            text, ink = _labels(trace.values[k], ~skip, zrange[1], fmt)
            data.append(dict(type="scatter", text=text, textfont=dict(color=ink)))
        frames.append(dict(name=str(k), data=data, traces=traces))
    fig.frames = frames
    play = dict(frame=dict(duration=350, redraw=True), transition=dict(duration=0),
                fromcurrent=True, mode="immediate")
    pause = dict(frame=dict(duration=0, redraw=False), transition=dict(duration=0),
                 mode="immediate")
    fig.update_layout(
        updatemenus=[dict(
            type="buttons", direction="left", showactive=False, x=0.0, xanchor="left",
            y=0.0, yanchor="top", pad=dict(r=0, t=30),
            buttons=[
                dict(label="▶ Play", method="animate", args=[None, play]),
                dict(label="❚❚ Pause", method="animate", args=[[None], pause]),
            ],
        )],
        sliders=[dict(
            active=int(np.flatnonzero(shown == sweep)[0]),
            x=0.42, len=0.58, y=0.0, yanchor="top", pad=dict(t=8, b=0),
            currentvalue=dict(prefix="sweep k = ", xanchor="right",
                              font=dict(size=12, color=INK)),
            font=dict(size=10), tickcolor=MUTED,
            steps=[
                dict(label=str(k), method="animate",
                     args=[[str(k)], dict(mode="immediate", frame=dict(duration=0, redraw=True),
                                          transition=dict(duration=0))])
                for k in shown
            ],
        )],
        margin=dict(l=10, r=10, t=10, b=90),
    )
    return fig


def _floor(values: np.ndarray, theta: float) -> float:
    positive = values[values > 0]
    low = min(float(positive.min()) if positive.size else theta, theta)
    return low / 10


def convergence_figure(trace: SweepTrace, *, sweep: int | None = None) -> go.Figure:
    """Largest change per sweep on a log axis, the γ^k contraction line, θ, and the markers.

    Args:
        trace: The run.
        sweep: The sweep being shown elsewhere, drawn as a thin vertical line.

    Returns:
        The figure.
    """
    k = np.arange(1, trace.n_sweeps + 1)
    deltas = np.asarray(trace.deltas, dtype=np.float64)
    floor = _floor(deltas, trace.theta)
    shown = np.where(deltas > 0, deltas, np.nan)
    fig = figure(
        xaxis=dict(title=dict(text="sweep k"), rangemode="tozero"),
        yaxis=dict(title=dict(text="max |V<sub>k</sub> − V<sub>k−1</sub>|"), type="log",
                   exponentformat="power", dtick=1),
        height=380, margin=dict(l=70, r=20, t=40, b=50),
    )
    # The contraction bound: each sweep shrinks the change by gamma at least (per cycle for
    # policy iteration, whose policy changes between cycles).
    starts = (trace.cycle_start if isinstance(trace, PolicyIterationTrace)
              else np.array([0]))
    ends = (trace.cycle_end if isinstance(trace, PolicyIterationTrace)
            else np.array([trace.n_sweeps]))
    bx: list[float | None] = []
    by: list[float | None] = []
    for lo, hi in zip(starts, ends, strict=True):
        if hi <= lo or deltas[lo] <= 0:
            continue
        seg = np.arange(lo + 1, hi + 1)
        bound = deltas[lo] * trace.gamma ** (seg - seg[0])
        keep = bound >= floor
        bx += [*seg[keep].tolist(), None]
        by += [*bound[keep].tolist(), None]
    fig.add_trace(go.Scatter(
        x=bx, y=by, mode="lines", name=f"γ<sup>k</sup> bound (γ = {trace.gamma:g})",
        line=dict(color=color("bound"), dash="dot", width=1.6), hoverinfo="skip",
    ))
    fig.add_trace(go.Scatter(
        x=k, y=shown, mode="lines+markers" if len(k) <= 80 else "lines",
        name="largest change in the sweep", line=dict(color=color(trace.algorithm)),
        marker=dict(size=5),
        hovertemplate="sweep %{x}<br>max change %{y:.3g}<extra></extra>",
    ))
    fig.add_trace(go.Scatter(
        x=[0.5, max(trace.n_sweeps, 1) + 0.5], y=[trace.theta, trace.theta], mode="lines",
        name=f"θ = {trace.theta:g}", line=dict(color=MUTED, dash="dash", width=1),
        hoverinfo="skip",
    ))
    if (deltas == 0).any():
        first = int(np.flatnonzero(deltas == 0)[0]) + 1
        fig.add_annotation(x=first, y=np.log10(floor * 10), text="change exactly 0",
                           showarrow=True, arrowhead=2, ax=0, ay=-30,
                           font=dict(size=11, color=MUTED))
    if isinstance(trace, PolicyIterationTrace) and trace.n_cycles > 1:
        top = float(np.nanmax(shown)) if np.isfinite(shown).any() else 1.0
        xs: list[float | None] = []
        ys: list[float | None] = []
        for end in trace.cycle_end[:-1]:
            xs += [int(end) + 0.5, int(end) + 0.5, None]
            ys += [floor, top * 10, None]
        fig.add_trace(go.Scatter(
            x=xs, y=ys, mode="lines", name="policy improved (then evaluated again)",
            line=dict(color=color("policy_iteration"), dash="dot", width=1),
            hoverinfo="skip",
        ))
    if trace.policy_last_changed > 0:
        fig.add_vline(x=trace.policy_last_changed, line=dict(color=INK, width=1.5))
        fig.add_annotation(
            x=trace.policy_last_changed, y=0.02, yref="paper", xanchor="left", showarrow=False,
            text=f" greedy policy final from sweep {trace.policy_last_changed}",
            font=dict(size=11), bgcolor="rgba(255,255,255,0.8)",
        )
    if trace.converged:
        fig.add_trace(go.Scatter(
            x=[trace.n_sweeps], y=[shown[-1] if np.isfinite(shown[-1]) else floor * 10],
            mode="markers", name=f"values within θ (sweep {trace.n_sweeps})",
            marker=dict(symbol="star", size=13, color=color(trace.algorithm),
                        line=dict(color=INK, width=1)),
            hovertemplate="values within θ after sweep %{x}<extra></extra>",
        ))
    if sweep is not None and 0 < sweep <= trace.n_sweeps:
        fig.add_vline(x=sweep, line=dict(color=MUTED, width=1))
    fig.update_yaxes(range=[np.log10(floor), None])
    return fig


def _positions(gammas: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Positions on a horizon scale, log10(1 / (1 - γ)), with γ = 1 one step past the rest."""
    finite = gammas < 1
    x = np.empty_like(gammas)
    x[finite] = -np.log10(1 - gammas[finite])
    top = float(x[finite].max()) if finite.any() else 0.0
    x[~finite] = top + 0.5
    return x, [f"{g:g}" for g in gammas]


def gamma_figure(curve: GammaSweeps, *, gamma: float | None = None,
                 sweeps: int | None = None, in_place: bool = False) -> go.Figure:
    """Sweeps to converge against γ, synchronous and in place, beside the contraction bound.

    Args:
        curve: The counts.
        gamma: The γ of the run on screen, marked with a star at ``sweeps``.
        sweeps: Sweeps of the run on screen.
        in_place: Whether the run on screen swept in place (colours the star).

    Returns:
        The figure.
    """
    x, ticks = _positions(curve.gammas)
    fig = figure(
        xaxis=dict(title=dict(text="discount γ (spaced by 1/(1 − γ))"),
                   tickvals=x, ticktext=ticks, showgrid=False),
        yaxis=dict(title=dict(text="sweeps"), **log_ticks(np.concatenate([
            curve.synchronous, curve.in_place, np.maximum(curve.policy_final, 1),
            curve.bound[np.isfinite(curve.bound)], [max(sweeps or 1, 1)]]))),
        height=380, margin=dict(l=60, r=20, t=40, b=60),
    )
    bound = np.where(np.isfinite(curve.bound), curve.bound, np.nan)
    if np.isfinite(bound).any():
        fig.add_trace(go.Scatter(
            x=x, y=bound, mode="lines", name="contraction guarantee",
            line=dict(color=color("bound"), dash="dot", width=1.6),
            hovertemplate="γ = %{text}<br>guaranteed within θ by sweep %{y:.0f}<extra></extra>",
            text=ticks,
        ))
    for name, counts, ok, label in (
        ("synchronous", curve.synchronous, curve.converged[:, 0], "synchronous"),
        ("in_place", curve.in_place, curve.converged[:, 1], "in place"),
    ):
        fig.add_trace(go.Scatter(
            x=x, y=counts, mode="lines+markers", name=label,
            line=dict(color=color(name)),
            marker=dict(symbol=np.where(ok, "circle", "x-thin-open").tolist(), size=8,
                        line=dict(width=2, color=color(name))),
            text=np.where(ok, "converged", f"stopped at {curve.max_sweeps}").tolist(),
            customdata=ticks,
            hovertemplate="γ = %{customdata}<br>%{y} sweeps (%{text})<extra>" + label
            + "</extra>",
        ))
    fig.add_trace(go.Scatter(
        x=x, y=np.maximum(curve.policy_final, 1), mode="lines+markers",
        name="greedy policy final (synchronous)",
        line=dict(color=hex_to_rgba(color("synchronous"), 0.55), dash="dash"),
        marker=dict(size=6), customdata=ticks,
        hovertemplate="γ = %{customdata}<br>greedy policy final from sweep %{y}<extra></extra>",
    ))
    if gamma is not None and sweeps is not None:
        gx, _ = _positions(np.array([gamma]))
        if gamma >= 1:
            gx = x[curve.gammas >= 1][:1] if (curve.gammas >= 1).any() else gx
        fig.add_trace(go.Scatter(
            x=gx, y=[max(sweeps, 1)], mode="markers", name=f"this run (γ = {gamma:g})",
            marker=dict(symbol="star", size=15, color=color("in_place" if in_place
                                                            else "synchronous"),
                        line=dict(color=INK, width=1)),
            hovertemplate=f"this run: γ = {gamma:g}, %{{y}} sweeps<extra></extra>",
        ))
    return fig


def cycles_figure(trace: PolicyIterationTrace) -> go.Figure:
    """Policy iteration's cycles: sweeps of each evaluation, actions changed by each improvement.

    Args:
        trace: A policy-iteration run.

    Returns:
        The figure (two rows sharing the cycle axis).
    """
    cycles = np.arange(1, trace.n_cycles + 1)
    sweeps = trace.cycle_end - trace.cycle_start
    changes = trace.policy_changes
    done = changes != NOT_IMPROVED
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.2,
                        subplot_titles=("evaluation sweeps", "actions changed by the improvement"))
    fig.update_layout(height=380, showlegend=False,
                      margin=dict(l=60, r=20, t=40, b=50))
    colour = color("policy_iteration")
    fig.add_trace(go.Bar(x=cycles, y=sweeps, marker_color=hex_to_rgba(colour, 0.55),
                         hovertemplate="cycle %{x}: %{y} evaluation sweeps<extra></extra>"),
                  row=1, col=1)
    fig.add_trace(go.Bar(x=cycles[done], y=changes[done], marker_color=colour,
                         text=changes[done], textposition="outside", cliponaxis=False,
                         hovertemplate="cycle %{x}: %{y} states changed<extra></extra>"),
                  row=2, col=1)
    for c in cycles[~done]:
        fig.add_annotation(x=c, y=0, row=2, col=1, text="stopped", showarrow=False,
                           yanchor="bottom", font=dict(size=11, color=MUTED))
    fig.update_xaxes(title_text="cycle", dtick=1, row=2, col=1)
    fig.update_yaxes(rangemode="tozero", row=1, col=1)
    fig.update_yaxes(range=[0, max(int(changes.max(initial=0)), 1) * 1.3], row=2, col=1)
    return fig


def rollout_figure(check: RolloutCheck, value: float) -> go.Figure:
    """Running mean of the rollout returns with its 99% band, against the computed V(start).

    Args:
        check: The rollouts.
        value: ``V(start)`` from dynamic programming.

    Returns:
        The figure.
    """
    n = np.arange(1, check.episodes + 1)
    returns = np.asarray(check.returns, dtype=np.float64)
    mean = np.cumsum(returns) / n
    second = np.cumsum(returns**2) / n
    sd = np.sqrt(np.maximum(second - mean**2, 0.0) * n / np.maximum(n - 1, 1))
    half = 2.5758293035489004 * sd / np.sqrt(n)
    start = min(20, check.episodes - 1)
    x = n[start:]
    colour = color("monte_carlo")
    fig = figure(
        xaxis=dict(title=dict(text="episodes played in gymnasium"), type="log",
                   tickvals=[v for v in (20, 50, 100, 200, 500, 1000, 2000, 5000)
                             if v <= check.episodes]),
        yaxis=dict(title=dict(text="average discounted return")),
        height=330, margin=dict(l=60, r=20, t=40, b=50),
    )
    fig.add_trace(go.Scatter(
        x=np.concatenate([x, x[::-1]]),
        y=np.concatenate([(mean + half)[start:], (mean - half)[start:][::-1]]),
        fill="toself", fillcolor=hex_to_rgba(colour, 0.18), line=dict(width=0),
        hoverinfo="skip", name="99% interval",
    ))
    fig.add_trace(go.Scatter(
        x=x, y=mean[start:], mode="lines", line=dict(color=colour), name="rollout average",
        hovertemplate="after %{x} episodes: %{y:.4f}<extra></extra>",
    ))
    fig.add_hline(y=value, line=dict(color=INK, dash="dash", width=1.5),
                  annotation_text=f"V(start) = {value:.4f}",
                  annotation_position="top left", annotation_font=dict(size=11))
    low = min(float((mean - half)[start:].min()), value)
    high = max(float((mean + half)[start:].max()), value)
    pad = max(0.08 * (high - low), 0.01 * max(abs(low), abs(high), 1e-3))
    fig.update_yaxes(range=[low - pad, high + pad])
    return fig
