import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import streamlit as st

from rlviz import mcts, ui
from rlviz.figures import mcts as figs
from rlviz.games import PRESETS, TICTACTOE, solve
from rlviz.games import tictactoe as ttt

SIMULATION_CAP = 5000
RULES = {"uct": "UCT", "puct": "PUCT (AlphaZero)"}
PRIORS = {"uniform": "Uniform", "solver": "Solver, softened (a good network)",
          "misleading": "Misleading (worst moves first)"}
GAME, SOLUTION = TICTACTOE, TICTACTOE.solution


@ui.cached(max_entries=24)
def run(board: str, simulations: int, c: float, rule: str, prior: str, seed: int):
    return mcts.search(GAME, GAME.position(board), simulations=simulations, c=c, rule=rule,
                       prior=prior, seed=seed)


@ui.cached_figures()
def search_charts(search: tuple):
    trace = run(*search)
    return figs.root_board(GAME, trace, SOLUTION)


# The trace rides along unhashed: ``search`` names it.
@ui.cached(max_entries=32, show_spinner=False, copy=True)
def root_table(search: tuple, _trace):
    return figs.root_table(GAME, _trace, SOLUTION)


@ui.cached(max_entries=64, show_spinner=False)
def iteration_view(search: tuple, iteration: int, _trace) -> mcts.IterationView:
    return mcts.iteration_view(_trace, iteration)


@ui.cached_figures()
def iteration_charts(search: tuple, iteration: int, phase: str, depth: int, top_k: int):
    trace = run(*search)
    view = mcts.iteration_view(trace, iteration)
    leaf = int(view.path[-1])
    playout = tuple(view.rollout.tolist()) if phase in ("simulate", "backup") else ()
    leaf_fig = figs.board_figure(
        GAME.text(int(trace.tree.state[leaf])), playout=playout,
        first_mark=GAME.to_move(int(trace.tree.state[leaf])).lower(),
        title="Leaf position" + (" and its random playout" if playout else ""), height=260)
    return (figs.tree_figure(GAME, trace, view, phase=phase, max_depth=depth, top_k=top_k),
            leaf_fig, figs.root_convergence(GAME, trace, SOLUTION, iteration=iteration))


