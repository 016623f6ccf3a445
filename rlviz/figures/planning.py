"""Figures of the Dyna page.

Steps per episode by planning budget, the greedy policy part-way through an episode,
cumulative reward when the maze changes, and the learned model on the maze.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rlviz import planning, td
from rlviz.figures.grid import grid_figure
from rlviz.figures.theme import INK, SEQUENTIAL, color, figure, hex_to_rgba

__all__ = [
    "LABELS",
    "cumulative_figure",
    "episodes_frame",
    "sweeping_caption",
    "sweeping_figure",
    "sweeping_frame",
    "model_figure",
    "n_color",
    "n_short",
    "n_label",
    "policy_figure",
    "rewards_frame",
    "steps_figure",
]

LABELS = {"dyna_q": "Dyna-Q", "dyna_q_plus": "Dyna-Q+"}
PLANNER_COLORS = {"dyna_q": "#1c7ed6", "dyna_q_plus": "#c2255c"}
N_COLORS = {0: color("q_learning"), 1: "#0c8599", 5: "#2b8a3e", 10: "#7048e8", 20: "#e67700",
            50: PLANNER_COLORS["dyna_q"]}
STALE = "#e03131"
BAND_ALPHA = 0.18


def n_label(n: int) -> str:
    """How a planning budget is named on the page."""
    return "n = 0 (Q-learning)" if n == 0 else f"n = {n}"


def n_short(n: int) -> str:
    """A planning budget in a control: short enough for a chip."""
    return f"n = {n}"


def n_color(n: int) -> str:
    """One colour per planning budget; n = 0 is Q-learning's colour everywhere."""
    return N_COLORS.get(n, color(f"n{n}"))


def _band(fig: go.Figure, x, curve: td.Curve, c: str, name: str) -> None:
    fig.add_trace(go.Scatter(
        x=np.concatenate([x, x[::-1]]), y=np.concatenate([curve.high, curve.low[::-1]]),
        fill="toself", fillcolor=hex_to_rgba(c, BAND_ALPHA), line=dict(width=0),
        hoverinfo="skip", showlegend=False, name=f"{name} 95% band",
    ))


def steps_figure(results: Mapping[int, planning.DynaResult], shortest: int) -> go.Figure:
    """Steps per episode for each planning budget, episodes 2 on (Sutton & Barto, Figure 8.2).

    Mean over runs with a 95% band. The first episode is left off, as in the book: it is the
    same random walk for every ``n`` and would flatten the rest.
    """
    fig = figure(xaxis_title="episode", yaxis_title="steps per episode", hovermode="x unified",
                 height=430)
    top = shortest
    for n, res in results.items():
        lengths = res.lengths[0].astype(np.float64)
        lengths[np.arange(lengths.shape[1]) >= res.played[0][:, None]] = np.nan
        curve = td.learning_curve(lengths)
        x = np.arange(1, lengths.shape[1] + 1)[1:]
        curve = td.Curve(curve.mean[1:], curve.low[1:], curve.high[1:])
        seen = ~np.isnan(curve.mean)
        if not seen.any():
            continue
        x, curve = x[seen], td.Curve(curve.mean[seen], curve.low[seen], curve.high[seen])
        c = n_color(n)
        if res.runs > 1:
            _band(fig, x, curve, c, n_label(n))
        fig.add_trace(go.Scatter(x=x, y=curve.mean, mode="lines", line=dict(color=c, width=2.4),
                                 name=n_label(n), hovertemplate="%{y:.1f}"))
        top = max(top, float(np.nanmax(curve.high)))
    fig.add_hline(y=shortest, line=dict(color=INK, dash="dash", width=1.3),
                  annotation=dict(text=f"shortest path: {shortest} steps",
                                  font=dict(color=INK, size=12)),
                  annotation_position="top right")
    fig.update_yaxes(range=[0, top * 1.05], rangemode="tozero")
    fig.update_xaxes(range=[1.5, max(r.lengths.shape[2] for r in results.values()) + 0.5])
    return fig


