"""Figures of the deep-exploration page: regret, episodes to the treasure against N, visits.

Regret comes with 95% bands over runs; the sweep is drawn on a log scale; heatmaps show where
each learner has been.

Every figure colours a learner the same way: ε-greedy as the bandit page's ε-greedy, the
optimistic learner as its optimistic one, the count bonus as UCB, posterior sampling as Thompson
sampling (PSRL is Thompson sampling over MDPs).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rlviz import exploration as ex
from rlviz.figures.theme import INK, MUTED, SEQUENTIAL, color, figure, hex_to_rgba

__all__ = [
    "COLOR_KEYS",
    "first_reach_figure",
    "learner_color",
    "regret_figure",
    "regret_frame",
    "sweep_frame",
    "visits_figure",
]

COLOR_KEYS = {
    "epsilon_greedy": "epsilon_greedy",
    "optimistic": "optimistic",
    "bonus": "ucb",
    "psrl": "thompson",
    "random": "bound",
}
BAND_ALPHA = 0.16
MAX_POINTS = 400
"""Regret curves are drawn at most at this many episodes (exports keep every one)."""


def learner_color(kind: str) -> str:
    """The colour of a learner, shared with the bandit page's matching agent."""
    return color(COLOR_KEYS.get(kind, kind))


def _drawn(episodes: int) -> np.ndarray:
    if episodes <= MAX_POINTS:
        return np.arange(episodes)
    return np.unique(np.rint(np.linspace(0, episodes - 1, MAX_POINTS)).astype(int))


def regret_figure(study: ex.Study, *, height: int = 430) -> go.Figure:
    """Cumulative regret per learner (mean over runs, 95% band), and the lure's straight line.

    The dotted line is the regret of never leaving the small nearby reward: a learner that
    never finds the far end climbs along it.
    """
    idx = _drawn(study.episodes)
    x = idx + 1
    mean, low, high = study.regret_band()
    fig = figure(
        height=height, hovermode="x unified",
        xaxis=dict(title="episode", range=[0, study.episodes + 1]),
        yaxis=dict(title="cumulative regret", rangemode="tozero"),
        margin=dict(t=40),
    )
    lure = study.optimal_value - study.lure_value
    fig.add_trace(go.Scatter(
        x=[0, study.episodes], y=[0, lure * study.episodes], mode="lines",
        name=f"never leaving the nearby reward ({lure:.3g} per episode)",
        line=dict(color=MUTED, dash="dot", width=1.4), hovertemplate="%{y:.1f}",
    ))
    for k, kind in enumerate(study.kinds):
        c = learner_color(kind)
        fig.add_trace(go.Scatter(
            x=np.concatenate([x, x[::-1]]), y=np.concatenate([high[k, idx], low[k, idx][::-1]]),
            fill="toself", fillcolor=hex_to_rgba(c, BAND_ALPHA), line=dict(width=0),
            hoverinfo="skip", showlegend=False, legendgroup=kind,
        ))
        fig.add_trace(go.Scatter(
            x=x, y=mean[k, idx], name=ex.LABELS[kind], legendgroup=kind, line=dict(color=c),
            hovertemplate="%{y:.1f}",
        ))
    top = max(float(np.nanmax(high[:, idx])) if high.size else 1.0, 1.0)
    fig.update_yaxes(range=[min(0.0, float(np.nanmin(low[:, idx]))), top * 1.08])
    return fig


def _decade_ticks(low: float, high: float) -> tuple[list[float], list[str]]:
    """Tick values at powers of ten spanning [low, high], written out in full."""
    lo = int(np.floor(np.log10(max(low, 1.0))))
    hi = int(np.floor(np.log10(max(high, 10.0))))
    vals = [10.0**k for k in range(lo, hi + 1)]
    return vals, [f"{v:,.0f}" for v in vals]


