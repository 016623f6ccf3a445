"""MCTS cases: simulations per second, a 2,000-simulation trace with its layout, the worst
combination of the page's caps, and the page's warm rerun."""

from benchmarks import case, page_rerun
from rlviz import mcts
from rlviz.figures import mcts as figs
from rlviz.games import TICTACTOE, TicTacToe
from tests.test_mcts import reference_search

EMPTY = TICTACTOE.position(".........")
# Building the table and solving it happen here, once, outside the timings.
UNIFORM = mcts.prior_table(TICTACTOE.table, TICTACTOE.solution, "uniform")


def reference_10k():
    return reference_search(".........", simulations=10_000, c=1.4, rule="uct", priors=UNIFORM,
                            seed=0)


@case("UCT, 10,000 simulations of tic-tac-toe (>= 10k/s)", group="mcts", budget=1.0,
      reference=reference_10k, note="reference: node objects, one function per phase")
def uct_10k():
    return mcts.search(TICTACTOE, EMPTY, simulations=10_000, rule="uct", seed=0)


@case("PUCT (solver prior), 10,000 simulations (>= 10k/s)", group="mcts", budget=1.0)
def puct_10k():
    return mcts.search(TICTACTOE, EMPTY, simulations=10_000, rule="puct", prior="solver", seed=0)


@case("2,000-simulation trace + its tree layouts", group="mcts", budget=0.5)
def trace_and_layout_2k():
    trace = mcts.search(TICTACTOE, EMPTY, simulations=2_000, seed=0)
    view = mcts.iteration_view(trace, trace.iterations)
    now = mcts.tree_layout(trace, [trace.iterations - 1, trace.iterations], keep=view.path)
    growth = mcts.tree_layout(trace, figs.frame_iterations(trace.iterations),
                              anchors=[trace.iterations])
    return now, growth


@case("worst caps: 5,000 sims, depth 9, top-k 9, tree figure", group="mcts", budget=2.0,
      repeat=3)
def worst_case():
    trace = mcts.search(TICTACTOE, EMPTY, simulations=5_000, c=4.0, seed=0)
    view = mcts.iteration_view(trace, trace.iterations)
    fig = figs.tree_figure(TICTACTOE, trace, view, max_depth=9, top_k=9)
    return fig.to_json()


@case("tic-tac-toe: enumerate 5,478 positions and solve", group="mcts", budget=0.5, repeat=3)
def solve_cold():
    return TicTacToe().solution


page_rerun("mcts")
