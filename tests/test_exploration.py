import math

import numpy as np
import pytest

from rlviz import exploration as ex
from rlviz.errors import InputError
from rlviz.interview.whiteboard import exploration as wb
from rlviz.mdp import TabularMDP
from tests.exploration_reference import backward_induction_loop, simulate_loop

SETTINGS = dict(epsilon=0.1, alpha=0.5, beta=0.5)


# --------------------------------------------------------------------------- the problems
def test_riverswim_is_the_published_six_state_river():
    river = ex.riverswim()
    mdp = river.mdp
    assert (mdp.n_states, mdp.n_actions, river.horizon) == (6, 2, 20)
    np.testing.assert_array_equal(mdp.P[:, ex.LEFT].argmax(axis=1), [0, 0, 1, 2, 3, 4])
    assert (mdp.P[:, ex.LEFT].max(axis=1) == 1).all()
    right = mdp.P[:, ex.RIGHT]
    assert right[0, 0] == 0.4 and right[0, 1] == 0.6  # left bank: stay 0.4, forward 0.6
    for s in range(1, 5):  # middle: back 0.05, stay 0.6, forward 0.35
        assert (right[s, s - 1], right[s, s], right[s, s + 1]) == (0.05, 0.6, 0.35)
    assert right[5, 4] == 0.4 and right[5, 5] == 0.6  # right bank: back 0.4, stay 0.6
    expected = np.zeros((6, 2))
    expected[0, ex.LEFT], expected[5, ex.RIGHT] = 5 / 1000, 1.0
    np.testing.assert_array_equal(mdp.R, expected)
    assert mdp.start_state == 0 and river.far_state == 5


@pytest.mark.parametrize("n", [2, 5, 10, 40])
def test_deep_sea_is_a_chain_of_n_columns_and_n_steps(n):
    sea = ex.deep_sea(n)
    assert sea.horizon == n == sea.n_states
    np.testing.assert_array_equal(sea.mdp.P[:, ex.RIGHT].argmax(axis=1),
                                  np.minimum(np.arange(n) + 1, n - 1))
    np.testing.assert_allclose(sea.mdp.R[:, ex.RIGHT][:-1], -0.01 / n)
    assert sea.mdp.R[-1, ex.RIGHT] == pytest.approx(1 - 0.01 / n)
    assert (sea.mdp.R[:, ex.LEFT] == 0).all()


@pytest.mark.parametrize(("key", "n", "message"), [
    ("deep_sea", 1, "from 2 to 40"), ("deep_sea", 41, "from 2 to 40"),
    ("deep_sea", 3.5, "whole number"), ("lake", 5, "Unknown problem"),
])
def test_bad_problems_are_input_errors(key, n, message):
    with pytest.raises(InputError, match=message):
        ex.make_problem(key, n)


# --------------------------------------------------------------------------- exact answers
@pytest.mark.parametrize("problem", [ex.riverswim(), ex.deep_sea(3), ex.deep_sea(12)],
                         ids=lambda p: p.label)
def test_value_iteration_is_backward_induction(problem):
    plan = ex.finite_horizon_plan(problem.mdp, problem.horizon)
    values, q = backward_induction_loop(problem)
    np.testing.assert_allclose(plan.values, values, atol=1e-12)
    np.testing.assert_allclose(plan.q, q, atol=1e-12)
    best = q >= q.max(axis=-1, keepdims=True) - 1e-9
    np.testing.assert_array_equal(plan.greedy, best)


@pytest.mark.parametrize("problem", [ex.riverswim(), ex.deep_sea(4), ex.deep_sea(15)],
                         ids=lambda p: p.label)
def test_optimal_values_match_a_linear_solve_of_the_optimal_policy(problem):
    plan = ex.finite_horizon_plan(problem.mdp, problem.horizon)
    exact = ex.policy_value_exact(problem, plan.greedy)
    # V_h at step h has H - h steps to go.
    np.testing.assert_allclose(exact, plan.values[::-1][:-1], atol=1e-10)


