"""MCTS drawings: the growing search tree, the board, and the root's convergence.

Colour meaning follows the app: values use the shared diverging scale centred at zero, always
from the point of view of the player to move at the root (blue good for them, red bad), so a
colour means the same thing at every depth of the tree.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rlviz.figures.theme import DIVERGING, INK, MUTED, PALETTE, SEQUENTIAL, color, figure
from rlviz.games import TicTacToe
from rlviz.games.base import Solution
from rlviz.mcts import (
    NO_NODE,
    IterationView,
    SearchTrace,
    SelectionStep,
    TreeLayout,
    tree_layout,
)

__all__ = [
    "PHASES",
    "board_figure",
    "frame_iterations",
    "root_convergence",
    "root_table",
    "selection_table",
    "tree_figure",
]

PHASES = ("select", "expand", "simulate", "backup")
PHASE_LABELS = {"select": "1 Select", "expand": "2 Expand", "simulate": "3 Simulate",
                "backup": "4 Back up"}
PATH = "#e67700"
EDGE = "#ced4da"
VALUE_COLORS = {1: DIVERGING[-1][1], 0: "#868e96", -1: DIVERGING[0][1]}
MIN_SIZE, MAX_SIZE = 7.0, 40.0


def frame_iterations(total: int, count: int = 20) -> np.ndarray:
    """Iterations to animate: dense early, where the tree changes most, ending at ``total``."""
    steps = np.unique(np.round(np.geomspace(1, total, num=min(count, total))).astype(int))
    return np.union1d(steps, [total])


def _value_word(v: float, plies: int | None) -> str:
    if v > 0:
        return f"win in {plies}" if plies is not None else "win"
    if v < 0:
        return f"loss in {plies}" if plies is not None else "loss"
    return "draw"


def _labels(game: TicTacToe, trace: SearchTrace, nodes: np.ndarray) -> list[str]:
    """'X b2' for each node: the mark placed by the move into it ('root' for the root)."""
    tree = trace.tree
    root_plies = int(game.table.plies[trace.root_state])
    out = []
    for n in nodes.tolist():
        if n == 0:
            out.append("root")
            continue
        mover = "XO"[(root_plies + int(tree.depth[n]) - 1) % 2]
        out.append(f"{mover} {game.table.move_names[int(tree.move[n])]}")
    return out


def _hover(game: TicTacToe, trace: SearchTrace, layout: TreeLayout) -> list[str]:
    """The line of moves from the root to each node, for hover text."""
    labels = _labels(game, trace, layout.nodes)
    lines: list[str] = []
    for i, slot in enumerate(layout.parent_slot.tolist()):
        lines.append("root" if slot < 0 else
                     labels[i] if slot == 0 else f"{lines[slot]} → {labels[i]}")
    over = trace.tree.terminal[layout.nodes]
    return [f"{line}{' · game over' if done else ''}" for line, done in zip(lines, over,
                                                                          strict=True)]


def _sizes(visits: np.ndarray, total: int) -> np.ndarray:
    return MIN_SIZE + (MAX_SIZE - MIN_SIZE) * np.sqrt(visits / max(total, 1))


def _path_xy(layout: TreeLayout, path: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    slot = {int(n): i for i, n in enumerate(layout.nodes)}
    drawn = [slot[int(n)] for n in path if int(n) in slot]
    return layout.x[drawn], layout.y[drawn]


def _traces(trace: SearchTrace, layout: TreeLayout, hover: list[str], row: int,
            shown: np.ndarray, path: np.ndarray, new: int) -> list[dict]:
    """Edges, path, nodes and root-move labels for one moment (the same four every time).

    Arrays go out as lists: plotly validates lists of numbers about twice as fast as numpy
    arrays, which matters for the animation's frames.
    """
    keep = np.flatnonzero(shown)
    child = keep[layout.parent_slot[keep] >= 0]
    par = layout.parent_slot[child]
    gap = np.full(child.size, np.nan)
    ex = np.column_stack([layout.x[par], layout.x[child], gap]).ravel()
    ey = np.column_stack([layout.y[par], layout.y[child], gap]).ravel()
    px, py = _path_xy(layout, path)
    visits = layout.visits[row, keep]
    flip = np.where(layout.y[keep] % 2 == 0, 1.0, -1.0)  # y = -depth
    value = np.where(visits > 0, layout.value_sum[row, keep] / np.maximum(visits, 1), 0.0) * flip
    value = np.round(value + 0.0, 4)  # no negative zeros in hover text
    terminal = trace.tree.terminal[layout.nodes[keep]]
    hidden = layout.hidden[row, keep]
    text = [hover[i] + (f"<br>{h} more children not drawn" if h else "")
            for i, h in zip(keep.tolist(), hidden.tolist(), strict=True)]
    if new == NO_NODE:
        outline = dict(color="#495057", width=0.8)
    else:
        is_new = layout.nodes[keep] == new
        outline = dict(color=np.where(is_new, PATH, "#495057").tolist(),
                       width=np.where(is_new, 3.0, 0.8).tolist())
    first = keep[layout.y[keep] == -1]
    return [
        dict(type="scatter", x=_nan_gaps(ex), y=_nan_gaps(ey), mode="lines",
             line=dict(color=EDGE, width=1.2), hoverinfo="skip", showlegend=False,
             name="edges"),
        dict(type="scatter", x=px.tolist(), y=py.tolist(), mode="lines",
             line=dict(color=PATH, width=5), opacity=0.75, hoverinfo="skip",
             showlegend=False, name="path"),
        dict(
            type="scatter", x=layout.x[keep].tolist(), y=layout.y[keep].tolist(),
            mode="markers",
            marker=dict(
                size=np.round(_sizes(visits, trace.iterations), 2).tolist(),
                color=value.tolist(), coloraxis="coloraxis",
                symbol=np.where(terminal, "square", "circle").tolist(), line=outline,
            ),
            customdata=np.column_stack([visits, value]).tolist(), text=text,
            hovertemplate="%{text}<br>N = %{customdata[0]:d} · mean value %{customdata[1]:+.2f}"
                          "<extra></extra>",
            showlegend=False, name="nodes",
        ),
        dict(type="scatter", x=layout.x[first].tolist(), y=(layout.y[first] + 0.3).tolist(),
             mode="text", text=[hover[i].split(" ")[-1] for i in first.tolist()],
             textfont=dict(size=11, color=MUTED), hoverinfo="skip", showlegend=False,
             name="root moves"),
    ]


def _nan_gaps(a: np.ndarray) -> list:
    """A list with None where the array has NaN (line breaks between edges)."""
    return [None if v != v else v for v in a.tolist()]


def tree_figure(
    game: TicTacToe,
    trace: SearchTrace,
    view: IterationView,
    *,
    phase: str = "backup",
    max_depth: int = 4,
    top_k: int = 3,
    max_nodes: int = 400,
    animate: bool = True,
    height: int = 580,
) -> go.Figure:
    """The search tree after an iteration (or during one of its phases), with its growth.

    Nodes sit in one layer per depth; size grows with visits, colour is the mean value for the
    player to move at the root, squares are finished games. The iteration's path is drawn in
    amber and the node it added has an amber ring. The play button animates the growth of the
    final tree's drawn part (its own layout, so nodes keep their places while it grows).

    Args:
        game: The game (for move names and who moves).
        trace: The search.
        view: The iteration on show (``rlviz.mcts.iteration_view``).
        phase: One of ``PHASES``: before back-up the statistics are those of the previous
            iteration.
        max_depth: Deepest layer drawn.
        top_k: Children drawn per node (the most visited).
        max_nodes: Most nodes drawn.
        animate: Add the growth animation (frames, play and pause).
        height: Figure height in pixels.
    """
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}; got {phase!r}")
    t = view.iteration
    layout = tree_layout(trace, [t - 1, t], max_depth=max_depth, top_k=top_k,
                         max_nodes=max_nodes, keep=view.path)
    hover = _hover(game, trace, layout)
    row = layout.moment(t if phase == "backup" else t - 1)
    shown = layout.shown[row].copy()
    new = view.expanded if phase != "select" else NO_NODE
    shown |= layout.nodes == new
    path = view.path if phase != "select" or view.expanded == NO_NODE else view.path[:-1]
    fig = figure(height=height, margin=dict(l=112, r=20, t=64, b=20))
    for d in _traces(trace, layout, hover, row, shown, path, new):
        fig.add_trace(d)

    # Two phase-specific traces, always present (empty when unused) so that the animation's
    # frames can clear them: the playout's dotted line, and text (the result or back-ups).
    slot = {int(n): i for i, n in enumerate(layout.nodes)}
    leaf = int(view.path[-1])
    line_x: list = []
    line_y: list = []
    text_x: list = []
    text_y: list = []
    words: list[str] = []
    if phase == "simulate" and leaf in slot:
        x0, y0 = float(layout.x[slot[leaf]]), float(layout.y[slot[leaf]])
        n_moves = int(view.rollout.size)
        if n_moves:
            line_y = (y0 - np.linspace(0, 0.9, n_moves + 1)).tolist()
            line_x = (x0 + 0.15 * np.r_[0, np.where(np.arange(n_moves) % 2 == 0, 1, -1)]).tolist()
        text_x, text_y = [x0], [y0 - (1.1 if n_moves else 0.3)]
        words = [_result_text(game, trace, view)]
    if phase == "backup":
        for_root = view.leaf_value * (1.0 if (view.path.size - 1) % 2 == 0 else -1.0)
        px, py = _path_xy(layout, view.path)
        text_x, text_y = (px + 0.3).tolist(), (py + 0.12).tolist()
        words = [_signed(for_root)] * px.size
    fig.add_trace(dict(type="scatter", x=line_x, y=line_y, mode="lines", hoverinfo="skip",
                       line=dict(color=PATH, width=2, dash="dot"), showlegend=False,
                       name="playout"))
    fig.add_trace(dict(type="scatter", x=text_x, y=text_y, mode="text", text=words,
                       textposition="middle right" if phase == "backup" else "middle center",
                       textfont=dict(size=13, color=PATH), hoverinfo="skip", showlegend=False,
                       name="phase notes"))

    root_player = game.to_move(trace.root_state)
    depth_max = min(max_depth, int(trace.tree.depth.max()))
    plies = int(game.table.plies[trace.root_state])
    ticks = [f"root · {root_player}"] + [
        f"depth {d} · {'XO'[(plies + d) % 2]}" for d in range(1, depth_max + 1)
    ]
    fig.update_layout(
        xaxis=dict(visible=False, range=_x_range(layout)),
        yaxis=dict(tickvals=-np.arange(depth_max + 1), ticktext=ticks, showgrid=False,
                   zeroline=False, range=[-depth_max - 1.1, 0.6], ticks="",
                   title=dict(text="layer · player to move")),
        coloraxis=dict(colorscale=DIVERGING, cmin=-1, cmax=1, cmid=0,
                       colorbar=dict(title=dict(text=f"mean value for {root_player}",
                                                side="right"), thickness=12, len=0.7)),
        title=dict(x=0.01, text=f"Iteration {t} of {trace.iterations} · {PHASE_LABELS[phase]}",
                   subtitle=dict(text=f"{int(shown.sum())} of "
                                 f"{layout.n_nodes[row] + (new != NO_NODE)} nodes drawn")),
    )
    if animate:
        growth = tree_layout(trace, frame_iterations(trace.iterations), max_depth=max_depth,
                             top_k=top_k, max_nodes=max_nodes, anchors=[trace.iterations])
        _animate(fig, game, trace, growth)
    return fig


def _x_range(layout: TreeLayout) -> list[float]:
    return [float(layout.x.min()) - 0.8, float(layout.x.max()) + 0.8]


def _result_text(game: TicTacToe, trace: SearchTrace, view: IterationView) -> str:
    leaf = int(view.path[-1])
    plies = int(game.table.plies[trace.root_state]) + int(trace.tree.depth[leaf])
    leaf_player = "XO"[plies % 2]
    other = "O" if leaf_player == "X" else "X"
    z = view.leaf_value
    result = "draw" if z == 0 else f"{leaf_player if z > 0 else other} wins"
    moves = view.rollout.size
    how = f"random playout, {moves} move{'s' if moves != 1 else ''}" if moves else "game over"
    return f"{how}: {result}"


def _animate(fig: go.Figure, game: TicTacToe, trace: SearchTrace, growth: TreeLayout) -> None:
    hover = _hover(game, trace, growth)
    moments = [int(t) for t in growth.moments if t > 0]
    frames = []
    for t in moments:
        row = growth.moment(t)
        path = trace.path[t - 1, : trace.path_length[t - 1]]
        data = _traces(trace, growth, hover, row, growth.shown[row], path, NO_NODE)
        data += [dict(type="scatter", x=[], y=[]), dict(type="scatter", x=[], y=[], text=[])]
        title = (f"Growth · after iteration {t} of {trace.iterations} · "
                 f"{int(growth.shown[row].sum())} of {growth.n_nodes[row]} nodes drawn")
        frames.append(dict(data=data, traces=[0, 1, 2, 3, 4, 5], name=str(t),
                           layout=dict(title=dict(text=title),
                                       xaxis=dict(range=_x_range(growth)))))
    fig.frames = frames  # plain dicts: validated once here, not twice
    still = dict(frame=dict(duration=0, redraw=True), mode="immediate",
                 transition=dict(duration=0))
    fig.update_layout(
        margin=dict(b=110),
        updatemenus=[dict(
            type="buttons", direction="left", x=0.0, y=-0.01, xanchor="left", yanchor="top",
            showactive=False, pad=dict(t=0, r=6),
            buttons=[
                dict(label="▶ Play growth", method="animate",
                     args=[None, dict(frame=dict(duration=220, redraw=True), fromcurrent=False,
                                      transition=dict(duration=0), mode="immediate")]),
                dict(label="❚❚ Pause", method="animate", args=[[None], still]),
            ],
        )],
        sliders=[dict(
            active=len(moments) - 1, x=0.0, len=1.0, y=-0.09, yanchor="top", pad=dict(t=0),
            currentvalue=dict(visible=False), font=dict(size=10),
            steps=[dict(label=str(t), method="animate", args=[[str(t)], still])
                   for t in moments],
        )],
    )


def board_figure(
    cells: str,
    *,
    shade: dict[int, float] | None = None,
    notes: dict[int, str] | None = None,
    outline: tuple[int, ...] = (),
    playout: tuple[int, ...] = (),
    first_mark: str = "x",
    title: str | None = None,
    shade_label: str = "visit share",
    height: int = 330,
) -> go.Figure:
    """A tic-tac-toe board with optional shading, notes, outlines and a numbered playout.

    Args:
        cells: Board text (nine of x, o, .).
        shade: Cell -> number in [0, 1] to shade the cell by (sequential scale).
        notes: Cell -> short text shown low in the cell.
        outline: Cells to outline (e.g. the minimax-optimal moves).
        playout: Moves of a random playout from this board, drawn as numbered faded marks.
        first_mark: The mark of the first playout move.
        title: Figure title.
        shade_label: Name of the shaded number, for hover.
        height: Figure height in pixels.
    """
    z = np.full((3, 3), np.nan)
    for cell, v in (shade or {}).items():
        z[cell // 3, cell % 3] = v
    floor = np.where(np.isnan(z), 0.0, np.nan)
    names = np.array(["a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3"]).reshape(3, 3)
    data = [
        dict(type="heatmap", z=floor.tolist(), colorscale=[[0, "#f1f3f5"], [1, "#f1f3f5"]],
             showscale=False, xgap=3, ygap=3, hoverinfo="skip"),
        dict(type="heatmap", z=np.where(np.isnan(z), None, z).tolist(), colorscale=SEQUENTIAL,
             zmin=0, zmax=1, showscale=False, xgap=3, ygap=3, text=names.tolist(),
             hovertemplate=f"%{{text}} · {shade_label} %{{z:.1%}}<extra></extra>"),
    ]
    marks = [(i, ch) for i, ch in enumerate(cells) if ch in "xo"]
    data.append(dict(
        type="scatter", x=[i % 3 for i, _ in marks], y=[i // 3 for i, _ in marks],
        mode="text", text=[f"<b>{ch.upper()}</b>" for _, ch in marks],
        textfont=dict(size=34, color=[color("uct") if ch == "x" else color("puct")
                                      for _, ch in marks]),
        hoverinfo="skip", showlegend=False,
    ))
    if playout:
        marks_played = []
        mark = first_mark
        for k in range(1, len(playout) + 1):
            marks_played.append(f"{mark.upper()}<sub>{k}</sub>")
            mark = "o" if mark == "x" else "x"
        data.append(dict(type="scatter", x=[c % 3 for c in playout],
                         y=[c // 3 for c in playout], mode="text", text=marks_played,
                         textfont=dict(size=26, color=PATH), opacity=0.85, hoverinfo="skip",
                         showlegend=False))
    if notes:
        data.append(dict(type="scatter", x=[c % 3 for c in notes],
                         y=[c // 3 for c in notes], mode="text", text=list(notes.values()),
                         textfont=dict(size=10, color=INK), hoverinfo="skip",
                         showlegend=False))
    shapes = [dict(type="rect", x0=c % 3 - 0.45, x1=c % 3 + 0.45, y0=c // 3 - 0.45,
                   y1=c // 3 + 0.45, line=dict(color=color("minimax"), width=3))
              for c in outline]
    axis = dict(showgrid=False, ticks="", fixedrange=True, zeroline=False, linecolor="white",
                tickvals=[0, 1, 2])
    return go.Figure(data=data, layout=dict(
        height=height, shapes=shapes, plot_bgcolor="white",
        margin=dict(l=24, r=6, t=46 if title else 22, b=6),
        title=dict(text=title) if title else None,
        xaxis=dict(axis, side="top", ticktext=["a", "b", "c"], range=[-0.5, 2.5]),
        yaxis=dict(axis, ticktext=["1", "2", "3"], range=[2.5, -0.5], scaleanchor="x"),
    ))


LABELLED_MOVES = 4
"""Root moves drawn in colour, with a label, in ``root_convergence``; the rest are grey."""


def _spread(y: np.ndarray, gap: float, low: float, high: float) -> np.ndarray:
    """Label heights near ``y`` but at least ``gap`` apart, inside ``[low, high]``."""
    order = np.argsort(y)
    out = np.asarray(y, dtype=np.float64)[order].copy()
    for i in range(1, len(out)):
        out[i] = max(out[i], out[i - 1] + gap)
    out[-1:] = np.minimum(out[-1:], high)
    for i in range(len(out) - 2, -1, -1):
        out[i] = min(out[i], out[i + 1] - gap)
    out = np.maximum(out, low)
    spread = np.empty_like(out)
    spread[order] = out
    return spread


def root_convergence(game: TicTacToe, trace: SearchTrace, solution: Solution, *,
                     iteration: int | None = None, height: int = 440) -> go.Figure:
    """Each root move's share of the visits and its mean value Q as the search runs.

    The ``LABELLED_MOVES`` most visited moves each get a colour and a label at the end of
    their line; the others are thin grey lines. Solid lines are minimax-optimal moves, dashed
    ones are not; the dotted lines in the lower panel are the exact values (blue a win, grey a
    draw, red a loss for the player to move at the root).
    """
    visits, value_sum = trace.root_history()
    # At most ~300 points per line: enough for the eye, light for the browser.
    t = np.unique(np.round(np.linspace(0, trace.iterations, min(trace.iterations, 300) + 1)))
    t = t.astype(np.int64)
    visits, value_sum = visits[t], value_sum[t]
    moves = np.flatnonzero(trace.tree.legal[0])
    exact = solution.move_value[trace.root_state]
    best = exact[moves].max()
    share = visits / np.maximum(t, 1)[:, None]
    q = value_sum / np.maximum(visits, 1)
    ranked = moves[np.argsort(-visits[-1, moves], kind="stable")]
    shown = ranked[:LABELLED_MOVES]
    colours = dict(zip(shown.tolist(), PALETTE, strict=False))
    data = []
    for a in [*ranked[LABELLED_MOVES:].tolist(), *shown.tolist()]:  # coloured lines on top
        v = int(exact[a])
        optimal = v == best
        name = (f"{game.table.move_names[a]} ({_value_word(v, None)}"
                f"{', optimal' if optimal else ''})")
        lead = a in colours
        style = dict(color=colours.get(a, "#ced4da"), width=2.4 if lead else 1.0,
                     dash="solid" if optimal else "dash")
        group = name if lead else "others"
        seen = np.flatnonzero(visits[:, a] > 0)
        data.append(dict(type="scatter", x=t[1:].tolist(), y=np.round(share[1:, a], 4).tolist(),
                         mode="lines", line=style, name=name if lead else "other moves",
                         legendgroup=group, legendrank=int(np.flatnonzero(ranked == a)[0]),
                         showlegend=bool(lead or a == ranked[LABELLED_MOVES]),
                         hovertemplate=f"{name}<br>iteration %{{x}}: %{{y:.0%}} of visits"
                                       "<extra></extra>"))
        data.append(dict(type="scatter", x=t[seen].tolist(), y=np.round(q[seen, a], 4).tolist(),
                         mode="lines", line=style, name=name, legendgroup=group,
                         showlegend=False, xaxis="x", yaxis="y2",
                         hovertemplate=f"{name}<br>iteration %{{x}}: Q %{{y:+.2f}}"
                                       "<extra></extra>"))
    last = share[-1, shown]
    data.append(dict(type="scatter", x=[trace.iterations] * shown.size,
                     y=np.round(_spread(last, 0.075, 0.0, 1.0), 4).tolist(), mode="text",
                     textposition="middle right",
                     text=[game.table.move_names[a] for a in shown.tolist()],
                     textfont=dict(size=11, color=[colours[a] for a in shown.tolist()]),
                     hoverinfo="skip", showlegend=False, cliponaxis=False))
    shapes = [dict(type="line", xref="x domain", x0=0, x1=1, yref="y2", y0=v, y1=v,
                   line=dict(color=VALUE_COLORS[v], dash="dot", width=1.2))
              for v in sorted({int(x) for x in exact[moves]})]
    if iteration is not None:
        shapes += [dict(type="line", x0=iteration, x1=iteration, xref="x", yref=f"{y} domain",
                        y0=0, y1=1, line=dict(color=PATH, width=1.5)) for y in ("y", "y2")]
    fig = go.Figure(data=data, layout=dict(
        height=height, margin=dict(l=70, r=50, t=40, b=56), shapes=shapes,
        xaxis=dict(anchor="y2", title=dict(text="iteration"),
                   range=[0, trace.iterations * 1.04]),
        yaxis=dict(domain=[0.55, 1.0], tickformat=".0%", range=[0, 1.02],
                   title=dict(text="visit share")),
        yaxis2=dict(domain=[0.0, 0.45], range=[-1.08, 1.08],
                    title=dict(text="Q (dotted: exact)")),
        legend=dict(y=1.02, title=dict(text="most visited root moves: ")),
    ))
    return fig


def root_table(game: TicTacToe, trace: SearchTrace, solution: Solution,
               t: int | None = None) -> pd.DataFrame:
    """One row per root move: visits, share, Q and prior beside the exact minimax value.

    The move search plays is starred; minimax-optimal moves are ticked.
    """
    summary = trace.summary(t)
    s = trace.root_state
    total = max(int(summary.visits.sum()), 1)
    rows = []
    for a, n, q, p in zip(summary.moves, summary.visits, summary.q, summary.prior, strict=True):
        nxt = int(game.table.next_state[s, a])
        exact = int(solution.move_value[s, a])
        plies = solution.plies_to_end(nxt, int(game.table.plies[nxt]))
        word = _value_word(exact, None if plies is None else plies + 1)
        rows.append({
            "move": game.table.move_names[a] + (" ★" if int(a) == summary.chosen else ""),
            "visits": int(n),
            "share": n / total,
            "Q": float(q) + 0.0,
            "prior": float(p),
            "exact": f"{word} ✓" if exact == solution.value[s] else word,
        })
    return pd.DataFrame(rows)


def selection_table(game: TicTacToe, step: SelectionStep) -> pd.DataFrame:
    """The scores behind one selection: each move's N, Q, exploration bonus and total."""
    rows = []
    for a, n, q, b, s in zip(step.moves, step.visits, step.q, step.bonus, step.score,
                             strict=True):
        bonus = "∞ (untried)" if np.isinf(b) else f"{b:.3f}"
        rows.append({
            "move": game.table.move_names[a],
            "N(s,a)": int(n),
            "Q(s,a)": f"{q + 0.0:+.3f}" if n else "–",
            "bonus": bonus,
            "score": _score_text(s),
            "taken": "◀" if int(a) == step.chosen else "",
        })
    return pd.DataFrame(rows)


