"""Interview questions on Monte Carlo tree search: UCT, PUCT, backup, the root's visits."""

from __future__ import annotations

from rlviz.interview import Link, Prediction, Question
from rlviz.interview.whiteboard import mcts as wb

PAGE = "mcts"
TOPIC = "Planning and search"


def _search(board: str, simulations: int, c: float = 1.4, rule: str = "uct",
            prior: str = "uniform"):
    from rlviz import mcts
    from rlviz.games import TICTACTOE

    root = TICTACTOE.position(board)
    trace = mcts.search(TICTACTOE, root, simulations=simulations, c=c, rule=rule, prior=prior,
                        seed=0)
    return trace, TICTACTOE.solution.optimal_moves(root)


def _share(board: str, simulations: int) -> float:
    trace, optimal = _search(board, simulations)
    s = trace.summary()
    return float(s.visits[[m in optimal for m in s.moves]].sum() / s.visits.sum())


def _block_numbers() -> dict[str, str]:
    from rlviz.games import PRESETS

    board = PRESETS["must_block"].board
    return {f"n{n}": f"{_share(board, n):.0%}" for n in (10, 100, 400)}


def _c_numbers() -> dict[str, str]:
    out = {}
    for name, c in (("c0", 0.0), ("c4", 4.0)):
        trace, _ = _search(".........", 400, c=c)
        visits = trace.summary().visits
        out[f"{name}_top"] = f"{visits.max() / visits.sum():.0%}"
        out[f"{name}_nodes"] = str(trace.tree.n_nodes)
    return out


