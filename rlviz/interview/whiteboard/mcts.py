"""MCTS at a whiteboard: the selection scores of UCT and PUCT at one node."""

import numpy as np


def uct_scores(q, visits, parent_visits, c):
    """Q(s, a) + c sqrt(ln N(s) / N(s, a)); an untried move scores +inf (tried first)."""
    log_n = np.log(parent_visits) if parent_visits > 0 else 0.0
    with np.errstate(divide="ignore"):
        bonus = np.where(visits > 0, c * np.sqrt(log_n / np.maximum(visits, 1)), np.inf)
    return q + bonus


def puct_scores(q, visits, prior, parent_visits, c):
    """AlphaZero: Q(s, a) + c P(s, a) sqrt(N(s)) / (1 + N(s, a)); the prior guides the search."""
    return q + c * prior * np.sqrt(parent_visits) / (1 + visits)


def backup(values_sum, visits, path, leaf_value):
    """Add the result to every node on the path, flipping its sign at each ply (two players)."""
    values_sum, visits = values_sum.copy(), visits.copy()
    for depth, node in enumerate(reversed(path)):
        visits[node] += 1
        values_sum[node] += leaf_value * (-1) ** depth
    return values_sum, visits


def live_check(settings):
    """The selection scores at the root of a short search from the page's position."""
    from rlviz import mcts
    from rlviz.games import TICTACTOE
    from rlviz.interview.whiteboard import LiveCheck, setting

    board = str(setting(settings, "board", "........."))
    rule, c = setting(settings, "rule", "uct"), float(setting(settings, "c", 1.4))
    prior = setting(settings, "prior", "uniform") if rule == "puct" else "uniform"
    sims = min(int(setting(settings, "simulations", 400)), 100)
    trace = mcts.search(TICTACTOE, TICTACTOE.position(board), simulations=sims, c=c, rule=rule,
                        prior=prior, seed=int(setting(settings, "seed", 0)))
    tree = trace.tree
    step = mcts.selection_scores(tree, 0, rule=rule, c=c)
    visits, q, p = tree.child_stats(0)
    m = step.moves
    if rule == "uct":
        scores = uct_scores(q[m], visits[m], tree.visits[0], c)
    else:
        scores = puct_scores(q[m], visits[m], p[m], tree.visits[0], c)
    return LiveCheck(f"{rule.upper()} scores of the root's moves after {sims} simulations",
                     scores, step.score, tol=1e-12)