def first_reach_figure(sweep: ex.Sweep, *, height: int = 460) -> go.Figure:
    """Episodes until the first treasure against the deep sea's size N, on a log scale.

    A filled marker is the mean over runs with its 95% interval (every run found it); an open
    triangle is a lower bound on the mean (some runs gave up at the cap, counted as cap + 1);
    a cross on the cap line means no run found it within the cap. The dashed line is the
    random walker's expected 2^N episodes, exact.
    """
    sizes = np.array(sweep.sizes)
    mean, low, high = sweep.mean_band()
    at_least = sweep.at_least()
    reached = sweep.reached()
    cap = sweep.cap
    fig = figure(
        height=height, hovermode="closest",
        xaxis=dict(title="deep-sea size N", tickvals=list(sizes),
                   range=[sizes.min() - 0.6, sizes.max() + 0.6]),
        margin=dict(l=70, r=24, t=40, b=54),
    )
    grid = np.linspace(sizes.min(), sizes.max(), 200)
    fig.add_trace(go.Scatter(
        x=grid, y=2.0**grid, mode="lines", name="random walker: 2<sup>N</sup> (exact)",
        line=dict(color=INK, dash="dash", width=1.4), hoverinfo="skip",
    ))
    fig.add_trace(go.Scatter(
        x=[sizes.min() - 0.6, sizes.max() + 0.6], y=[cap, cap], mode="lines", showlegend=False,
        line=dict(color=MUTED, dash="dot", width=1.2), hoverinfo="skip",
    ))
    fig.add_annotation(x=sizes.min() - 0.6, y=np.log10(cap), xanchor="left", yanchor="bottom",
                       text=f"give up after {cap:,} episodes", showarrow=False,
                       font=dict(size=11, color=MUTED))
    nudge = np.linspace(-0.18, 0.18, len(sweep.kinds)) if len(sweep.kinds) > 1 else [0.0]
    for k, kind in enumerate(sweep.kinds):
        c = learner_color(kind)
        label = ex.LABELS[kind]
        full = reached[k] == sweep.runs
        some = (reached[k] > 0) & ~full
        none = reached[k] == 0
        xs = sizes + nudge[k]
        fig.add_trace(go.Scatter(
            x=xs[full], y=mean[k, full], mode="lines+markers", name=label, legendgroup=kind,
            line=dict(color=c, width=1.8), marker=dict(size=8, color=c),
            error_y=dict(type="data", symmetric=False, array=(high[k] - mean[k])[full],
                         arrayminus=np.minimum(mean[k] - low[k], mean[k] - 1)[full],
                         color=c, thickness=1.2, width=4),
            customdata=np.stack([sizes[full], low[k, full], high[k, full]], axis=-1),
            hovertemplate=f"{label}<br>N = %{{customdata[0]}}: %{{y:,.1f}} episodes "
            "(95%: %{customdata[1]:,.1f} to %{customdata[2]:,.1f})<extra></extra>",
        ))
        if some.any():
            fig.add_trace(go.Scatter(
                x=xs[some], y=at_least[k, some], mode="markers", legendgroup=kind,
                showlegend=False, marker=dict(symbol="triangle-up-open", size=11, color=c),
                customdata=np.stack([sizes[some], sweep.runs - reached[k, some]], axis=-1),
                hovertemplate=f"{label}<br>N = %{{customdata[0]}}: at least %{{y:,.0f}} "
                f"episodes on average; %{{customdata[1]}} of {sweep.runs} runs not reached "
                f"within {cap:,}<extra></extra>",
            ))
        if none.any():
            fig.add_trace(go.Scatter(
                x=xs[none], y=np.full(int(none.sum()), cap), mode="markers", legendgroup=kind,
                showlegend=False, marker=dict(symbol="x-thin-open", size=11, color=c,
                                              line=dict(width=2, color=c)),
                customdata=sizes[none],
                hovertemplate=f"{label}<br>N = %{{customdata}}: not reached within {cap:,} "
                "episodes in any run<extra></extra>",
            ))
    values = np.concatenate([mean[np.isfinite(mean)], low[np.isfinite(low)], [cap, 1.0]])
    top = max(float(values.max()) * 2.5, cap * 2.5)
    ticks, text = _decade_ticks(1.0, top)
    fig.update_yaxes(title="episodes to the first treasure", type="log",
                     range=[np.log10(0.8), np.log10(top)], tickvals=ticks, ticktext=text)
    return fig