def test_riverswim_optimum_swims_right_and_deep_sea_is_worth_0_99():
    river = ex.finite_horizon_plan(ex.riverswim().mdp, 20)
    assert river.greedy[0, :, ex.RIGHT].all() and not river.greedy[0, :, ex.LEFT].any()
    assert river.start_values[0] == pytest.approx(3.3972639591508, abs=1e-9)
    for n in (2, 7, 20):
        assert ex.finite_horizon_plan(ex.deep_sea(n).mdp, n).start_values[0] == pytest.approx(
            0.99, abs=1e-12)


def test_the_horizon_stops_early_only_at_a_fixed_point():
    # A one-state model paying nothing: V stays 0, so value iteration stops after one sweep.
    zero = TabularMDP(next_state=np.zeros((1, 2, 1), int), prob=np.ones((1, 2, 1)),
                      reward=np.zeros((1, 2, 1)), terminal=[False], start=[1.0],
                      action_names=("left", "right"))
    plan = ex.finite_horizon_plan(zero, 7)
    assert plan.values.shape == (8, 1) and plan.greedy.shape == (7, 1, 2)
    assert (plan.values == 0).all() and plan.greedy.all()


@pytest.mark.parametrize("n", range(2, 21))
def test_random_walker_closed_form_is_two_to_the_minus_n(n):
    assert ex.first_reach_probability(ex.deep_sea(n)) == pytest.approx(0.5**n, rel=1e-12)
    assert wb.random_walker_episodes(n) == pytest.approx(2.0**n)


@pytest.mark.parametrize("problem", [ex.riverswim(), ex.deep_sea(5)], ids=lambda p: p.label)
def test_random_walker_closed_form_against_monte_carlo(problem):
    p = ex.first_reach_probability(problem)
    m = 200_000
    assert ex.random_walk_episodes(problem, m, seed=3) == pytest.approx(
        p, abs=4 * math.sqrt(p * (1 - p) / m))


def test_closed_form_is_only_for_the_random_walker():
    with pytest.raises(InputError):
        ex.first_reach_probability(ex.deep_sea(4), epsilon=0.5)


def test_the_epsilon_one_learner_needs_two_to_the_n_episodes():
    runs = 400
    sweep = ex.sweep_first_reach([3, 5], ["random"], runs=runs, cap=2000, seed=1, **SETTINGS)
    assert (sweep.reached() == runs).all()
    for t, n in enumerate(sweep.sizes):
        mean = sweep.first_reach[0, t].mean()
        sd = math.sqrt(2.0**n * (2.0**n - 1))
        assert abs(mean - 2.0**n) < 4 * sd / math.sqrt(runs)


@pytest.mark.slow
def test_the_epsilon_one_learner_on_riverswim_matches_the_exact_recursion():
    river = ex.riverswim()
    res = ex.simulate([river], ["random"], runs=120, episodes=3000, seed=2, until_reached=True,
                      record_visits=False, **SETTINGS)
    first = res.first_reach[0, 0]
    assert (first > 0).all()
    expected = 1 / ex.first_reach_probability(river)
    sd = math.sqrt(expected * (expected - 1))
    assert abs(first.mean() - expected) < 4 * sd / math.sqrt(first.size)


# --------------------------------------------------------------------------- the steps
def test_choose_actions_greedy_ties_and_exploration():
    scores = np.array([[1.0, 2.0], [3.0, 3.0], [3.0, 3.0], [0.0, 5.0], [0.0, 5.0]])
    u = np.array([
        [0.9, 0.0, 0.99, 0.5],  # no exploration: the best action
        [0.9, 0.0, 0.49, 0.5],  # a tie: the first of the two
        [0.9, 0.0, 0.51, 0.5],  # a tie: the second
        [0.05, 0.2, 0.0, 0.5],  # exploring: action floor(0.2 * 2) = 0
        [0.05, 0.7, 0.0, 0.5],  # exploring: action 1
    ])
    actions = ex.choose_actions(scores, np.full(5, 0.1), u)
    np.testing.assert_array_equal(actions, [1, 0, 1, 0, 1])


