import numpy as np
import plotly.graph_objects as go
import pytest

from rlviz.envs import LAYOUTS, cliff_walking, gridworld
from rlviz.figures import ALGORITHM_COLORS, color, colors_for, diverging, figure
from rlviz.figures.grid import GridPath, grid_figure

PAGE_GROUPS = [
    ["q_learning", "sarsa", "expected_sarsa", "double_q"],
    ["epsilon_greedy", "optimistic", "ucb", "thompson", "gradient", "gradient_no_baseline",
     "greedy"],
    ["clipped", "unclipped", "kl_penalty"],
    ["behaviour", "naive", "cql"],
    ["value_iteration", "policy_iteration", "policy_evaluation"],
    ["source", "shifted", "projected", "naive_projection"],
]


@pytest.mark.parametrize("group", PAGE_GROUPS)
def test_algorithms_shown_together_have_distinct_colours(group):
    colours = [ALGORITHM_COLORS[name] for name in group]
    assert len(set(colours)) == len(colours)


def test_colour_is_fixed_and_unknown_names_still_get_one():
    assert color("q_learning") == color("q_learning") == ALGORITHM_COLORS["q_learning"]
    assert color("some new racer").startswith("#")


def test_colors_for_keeps_distinct_colours():
    got = colors_for(["ucb", "ucb2", "ucb3"])
    assert got["ucb"] == ALGORITHM_COLORS["ucb"]
    assert len(set(got.values())) == 3


def test_diverging_is_symmetric_around_zero():
    spec = diverging(np.array([-1.0, 3.0, np.nan]))
    assert spec["zmid"] == 0 and spec["zmin"] == -3.0 and spec["zmax"] == 3.0
    assert diverging(np.zeros(3))["zmax"] == 1.0


def test_figure_uses_the_template():
    fig = figure(title="x")
    assert fig.layout.template.layout.font.family.startswith("Inter")


def test_grid_figure_draws_values_walls_arrows_and_paths():
    mdp = gridworld(LAYOUTS["four_rooms"])
    values = -np.arange(mdp.n_states, dtype=float)
    policy = np.zeros((mdp.n_states, 4), bool)
    policy[:, 1] = True
    policy[0, 2] = True  # a tie at state 0
    path = GridPath("route", [0, 1, 2], "#ff0000", reaches_goal=False)
    fig = grid_figure(mdp.grid, values=values, policy=policy, paths=[path], title="t")
    names = [t.name for t in fig.data]
    assert "wall" in names and "greedy action" in names
    arrows = next(t for t in fig.data if t.name == "greedy action")
    n_goal = sum(row.count("G") for row in mdp.grid.layout)
    assert sum(1 for s in arrows.marker.size if s > 0) == mdp.n_states - n_goal + 1
    heat = fig.data[0]
    assert isinstance(heat, go.Heatmap) and heat.zmid == 0
    assert np.isnan(np.asarray(heat.z, dtype=float)[0, 0])  # the corner is a wall
    route = fig.data[-1]
    assert "never reaches the goal" in route.name and route.line.dash == "dot"


def test_grid_figure_masks_cliff_cells_and_checks_shapes():
    mdp = cliff_walking()
    fig = grid_figure(mdp.grid, values=np.zeros(mdp.n_states))
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isnan(z[3, 1:11]).all() and not np.isnan(z[3, 0])
    with pytest.raises(ValueError, match="values must have shape"):
        grid_figure(mdp.grid, values=np.zeros(3))


# ------------------------------------------------------------------ readable log axes


def _as_number(label: str) -> float:
    powers = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")
    if label.startswith("10") and any(c in "⁻⁰¹²³⁴⁵⁶⁷⁸⁹" for c in label[2:]):
        return 10.0 ** int(label[2:].translate(powers))
    return float(label.replace(",", ""))


@pytest.mark.parametrize("span", [(2, 1000), (3, 173), (0.01, 10), (1e-7, 3.0), (1, 2e6),
                                  (0.5, 40), (10, 11)])
def test_log_ticks_label_every_tick_with_its_own_value(span):
    from rlviz.figures.theme import log_ticks

    axis = log_ticks(np.geomspace(*span, 9))
    assert axis["type"] == "log"
    if span[1] < 10 * span[0]:
        assert "tickvals" not in axis  # within a decade plotly's ticks are numbers already
        return
    values, labels = axis["tickvals"], axis["ticktext"]
    assert 2 <= len(values) <= 8
    np.testing.assert_allclose([_as_number(t) for t in labels], values, rtol=1e-9)
    assert all(span[0] / 1.001 <= v <= span[1] * 1.001 for v in values)


def test_the_pages_log_axes_use_readable_ticks():
    from rlviz import dp, offline
    from rlviz.figures import dp as dp_figs
    from rlviz.figures import offline as cql_figs

    mdp = dp.make_problem("sutton_barto_4x4", slip=0.0, step_reward=-1.0, goal_reward=-1.0)
    curve = dp.sweeps_by_gamma(mdp, (0.5, 0.9, 0.99, 1.0), algorithm="policy_evaluation",
                               theta=1e-4)
    ticks = dp_figs.gamma_figure(curve, gamma=1.0, sweeps=173).layout.yaxis.ticktext
    assert ticks and all(_as_number(t) > 0 for t in ticks)
    alphas = np.array(offline.ALPHAS)
    fig = cql_figs.error_vs_alpha(alphas, np.zeros(11), np.ones(11), chosen=7)
    assert list(fig.layout.xaxis.ticktext) == ["0.01", "0.1", "1", "10"]


def test_root_visits_chart_labels_a_few_moves_apart_from_each_other():
    from rlviz import mcts
    from rlviz.figures import mcts as figs
    from rlviz.games import TICTACTOE

    trace = mcts.search(TICTACTOE, TICTACTOE.position("........."), simulations=400, seed=0)
    fig = figs.root_convergence(TICTACTOE, trace, TICTACTOE.solution)
    labels = [t for t in fig.data if t.mode == "text"]
    assert len(labels) == 1 and len(labels[0].text) == figs.LABELLED_MOVES
    heights = np.sort(labels[0].y)
    assert np.diff(heights).min() >= 0.075 - 1e-9 and heights.min() >= 0 and heights.max() <= 1
    legend = [t.name for t in fig.data if t.showlegend is not False and t.mode == "lines"]
    assert len(legend) == figs.LABELLED_MOVES + 1 and "other moves" in legend
    colours = {t.line.color for t in fig.data if t.mode == "lines" and t.line.width > 2}
    assert len(colours) == figs.LABELLED_MOVES  # one colour per labelled move, not nine greys