def visits_figure(study: ex.Study, kind: str, *, height: int = 330) -> go.Figure:
    """Share of episodes that passed through each (step, position): where a learner has been.

    Rows are the steps of an episode (top: the first), columns the chain's positions; on the
    deep sea this is the deep-sea grid, with the treasure at the bottom right.
    """
    k = study.index(kind)
    share = 100 * study.visit_share[k]
    horizon, n_states = share.shape
    deep = study.problem.key == "deep_sea"
    fig = figure(
        height=height, margin=dict(l=56, r=16, t=36, b=48),
        title=dict(text=ex.LABELS[kind], font=dict(size=14, color=learner_color(kind))),
        xaxis=dict(title="column" if deep else "position", showgrid=False,
                   dtick=1 if n_states <= 12 else None, constrain="domain"),
        yaxis=dict(title="depth (step)" if deep else "step of the episode", autorange="reversed",
                   showgrid=False, dtick=1 if horizon <= 12 else 5),
    )
    fig.add_trace(go.Heatmap(
        z=share, x=np.arange(n_states), y=np.arange(horizon), zmin=0, zmax=100,
        colorscale=SEQUENTIAL, colorbar=dict(title="% of<br>episodes", ticksuffix="%", len=0.9),
        hovertemplate="step %{y}, position %{x}: %{z:.1f}% of episodes<extra></extra>",
        xgap=1, ygap=1,
    ))
    far = study.problem.far_state
    if deep:  # the treasure: the bottom-right cell of the grid
        fig.add_trace(go.Scatter(
            x=[far], y=[horizon - 1], mode="markers", showlegend=False,
            marker=dict(symbol="star", size=13, color="#e67700", line=dict(width=1, color=INK)),
            hovertemplate="the treasure: right here pays 1<extra></extra>",
        ))
    else:  # the two rewards are for moves at the two banks, at any step
        for x, text in ((0, "← 0.005"), (far, "1 →")):
            fig.add_annotation(x=x, y=1.0, yref="paper", yanchor="bottom", text=text,
                               showarrow=False, font=dict(size=11, color="#e67700"))
    return fig
    return fig


def regret_frame(study: ex.Study) -> pd.DataFrame:
    """Tidy table: learner, episode, mean cumulative regret and its band, mean return."""
    mean, low, high = study.regret_band()
    parts = [
        pd.DataFrame({
            "learner": kind, "episode": np.arange(1, study.episodes + 1),
            "regret_mean": mean[k], "regret_low": low[k], "regret_high": high[k],
            "return_mean": study.returns[k].mean(axis=0),
        })
        for k, kind in enumerate(study.kinds)
    ]
    return pd.concat(parts, ignore_index=True)


def sweep_frame(sweep: ex.Sweep) -> pd.DataFrame:
    """Tidy table: learner, size, runs that found the treasure, mean episodes and band."""
    mean, low, high = sweep.mean_band()
    rows = []
    for k, kind in enumerate(sweep.kinds):
        for t, n in enumerate(sweep.sizes):
            rows.append({
                "learner": kind, "N": n, "runs": sweep.runs, "cap": sweep.cap,
                "reached": int(sweep.reached()[k, t]), "mean_episodes": mean[k, t],
                "band_low": low[k, t], "band_high": high[k, t],
                "mean_at_least": sweep.at_least()[k, t],
                "random_walker_exact": sweep.expected_random[t],
            })
    return pd.DataFrame(rows)
