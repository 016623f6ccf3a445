"""MCTS: the expansion rule, known answers, value signs, history, determinism, reference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rlviz import mcts
from rlviz.games import PRESETS, TICTACTOE
from rlviz.games.tictactoe import MOVE_NAMES
from rlviz.mcts import NO_NODE, Tree

TABLE = TICTACTOE.table
SOLUTION = TICTACTOE.solution


def run(board: str = ".........", **kw) -> mcts.SearchTrace:
    kw.setdefault("simulations", 300)
    return mcts.search(TICTACTOE, TICTACTOE.position(board), **kw)


# ----------------------------------------------------------------- a readable reference
class Node:
    """One node of the reference search, as an object."""

    def __init__(self, state: int, parent: Node | None, move: int, prior: float):
        self.state, self.parent, self.move, self.prior = state, parent, move, prior
        self.moves = list(np.flatnonzero(TABLE.legal[state]))
        self.children: dict[int, Node] = {}
        self.visits, self.value_sum = 0, 0.0


def reference_search(board: str, *, simulations: int, c: float, rule: str, priors: np.ndarray,
                     seed: int) -> list[Node]:
    """MCTS written the textbook way: node objects, one function per phase.

    It draws the same uniforms as ``mcts.search`` (one row per iteration: tie-breaks by depth,
    then playout moves), so the two must build the same tree draw for draw.
    """
    horizon = TABLE.max_plies
    uniforms = np.random.default_rng(seed).random((simulations, 2 * horizon))
    root = Node(TICTACTOE.position(board), None, -1, 1.0)
    nodes = [root]

    def score(node: Node, move: int) -> float:
        child = node.children.get(move)
        p = priors[node.state, move]
        if rule == "uct":
            if child is None:
                return math.inf
            log_n = math.log(node.visits) if node.visits > 0 else 0.0
            return -child.value_sum / child.visits + c * math.sqrt(log_n / child.visits)
        if child is None:
            return c * p * math.sqrt(node.visits)
        q = -child.value_sum / child.visits
        return q + c * p * math.sqrt(node.visits) / (1 + child.visits)

    for t in range(simulations):
        u = uniforms[t]
        node, path, depth = root, [root], 0
        while node.moves:  # select
            scores = [score(node, m) for m in node.moves]
            best = max(scores)
            ties = [m for m, sc in zip(node.moves, scores, strict=True) if sc == best]
            move = ties[int(u[depth] * len(ties))] if len(ties) > 1 else ties[0]
            depth += 1
            if move not in node.children:  # expand
                nxt = int(TABLE.next_state[node.state, move])
                child = Node(nxt, node, move, float(priors[node.state, move]))
                node.children[move] = child
                nodes.append(child)
                path.append(child)
                break
            node = node.children[move]
            path.append(node)
        leaf = path[-1]
        state, sign, j = leaf.state, 1, horizon  # simulate
        while TABLE.legal[state].any():
            options = np.flatnonzero(TABLE.legal[state])
            state = int(TABLE.next_state[state, options[int(u[j] * len(options))]])
            sign, j = -sign, j + 1
        value = float(sign * TABLE.outcome[state])
        for n in reversed(path):  # back up
            n.visits += 1
            n.value_sum += value
            value = -value
    return nodes


@pytest.mark.parametrize(
    ("board", "rule", "prior", "c"),
    [
        (".........", "uct", "uniform", 1.4),
        ("xo..x...o", "uct", "uniform", 0.5),
        (".........", "puct", "uniform", 1.4),
        ("x...o...x", "puct", "solver", 2.0),
        ("xx.oo....", "puct", "misleading", 1.0),
    ],
)
def test_search_equals_the_object_reference_draw_for_draw(board, rule, prior, c):
    trace = run(board, simulations=400, rule=rule, prior=prior, c=c, seed=7)
    priors = mcts.prior_table(TABLE, SOLUTION, prior if rule == "puct" else "uniform")
    nodes = reference_search(board, simulations=400, c=c, rule=rule, priors=priors, seed=7)
    tree = trace.tree
    assert tree.n_nodes == len(nodes)
    index = {id(n): i for i, n in enumerate(nodes)}
    np.testing.assert_array_equal(tree.visits, [n.visits for n in nodes])
    np.testing.assert_array_equal(tree.value_sum, [n.value_sum for n in nodes])
    np.testing.assert_array_equal(tree.state, [n.state for n in nodes])
    np.testing.assert_array_equal(tree.move, [n.move for n in nodes])
    np.testing.assert_array_equal(
        tree.parent, [Tree.NO_PARENT if n.parent is None else index[id(n.parent)] for n in nodes]
    )
    np.testing.assert_allclose(tree.prior, [n.prior for n in nodes])


# ----------------------------------------------------------------- the expansion rule
@pytest.mark.parametrize("board", [p.board for p in PRESETS.values()])
@pytest.mark.parametrize("rule", ["uct", "puct"])
def test_nodes_and_root_visits_follow_the_expansion_rule(board, rule):
    trace = run(board, simulations=250, rule=rule, seed=3)
    tree = trace.tree
    expansions = int((trace.expanded != NO_NODE).sum())
    assert tree.visits[Tree.ROOT_INDEX] == 250
    assert tree.n_nodes == 1 + expansions
    # An iteration adds no node only when its path ends in a finished game in the tree.
    leaves = trace.path[np.arange(250), trace.path_length - 1]
    assert tree.terminal[leaves[trace.expanded == NO_NODE]].all()
    np.testing.assert_array_equal(trace.expanded[trace.expanded != NO_NODE],
                                  np.arange(1, tree.n_nodes))
    # Each node was added by the iteration recorded as its creator.
    np.testing.assert_array_equal(tree.created[1:],
                                  np.flatnonzero(trace.expanded != NO_NODE) + 1)


def test_visits_are_one_more_than_the_childrens_below_the_root():
    tree = run(simulations=800, seed=5).tree
    kids = np.where(tree.children >= 0, tree.visits[np.maximum(tree.children, 0)], 0).sum(axis=1)
    inner = ~tree.terminal
    inner[Tree.ROOT_INDEX] = False
    np.testing.assert_array_equal(tree.visits[inner], kids[inner] + 1)
    assert tree.visits[Tree.ROOT_INDEX] == kids[Tree.ROOT_INDEX]
    assert (tree.children[tree.terminal] == Tree.UNVISITED).all()


def test_uct_tries_every_root_move_before_repeating_one():
    trace = run(simulations=9, seed=11)
    first_moves = trace.tree.move[trace.path[:, 1]]
    assert sorted(first_moves.tolist()) == list(range(9))
    assert trace.tree.n_nodes == 10


def test_tree_structure_is_consistent():
    tree = run(simulations=600, seed=2).tree
    kids = tree.children
    parent_of = np.repeat(np.arange(tree.n_nodes), kids.shape[1]).reshape(kids.shape)
    has = kids >= 0
    np.testing.assert_array_equal(tree.parent[kids[has]], parent_of[has])
    np.testing.assert_array_equal(tree.depth[1:], tree.depth[tree.parent[1:]] + 1)
    np.testing.assert_array_equal(tree.state[1:],
                                  TABLE.next_state[tree.state[tree.parent[1:]], tree.move[1:]])
    assert (tree.parent[1:] < np.arange(1, tree.n_nodes)).all()
    np.testing.assert_allclose(tree.prior[1:],
                               tree.children_prior[tree.parent[1:], tree.move[1:]])


def test_a_position_with_one_move_left_is_searched_by_hand():
    # X to move; the only empty cell, a3, completes X's left column.
    trace = run("xoxxoo.xo", simulations=3)
    tree = trace.tree
    # Iteration 1 adds the finished game (no playout); 2 and 3 walk into it again.
    assert tree.n_nodes == 2 and tree.terminal[1] and tree.move[1] == 6
    assert trace.expanded.tolist() == [1, NO_NODE, NO_NODE]
    assert trace.leaf_value.tolist() == [-1.0, -1.0, -1.0]  # O, to move there, has lost
    assert (trace.rollout == -1).all()
    assert tree.visits.tolist() == [3, 3]
    assert tree.value_sum.tolist() == [3.0, -3.0]
    assert trace.summary().q.tolist() == [1.0]


# ----------------------------------------------------------------- known answers
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("rule", ["uct", "puct"])
def test_win_in_one_is_found(seed, rule):
    trace = run(PRESETS["win_in_one"].board, simulations=200, rule=rule, seed=seed)
    assert trace.summary().chosen == MOVE_NAMES.index("c1")


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("rule", ["uct", "puct"])
def test_forced_block_is_found(seed, rule):
    trace = run(PRESETS["must_block"].board, simulations=300, rule=rule, seed=seed)
    assert trace.summary().chosen == MOVE_NAMES.index("b3")


@pytest.mark.parametrize("preset", list(PRESETS))
@pytest.mark.parametrize(("rule", "prior"), [("uct", "uniform"), ("puct", "uniform"),
                                             ("puct", "solver")])
def test_with_enough_simulations_the_choice_is_minimax_optimal(preset, rule, prior):
    board = PRESETS[preset].board
    optimal = SOLUTION.optimal_moves(TICTACTOE.position(board))
    for seed in range(3):
        trace = run(board, simulations=3000, rule=rule, prior=prior, seed=seed)
        assert trace.summary().chosen in optimal, (preset, seed)


def test_a_misleading_prior_with_little_exploration_picks_a_losing_move():
    board = PRESETS["must_block"].board
    optimal = SOLUTION.optimal_moves(TICTACTOE.position(board))
    misled = run(board, simulations=30, rule="puct", prior="misleading", c=4.0, seed=0)
    assert misled.summary().chosen not in optimal
    helped = run(board, simulations=30, rule="puct", prior="solver", c=4.0, seed=0)
    assert helped.summary().chosen in optimal


def test_root_q_approaches_the_exact_values():
    board = PRESETS["win_in_one"].board
    summary = run(board, simulations=2000, seed=0).summary()
    win = summary.moves.tolist().index(2)
    assert summary.q[win] == 1.0  # every visit of c1 ends in X's win at once


# ----------------------------------------------------------------- value signs
def test_backed_up_values_flip_sign_at_every_level():
    trace = run(simulations=500, seed=4)
    for t in range(trace.iterations):
        n = trace.path_length[t]
        vals = trace.backed_up[t, :n]
        assert vals[-1] == trace.leaf_value[t]
        np.testing.assert_array_equal(vals[:-1], -vals[1:])
        assert (trace.backed_up[t, n:] == 0).all()


def test_finished_games_are_worth_minus_one_to_the_player_to_move():
    tree = run(PRESETS["win_in_one"].board, simulations=300, seed=0).tree
    won = tree.terminal & (TABLE.outcome[tree.state] == -1)
    assert won.any()
    np.testing.assert_array_equal(tree.value_sum[won], -tree.visits[won])


def test_value_sums_add_up_along_the_tree_with_alternating_signs():
    trace = run(simulations=700, seed=8)
    tree = trace.tree
    has = tree.children >= 0
    kid_sum = np.where(has, tree.value_sum[np.maximum(tree.children, 0)], 0.0).sum(axis=1)
    # The root's visits all pass to a child, whose values are for the other player.
    assert tree.value_sum[Tree.ROOT_INDEX] == -kid_sum[Tree.ROOT_INDEX]
    # A node below the root also holds its own first result (its playout).
    first = np.zeros(tree.n_nodes)
    added = trace.expanded != NO_NODE
    first[trace.expanded[added]] = trace.leaf_value[added]
    inner = ~tree.terminal
    inner[Tree.ROOT_INDEX] = False
    np.testing.assert_array_equal(tree.value_sum[inner], first[inner] - kid_sum[inner])


def test_value_for_the_root_player_is_constant_along_each_backed_up_path():
    trace = run(simulations=300, seed=9)
    depth = np.arange(trace.path.shape[1])
    for t in range(trace.iterations):
        n = trace.path_length[t]
        for_root = trace.backed_up[t, :n] * np.where(depth[:n] % 2 == 0, 1, -1)
        assert (for_root == for_root[0]).all()


def test_leaf_values_are_the_playout_results():
    trace = run(simulations=200, seed=12)
    tree = trace.tree
    for t in range(trace.iterations):
        leaf = trace.path[t, trace.path_length[t] - 1]
        state, sign = int(tree.state[leaf]), 1
        for move in trace.rollout[t][trace.rollout[t] >= 0]:
            state = int(TABLE.next_state[state, move])
            assert state >= 0
            sign = -sign
        assert TABLE.terminal[state]
        assert trace.leaf_value[t] == sign * TABLE.outcome[state]


# ----------------------------------------------------------------- history and determinism
@pytest.mark.parametrize("rule", ["uct", "puct"])
def test_the_recorded_history_reproduces_the_final_tree(rule):
    trace = run(simulations=900, rule=rule, seed=1)
    rebuilt = trace.snapshot(trace.iterations)
    for name in ("parent", "move", "depth", "state", "visits", "value_sum", "prior",
                 "children", "created"):
        np.testing.assert_array_equal(getattr(rebuilt, name), getattr(trace.tree, name), name)


def test_snapshots_grow_one_iteration_at_a_time():
    trace = run(simulations=120, seed=6)
    for t in (0, 1, 2, 50, 119):
        before, after = trace.snapshot(t), trace.snapshot(t + 1)
        assert before.visits[Tree.ROOT_INDEX] == t
        assert after.n_nodes - before.n_nodes == int(trace.expanded[t] != NO_NODE)
        delta = after.visits.copy()
        delta[: before.n_nodes] -= before.visits
        on_path = np.zeros(after.n_nodes, dtype=int)
        on_path[trace.path[t, : trace.path_length[t]]] = 1
        np.testing.assert_array_equal(delta, on_path)
        assert (before.children < before.n_nodes).all()
    assert trace.snapshot(0).n_nodes == 1
    with pytest.raises(ValueError, match="iteration"):
        trace.snapshot(121)


def test_root_history_matches_snapshots():
    trace = run(simulations=200, seed=2)
    visits, value = trace.root_history()
    for t in (1, 17, 200):
        summary = trace.summary(t)
        np.testing.assert_array_equal(visits[t, summary.moves], summary.visits)
        shown = summary.visits > 0
        np.testing.assert_allclose(value[t, summary.moves][shown] / summary.visits[shown],
                                   summary.q[shown])


def test_node_history_matches_snapshots():
    trace = run(simulations=300, seed=3)
    nodes = np.array([0, 1, 5, 40, trace.tree.n_nodes - 1])
    frames = np.array([0, 10, 150, 300])
    visits, value = trace.node_history(nodes, frames)
    for f, t in enumerate(frames):
        snap = trace.snapshot(int(t))
        exists = nodes < snap.n_nodes
        np.testing.assert_array_equal(visits[f][exists], snap.visits[nodes[exists]])
        np.testing.assert_array_equal(value[f][exists], snap.value_sum[nodes[exists]])
        assert (visits[f][~exists] == 0).all()


def test_same_seed_same_trace_and_different_seed_different_trace():
    a, b = run(simulations=300, seed=21), run(simulations=300, seed=21)
    for name in ("path", "expanded", "leaf_value", "rollout", "backed_up"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    np.testing.assert_array_equal(a.tree.visits, b.tree.visits)
    c = run(simulations=300, seed=22)
    assert not np.array_equal(a.rollout, c.rollout)


def test_search_does_not_mutate_the_prior_table():
    priors = mcts.prior_table(TABLE, SOLUTION, "solver")
    copy = priors.copy()
    run(simulations=50, rule="puct", prior=priors)
    np.testing.assert_array_equal(priors, copy)


# ----------------------------------------------------------------- priors and scores
@pytest.mark.parametrize("kind", mcts.PRIORS)
def test_prior_tables_are_distributions_over_legal_moves(kind):
    p = mcts.prior_table(TABLE, SOLUTION, kind)
    np.testing.assert_allclose(p.sum(axis=1)[~TABLE.terminal], 1.0)
    assert (p[~TABLE.legal] == 0).all() and (p[TABLE.terminal] == 0).all()


def test_solver_prior_favours_optimal_moves_and_misleading_the_worst():
    s = TICTACTOE.position(PRESETS["must_block"].board)
    good = mcts.prior_table(TABLE, SOLUTION, "solver")[s]
    bad = mcts.prior_table(TABLE, SOLUTION, "misleading")[s]
    assert np.argmax(good) == 7 and good[7] > 0.5
    assert bad[7] == bad[TABLE.legal[s]].min()
    # softmax of v / tau with tau = 0.5: exp(0) vs four moves of exp(-2)
    np.testing.assert_allclose(good[7], 1 / (1 + 4 * math.exp(-2)))


def test_selection_scores_reproduce_every_choice_of_the_search():
    for rule, prior in (("uct", "uniform"), ("puct", "solver")):
        trace = run(simulations=150, rule=rule, prior=prior, seed=13)
        for t in range(1, trace.iterations + 1):
            view = mcts.iteration_view(trace, t)
            for step in view.steps:
                best = step.score.max()
                taken = step.score[step.moves.tolist().index(step.chosen)]
                assert taken == best


def test_iteration_view_has_the_four_phases():
    trace = run(simulations=40, seed=1)
    view = mcts.iteration_view(trace, 25)
    assert view.path[0] == Tree.ROOT_INDEX and view.path[-1] == view.expanded
    assert len(view.steps) == len(view.path) - 1
    assert view.before.visits[0] == 24 and view.after.visits[0] == 25
    assert view.backed_up[-1] == view.leaf_value
    first = mcts.iteration_view(trace, 1)
    assert np.isinf(first.steps[0].bonus).all()  # UCT: every root move untried
    with pytest.raises(ValueError):
        mcts.iteration_view(trace, 41)


# ----------------------------------------------------------------- layout
def test_layout_respects_depth_and_top_k_and_is_a_tree():
    trace = run(simulations=1500, seed=0)
    tree = trace.tree
    lay = mcts.tree_layout(trace, [1500], max_depth=3, top_k=2)
    assert lay.shown.all()  # one moment, so every node of the layout is drawn at it
    assert lay.nodes[0] == Tree.ROOT_INDEX and lay.parent_slot[0] == -1
    assert (tree.depth[lay.nodes] <= 3).all()
    kids_drawn = np.bincount(lay.parent_slot[1:], minlength=lay.nodes.size)
    assert kids_drawn[0] == 2 and kids_drawn.max() <= 2
    np.testing.assert_array_equal(lay.nodes[lay.parent_slot[1:]], tree.parent[lay.nodes[1:]])
    np.testing.assert_array_equal(lay.y, -tree.depth[lay.nodes])
    # The drawn children are the most visited ones.
    for slot in range(lay.nodes.size):
        drawn = lay.nodes[lay.parent_slot == slot]
        if drawn.size:
            all_kids = tree.children[lay.nodes[slot]]
            all_kids = all_kids[all_kids >= 0]
            assert tree.visits[drawn].min() >= np.sort(tree.visits[all_kids])[-drawn.size]
    np.testing.assert_array_equal(lay.hidden[0] + kids_drawn,
                                  (tree.children[lay.nodes] >= 0).sum(axis=1))
    np.testing.assert_array_equal(lay.visits[0], tree.visits[lay.nodes])


def test_layout_is_tidy_leaves_one_apart_and_parents_centred():
    trace = run(simulations=800, seed=1)
    lay = mcts.tree_layout(trace, [800], max_depth=4, top_k=3)
    kids = np.bincount(lay.parent_slot[1:], minlength=lay.nodes.size)
    leaves = np.flatnonzero(kids == 0)
    np.testing.assert_array_equal(lay.x[leaves], np.arange(leaves.size))
    for slot in np.flatnonzero(kids):
        xs = lay.x[lay.parent_slot == slot]
        assert lay.x[slot] == (xs.min() + xs.max()) / 2
    points = set(zip(lay.x.tolist(), lay.y.tolist(), strict=True))
    assert len(points) == lay.nodes.size  # no two nodes on one spot
    # Depth-first order: each node comes right after its parent's earlier subtrees.
    assert (lay.parent_slot[1:] < np.arange(1, lay.nodes.size)).all()


def test_layout_draws_each_moment_as_it_stood():
    trace = run(simulations=300, seed=4)
    moments = [0, 1, 9, 40, 300]
    lay = mcts.tree_layout(trace, moments, max_depth=3, top_k=2)
    for row, t in enumerate(moments):
        snap = trace.snapshot(t)
        drawn = lay.nodes[lay.shown[row]]
        assert (drawn < snap.n_nodes).all()  # only nodes that existed then
        np.testing.assert_array_equal(lay.visits[row][lay.shown[row]], snap.visits[drawn])
        assert lay.n_nodes[row] == snap.n_nodes
        alone = mcts.tree_layout(trace, [t], max_depth=3, top_k=2)
        assert set(drawn.tolist()) == set(alone.nodes.tolist())  # same choice as on its own
    assert lay.shown[0].sum() == 1  # the bare root
    assert lay.moment(40) == 3
    with pytest.raises(ValueError, match="not made"):
        lay.moment(41)


def test_anchored_layout_holds_only_the_anchor_nodes():
    trace = run(simulations=500, seed=5)
    frames = [1, 5, 20, 100, 500]
    lay = mcts.tree_layout(trace, frames, top_k=2, anchors=[500])
    final = mcts.tree_layout(trace, [500], top_k=2)
    np.testing.assert_array_equal(np.sort(lay.nodes), np.sort(final.nodes))
    np.testing.assert_array_equal(lay.shown[-1], np.ones(lay.nodes.size, dtype=bool))
    # Earlier moments draw the nodes of the final drawing that existed then.
    for row, t in enumerate(frames):
        np.testing.assert_array_equal(lay.shown[row], trace.tree.created[lay.nodes] <= t)
    with pytest.raises(ValueError, match="anchors"):
        mcts.tree_layout(trace, frames, anchors=[7])


def test_layout_keeps_the_path_and_caps_the_count():
    trace = run(simulations=2000, seed=3)
    path = trace.path[-1, : trace.path_length[-1]]
    lay = mcts.tree_layout(trace, [2000], max_depth=9, top_k=1, keep=path)
    assert set(path.tolist()) <= set(lay.nodes.tolist())
    big = mcts.tree_layout(trace, [2000], max_depth=9, top_k=9, max_nodes=50, keep=path)
    assert big.nodes.size <= 50
    assert set(path.tolist()) <= set(big.nodes.tolist())
    np.testing.assert_array_equal(big.nodes[big.parent_slot[1:]],
                                  trace.tree.parent[big.nodes[1:]])
    with pytest.raises(ValueError):
        mcts.tree_layout(trace, [2000], top_k=0)
    with pytest.raises(ValueError, match="iterations"):
        mcts.tree_layout(trace, [2001])


# ----------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"simulations": 0}, "simulations"),
        ({"simulations": mcts.MAX_SIMULATIONS + 1}, "simulations"),
        ({"simulations": 2.5}, "whole number"),
        ({"c": -1.0}, "exploration"),
        ({"c": math.nan}, "exploration"),
        ({"rule": "ucb"}, "rule"),
        ({"rule": "puct", "prior": "magic"}, "prior"),
        ({"rule": "puct", "prior": np.ones((3, 3))}, "shape"),
        ({"seed": -1}, "seed"),
        ({"rule": "puct", "prior": "solver", "temperature": 0.0}, "temperature"),
    ],
)
def test_bad_settings_are_rejected_with_a_clear_message(kw, message):
    kw.setdefault("simulations", 10)
    with pytest.raises(ValueError, match=message):
        mcts.search(TICTACTOE, 0, **kw)


def test_a_finished_game_cannot_be_searched():
    over = TABLE.index[sum(1 << i for i in (0, 1, 2)) | sum(1 << i for i in (3, 4)) << 9]
    with pytest.raises(ValueError, match="already over"):
        mcts.search(TICTACTOE, over, simulations=5)


# ----------------------------------------------------------------- figures
def test_tree_figure_phases_show_the_iteration_step_by_step():
    from rlviz.figures import mcts as figs

    trace = run(simulations=60, seed=2)
    view = mcts.iteration_view(trace, 30)
    assert view.expanded != NO_NODE
    nodes = {}
    for phase in figs.PHASES:
        fig = figs.tree_figure(TICTACTOE, trace, view, phase=phase, max_depth=9, top_k=9,
                               animate=False)
        node_trace = fig.data[2]
        nodes[phase] = len(node_trace.x)
        path = fig.data[1]
        assert len(path.x) == len(view.path) - (phase == "select")
        assert all(np.isfinite(node_trace.marker.color))
    # Select draws the tree before the iteration; expand adds exactly the new node.
    assert nodes["expand"] == nodes["select"] + 1 == view.after.n_nodes
    assert nodes["backup"] == view.after.n_nodes
    labels = figs.tree_figure(TICTACTOE, trace, view, phase="backup", animate=False).data[-1]
    z_for_root = view.leaf_value * (-1) ** (len(view.path) - 1)
    assert set(labels.text) == {figs._signed(z_for_root)}


def test_tree_figure_animates_the_growth():
    from rlviz.figures import mcts as figs

    trace = run(simulations=300, seed=2)
    fig = figs.tree_figure(TICTACTOE, trace, mcts.iteration_view(trace, 300))
    steps = [int(f.name) for f in fig.frames]
    assert steps == sorted(steps) and steps[-1] == 300 and steps[0] == 1
    counts = [len(f.data[2].x) for f in fig.frames]
    assert counts == sorted(counts) and counts[0] <= 2 < counts[-1]  # the drawing grows
    assert fig.layout.updatemenus[0].buttons[0].method == "animate"


def test_root_table_marks_the_choice_and_the_optimal_moves():
    from rlviz.figures import mcts as figs

    trace = run(PRESETS["must_block"].board, simulations=300, seed=0)
    table = figs.root_table(TICTACTOE, trace, SOLUTION)
    assert table["visits"].sum() == 300
    row = table[table["move"] == "b3 ★"]
    assert len(row) == 1 and row["exact"].item() == "draw ✓"
    assert sorted(table["exact"]) == ["draw ✓"] + ["loss in 2"] * 4