with ui.page("mcts", intro=(
    "Monte Carlo tree search grows an asymmetric tree: each iteration walks down by a "
    "selection rule, adds one node, plays a random game from it and backs the result up. "
    "Watch where the simulations go, and whether the root's visits settle on the moves an "
    "exact minimax solver calls optimal."
)) as page:
    p = page.controls([
        ui.IntSlider(name="simulations", label="Simulations", min=10, max=SIMULATION_CAP,
                     value=400, step=10, help="Iterations of search (one new node each).",
                     scales_work=True),
        ui.FloatSlider(name="c", label="Exploration constant c", min=0.0, max=4.0, value=1.4,
                       step=0.05, help="0 is greedy on Q; larger spreads visits wider."),
        ui.Choice(name="rule", label="Selection rule", options=list(RULES), value="uct",
                  labels=RULES, widget="segmented"),
    ])
    q = page.controls([
        ui.Choice(name="prior", label="Prior P(s, a) for PUCT", options=list(PRIORS),
                  value="uniform", labels=PRIORS, disabled=p.rule != "puct",
                  help="UCT uses no prior."),
        ui.Seed(),
        ui.Section("Drawing", [
            ui.IntSlider(name="depth", label="Deepest layer drawn", min=1, max=9, value=4),
            ui.IntSlider(name="top_k", label="Children drawn per node (most visited)", min=1,
                         max=9, value=3),
        ]),
    ])

    board_col, root_col, table_col = st.columns([1.1, 1, 1.7], gap="medium")
    with board_col:
        st.subheader("Position", anchor=False)
    b = page.controls([ui.Text(name="board", label="Board, row by row (x, o or .)",
                               value=PRESETS["empty"].board, max_chars=30, area=False)],
                      container=board_col)

    def set_board(text: str) -> None:
        st.session_state[page.key("board")] = text

    with board_col:
        cells = ttt.readable(b.board) or "?" * 9
        for r in range(3):
            for col, i in zip(st.columns(3, gap="small"), range(3 * r, 3 * r + 3), strict=True):
                col.button(cells[i].upper().replace(".", "·"), key=page.key(f"cell{i}"),
                           on_click=set_board, args=(ttt.click(b.board, i),), width="stretch",
                           help=f"{ttt.MOVE_NAMES[i]}: place the next mark, or clear it")
        st.caption("Click a cell to place the next mark (X moves first) or clear it. Presets:")
        for preset in PRESETS.values():
            st.button(preset.label, key=page.key(f"preset.{preset.name}"), on_click=set_board,
                      args=(preset.board,), width="stretch", help=preset.lesson)

    st.subheader("The search tree", anchor=False)
    it_key, end_key = page.key("iteration"), page.key("_end")
    if it_key in st.session_state:  # keep the scrubber's place when its range changes,
        now = st.session_state[it_key]  # and stay at the end if it was there
        end = now == st.session_state.get(end_key)
        st.session_state[it_key] = p.simulations if end else min(now, p.simulations)
    st.session_state[end_key] = p.simulations
    v = page.controls([ui.IntSlider(name="iteration", label="Iteration to take apart", min=1,
                                    max=p.simulations, value=p.simulations)],
                      container=st.container())
    ph = page.controls([ui.Choice(name="phase", label="Phase", options=list(figs.PHASES),
                                  value="backup", labels=figs.PHASE_LABELS, widget="segmented")],
                       container=st.container())
    prior = q.prior if p.rule == "puct" else "uniform"
    search = (b.board, p.simulations, p.c, p.rule, prior, q.seed)
    trace = run(*search)
    root, summary = trace.root_state, trace.summary()
    optimal = SOLUTION.optimal_moves(root)
    with root_col:
        st.subheader(f"Root · {GAME.to_move(root)} to move", anchor=False)
        board_fig = search_charts(search)
        ui.chart(board_fig, key="mcts.fig.board")
        st.caption("Shade: share of root visits. Green frame: minimax-optimal move.")
    with table_col:
        st.subheader("Search vs exact values", anchor=False)
        table = root_table(search, trace)
        st.dataframe(table, hide_index=True, column_order=[
            c for c in table.columns if c != "prior" or p.rule == "puct"], column_config={
            "move": st.column_config.TextColumn("move", width=56),
            "visits": st.column_config.NumberColumn("N", width=56, help="Root visits"),
            "share": st.column_config.ProgressColumn("share", format="percent", min_value=0,
                                                     max_value=1, width=90),
            "Q": st.column_config.NumberColumn("Q", format="%+.2f", width=60,
                                               help="Mean playout value"),
            "prior": st.column_config.NumberColumn("P", format="%.2f", width=50,
                                                   help="Prior probability (PUCT)"),
            "exact": st.column_config.TextColumn("exact", help="Minimax value, ✓ = optimal"),
        })
        st.caption("★ the move search plays (most visits). Exact: the move's minimax value "
                   "with best play, ✓ when it is optimal.")

    view = iteration_view(search, v.iteration, trace)
    tree_fig, leaf_fig, conv_fig = iteration_charts(search, v.iteration, ph.phase, q.depth,
                                                    q.top_k)
    ui.chart(tree_fig, key="mcts.fig.tree")
    story, detail = st.columns([3, 2], gap="large")
    with story:
        st.markdown(figs.phase_story(GAME, trace, view, ph.phase))
        if ph.phase == "select" and view.steps:
            st.dataframe(figs.path_table(GAME, trace, view), hide_index=True)
            with st.expander("Every move's score at the root"):
                st.dataframe(figs.selection_table(GAME, view.steps[0]), hide_index=True)
    with detail:
        ui.chart(leaf_fig, key="mcts.fig.leaf")

    st.subheader("Do the root's visits settle on the best moves?", anchor=False)
    ui.chart(conv_fig, key="mcts.fig.convergence")

    page.read_it(
        "**The tree.** Each dot is a position; the root is on top and each layer down is one "
        "more move. A dot's size grows with its visits N and its colour is its mean value for "
        "the player to move at the root (blue good, red bad, white even), so an asymmetric "
        "tree shows as a few big dots on the lines search believes in. Squares are finished "
        "games. The amber line is the chosen iteration's path; step through its four phases "
        "with **Phase**, or press **▶ Play growth** to watch the tree grow.\n\n"
        "**Root moves.** The move search plays is the most visited one. Q is a move's average "
        "playout result; it is *not* the minimax value, because random playouts are weak "
        "players, but with more simulations the visits concentrate on the moves the exact "
        "solver marks optimal (green frames, solid lines)."
    )
    page.try_this([
        "Pick **Must block** and set simulations to 10. Predict: does UCT find b3? Raise the "
        "simulations until it does, and watch b3's share climb in the lower chart.",
        "Set c = 0, then c = 4 on the empty board. Predict which gives a deep, narrow tree and "
        "which a wide, shallow one; compare the drawn trees and the spread of root visits.",
        "Switch to PUCT on **Stop the fork** with the misleading prior, then the solver prior. "
        "How many simulations does each need before the chosen move is an edge?",
    ])
    chosen = ttt.MOVE_NAMES[summary.chosen]
    page.known_answer([
        ui.Check("move search plays (most visits) is minimax-optimal", value=chosen,
                 reference=" / ".join(ttt.MOVE_NAMES[a] for a in optimal),
                 passed=summary.chosen in optimal, source="exact negamax over all positions"),
        ui.Check("root visits equal the iterations", value=int(trace.tree.visits[0]),
                 reference=trace.iterations, tol=0, fmt=".0f", source="one visit per iteration"),
        ui.Check("tic-tac-toe positions reachable from the empty board",
                 value=GAME.table.n_states, reference=5478, tol=0, fmt=".0f",
                 source="the game's known count"),
        ui.Check("distinct games of tic-tac-toe", value=GAME.games["games"],
                 reference=255_168, tol=0, fmt=".0f", source="the game's known count"),
        ui.Check("exact value of the empty board (0 = draw)", value=int(SOLUTION.value[0]),
                 reference=0, tol=0, fmt=".0f", source="tic-tac-toe is a draw"),
    ])
    page.equations([
        ("UCT selection (Kocsis & Szepesvári 2006): untried moves first",
         r"a^* = \arg\max_a \; Q(s,a) + c\sqrt{\frac{\ln N(s)}{N(s,a)}}"),
        ("PUCT selection (Silver et al. 2017); untried moves count as Q = 0",
         r"a^* = \arg\max_a \; Q(s,a) + c\,P(s,a)\,\frac{\sqrt{N(s)}}{1 + N(s,a)}"),
        ("Values are for the player to move, so a move's value is minus its child's",
         r"Q(s,a) = -\frac{W(s')}{N(s')}, \qquad s' = \text{child of } s \text{ by } a"),
        ("Back-up of the playout result z (for the leaf's mover), k levels above the leaf",
         r"N \leftarrow N + 1, \qquad W \leftarrow W + (-1)^k z"),
        ("Exact negamax value, memoised over the 5,478 positions",
         r"V^*(s) = \max_a -V^*(s'), \qquad V^*(\text{finished}) \in \{-1, 0\}"),
    ])
    page.source(mcts.search, mcts.tree_layout, solve)
    page.export(
        figures={"tree": tree_fig, "convergence": conv_fig, "root-board": board_fig},
        data=lambda: {"root_moves": table,
              "iterations": {"path": trace.path, "path_length": trace.path_length,
                             "expanded": trace.expanded, "leaf_value": trace.leaf_value,
                             "rollout": trace.rollout, "backed_up": trace.backed_up},
              "tree": {name: getattr(trace.tree, name) for name in (
                  "parent", "move", "depth", "visits", "value_sum", "prior", "created")}},
    )
