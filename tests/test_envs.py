import gymnasium as gym
import numpy as np
import pytest
from gymnasium.envs.toy_text.frozen_lake import MAPS

from rlviz import envs
from rlviz.envs import LAYOUTS, cliff_walking, from_gymnasium, gridworld, parse_layout

UP, RIGHT, DOWN, LEFT = range(4)


def outcomes(mdp, s, a):
    """{next_state: probability} of one state-action pair."""
    return {s2: p for s2, p in enumerate(mdp.P[s, a]) if p > 0}


# ---------------------------------------------------------------- hand-checked transitions
SMALL = """
    S.#
    ..G
"""


def test_small_grid_numbering_walls_and_edges():
    mdp = gridworld(SMALL, step_reward=-1.0, goal_reward=10.0)
    # States are the non-wall cells, row by row: (0,0) (0,1) (1,0) (1,1) (1,2).
    np.testing.assert_array_equal(mdp.grid.cells, [[0, 0], [0, 1], [1, 0], [1, 1], [1, 2]])
    assert mdp.n_states == 5 and mdp.start_state == 0
    np.testing.assert_array_equal(mdp.terminal, [False, False, False, False, True])
    assert outcomes(mdp, 1, RIGHT) == {1: 1.0}  # into the wall: stay
    assert outcomes(mdp, 1, UP) == {1: 1.0}  # off the edge: stay
    assert outcomes(mdp, 1, DOWN) == {3: 1.0}
    assert outcomes(mdp, 1, LEFT) == {0: 1.0}
    assert outcomes(mdp, 3, RIGHT) == {4: 1.0}
    assert mdp.R[3, RIGHT] == 10.0 and mdp.R[1, RIGHT] == -1.0
    # The goal is absorbing with zero reward.
    assert all(outcomes(mdp, 4, a) == {4: 1.0} for a in range(4))
    np.testing.assert_array_equal(mdp.R[4], 0.0)


def test_slip_splits_between_the_two_perpendicular_moves():
    mdp = gridworld(SMALL, slip=0.2)
    # Right from (0,1): intended hits the wall (stay, 0.8); up is off-grid (stay, 0.1);
    # down reaches (1,1) (0.1).
    got = outcomes(mdp, 1, RIGHT)
    assert got.keys() == {1, 3}
    assert got[1] == pytest.approx(0.9) and got[3] == pytest.approx(0.1)
    np.testing.assert_allclose(mdp.P.sum(axis=2), 1.0)


def test_cliff_costs_and_sends_back_to_start():
    mdp = cliff_walking()
    start = mdp.start_state
    assert outcomes(mdp, start, RIGHT) == {start: 1.0}
    assert mdp.R[start, RIGHT] == -100.0
    assert mdp.R[start, UP] == -1.0
    assert not mdp.terminal[start]
    goal = mdp.n_states - 1
    assert mdp.terminal[goal] and mdp.terminal.sum() == 1
    above_goal = goal - 12
    assert outcomes(mdp, above_goal, DOWN) == {goal: 1.0} and mdp.R[above_goal, DOWN] == -1.0


def test_hole_and_goal_rewards():
    mdp = gridworld("SHG", step_reward=0.0, goal_reward=1.0, hole_reward=-5.0)
    assert mdp.R[0, RIGHT] == -5.0 and mdp.terminal[1]
    assert mdp.R[0, LEFT] == 0.0


def test_every_named_layout_builds():
    for name, layout in LAYOUTS.items():
        mdp = gridworld(layout, slip=0.1)
        np.testing.assert_allclose(mdp.P.sum(axis=2), 1.0, err_msg=name)
        assert mdp.grid.to_grid(np.ones(mdp.n_states)).shape == mdp.grid.shape


# ---------------------------------------------------------------- layout errors
@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ("", "empty"),
        ("...\n..G", "no start"),
        ("S.S\n..G", r"2 starts \(row 1 column 1, row 1 column 3\)"),
        ("S..\n..\n..G", "row 2 has 2 columns but row 1 has 3"),
        ("S.x\n..G", "row 1, column 3: unknown character 'x'"),
        ("S..\n.?G", "row 2, column 2: unknown character '\\?'"),
        ("S" + "." * 60, "row 1 has 61 columns; at most 50"),
        ("\n".join(["S"] + ["."] * 60), "61 rows; at most 50"),
    ],
)
def test_bad_layouts_name_the_problem(layout, message):
    with pytest.raises(ValueError, match=message):
        parse_layout(layout)