def _player_at(game: TicTacToe, trace: SearchTrace, node: int) -> str:
    plies = int(game.table.plies[trace.root_state]) + int(trace.tree.depth[node])
    return "XO"[plies % 2]


def path_table(game: TicTacToe, trace: SearchTrace, view: IterationView) -> pd.DataFrame:
    """One row per step of the selection: the move taken, its score, and the best other."""
    rows = []
    for i, step in enumerate(view.steps, start=1):
        k = int(np.flatnonzero(step.moves == step.chosen)[0])
        others = np.flatnonzero(step.moves != step.chosen)
        alt = others[np.argmax(step.score[others])] if others.size else None
        rows.append({
            "step": i,
            "mover": _player_at(game, trace, step.node),
            "took": game.table.move_names[step.chosen],
            "N(s,a)": int(step.visits[k]),
            "Q(s,a)": f"{step.q[k] + 0.0:+.3f}" if step.visits[k] else "–",
            "bonus": "∞ (untried)" if np.isinf(step.bonus[k]) else f"{step.bonus[k]:.3f}",
            "score": _score_text(step.score[k]),
            "best other": "–" if alt is None else game.table.move_names[step.moves[alt]],
            "its score": "–" if alt is None else _score_text(step.score[alt]) + (
                " (tie)" if step.score[alt] == step.score[k] else ""),
        })
    return pd.DataFrame(rows)


