import numpy as np
import pytest

from rlviz.mdp import TabularMDP, outcomes_from_dense


def two_state(**overrides):
    """s0 --a0--> s1 (reward 1) or stay (a1, reward 0); s1 terminal."""
    kw = dict(
        next_state=np.array([[[1], [0]], [[1], [1]]]),
        prob=np.ones((2, 2, 1)),
        reward=np.array([[[1.0], [0.0]], [[0.0], [0.0]]]),
        terminal=np.array([False, True]),
        start=np.array([1.0, 0.0]),
        action_names=("go", "stay"),
    )
    kw.update(overrides)
    return TabularMDP(**kw)


def test_dense_views_match_hand_built_tables():
    mdp = two_state()
    expected_p = np.zeros((2, 2, 2))
    expected_p[0, 0, 1] = expected_p[0, 1, 0] = expected_p[1, :, 1] = 1.0
    np.testing.assert_array_equal(mdp.P, expected_p)
    np.testing.assert_array_equal(mdp.R, [[1.0, 0.0], [0.0, 0.0]])
    assert mdp.n_states == 2 and mdp.n_actions == 2 and mdp.start_state == 0


def test_arrays_are_read_only():
    mdp = two_state()
    with pytest.raises(ValueError):
        mdp.prob[0, 0, 0] = 0.5
    with pytest.raises(ValueError):
        mdp.P[0, 0, 0] = 0.5


def test_expected_next_weights_outcomes():
    mdp = TabularMDP(
        next_state=np.array([[[0, 1]], [[1, 1]]]),
        prob=np.array([[[0.25, 0.75]], [[1.0, 0.0]]]),
        reward=np.zeros((2, 1, 2)),
        terminal=np.array([False, True]),
        start=np.array([1.0, 0.0]),
        action_names=("a",),
    )
    np.testing.assert_allclose(mdp.expected_next(np.array([4.0, 8.0])), [[7.0], [8.0]])


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (dict(prob=np.full((2, 2, 1), 0.5)), "sum to 0.5"),
        (dict(prob=-np.ones((2, 2, 1))), "non-negative"),
        (dict(next_state=np.array([[[2], [0]], [[1], [1]]])), "outside"),
        (dict(terminal=np.array([False])), "terminal must have shape"),
        (dict(start=np.array([0.5, 0.2])), "start distribution"),
        (dict(action_names=("only",)), "action_names"),
        (dict(reward=np.full((2, 2, 1), np.nan)), "finite"),
        (dict(reward=np.array([[[1.0], [0.0]], [[0.0], [5.0]]])), "terminal state 1"),
        (dict(next_state=np.zeros((2, 2))), "shape"),
    ],
)
def test_invalid_models_are_rejected_with_a_reason(overrides, message):
    with pytest.raises(ValueError, match=message):
        two_state(**overrides)


def test_sampling_follows_the_probabilities():
    mdp = TabularMDP(
        next_state=np.array([[[0, 1, 2]], [[1, 1, 1]], [[2, 2, 2]]]),
        prob=np.array([[[0.2, 0.5, 0.3]], [[1, 0, 0]], [[1, 0, 0]]]),
        reward=np.array([[[1.0, 2.0, 3.0]], [[0, 0, 0]], [[0, 0, 0]]]),
        terminal=np.array([False, True, True]),
        start=np.array([1.0, 0, 0]),
        action_names=("a",),
    )
    rng = np.random.default_rng(0)
    n = 200_000
    nxt, rew = mdp.step(np.zeros(n, int), np.zeros(n, int), rng.random(n))
    freq = np.bincount(nxt, minlength=3) / n
    np.testing.assert_allclose(freq, [0.2, 0.5, 0.3], atol=0.005)
    np.testing.assert_array_equal(rew, nxt + 1.0)  # each outcome carries its own reward
    # Boundaries: u just below a cumulative step stays on the lower outcome.
    nxt, _ = mdp.step(np.zeros(3, int), np.zeros(3, int), np.array([0.0, 0.2, 0.999999]))
    np.testing.assert_array_equal(nxt, [0, 1, 2])


def test_outcomes_from_dense_round_trips():
    rng = np.random.default_rng(1)
    P = rng.random((5, 3, 5)) * (rng.random((5, 3, 5)) < 0.5)  # noqa: N806
    P[..., 0] += 1e-3
    P /= P.sum(axis=2, keepdims=True)
    R = rng.normal(size=(5, 3))  # noqa: N806
    ns, pr, rw = outcomes_from_dense(P, R)
    mdp = TabularMDP(ns, pr, rw, np.zeros(5, bool), np.full(5, 0.2), ("a", "b", "c"))
    np.testing.assert_allclose(mdp.P, P)
    np.testing.assert_allclose(mdp.R, R)
    with pytest.raises(ValueError, match="R must have shape"):
        outcomes_from_dense(P, R[:, :2])


def test_policy_value_on_a_chain_by_hand():
    # S . . G with -1 per step; always right: V = -3, -2, -1 from the three live cells.
    from rlviz.envs import gridworld
    from rlviz.mdp import action_values, policy_value

    mdp = gridworld("S..G", goal_reward=-1.0)
    right = np.zeros((4, 4))
    right[:, 1] = 1.0
    np.testing.assert_allclose(policy_value(mdp, right, 1.0), [-3, -2, -1, 0])
    v = policy_value(mdp, right, 0.5)
    np.testing.assert_allclose(v, [-1.75, -1.5, -1.0, 0.0])
    q = action_values(mdp, v, 0.5)
    bump = -1 + 0.5 * -1.75  # up, down and left leave the agent at the start
    np.testing.assert_allclose(q[0], [bump, -1 + 0.5 * -1.5, bump, bump])
    np.testing.assert_array_equal(q[3], 0.0)


def test_policy_value_refuses_improper_policies_without_discount():
    from rlviz.envs import gridworld
    from rlviz.mdp import policy_value

    mdp = gridworld("S..G")
    left = np.zeros((4, 4))
    left[:, 3] = 1.0
    with pytest.raises(ValueError, match="never reaches a terminal state"):
        policy_value(mdp, left, 1.0)
    np.testing.assert_allclose(policy_value(mdp, left, 0.9)[:3], -10.0)
    with pytest.raises(ValueError, match="probability distribution"):
        policy_value(mdp, left * 2, 0.9)