QUESTIONS = (
    Question(
        id="mcts.four-phases",
        topic=TOPIC,
        difficulty=1,
        question="Describe one iteration of Monte Carlo tree search.",
        answer=(
            "Selection: from the root, repeatedly pick the child with the best score (UCT: "
            "Q + c √(ln N(s) / N(s, a))) until reaching a node with an untried move.",
            "Expansion: add one child for that move.",
            "Simulation: value the new leaf, by a random playout to the end of the game "
            "(classic MCTS) or by a value network (AlphaZero).",
            "Backup: add the result to every node on the path, flipping its sign at each ply "
            "in a two-player zero-sum game, and increment the visit counts.",
            "After the budget, play the most-visited root move: visits are more robust than "
            "the noisy mean values.",
        ),
        links=(Link(PAGE, {"phase": "select"}, shows="The iteration scrubber, phase by phase: "
                                                     "selection's scores at each node."),
               Link(PAGE, {"phase": "backup"}, shows="The backup: the signs alternate up the "
                                                     "path.")),
        page=PAGE,
        whiteboard=wb.backup,
    ),
    Question(
        id="mcts.uct",
        topic="Exploration",
        difficulty=2,
        question="Where does UCT's selection rule come from, and what does c do?",
        answer=(
            "Each node is treated as a bandit over its moves, with UCB1's bonus: "
            "Q(s, a) + c √(ln N(s) / N(s, a)) (Kocsis & Szepesvári, 2006).",
            "Untried moves score +∞ and are tried first; the bonus shrinks as a move is visited "
            "and grows slowly with the parent's visits, so no move is starved forever.",
            "c = 0 is greedy on the current means: a deep, narrow tree that can lock onto a "
            "bad line (400 simulations on the empty board: the top root move takes "
            "{c0_top} of the visits, {c0_nodes} nodes). c = 4 spreads them ({c4_top}, "
            "{c4_nodes} nodes): wide and shallow.",
            "The rewards here are in [−1, 1]; c must be tuned to the value scale.",
        ),
        links=(Link(PAGE, {"c": "0"}, shows="c = 0: one root move takes almost every visit."),
               Link(PAGE, {"c": "4"}, shows="c = 4: the visits spread over the root's moves.")),
        page=PAGE,
        prediction=Prediction(
            prompt="Empty board, 400 simulations: which c gives the deeper, narrower tree?",
            options=("c = 0", "c = 4", "no difference"),
            answer=0,
        ),
        numbers=_c_numbers,
        whiteboard=wb.uct_scores,
    ),
    Question(
        id="mcts.puct",
        topic=TOPIC,
        difficulty=2,
        question="How does AlphaZero's PUCT differ from UCT?",
        answer=(
            "Score Q(s, a) + c P(s, a) √N(s) / (1 + N(s, a)): a prior P from the policy network "
            "scales the exploration term.",
            "Untried moves are not forced first: a move with a tiny prior may never be tried, "
            "which is what makes search in Go feasible (and what a bad prior breaks).",
            "The bonus decays like 1/N(s, a) rather than 1/√N(s, a): the prior matters early, "
            "the values later.",
            "Leaves are valued by the value network instead of a random rollout; root noise "
            "(Dirichlet) keeps self-play exploring.",
        ),
        links=(Link(PAGE, {"rule": "puct", "prior": "solver", "board": "x...o...x"},
                    shows="Stop the fork with a good prior: the root visits follow it."),
               Link(PAGE, {"rule": "puct", "prior": "misleading", "board": "x...o...x"},
                    shows="The misleading prior: search must first overcome it.")),
        page=PAGE,
        whiteboard=wb.puct_scores,
    ),
    Question(
        id="mcts.must-block",
        topic=TOPIC,
        difficulty=1,
        question="X must block O's threat. How many simulations does UCT need before the "
                 "blocking move dominates the root's visits?",
        answer=(
            "Every other move loses, so their mean values fall fast once a playout finds O's "
            "win; the visits then concentrate on the block.",
            "Share of root visits on the block (seed 0): {n10} after 10 simulations, {n100} "
            "after 100, {n400} after 400.",
            "The chosen move is the most-visited one; the share is also the policy target "
            "AlphaZero trains on.",
            "Random playouts are noisy (a random opponent often fails to win), which is why "
            "the share climbs gradually rather than jumping.",
        ),
        links=(Link(PAGE, {"board": "xo..o...x", "simulations": "10"},
                    shows="Must block with 10 simulations."),
               Link(PAGE, {"board": "xo..o...x"},
                    shows="Must block with 400: the lower chart shows the share climbing.")),
        page=PAGE,
        numbers=_block_numbers,
    ),
    Question(
        id="mcts.negamax",
        topic=TOPIC,
        difficulty=2,
        question="In a two-player game, how are values stored and backed up in the tree?",
        answer=(
            "Store each node's value from the point of view of the player to move there "
            "(negamax): a child's value is the opponent's, so Q(s, a) = −W(child)/N(child).",
            "Backup adds the result z for the leaf's player, then −z one level up, +z two "
            "levels up, and so on.",
            "Selection then always maximises, at every level: no separate min and max nodes.",
            "Getting the sign wrong makes each player help the other: a classic bug that "
            "still 'runs'.",
        ),
        links=(Link(PAGE, {"phase": "backup"}, shows="The backed-up values along one path."),),
        page=PAGE,
    ),
    Question(
        id="mcts.vs-minimax",
        topic=TOPIC,
        difficulty=2,
        question="Why use MCTS instead of minimax with alpha–beta?",
        answer=(
            "Minimax needs a full-width search to a depth and an evaluation function; "
            "alpha–beta prunes but the tree still grows as b^(d/2) at best.",
            "MCTS grows an asymmetric tree: it spends simulations where values are high or "
            "uncertain, needs no heuristic evaluation (playouts, or a learned value), and can "
            "stop at any time with a usable answer.",
            "Its root values converge to minimax values as simulations grow (UCT is consistent), "
            "but with no guarantee at a finite budget.",
            "Tic-tac-toe is small enough to solve exactly: the page checks search against the "
            "exact solver.",
        ),
        links=(Link(PAGE, {"simulations": "1000"},
                    shows="The root table: search's values beside the exact minimax ones."),),
        page=PAGE,
    ),
    Question(
        id="mcts.final-move",
        topic=TOPIC,
        difficulty=1,
        question="After the search, which move do you play: the highest value or the most "
                 "visits?",
        answer=(
            "Usually the most visits (the robust child): a move with few visits can have a high "
            "mean by luck.",
            "Under UCT visits follow value, so the two agree once the search has run long "
            "enough; early on they can differ.",
            "AlphaZero plays proportional to N^(1/τ) early in self-play (exploration) and the "
            "most-visited move later.",
        ),
        links=(Link(PAGE, {"board": "xo..x...o", "simulations": "100"},
                    shows="The fork position: compare the visits and the values in the "
                          "root table."),),
        page=PAGE,
    ),
)