def _states(maze: planning.Maze, world: int) -> np.ndarray:
    """``[S]`` the cell of each state of one world's model (its non-wall cells, row by row)."""
    grid = maze.mdps[world].grid
    return grid.cells[:, 0] * maze.shape[1] + grid.cells[:, 1]


def _bigger_arrows(fig: go.Figure, scale: float = 1.3) -> go.Figure:
    """Lengthen and thicken the policy arrows of a grid figure, for a small maze on a page."""
    for trace in fig.data:
        if trace.name != "greedy action" or not trace.x:
            continue
        xs, ys = list(trace.x), list(trace.y)
        for k in range(0, len(xs), 3):  # each arrow is (tail, tip, gap)
            xs[k + 1] = xs[k] + scale * (xs[k + 1] - xs[k])
            ys[k + 1] = ys[k] + scale * (ys[k + 1] - ys[k])
        trace.update(x=xs, y=ys, line=dict(width=2.2),
                     marker=dict(size=[1.5 * m for m in trace.marker.size]))
    return fig


def _grid_height(maze: planning.Maze, width: int = 430) -> int:
    """A height that fits the grid in a column ``width`` pixels wide, with room for a title."""
    rows, cols = maze.shape
    return int(np.clip(70 + (width - 110) * rows / cols, 200, 520))


def policy_figure(maze: planning.Maze, q: np.ndarray, *, title: str,
                  zmax: float | None = None) -> go.Figure:
    """The greedy action in each cell, no arrow where every action value is equal (Figure 8.3).

    Cells are coloured by ``max_a Q(s, a)``.
    """
    cells = _states(maze, 0)
    q_s = np.asarray(q)[cells]
    value = q_s.max(axis=1)
    top = zmax if zmax is not None else max(float(value.max()), 1e-9)
    fig = grid_figure(maze.mdps[0].grid, values=value, policy=planning.greedy_mask(q_s),
                      title=title, value_label="max Q", colorscale=SEQUENTIAL,
                      zrange=(0.0, top), annotate=False, height=_grid_height(maze))
    fig.update_traces(colorbar=dict(len=0.8, thickness=10), selector=dict(type="heatmap"))
    fig.update_layout(title=dict(font=dict(size=14)))
    return _bigger_arrows(fig)