def test_choose_actions_splits_ties_evenly():
    rng = np.random.default_rng(0)
    u = rng.random((40_000, 4))
    actions = ex.choose_actions(np.zeros((40_000, 3)), np.zeros(40_000), u)
    np.testing.assert_allclose(np.bincount(actions, minlength=3) / 40_000, 1 / 3, atol=0.01)


def test_q_learning_step_by_hand():
    new = ex.q_learning_step(np.array([1.0, 1.0]), np.array([0.5, 0.5]),
                             np.array([[2.0, 4.0], [2.0, 4.0]]), alpha=0.25,
                             last_step=np.array([False, True]))
    # 1 + 0.25 (0.5 + 4 - 1) = 1.875; at the last step nothing follows: 1 + 0.25 (0.5 - 1).
    np.testing.assert_allclose(new, [1.875, 0.875])


def test_bonus_model_by_hand():
    counts = np.zeros((1, 2, 2, 3))
    counts[0, 0, 1] = [1, 1, 2]  # tried 4 times
    reward_sum = np.zeros((1, 2, 2))
    reward_sum[0, 0, 1] = 2.0
    prob, reward = ex.bonus_model(counts, reward_sum, beta=0.5, r_max=np.array([1.0]))
    np.testing.assert_allclose(prob[0, 0, 1], [0.25, 0.25, 0.5])
    assert reward[0, 0, 1] == pytest.approx(2.0 / 4 + 0.5 / 2)
    np.testing.assert_array_equal(prob[0, 1, 0], [0, 1, 0])  # untried: stays put
    assert reward[0, 1, 0] == 1.5  # and pays r_max + beta
    np.testing.assert_allclose(
        reward, wb.bonus_reward(reward_sum, counts.sum(-1), 0.5, 1.0))


def test_posterior_sample_has_the_posterior_mean():
    counts = np.zeros((20_000, 1, 1, 3))
    counts[..., :] = [3, 0, 7]
    reward_sum = np.full((20_000, 1, 1), 6.0)  # ten observations summing to 6
    prob, reward = ex.posterior_sample(counts, reward_sum, np.random.default_rng(0))
    np.testing.assert_allclose(prob.sum(-1), 1.0)
    np.testing.assert_allclose(prob.mean(axis=(0, 1, 2)), np.array([4, 1, 8]) / 13, atol=0.01)
    precision = 1 + 10 / 0.25
    assert reward.mean() == pytest.approx(6 / 0.25 / precision, abs=0.01)
    assert reward.std() == pytest.approx(1 / math.sqrt(precision), rel=0.03)


def test_plan_models_equals_planning_each_model_alone():
    rng = np.random.default_rng(5)
    problems = [ex.deep_sea(4), ex.deep_sea(6), ex.riverswim()]
    s_max = 6
    lanes = []
    for p in problems:
        layout = np.broadcast_to(np.arange(s_max)[:, None, None], (s_max, 2, 3)).copy()
        layout[: p.n_states] = p.mdp.next_state
        lanes.append(layout)
    layout = np.stack(lanes)
    prob = rng.dirichlet(np.ones(3), size=(3, s_max, 2))
    reward = rng.normal(size=(3, s_max, 2))
    horizons = np.array([p.horizon for p in problems])
    together = ex.plan_models(layout, prob, reward, horizons)
    assert together.shape == (3, 20, s_max, 2)
    for i, p in enumerate(problems):
        alone = TabularMDP(next_state=layout[i], prob=prob[i],
                           reward=np.broadcast_to(reward[i][..., None], prob[i].shape),
                           terminal=np.zeros(s_max, bool), start=np.eye(s_max)[0],
                           action_names=("left", "right"))
        plan = ex.finite_horizon_plan(alone, p.horizon).greedy
        np.testing.assert_array_equal(together[i, : p.horizon], plan)
        assert not together[i, p.horizon :].any()
    # Asked for more steps than the longest horizon (the engine's table after long lanes stop).
    padded = ex.plan_models(layout[:2], prob[:2], reward[:2], horizons[:2], steps=20)
    np.testing.assert_array_equal(padded[:, :6], together[:2, :6])
    assert padded.shape == (2, 20, s_max, 2) and not padded[:, 6:].any()


