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