def _signed(v: float) -> str:
    """A game result as text: +1, −1 or 0."""
    return "0" if v == 0 else f"{v:+.0f}".replace("-", "−")


def _score_text(x: float) -> str:
    return "∞" if np.isinf(x) else f"{x + 0.0:+.3f}"


def phase_story(game: TicTacToe, trace: SearchTrace, view: IterationView, phase: str) -> str:
    """A few sentences (markdown) on what one phase of an iteration did."""
    names = game.table.move_names
    tree = trace.tree
    moves = [names[int(tree.move[n])] for n in view.path[1:]]
    rule = "UCT" if trace.rule == "uct" else "PUCT"
    leaf = int(view.path[-1])
    leaf_player = _player_at(game, trace, leaf)
    if phase == "select":
        walk = " → ".join(moves) if moves else "(none)"
        return (f"**Select.** From the root, take the move with the highest {rule} score at "
                f"each node until a move has no node yet: **{walk}**. The table lists, for each "
                "step, the move taken, its score and the best alternative; ties are broken at "
                "random (from the seed).")
    if phase == "expand":
        if view.expanded == NO_NODE:
            return ("**Expand.** The path ended in a finished game already in the tree, so "
                    "nothing is added: its result is known without a playout.")
        return (f"**Expand.** Add the node for **{moves[-1]}** (node #{view.expanded}, "
                f"{leaf_player} to move). The tree now has {view.after.n_nodes} nodes: one "
                "more per iteration, except when the path ends in a finished game.")
    if phase == "simulate":
        z = view.leaf_value
        text = _result_text(game, trace, view)
        if view.rollout.size:
            mark = leaf_player
            seq = []
            for m in view.rollout.tolist():
                seq.append(f"{mark} {names[m]}")
                mark = "O" if mark == "X" else "X"
            how = f"Play random moves to the end: {', '.join(seq)} ({text})."
        else:
            how = f"The new node is a finished game ({text}), so no playout is needed."
        return (f"**Simulate.** {how} For {leaf_player}, to move at the leaf, the result is "
                f"**z = {_signed(z)}**.")
    root_player = game.to_move(trace.root_state)
    for_root = view.leaf_value * (1 if (view.path.size - 1) % 2 == 0 else -1)
    values = ", ".join(_signed(v) for v in view.backed_up)
    return (f"**Back up.** Every node on the path gets N + 1 and W + its own player's result: "
            f"from the root down, {values} (the sign flips at each level because the players "
            f"alternate). Seen by {root_player}, to move at the root, it is "
            f"**{_signed(for_root)}** everywhere on the path: the amber labels.")


def root_board(game: TicTacToe, trace: SearchTrace, solution: Solution, *,
               height: int = 300) -> go.Figure:
    """The root position, each empty cell shaded by its share of the root visits.

    Cells show the move's N and Q; the minimax-optimal moves are framed in green.
    """
    summary = trace.summary()
    share = summary.visits / max(int(summary.visits.sum()), 1)
    moves = summary.moves.tolist()
    return board_figure(
        game.text(trace.root_state),
        shade=dict(zip(moves, share.tolist(), strict=True)),
        notes={a: f"N {n}<br>Q {q + 0.0:+.2f}"
               for a, n, q in zip(moves, summary.visits.tolist(), summary.q.tolist(),
                                  strict=True)},
        outline=solution.optimal_moves(trace.root_state), height=height,
    )