def test_whiteboard_backward_induction_equals_rlviz_on_random_models():
    rng = np.random.default_rng(11)
    for _ in range(5):
        n, horizon = rng.integers(2, 9), rng.integers(1, 15)
        next_state = rng.integers(0, n, size=(n, 2, 3))
        prob = rng.dirichlet(np.ones(3), size=(n, 2))
        reward = rng.normal(size=(n, 2, 3))
        mdp = TabularMDP(next_state=next_state, prob=prob, reward=reward,
                         terminal=np.zeros(n, bool), start=np.eye(n)[0],
                         action_names=("left", "right"))
        ours = ex.finite_horizon_plan(mdp, int(horizon)).q
        np.testing.assert_allclose(wb.backward_induction(mdp.P, mdp.R, int(horizon)), ours,
                                   atol=1e-12)


# --------------------------------------------------------------------------- the engine
@pytest.mark.parametrize("problem", [ex.riverswim(), ex.deep_sea(5)], ids=lambda p: p.label)
def test_simulate_equals_the_plain_loop_draw_for_draw(problem):
    kinds = (*ex.LEARNERS, "random", "optimal")
    fast = ex.simulate([problem], kinds, runs=3, episodes=40, seed=7, **SETTINGS)
    returns, first, visits = simulate_loop(problem, kinds, runs=3, episodes=40, seed=7,
                                           **SETTINGS)
    np.testing.assert_allclose(fast.returns[:, 0], returns, atol=1e-12)
    np.testing.assert_array_equal(fast.first_reach[:, 0], first)
    np.testing.assert_array_equal(fast.visits[:, 0, : problem.horizon, : problem.n_states],
                                  visits)


def test_several_problems_at_once_equal_the_longest_alone():
    # Every problem shares each run's rows of uniforms, which are as long as the longest
    # episode; so the longest problem alone sees exactly the same dice.
    problems = [ex.deep_sea(3), ex.deep_sea(7)]
    kinds = ("epsilon_greedy", "optimistic", "bonus", "random")
    both = ex.simulate(problems, kinds, runs=4, episodes=30, seed=3, **SETTINGS)
    alone = ex.simulate([problems[1]], kinds, runs=4, episodes=30, seed=3, **SETTINGS)
    np.testing.assert_allclose(both.returns[:, 1], alone.returns[:, 0], atol=1e-12)
    np.testing.assert_array_equal(both.first_reach[:, 1], alone.first_reach[:, 0])
    np.testing.assert_array_equal(both.visits[:, 1], alone.visits[:, 0])
    assert (both.visits[:, 0, 3:] == 0).all()  # the short problem's lanes wait after step 3


def test_stopping_at_the_first_reach_keeps_the_first_reach():
    # (Not PSRL: its lanes share one posterior stream, so dropping a lane moves the others'
    # draws.)
    kinds = ("epsilon_greedy", "optimistic", "bonus")
    full = ex.simulate([ex.deep_sea(6)], kinds, runs=5, episodes=120, seed=4, **SETTINGS)
    cut = ex.simulate([ex.deep_sea(6)], kinds, runs=5, episodes=120, seed=4,
                      until_reached=True, **SETTINGS)
    np.testing.assert_array_equal(cut.first_reach, full.first_reach)
    played = cut.episodes[..., None] > np.arange(120)
    np.testing.assert_array_equal(np.isnan(cut.returns), ~played)
    assert (cut.episodes == np.where(full.first_reach > 0, full.first_reach, 120)).all()