def cumulative_figure(res: planning.DynaResult, change_at: int) -> go.Figure:
    """Cumulative reward against time steps, mean over runs with a 95% band (Figures 8.4, 8.5)."""
    fig = figure(xaxis_title="time steps", yaxis_title="cumulative reward", hovermode="x unified",
                 height=430)
    total = res.cumulative_reward()  # [P, R, T]
    steps = total.shape[2]
    stride = max(steps // 600, 1)  # a point every few steps is plenty on screen
    x = np.arange(1, steps + 1)[stride - 1::stride]
    for p, name in enumerate(res.planners):
        curve = td.learning_curve(total[p][:, stride - 1::stride])
        curve = td.Curve(curve.mean, np.maximum(curve.low, 0.0), curve.high)  # no reward < 0
        c = PLANNER_COLORS[name]
        # With n = 0 (or κ = 0 where nothing is untried) the agents can coincide: show both.
        twin = next((LABELS[o] for o in res.planners[:p] if np.array_equal(
            total[res.index(o)], total[p])), None)
        if res.runs > 1 and twin is None:
            _band(fig, x, curve, c, LABELS[name])
        fig.add_trace(go.Scatter(
            x=x, y=curve.mean, mode="lines",
            line=dict(color=c, width=2.4, dash="dash" if twin else "solid"),
            name=LABELS[name] + (f" (the same as {twin})" if twin else ""),
            hovertemplate="%{y:.1f}"))
    fig.add_vline(x=change_at, line=dict(color=INK, dash="dash", width=1.3),
                  annotation=dict(text="the maze changes", font=dict(color=INK, size=12)),
                  annotation_position="top left")
    fig.update_xaxes(range=[0, steps])
    fig.update_yaxes(rangemode="tozero")
    return fig


def model_figure(maze: planning.Maze, res: planning.DynaResult, planner: str, *,
                 run: int = 0) -> go.Figure:
    """What one run's model believes at the end, drawn on the maze after the change.

    Cells are shaded by how often the agent stood there; cells the change opened or walled up
    are outlined. A line joins a cell to where the model says an action leads; a tried move
    into a wall is a short stub. Red: the model is out of date (it disagrees with the maze as
    it is now).
    """
    p = res.index(planner)
    world = maze.n_worlds - 1
    cells = _states(maze, world)
    visits = res.visits[p, run][cells].astype(np.float64)
    top = max(float(np.quantile(visits, 0.9)), 1.0)
    fig = grid_figure(maze.mdps[world].grid, values=visits, colorscale=SEQUENTIAL,
                      zrange=(0.0, top), value_label="visits", annotate=False,
                      title=f"{LABELS[planner]}: its model at the end (run {run + 1})",
                      height=_grid_height(maze) + 40)
    fig.update_traces(colorbar=dict(len=0.7, thickness=10), opacity=0.75,
                      selector=dict(type="heatmap", name="visits"))
    n_cols = maze.shape[1]
    if maze.n_worlds > 1:  # outline the cells the change opened or closed
        for c in np.flatnonzero(maze.floor[0] != maze.floor[1]):
            r0, c0 = divmod(int(c), n_cols)
            fig.add_shape(type="rect", x0=c0 - 0.46, x1=c0 + 0.46, y0=r0 - 0.46, y1=r0 + 0.46,
                          line=dict(color="#e67700", width=2.5, dash="dot"))
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", name="changed cell",
                                 marker=dict(symbol="square-open", size=12, color="#e67700")))
    tried = res.tried[p, run]
    believed = res.model_next[p, run]
    truth = maze.next_cell[world]
    good: tuple[list, list] = ([], [])
    stale: tuple[list, list] = ([], [])
    deltas = planning_deltas()
    for c, a in zip(*np.nonzero(tried & maze.floor[world][:, None]), strict=True):
        r0, c0 = divmod(int(c), n_cols)
        r1, c1 = divmod(int(believed[c, a]), n_cols)
        if (r1, c1) == (r0, c0):  # the model says: a wall (stay put)
            dr, dc = deltas[a]
            r1, c1 = r0 + 0.3 * dr, c0 + 0.3 * dc
        else:
            r1, c1 = r0 + 0.8 * (r1 - r0), c0 + 0.8 * (c1 - c0)
        xs, ys = stale if believed[c, a] != truth[c, a] else good
        xs += [c0, c1, None]
        ys += [r0, r1, None]
    fig.add_trace(go.Scatter(x=good[0], y=good[1], mode="lines",
                             line=dict(color=INK, width=1.1), opacity=0.45, hoverinfo="skip",
                             name="move the model knows"))
    fig.add_trace(go.Scatter(x=stale[0], y=stale[1], mode="lines+markers",
                             line=dict(color=STALE, width=4),
                             marker=dict(size=[0, 11, 0] * (len(stale[0]) // 3),
                                         symbol="x", color=STALE),
                             hoverinfo="skip", name="out of date"))
    fig.update_layout(showlegend=True, title=dict(font=dict(size=14)),
                      legend=dict(y=-0.02, yanchor="top", orientation="h"), margin=dict(b=40))
    return fig


def planning_deltas() -> np.ndarray:
    """``[A, 2]`` (d_row, d_col) of each action."""
    from rlviz.envs import ACTION_DELTAS

    return ACTION_DELTAS


def episodes_frame(results: Mapping[int, planning.DynaResult]) -> pd.DataFrame:
    """Every run's episode lengths, one row per (n, run, episode)."""
    frames = []
    for n, res in results.items():
        runs, episodes = res.lengths.shape[1:]
        frames.append(pd.DataFrame({
            "n": n, "run": np.repeat(np.arange(1, runs + 1), episodes),
            "episode": np.tile(np.arange(1, episodes + 1), runs),
            "steps": res.lengths[0].ravel(),
        }))
    return pd.concat(frames, ignore_index=True)


def rewards_frame(res: planning.DynaResult, every: int = 10) -> pd.DataFrame:
    """Mean cumulative reward of each planner every ``every`` steps, with its 95% band."""
    total = res.cumulative_reward()
    steps = np.arange(every, total.shape[2] + 1, every)
    out = {"step": steps}
    for p, name in enumerate(res.planners):
        curve = td.learning_curve(total[p][:, steps - 1])
        out[f"{name}_mean"], out[f"{name}_low"], out[f"{name}_high"] = (
            curve.mean, curve.low, curve.high)
    return pd.DataFrame(out)


FIGURES = {"blocking": "Figure 8.4", "shortcut": "Figure 8.5"}
EQUATIONS = [
    ("(d) Direct RL: one-step Q-learning on the real transition (S, A, R, S′)",
     r"Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + \gamma \max_a Q(S', a) - Q(S, A)\big]"),
    ("(e) Model learning: a deterministic world, so the model is a table of what happened",
     r"\mathrm{Model}(S, A) \leftarrow (R, S')"),
    ("(f) Planning, n times per real step: a remembered state and an action taken there, "
     "replayed through the same update",
     r"S \sim \mathrm{observed},\ A \sim \mathrm{tried}(S),\ (R, S') = \mathrm{Model}(S, A):"
     r"\quad Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + \gamma \max_a Q(S', a) - "
     r"Q(S, A)\big]"),
    ("The first episode: while every Q is 0, ε-greedy with random ties is the uniform random "
     "walk; its expected length m(S) solves, over the non-goal states,",
     r"m(s) = 1 + \tfrac{1}{4}\sum_{a} m\big(s'(s, a)\big), \qquad m(G) = 0"),
    ("Dyna-Q+: a replayed move untried for τ real steps earns a bonus (any action may be "
     "replayed; an untried one as 'stay, reward 0')",
     r"\tilde R = R + \kappa \sqrt{\tau}"),
    ("Bands: the t-interval of the mean over R runs",
     r"\bar x \pm t_{0.975,\,R-1}\, s / \sqrt{R}"),
]


def steps_caption(study: planning.PlanningStudy) -> str:
    """What the steps-per-episode chart shows, in numbers."""
    ns = study.ns
    first = study.results[ns[0]].lengths[0, :, 0]
    late = ", ".join(
        f"{figs_n(n)} {np.nanmean(study.mean_lengths(n)[-10:]):.1f}" for n in ns)
    text = (f"Episode 1, left off: {first.mean():.0f} steps on average, the same walk for "
            f"every n (expected {study.walk:.0f}). Last 10 episodes: {late} steps (shortest "
            f"{study.maze.shortest[0]}; ε-greedy keeps exploring). Each real step costs "
            "1 + n updates.")
    early = {n: int(study.results[n].stopped_early.sum()) for n in ns}
    if any(early.values()):
        cut = ", ".join(f"{figs_n(n)}: {k}" for n, k in early.items() if k)
        res = study.results[ns[0]]
        text += (f" Runs that used up their budget ({res.settings['max_steps']:,} steps, "
                 f"{res.settings['max_updates']:,} updates after the first reward) before "
                 f"their last episode: {cut}; their unfinished episodes are left out.")
    return text


def figs_n(n: int) -> str:
    return f"n = {n}:"


def halfway_caption(study: planning.PlanningStudy) -> str:
    """How far the value has spread in each policy of Figure 8.3."""
    parts = []
    for n, (q, _, length) in study.halfway.items():
        cells = figs_cells(study.maze)
        arrows = int(planning.greedy_mask(np.asarray(q)[cells]).any(axis=1).sum())
        if length:
            parts.append(f"{figs_n(n)} arrows in {arrows} of {len(cells)} cells")
        else:
            parts.append(f"{figs_n(n)} run 1 never finished episode 2 ({arrows} arrows)")
    return ("Cells whose values are no longer all equal, halfway through episode 2: "
            + "; ".join(parts) + ".")


def figs_cells(maze: planning.Maze) -> np.ndarray:
    return _states(maze, 0)


def changing_caption(study: planning.ChangingStudy) -> str:
    """Reward after the change and the routes the agents ended on."""
    gain = study.gain_after()
    paths = study.path_lengths()
    best = study.maze.shortest[1]
    parts = []
    for name in study.result.planners:
        share = float((paths[name] == best).mean())
        parts.append(f"{LABELS[name]} reached G {gain[name]:.1f} times after the change "
                     f"(mean over runs), and {share:.0%} of its runs end on a shortest route "
                     f"({best} moves)")
    text = (f"The maze changes at step {study.change_at:,} of {study.result.rewards.shape[2]:,}. "
            + "; ".join(parts) + ".")
    if study.result.n == 0:
        text += (" With n = 0 neither agent plans, and the bonus enters only through planning: "
                 "both are one-step Q-learning on the same dice, one curve.")
    return text


def model_caption(study: planning.ChangingStudy) -> str:
    """How many moves of run 1's model are out of date, per planner."""
    m, res = study.maze, study.result
    truth = m.next_cell[-1]
    parts = []
    for p, name in enumerate(res.planners):
        known = res.tried[p, 0] & m.floor[-1][:, None]
        stale = int((known & (res.model_next[p, 0] != truth)).sum())
        parts.append(f"{LABELS[name]} knows {int(known.sum())} moves, {stale} out of date")
    return "Run 1's model at the end: " + "; ".join(parts) + "."


# --------------------------------------------------------------------------- Example 8.4
SWEEP_LABELS = {"dyna_q": "Dyna-Q", "prioritized": "Prioritized sweeping"}
SWEEP_COLORS = {"dyna_q": PLANNER_COLORS["dyna_q"], "prioritized": "#e67700"}


def sweeping_figure(study: planning.SweepingStudy) -> go.Figure:
    """Updates until the greedy path is shortest, against the maze's size (Example 8.4).

    Both axes are logarithmic. A line joins the geometric means over the runs, with the 95% band
    of the mean of log10(updates); each run is a dot, an open triangle for a run stopped by its
    budget before it got there (its count is a lower bound).
    """
    fig = figure(xaxis_title="gridworld size (states)", yaxis_title="updates until optimal "
                 "solution", hovermode="closest", height=430)
    x = np.asarray(study.states, dtype=np.float64)
    runs = study.results[study.levels[0]].runs
    jitter = np.linspace(-0.025, 0.025, runs) if runs > 1 else np.zeros(1)
    for name in planning.SWEEPERS:
        c, label = SWEEP_COLORS[name], SWEEP_LABELS[name]
        mean, low, high = study.summary(name)
        if runs > 1:
            fig.add_trace(go.Scatter(
                x=np.concatenate([x, x[::-1]]), y=np.concatenate([high, low[::-1]]),
                fill="toself", fillcolor=hex_to_rgba(c, BAND_ALPHA), line=dict(width=0),
                hoverinfo="skip", showlegend=False, name=f"{label} 95% band"))
        fig.add_trace(go.Scatter(x=x, y=mean, mode="lines+markers", name=label,
                                 line=dict(color=c, width=2.4), marker=dict(size=8),
                                 hovertemplate="%{x} states: %{y:,.0f} updates (geometric "
                                 "mean)<extra>" + label + "</extra>"))
        updates, reached = study.updates(name), study.reached(name)  # [K, R]
        xs = x[:, None] * 10 ** jitter[None, :]  # [K, R] runs side by side
        for got, symbol, what in ((True, "circle", "run"),
                                  (False, "triangle-up-open", "run stopped by its budget")):
            pick = reached == got
            if not pick.any():
                continue
            fig.add_trace(go.Scatter(
                x=xs[pick], y=np.maximum(updates[pick], 1), mode="markers",
                marker=dict(color=c, size=7 if got else 9, symbol=symbol, opacity=0.55),
                name=f"{label}: {what}", showlegend=not got,
                hovertemplate="%{y:,.0f} updates<extra>" + label + f" {what}</extra>"))
    top = max(float(study.updates(p).max()) for p in planning.SWEEPERS)
    fig.update_xaxes(type="log", tickvals=list(study.states),
                     ticktext=[f"{s:,}" for s in study.states],
                     range=[np.log10(x.min()) - 0.12, np.log10(x.max()) + 0.12])
    fig.update_yaxes(type="log", dtick=1, exponentformat="power",
                     range=[0.8, np.log10(max(top, 10.0)) + 0.3])
    fig.update_layout(legend=dict(y=-0.18, yanchor="top", orientation="h"))
    return fig


def sweeping_frame(study: planning.SweepingStudy) -> pd.DataFrame:
    """Every run: one row per (states, planner, run) with its updates, steps and outcome."""
    rows = []
    for k, states, shortest in zip(study.levels, study.states, study.shortest, strict=True):
        res = study.results[k]
        for i, name in enumerate(res.planners):
            for r in range(res.runs):
                rows.append({"states": states, "shortest_path": shortest, "planner": name,
                             "run": r + 1, "updates": int(res.updates[i, r]),
                             "steps": int(res.steps[i, r]),
                             "reached_optimal": bool(res.reached[i, r]),
                             "first_episode_steps": int(res.first_episode[i, r])})
    return pd.DataFrame(rows)


def sweeping_caption(study: planning.SweepingStudy) -> str:
    """The two methods' counts at each size, and the runs stopped by their budget."""
    ps, dq = (study.summary(p)[0] for p in ("prioritized", "dyna_q"))
    sizes = "; ".join(f"{s:,} states: {d:,.0f} vs {p:,.0f} (×{d / p:,.0f})"
                      for s, d, p in zip(study.states, dq, ps, strict=True))
    res = study.results[study.levels[0]]
    text = (f"Updates until the greedy path from S is a shortest path, geometric mean over "
            f"{res.runs} runs, Dyna-Q vs prioritized sweeping: {sizes}.")
    stopped = {SWEEP_LABELS[p]: int((~study.reached(p)).sum()) for p in planning.SWEEPERS}
    if any(stopped.values()):
        budget = res.settings
        text += (f" Runs stopped by their budget ({budget['max_updates']:,} updates or "
                 f"{budget['max_steps']:,} real steps) before they got there: "
                 + ", ".join(f"{k} {v}" for k, v in stopped.items() if v)
                 + "; their counts are lower bounds (open triangles).")
    return text


SWEEP_EQUATIONS = [
    ("The priority of a pair: how much its value would change if it were updated now",
     r"P = \big|R + \gamma \max_a Q(S', a) - Q(S, A)\big|, \qquad "
     r"\text{queued only if } P > \theta"),
    ("A real step: the model records what happened, the pair is queued by its priority (no "
     "update yet)",
     r"\mathrm{Model}(S, A) \leftarrow (R, S'),\qquad P \leftarrow |R + \gamma\max_a Q(S', a) "
     r"- Q(S, A)|"),
    ("Up to n sweep steps per real step: the top pair is updated ...",
     r"(S, A) = \arg\max_{\text{queue}} P:\quad Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + "
     r"\gamma \max_a Q(S', a) - Q(S, A)\big]"),
    ("... and every predecessor of S (a pair the model says leads to S) is queued with its "
     "new priority",
     r"\forall (\bar S, \bar A) \to S:\quad \bar P = \big|\bar R + \gamma \max_a Q(S, a) - "
     r"Q(\bar S, \bar A)\big|"),
    ("Dyna-Q, for comparison: 1 + n updates per real step, the n on pairs drawn at random",
     r"S \sim \mathrm{observed},\ A \sim \mathrm{tried}(S):\quad Q(S, A) \leftarrow Q(S, A) + "
     r"\alpha\big[R + \gamma \max_a Q(S', a) - Q(S, A)\big]"),
    ("Optimal: every move of the greedy path lowers the distance d to the goal by one "
     "(d by value iteration)",
     r"d\big(s'(s, \arg\max_a Q(s, a))\big) = d(s) - 1 \ \text{ along the path from } S"),
    ("The curves: the geometric mean over R runs, with the t-interval of the mean of the logs",
     r"10^{\,\bar\ell \pm t_{0.975,\,R-1}\, s_\ell / \sqrt{R}}, \qquad \ell = "
     r"\log_{10}(\text{updates})"),
]