def test_blank_lines_and_indentation_are_ignored():
    assert parse_layout("\n   S.G  \n\n   ...\n") == ("S.G", "...")


@pytest.mark.parametrize("slip", [-0.1, 1.5, float("nan")])
def test_slip_must_be_a_probability(slip):
    with pytest.raises(ValueError, match="slip"):
        gridworld("S.G", slip=slip)


def test_rewards_must_be_finite():
    with pytest.raises(ValueError, match="step_reward"):
        gridworld("S.G", step_reward=float("inf"))


def test_cliff_size_is_checked():
    with pytest.raises(ValueError, match="cliff grid"):
        cliff_walking(rows=1)


# ---------------------------------------------------------------- gymnasium equality
@pytest.mark.parametrize("slippery", [False, True])
def test_our_cliff_equals_gymnasium(slippery):
    ours = cliff_walking(slip=2 / 3 if slippery else 0.0)
    env = gym.make("CliffWalking-v1", is_slippery=slippery)
    table = env.unwrapped.P
    live = ~ours.terminal
    for s in np.flatnonzero(live):
        for a in range(4):
            expected = np.zeros(ours.n_states)
            expected_r = 0.0
            for p, s2, r, _done in table[s][a]:
                expected[s2] += p
                expected_r += p * r
            np.testing.assert_allclose(ours.P[s, a], expected, atol=1e-12)
            assert ours.R[s, a] == pytest.approx(expected_r, abs=1e-12)
    # Terminal flags: exactly the states gymnasium reports as terminated on arrival.
    reported = {s2 for s in table for a in table[s] for _p, s2, _r, d in table[s][a] if d}
    assert set(np.flatnonzero(ours.terminal)) == reported
    assert ours.start_state == int(np.argmax(env.unwrapped.initial_state_distrib))


@pytest.mark.parametrize("map_name", ["4x4", "8x8"])
@pytest.mark.parametrize("slippery", [False, True])
def test_frozen_lake_imports_exactly(map_name, slippery):
    env = gym.make("FrozenLake-v1", map_name=map_name, is_slippery=slippery)
    table = env.unwrapped.P
    mdp = from_gymnasium(env)
    desc = np.asarray(env.unwrapped.desc).astype(str)
    terminal = np.isin(desc.ravel(), ["G", "H"])
    np.testing.assert_array_equal(mdp.terminal, terminal)
    for s in range(mdp.n_states):
        for a in range(4):
            expected = np.zeros(mdp.n_states)
            expected_r = 0.0
            for p, s2, r, _d in table[s][a]:
                expected[s2] += p
                expected_r += p * r
            np.testing.assert_allclose(mdp.P[s, a], expected, atol=1e-12)
            assert mdp.R[s, a] == pytest.approx(expected_r)
    assert mdp.action_names == ("left", "down", "right", "up")
    assert mdp.grid.layout[0][0] == "S" and mdp.grid.layout[-1][-1] == "G"


@pytest.mark.parametrize("map_name", ["4x4", "8x8"])
def test_our_gridworld_rebuilds_frozen_lake(map_name):
    """The same lake from our own layout code, with actions reordered, equals gymnasium's."""
    layout = "\n".join(row.replace("F", ".") for row in MAPS[map_name])
    ours = gridworld(layout, slip=2 / 3, step_reward=0.0, goal_reward=1.0, hole_reward=0.0)
    theirs = envs.make_frozen_lake(map_name)
    gym_to_ours = [LEFT, DOWN, RIGHT, UP]
    np.testing.assert_allclose(ours.P[:, gym_to_ours], theirs.P, atol=1e-12)
    np.testing.assert_allclose(ours.R[:, gym_to_ours], theirs.R, atol=1e-12)


def test_cliff_from_gymnasium_has_a_grid():
    mdp = from_gymnasium(gym.make("CliffWalking-v1"))
    assert mdp.grid.layout == cliff_walking().grid.layout
    assert mdp.action_names == ("up", "right", "down", "left")


def test_non_tabular_environments_are_refused():
    with pytest.raises(ValueError, match="no tabular model"):
        from_gymnasium(gym.make("CartPole-v1"))


def test_frozen_lake_map_name_is_checked():
    with pytest.raises(ValueError, match="map_name"):
        envs.make_frozen_lake("5x5")