def test_same_seed_same_result_and_another_seed_differs():
    args = dict(runs=4, episodes=30, **SETTINGS)
    a = ex.run_study(ex.riverswim(), ex.LEARNERS, seed=1, **args)
    b = ex.run_study(ex.riverswim(), ex.LEARNERS, seed=1, **args)
    c = ex.run_study(ex.riverswim(), ex.LEARNERS, seed=2, **args)
    np.testing.assert_array_equal(a.regret, b.regret)
    assert not np.array_equal(a.returns, c.returns)


def test_a_learner_does_not_depend_on_which_others_run():
    args = dict(runs=4, episodes=40, seed=9, **SETTINGS)
    alone = ex.run_study(ex.riverswim(), ("psrl",), **args)
    together = ex.run_study(ex.riverswim(), ex.LEARNERS, **args)
    np.testing.assert_array_equal(alone.regret[0], together.regret[together.index("psrl")])


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(runs=0), "runs"), (dict(episodes=0), "episodes"), (dict(epsilon=1.5), "ε"),
    (dict(alpha=0.0), "step size"), (dict(beta=-1.0), "bonus"), (dict(runs=2.5), "runs"),
])
def test_bad_settings_are_input_errors(kwargs, message):
    settings = dict(runs=2, episodes=5, seed=0, **SETTINGS) | kwargs
    with pytest.raises(InputError, match=message):
        ex.run_study(ex.riverswim(), ex.LEARNERS, **settings)


def test_no_learner_is_an_input_error():
    with pytest.raises(InputError, match="at least one learner"):
        ex.run_study(ex.riverswim(), (), runs=2, episodes=5, seed=0, **SETTINGS)
    with pytest.raises(InputError):
        ex.run_study(ex.riverswim(), ("sarsa",), runs=2, episodes=5, seed=0, **SETTINGS)


# --------------------------------------------------------------------------- what the page shows
@pytest.fixture(scope="module")
def river():
    return ex.run_study(ex.riverswim(), ex.LEARNERS, runs=20, episodes=200, seed=0, **SETTINGS)


def test_paired_regret_is_unbiased_for_the_optimal_return(river):
    # The optimal policy's mean return on the shared dice estimates V*(s0).
    best = river.optimal_returns
    assert best.mean() == pytest.approx(river.optimal_value, abs=4 * best.std() / math.sqrt(
        best.size))
    np.testing.assert_allclose(river.regret[:, :, -1], (best[None] - river.returns).sum(-1))


def test_riverswim_lessons(river):
    final = river.regret_band()[0][:, -1]
    by = dict(zip(river.kinds, final, strict=True))
    lure = river.optimal_value - river.lure_value
    # Dithering never leaves the lure for long: regret close to its straight line.
    assert by["epsilon_greedy"] > 0.9 * lure * river.episodes
    # The planners learn: their regret over the second half is a fraction of the first half's.
    for kind in ("bonus", "psrl"):
        curve = river.regret_band()[0][river.index(kind)]
        assert curve[-1] - curve[99] < 0.25 * curve[99]
    assert (river.first_reach[river.index("psrl")] > 0).all()


def test_the_deep_sea_sweep_is_exponential_for_dithering_and_not_for_the_planners():
    sweep = ex.sweep_first_reach([4, 8, 12], (*ex.LEARNERS, "random"), runs=6, cap=200, seed=0,
                                 **SETTINGS)
    reached = dict(zip(sweep.kinds, sweep.reached(), strict=True))
    assert reached["epsilon_greedy"][-1] == 0  # not within the cap: shown as such
    assert (reached["bonus"] == 6).all() and (reached["psrl"] == 6).all()
    mean = sweep.mean_band()[0]
    assert np.isnan(mean[0, -1])  # no made-up number where nobody reached
    assert (sweep.at_least()[0, -1] == 201)
    assert mean[sweep.kinds.index("bonus"), -1] < 50
    np.testing.assert_allclose(sweep.expected_random, [16, 256, 4096])
