"""Figures of a bandit race: regret with bands and bounds, reward, optimal action, pulls, snapshot.

Every figure colours a racer the same way (``racer_colors``), so a racer can be followed from
one chart to the next.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rlviz import bandits
from rlviz.figures.theme import MUTED, PALETTE, color, figure, hex_to_rgba

__all__ = [
    "optimal_curves",
    "pull_shares",
    "racer_colors",
    "regret_race",
    "reward_curves",
    "snapshot",
]

MAX_POINTS = 500
"""Curves are drawn at most at this many steps (exports keep every step)."""
BOUND_COLOR = color("bound")
ORDINALS = ("best", "2nd", "3rd")


def racer_colors(race: bandits.Race) -> list[str]:
    """One colour per racer, the same in every figure.

    The first racer of each algorithm gets that algorithm's own colour (as on every page); a
    second racer of the same algorithm gets a palette colour that no racer here owns.
    """
    owned = {color(agent.kind) for agent in race.agents}
    spare = [c for c in PALETTE if c not in owned]
    out: list[str] = []
    for agent in race.agents:
        own = color(agent.kind)
        out.append(own if own not in out else (spare.pop(0) if spare else own))
    return out


def rank_name(j: int) -> str:
    """``best``, ``2nd``, ``3rd``, ``4th``, … for the arm ranked ``j`` (0-based)."""
    return ORDINALS[j] if j < len(ORDINALS) else f"{j + 1}th"


def _steps_drawn(steps: int, log_time: bool) -> np.ndarray:
    """0-based indices of the steps to draw: all of them, or ``MAX_POINTS`` spread evenly."""
    if steps <= MAX_POINTS:
        return np.arange(steps)
    if log_time:
        picked = np.geomspace(1, steps, MAX_POINTS)
    else:
        picked = np.linspace(1, steps, MAX_POINTS)
    return np.unique(np.rint(picked).astype(int) - 1)


def _marker(fig: go.Figure, step: int | None, low: float, high: float, **where) -> None:
    """A thin vertical line at the scrubbed step (a trace, so it works on log axes too)."""
    if step is None:
        return
    fig.add_trace(
        go.Scatter(x=[step, step], y=[low, high], mode="lines", hoverinfo="skip",
                   line=dict(color=MUTED, width=1, dash="dot"), showlegend=False),
        **where,
    )


def regret_race(race: bandits.Race, *, log_axes: bool = False, step: int | None = None,
                level: float = 0.95, height: int = 420) -> go.Figure:
    """Mean cumulative regret of each racer with its confidence band, and the regret bounds.

    The Lai–Robbins rate and UCB1's upper bound are drawn when every run has the same
    Bernoulli arms. On linear axes the y axis is fitted to the racers, so a bound may leave the
    top. With ``log_axes`` both axes are logarithmic: linear regret is a straight line of slope
    1, logarithmic regret flattens out, and two curves with a constant ratio run parallel.
    """
    idx = _steps_drawn(race.steps, log_axes)
    t = idx + 1
    low, high = race.regret_band(level)
    if log_axes:  # a log axis cannot show the band below zero
        positive = race.regret[race.regret > 0]
        floor = float(positive.min()) / 2 if positive.size else 1e-3
        low = np.maximum(low, floor)
    axis = "log" if log_axes else "linear"
    # A log axis labels its decades only (1, 10, 100, …), never plotly's minor digits.
    decades = dict(dtick=1, tickformat="~g", minor=dict(ticks="outside", showgrid=False)) \
        if log_axes else {}
    fig = figure(
        height=height, hovermode="x unified",
        xaxis=dict(title="step t" + (" (log scale)" if log_axes else ""), type=axis, **decades),
        yaxis=dict(title="cumulative regret" + (" (log)" if log_axes else ""), type=axis,
                   **decades),
    )
    for k, (label, c) in enumerate(zip(race.labels, racer_colors(race), strict=True)):
        fig.add_trace(go.Scatter(
            x=np.concatenate([t, t[::-1]]), y=np.concatenate([high[k, idx], low[k, idx][::-1]]),
            fill="toself", fillcolor=hex_to_rgba(c, 0.16), line=dict(width=0),
            hoverinfo="skip", showlegend=False, legendgroup=label,
        ))
        fig.add_trace(go.Scatter(
            x=t, y=race.regret[k, idx], name=label, legendgroup=label, line=dict(color=c),
            hovertemplate="%{y:.2f}",
        ))
    probs = race.testbed.fixed_means
    if probs is not None and race.testbed.binary_rewards:
        for name, curve, dash in (
            ("Lai–Robbins rate (lower bound, asymptotic)", bandits.lai_robbins(probs, race.steps),
             "dash"),
            ("UCB1 upper bound (Auer et al. 2002)", bandits.ucb1_bound(probs, race.steps), "dot"),
        ):
            keep = idx[curve[idx] > 0] if log_axes else idx
            fig.add_trace(go.Scatter(
                x=keep + 1, y=curve[keep], name=name, hovertemplate="%{y:.2f}",
                line=dict(color=BOUND_COLOR, dash=dash, width=1.6),
            ))
    top = max(float(high.max()) * 1.12, 1e-3) if high.size else 1.0
    if log_axes:
        drawn = np.concatenate([np.asarray(v.y, dtype=float) for v in fig.data])
        drawn = drawn[drawn > 0]
        bottom = float(drawn.min()) if drawn.size else 1e-3
        low_end, high_end = np.log10(bottom), np.log10(top * 1.5)
        if np.floor(high_end) < low_end:  # no decade inside the range: widen it to one
            low_end = min(low_end, np.floor(high_end))
        fig.update_yaxes(range=[low_end, high_end])
        _marker(fig, step, bottom, top * 1.5)
    else:
        fig.update_yaxes(range=[0, top])
        _marker(fig, step, 0, top)
    fig.update_layout(legend=dict(orientation="h", y=1.02, yanchor="bottom"))
    return fig


def reward_curves(race: bandits.Race, *, step: int | None = None, height: int = 360) -> go.Figure:
    """Average reward per step of each racer, with the best possible (the best arm's mean)."""
    idx = _steps_drawn(race.steps, False)
    t = idx + 1
    fig = figure(height=height, xaxis=dict(title="step t"), yaxis=dict(title="average reward"),
                hovermode="x unified")
    fig.add_trace(go.Scatter(
        x=t, y=race.best_mean[idx], name="best possible", hovertemplate="%{y:.3f}",
        line=dict(color=color("optimal"), dash="dot", width=1.4),
    ))
    for k, (label, c) in enumerate(zip(race.labels, racer_colors(race), strict=True)):
        fig.add_trace(go.Scatter(x=t, y=race.reward[k, idx], name=label,
                                 line=dict(color=c, width=1.6), hovertemplate="%{y:.3f}"))
    values = np.concatenate([race.reward[:, idx].ravel(), race.best_mean[idx]])
    _marker(fig, step, float(values.min()), float(values.max()))
    return fig


def optimal_curves(race: bandits.Race, *, step: int | None = None, height: int = 360) -> go.Figure:
    """Percentage of runs that chose an optimal arm at each step."""
    idx = _steps_drawn(race.steps, False)
    t = idx + 1
    fig = figure(height=height, xaxis=dict(title="step t"),
                yaxis=dict(title="% optimal action", range=[0, 100]), hovermode="x unified")
    for k, (label, c) in enumerate(zip(race.labels, racer_colors(race), strict=True)):
        fig.add_trace(go.Scatter(x=t, y=100 * race.optimal[k, idx], name=label,
                                 line=dict(color=c, width=1.6), hovertemplate="%{y:.1f}%"))
    _marker(fig, step, 0, 100)
    return fig


def pull_shares(race: bandits.Race, *, height: int | None = None) -> go.Figure:
    """Share of each racer's pulls that went to each arm (ranked by true mean) over the race."""
    shares = 100 * race.pull_shares()  # [K, A]
    arms = race.testbed.arms
    # Short, level tick labels (the arm's rank; its mean below it while there is room): rotated
    # two-line labels ran into the axis title.
    means = race.rank_means[-1]
    x = [rank_name(j) + (f"<br>{means[j]:.2f}" if arms <= 10 else "") for j in range(arms)]
    labels = race.labels
    what = "<br>(below: its mean over runs, last step)" if arms <= 10 else ""
    fig = figure(
        height=height or max(240, 110 + 46 * len(labels)),
        xaxis=dict(title=dict(text=f"arm, ranked by its true mean{what}", standoff=14),
                   side="bottom", showgrid=False, tickangle=0,
                   tickfont=dict(size=12 if arms <= 10 else 11)),
        # the racers' names are free text: their axis alone sizes its margin in the browser
        yaxis=dict(autorange="reversed", showgrid=False, automargin=True),
        margin=dict(l=10, r=10, t=30, b=100 if arms <= 10 else 64),
    )
    fig.add_trace(go.Heatmap(
        z=shares, x=x, y=labels, zmin=0, zmax=100,
        colorscale=[[0.0, "#f8f9fa"], [0.3, "#a5d8ff"], [1.0, "#1864ab"]],
        text=[[f"{v:.0f}%" if v >= 0.5 else "" for v in row] for row in shares],
        texttemplate="%{text}", textfont=dict(size=12 if arms <= 10 else 10),
        customdata=np.broadcast_to(means, shares.shape),
        hovertemplate="%{y}<br>%{x}: %{z:.1f}% of pulls (mean %{customdata:.3f})<extra></extra>",
        colorbar=dict(title="% of pulls", ticksuffix="%"),
    ))
    return fig


def _snapshot_values(race: bandits.Race, step: int, band: tuple[np.ndarray, np.ndarray]) -> dict:
    """The numbers ``snapshot`` shows at ``step``."""
    i = step - 1
    low, high = band
    regret = race.regret[:, i]
    place = np.argsort(np.argsort(regret, kind="stable"), kind="stable")
    return dict(
        regret=regret, above=high[:, i] - regret, below=regret - low[:, i],
        text=[f"#{p + 1}  {v:.1f}" for p, v in zip(place, regret, strict=True)],
        shares=100 * race.pull_shares(step),  # [K, A]
        means=race.rank_means[i],
    )


def _snapshot_data(race: bandits.Race, values: dict) -> list[go.Bar | go.Scatter]:
    """The traces of ``snapshot``: leaderboard, pull shares by arm, true means."""
    colors = racer_colors(race)
    arms = [rank_name(j) for j in range(race.testbed.arms)]
    traces: list[go.Bar | go.Scatter] = [go.Bar(
        x=values["regret"], y=race.labels, orientation="h", marker=dict(color=colors),
        error_x=dict(type="data", symmetric=False, array=values["above"],
                     arrayminus=values["below"], color=MUTED, thickness=1),
        text=values["text"], textposition="outside", cliponaxis=False, showlegend=False,
        hovertemplate="%{y}: regret %{x:.2f}<extra></extra>",
    )]
    for k, (label, c) in enumerate(zip(race.labels, colors, strict=True)):
        traces.append(go.Bar(x=arms, y=values["shares"][k], name=label, marker=dict(color=c),
                             legendgroup=label,
                             hovertemplate=label + ": %{y:.1f}% of pulls<extra></extra>"))
    traces.append(go.Scatter(
        x=arms, y=values["means"], name="true mean q*", mode="lines+markers",
        line=dict(color=color("optimal"), width=1.5, dash="dot"),
        marker=dict(size=7, symbol="diamond"), hovertemplate="true mean %{y:.3f}<extra></extra>",
    ))
    return traces


def _frame_data(values: dict) -> list[dict]:
    """Only what changes between frames of ``snapshot``: values, texts, error bars."""
    # Plain lists: plotly validates them several times faster than numpy arrays.
    return [
        dict(type="bar", x=values["regret"].tolist(), text=values["text"],
             error_x=dict(array=values["above"].tolist(), arrayminus=values["below"].tolist())),
        *(dict(type="bar", y=row.tolist()) for row in values["shares"]),
        dict(type="scatter", y=values["means"].tolist()),
    ]


def _leader_range(band: tuple[np.ndarray, np.ndarray], step: int) -> list[float]:
    """The leaderboard's x range at ``step``: room for the longest bar and its label."""
    return [0.0, max(float(band[1][:, step - 1].max()) * 1.45, 1.0)]


def _step_title(step: int, steps: int) -> str:
    return f"<b>step t = {step}</b> of {steps}"


def snapshot(race: bandits.Race, step: int, *, frames: int = 30, level: float = 0.95,
             height: int = 470) -> go.Figure:
    """Who is winning at step ``step``: regret so far, where each racer's pulls went, true means.

    The figure also carries ``frames`` animation frames over the whole race (▶ plays them).
    """
    if not 1 <= step <= race.steps:
        raise ValueError(f"the step must lie in [1, {race.steps}], not {step}")
    fig = make_subplots(rows=1, cols=2, column_widths=[0.34, 0.66], horizontal_spacing=0.17,
                        specs=[[{}, {"secondary_y": True}]],
                        subplot_titles=("cumulative regret so far (#1 leads)",
                                        "share of each racer's pulls so far, by arm"))
    band = race.regret_band(level)
    traces = _snapshot_data(race, _snapshot_values(race, step, band))
    fig.add_trace(traces[0], row=1, col=1)
    for trace in traces[1:-1]:
        fig.add_trace(trace, row=1, col=2)
    fig.add_trace(traces[-1], row=1, col=2, secondary_y=True)
    means = race.rank_means
    span = float(means.max() - means.min()) or 1.0
    fig.update_layout(
        height=height, barmode="group", bargap=0.25,
        title=dict(text=_step_title(step, race.steps), y=0.985),
        margin=dict(l=10, r=64, t=100, b=60),
        # Below the charts: above them, a legend of many racers ran into "play the race".
        legend=dict(orientation="h", x=0.0, y=-0.3, yanchor="top", xanchor="left"),
    )
    fig.update_annotations(font=dict(size=13, color=MUTED))
    fig.update_xaxes(title_text="cumulative regret", range=_leader_range(band, step), row=1,
                     col=1)
    # the racers' names are free text: their axis alone sizes its margin in the browser
    fig.update_yaxes(autorange="reversed", automargin=True, row=1, col=1)
    fig.update_xaxes(title_text="arm, ranked by its true mean", row=1, col=2, tickangle=0)
    fig.update_yaxes(title_text="% of pulls up to step t", range=[0, 100], row=1, col=2)
    fig.update_yaxes(title=dict(text="true mean q* (mean over runs)", standoff=10), showgrid=False,
                     tickmode="auto",
                     range=[float(means.min()) - 0.1 * span, float(means.max()) + 0.1 * span],
                     row=1, col=2, secondary_y=True)
    _animate(fig, race, step, frames, band)
    return fig


def _animate(fig: go.Figure, race: bandits.Race, step: int, frames: int,
             band: tuple[np.ndarray, np.ndarray]) -> None:
    """Frames at ``frames`` steps spread over the race (log-spaced: early steps change most)."""
    stops = np.unique(np.rint(np.geomspace(1, race.steps, max(frames, 2))).astype(int))
    stops = np.unique(np.append(stops, step))
    fig.frames = [
        dict(name=str(s), data=_frame_data(_snapshot_values(race, int(s), band)),
             traces=list(range(len(fig.data))),
             layout=dict(title=dict(text=_step_title(int(s), race.steps)),
                         xaxis=dict(range=_leader_range(band, int(s)))))
        for s in stops
    ]
    play = dict(frame=dict(duration=180, redraw=True), transition=dict(duration=0),
                fromcurrent=True, mode="immediate")
    fig.update_layout(
        updatemenus=[dict(
            type="buttons", direction="left", x=1.0, y=1.0, xanchor="right", yanchor="bottom",
            showactive=False, pad=dict(t=0, r=0, b=40),
            buttons=[dict(label="▶ play the race", method="animate", args=[None, play]),
                     dict(label="❚❚", method="animate",
                          args=[[None], dict(frame=dict(duration=0, redraw=False),
                                             mode="immediate")])],
        )],
    )
