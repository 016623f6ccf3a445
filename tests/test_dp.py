import math

import numpy as np
import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.bench_value_iteration import loop_sweeps
from rlviz import dp
from rlviz.envs import gridworld
from rlviz.envs.grid import ACTION_NAMES
from rlviz.figures import dp as figs
from rlviz.mdp import TabularMDP, policy_value, reaches_terminal


def book_grid():
    return dp.make_problem("sutton_barto_4x4", slip=0.0, step_reward=-1.0, goal_reward=-1.0)


def random_mdp(seed, n_states=9, n_actions=3, n_outcomes=3, n_terminal=2):
    """Arbitrary successors (higher and lower numbered), so in-place levels are not grid-shaped."""
    rng = np.random.default_rng(seed)
    next_state = rng.integers(0, n_states, (n_states, n_actions, n_outcomes))
    prob = rng.dirichlet(np.ones(n_outcomes), (n_states, n_actions))
    reward = rng.normal(size=(n_states, n_actions, n_outcomes))
    terminal = np.zeros(n_states, bool)
    terminal[rng.choice(n_states, n_terminal, replace=False)] = True
    next_state[terminal] = np.flatnonzero(terminal)[:, None, None]
    reward[terminal] = 0.0
    start = np.zeros(n_states)
    start[np.flatnonzero(~terminal)[0]] = 1.0
    return TabularMDP(next_state=next_state, prob=prob, reward=reward, terminal=terminal,
                      start=start, action_names=tuple(f"a{i}" for i in range(n_actions)))


MODELS = {
    "book": book_grid,
    "cliff_slip": lambda: dp.make_problem("cliff", slip=0.1, step_reward=-1, goal_reward=-1),
    "four_rooms": lambda: dp.make_problem("four_rooms", slip=0.2, step_reward=0,
                                          goal_reward=1),
    "frozen_lake": lambda: dp.make_problem("frozen_lake_4x4", slip=2 / 3, step_reward=0,
                                           goal_reward=1),
    "random": lambda: random_mdp(0),
}


# ------------------------------------------------------------------ published and hand values


@pytest.mark.parametrize("k", [1, 2, 3, 10])
def test_sweeps_match_sutton_barto_figure_4_1(k):
    trace = dp.policy_evaluation(book_grid(), dp.uniform_policy(book_grid()), gamma=1.0,
                                 theta=1e-4)
    # The book prints one decimal: every value is within half a unit of the last digit.
    np.testing.assert_allclose(trace.values[k], dp.FIGURE_4_1[k].ravel(), rtol=0, atol=0.05 + 1e-9)


def test_converged_values_match_figure_4_1_and_are_whole_numbers():
    mdp = book_grid()
    trace = dp.policy_evaluation(mdp, dp.uniform_policy(mdp), gamma=1.0, theta=1e-10)
    assert trace.converged
    np.testing.assert_allclose(trace.exact, dp.FIGURE_4_1[math.inf].ravel(), atol=1e-9)
    np.testing.assert_allclose(trace.final_values, trace.exact, atol=1e-7)


def test_greedy_policy_of_figure_4_1_is_optimal_from_sweep_3():
    mdp = book_grid()
    trace = dp.policy_evaluation(mdp, dp.uniform_policy(mdp), gamma=1.0, theta=1e-6)
    optimal = dp.value_iteration(mdp, gamma=1.0, theta=1e-6).greedy[-1]
    assert trace.policy_last_changed == 3
    # From sweep 3 on every greedy action is optimal (the optimal ties may be a larger set).
    assert (optimal | ~trace.greedy[3]).all()
    assert not (optimal | ~trace.greedy[2]).all()


def test_value_iteration_on_the_book_grid_is_minus_the_distance_to_a_corner():
    mdp = book_grid()
    trace = dp.value_iteration(mdp, gamma=1.0, theta=1e-9)
    rows, cols = mdp.grid.cells.T
    distance = np.minimum(rows + cols, 6 - rows - cols)
    np.testing.assert_array_equal(trace.final_values, -distance)
    # Three sweeps carry the values to the far corner, a fourth changes nothing.
    assert trace.n_sweeps == 4 and trace.deltas[-1] == 0 and trace.converged
    np.testing.assert_array_equal(trace.deltas, [1, 1, 1, 0])
    # Cell (1, 1) is two moves from (0, 0) by going up or left: a tie, both arrows kept.
    state = mdp.grid.state_of_cell[1, 1]
    assert trace.greedy[-1][state].tolist() == [True, False, False, True]


def test_hand_computed_sweeps_of_a_rewarding_self_loop():
    # One state whose only action pays 1 and stays: V_k = 1 + g + ... + g^(k-1).
    mdp = TabularMDP(next_state=[[[0]], [[1]]], prob=[[[1.0]], [[1.0]]],
                     reward=[[[1.0]], [[0.0]]], terminal=[False, True], start=[1.0, 0.0],
                     action_names=("stay",))
    trace = dp.value_iteration(mdp, gamma=0.5, theta=0.2)
    np.testing.assert_allclose(trace.values[:, 0], [0, 1, 1.5, 1.75, 1.875])
    np.testing.assert_allclose(trace.deltas, [1, 0.5, 0.25, 0.125])
    assert trace.converged and trace.n_sweeps == 4
    np.testing.assert_allclose(trace.q, [[1 + 0.5 * 1.875], [0.0]])


def test_frozen_lake_optimum_is_the_known_success_probability():
    # With gamma = 1 and reward 1 at the goal, V*(start) is the best probability of reaching
    # the goal of slippery FrozenLake 4x4: 14/17 (= 0.8235...).
    mdp = dp.make_problem("frozen_lake_4x4", slip=2 / 3, step_reward=0, goal_reward=1)
    trace = dp.value_iteration(mdp, gamma=1.0, theta=1e-12, max_sweeps=5000)
    assert trace.final_values[0] == pytest.approx(14 / 17, abs=1e-9)


# ------------------------------------------------------------------ identities


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("in_place", [False, True])
def test_value_iteration_and_policy_iteration_reach_the_same_optimum(name, in_place):
    mdp = MODELS[name]()
    gamma = 0.95
    vi = dp.value_iteration(mdp, gamma=gamma, theta=1e-11, in_place=in_place)
    pi = dp.policy_iteration(mdp, gamma=gamma, theta=1e-11, in_place=in_place)
    assert vi.converged and pi.converged
    np.testing.assert_allclose(vi.final_values, pi.final_values, atol=1e-8)
    np.testing.assert_allclose(vi.q, pi.q, atol=1e-8)
    # The policy iteration stops on a policy greedy with respect to the optimum.
    assert vi.greedy[-1][np.arange(mdp.n_states), pi.policy.argmax(axis=1)].all()


# Undiscounted only where the random walk ends soon enough (the cliff's and the random model's
# never end at all).
@pytest.mark.parametrize(("name", "gamma"), [(n, 0.9) for n in MODELS]
                         + [("book", 1.0), ("frozen_lake", 1.0)])
def test_exact_linear_solve_equals_iterative_evaluation(name, gamma):
    mdp = MODELS[name]()
    trace = dp.policy_evaluation(mdp, dp.uniform_policy(mdp), gamma=gamma, theta=1e-12,
                                 max_sweeps=20_000)
    assert trace.converged and trace.exact is not None
    np.testing.assert_allclose(trace.final_values, trace.exact, atol=1e-8)
    comparison = dp.compare_with_exact(mdp, trace)
    assert comparison.within_bound and comparison.error <= comparison.bound.bound + 1e-12


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("algorithm", ["policy_evaluation", "value_iteration"])
@pytest.mark.parametrize("in_place", [False, True])
def test_contraction_bound_holds_every_sweep(name, algorithm, in_place):
    mdp = MODELS[name]()
    gamma = 0.9
    if algorithm == "policy_evaluation":
        trace = dp.policy_evaluation(mdp, dp.uniform_policy(mdp), gamma=gamma, theta=1e-10,
                                     in_place=in_place)
    else:
        trace = dp.value_iteration(mdp, gamma=gamma, theta=1e-10, in_place=in_place)
    assert trace.n_sweeps >= 4
    assert (trace.deltas[1:] <= gamma * trace.deltas[:-1] + 1e-12).all()
    # And the stopping rule's promise: ||V_K - V_pi or V*|| <= gamma * theta / (1 - gamma).
    if algorithm == "policy_evaluation":
        error = np.abs(trace.final_values - trace.exact).max()
        assert error <= gamma * trace.deltas[-1] / (1 - gamma) + 1e-12


def test_contraction_bound_holds_within_each_policy_iteration_cycle():
    mdp = MODELS["four_rooms"]()
    trace = dp.policy_iteration(mdp, gamma=0.9, theta=1e-10)
    assert trace.n_cycles > 2
    for lo, hi in zip(trace.cycle_start, trace.cycle_end, strict=True):
        d = trace.deltas[lo:hi]
        assert (d[1:] <= 0.9 * d[:-1] + 1e-12).all()


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("algorithm", ["policy_evaluation", "value_iteration"])
def test_synchronous_and_in_place_sweeps_reach_the_same_fixed_point(name, algorithm):
    mdp = MODELS[name]()
    kw = dict(gamma=0.95, theta=1e-12)
    run = (dp.value_iteration if algorithm == "value_iteration"
           else lambda m, **k: dp.policy_evaluation(m, dp.uniform_policy(m), **k))
    sync, in_place = run(mdp, **kw), run(mdp, in_place=True, **kw)
    np.testing.assert_allclose(sync.final_values, in_place.final_values, atol=1e-9)


def test_in_place_sweeps_converge_sooner_on_the_book_grid():
    mdp = book_grid()
    sync = dp.policy_evaluation(mdp, dp.uniform_policy(mdp), gamma=1.0, theta=1e-4)
    in_place = dp.policy_evaluation(mdp, dp.uniform_policy(mdp), gamma=1.0, theta=1e-4,
                                    in_place=True)
    assert in_place.n_sweeps < sync.n_sweeps


def test_in_place_helps_only_when_values_flow_against_the_reading_order():
    # Row by row, a goal at the left end is reached in one in-place sweep; at the right end the
    # value still moves one cell per sweep.
    left = gridworld("G" + "." * 8 + "S", step_reward=0, goal_reward=1)
    right = gridworld("S" + "." * 8 + "G", step_reward=0, goal_reward=1)
    kw = dict(gamma=0.9, theta=1e-9)
    assert dp.value_iteration(left, in_place=True, **kw).n_sweeps == 2
    assert (dp.value_iteration(right, in_place=True, **kw).n_sweeps
            == dp.value_iteration(right, **kw).n_sweeps == 10)


# ------------------------------------------------------------------ loop reference


@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("algorithm", ["policy_evaluation", "value_iteration"])
@pytest.mark.parametrize("in_place", [False, True])
def test_vectorised_sweeps_equal_the_per_state_loop_exactly(name, algorithm, in_place):
    mdp = MODELS[name]()
    policy = dp.uniform_policy(mdp) if algorithm == "policy_evaluation" else None
    values, deltas = loop_sweeps(mdp, gamma=0.9, theta=1e-8, in_place=in_place,
                                 max_sweeps=300, policy=policy)
    if policy is None:
        trace = dp.value_iteration(mdp, gamma=0.9, theta=1e-8, in_place=in_place, max_sweeps=300)
    else:
        trace = dp.policy_evaluation(mdp, policy, gamma=0.9, theta=1e-8, in_place=in_place,
                                     max_sweeps=300)
    np.testing.assert_array_equal(trace.values, values)
    np.testing.assert_array_equal(trace.deltas, deltas)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_states=st.integers(2, 12), gamma=st.floats(0, 0.99))
def test_in_place_levels_equal_the_loop_on_arbitrary_models(seed, n_states, gamma):
    mdp = random_mdp(seed, n_states=n_states, n_terminal=1)
    values, _ = loop_sweeps(mdp, gamma=gamma, theta=1e-9, in_place=True, max_sweeps=40)
    trace = dp.value_iteration(mdp, gamma=gamma, theta=1e-9, in_place=True, max_sweeps=40)
    np.testing.assert_array_equal(trace.values, values)


def test_in_place_levels_of_an_open_grid_are_its_anti_diagonals():
    mdp = gridworld("S...\n....\n....", slip=0.2)
    level = dp._levels(mdp.next_state, mdp.prob)
    rows, cols = mdp.grid.cells.T
    np.testing.assert_array_equal(level, rows + cols)


# ------------------------------------------------------------------ when it cannot converge


NO_GOAL = "S...\n....\n...."


@pytest.mark.parametrize("algorithm", ["policy_evaluation", "value_iteration",
                                       "policy_iteration"])
def test_gamma_one_without_an_ending_stops_at_the_limit_and_says_so(algorithm):
    mdp = gridworld(NO_GOAL, step_reward=-1.0)
    kw = dict(gamma=1.0, theta=1e-6, max_sweeps=300)
    if algorithm == "policy_evaluation":
        trace = dp.policy_evaluation(mdp, dp.uniform_policy(mdp), **kw)
        assert trace.exact is None
    else:
        trace = getattr(dp, algorithm)(mdp, **kw)
    assert not trace.converged and trace.n_sweeps == 300
    assert np.isfinite(trace.values).all() and np.isfinite(trace.q).all()
    np.testing.assert_allclose(trace.final_values, -300.0)  # one -1 per sweep, never settling
    assert "300 sweeps without converging" in trace.message and "γ = 1" in trace.message
    comparison = dp.compare_with_exact(mdp, trace)
    assert comparison.exact is None and not comparison.within_bound
    assert math.isinf(comparison.bound.horizon)


def test_policy_iteration_cut_off_mid_evaluation_marks_the_cycle_not_improved():
    mdp = book_grid()
    trace = dp.policy_iteration(mdp, gamma=1.0, theta=1e-6, max_sweeps=50)
    assert not trace.converged and trace.n_cycles == 1
    assert trace.policy_changes.tolist() == [dp.NOT_IMPROVED]


def test_discounted_run_cut_short_says_how_many_more_sweeps_it_needs():
    trace = dp.value_iteration(book_grid(), gamma=0.99, theta=1e-12, max_sweeps=2)
    assert not trace.converged and "more sweeps would do" in trace.message


# ------------------------------------------------------------------ markers and cycles


@pytest.mark.parametrize("algorithm", ["value_iteration", "policy_iteration"])
@pytest.mark.parametrize("name", ["book", "four_rooms", "frozen_lake"])
def test_policy_last_changed_marks_where_the_greedy_policy_becomes_final(algorithm, name):
    mdp = MODELS[name]()
    trace = getattr(dp, algorithm)(mdp, gamma=0.95, theta=1e-10)
    k = trace.policy_last_changed
    assert 0 < k < trace.n_sweeps
    assert all(np.array_equal(g, trace.greedy[-1]) for g in trace.greedy[k:])
    assert not np.array_equal(trace.greedy[k - 1], trace.greedy[k])


def test_policy_iteration_cycles_on_the_book_grid():
    mdp = book_grid()
    trace = dp.policy_iteration(mdp, gamma=1.0, theta=1e-4)
    assert trace.converged and trace.n_cycles == 2
    np.testing.assert_allclose(trace.policies[0], 0.25)
    # The first improvement makes all 14 non-terminal states deterministic; the second is stable.
    assert trace.policy_changes.tolist() == [14, 0]
    assert trace.cycle_start.tolist() == [0, trace.cycle_end[0]]
    assert trace.cycle_end[-1] == trace.n_sweeps
    np.testing.assert_array_equal(trace.final_values, dp.value_iteration(
        mdp, gamma=1.0, theta=1e-9).final_values)


def test_policy_iteration_keeps_a_tied_best_action():
    mdp = book_grid()
    optimal = dp.value_iteration(mdp, gamma=1.0, theta=1e-9).greedy[-1]
    # Start from the optimal policy taking the *last* tied action: a tie-breaking flip would
    # count as a change, so zero changes shows the current action is kept.
    start = np.zeros((mdp.n_states, 4))
    start[np.arange(mdp.n_states), 3 - np.argmax(optimal[:, ::-1], axis=1)] = 1.0
    trace = dp.policy_iteration(mdp, gamma=1.0, theta=1e-9, initial_policy=start)
    assert trace.n_cycles == 1 and trace.policy_changes.tolist() == [0]
    np.testing.assert_array_equal(trace.policy, start)


# ------------------------------------------------------------------ bound, inputs, results


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), gamma=st.floats(0.0, 1.0))
def test_error_bound_holds_for_any_values(seed, gamma):
    mdp = book_grid()
    rng = np.random.default_rng(seed)
    policy = rng.dirichlet(np.ones(4), mdp.n_states)
    values = rng.normal(scale=20, size=mdp.n_states)
    exact = policy_value(mdp, policy, gamma)
    bound = dp.evaluation_error_bound(mdp, policy, values, gamma)
    error = np.abs(np.where(mdp.terminal, 0, values) - exact).max()
    assert error <= bound.bound * (1 + 1e-9) + 1e-9
    assert bound.horizon <= (1 / (1 - gamma) if gamma < 1 else math.inf) * (1 + 1e-12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(gamma=1.5, theta=1e-3), "gamma must be a number in"),
        (dict(gamma=0.9, theta=0.0), "theta must be a positive number"),
        (dict(gamma=0.9, theta=float("nan")), "theta must be a positive number"),
        (dict(gamma=0.9, theta=1e-3, max_sweeps=0), "max_sweeps must be a whole number"),
        (dict(gamma=0.9, theta=1e-3, max_sweeps=2.5), "max_sweeps must be a whole number"),
    ],
)
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        dp.value_iteration(book_grid(), **kwargs)


@pytest.mark.parametrize(
    ("policy", "message"),
    [(np.full((16, 3), 1 / 3), r"shape \[16, 4\]"), (np.full((16, 4), 0.3), "sum to 1.2"),
     (np.full((16, 4), np.nan), "finite and non-negative")],
)
def test_bad_policies_are_named(policy, message):
    with pytest.raises(ValueError, match=message):
        dp.policy_evaluation(book_grid(), policy, gamma=0.9, theta=1e-3)


def test_inputs_are_not_touched_and_results_are_read_only():
    mdp = book_grid()
    policy = dp.uniform_policy(mdp)
    trace = dp.policy_evaluation(mdp, policy, gamma=0.9, theta=1e-3)
    assert policy.flags.writeable and (policy == 0.25).all()
    for array in (trace.values, trace.greedy, trace.deltas, trace.q, trace.policy, trace.exact):
        with pytest.raises(ValueError):
            array.flat[0] = 1


def test_same_inputs_same_trace():
    a = dp.value_iteration(MODELS["frozen_lake"](), gamma=0.9, theta=1e-8, in_place=True)
    b = dp.value_iteration(MODELS["frozen_lake"](), gamma=0.9, theta=1e-8, in_place=True)
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.greedy, b.greedy)


def test_trace_tables_have_one_row_per_sweep_and_state():
    mdp = book_grid()
    trace = dp.value_iteration(mdp, gamma=1.0, theta=1e-9)
    tables = dp.trace_tables(mdp, trace)
    assert list(tables["values_by_sweep"])[:3] == ["sweep", "r0c0", "r0c1"]
    assert len(tables["values_by_sweep"]["r3c3"]) == trace.n_sweeps + 1
    assert tables["max_change"]["greedy_policy_changed"].tolist() == [True, True, True, False]
    assert tables["final_q"]["state"][5] == "r1c1" and list(tables["final_q"])[1:] == [
        "up", "right", "down", "left"]


# ------------------------------------------------------------------ sweeps against gamma


def test_sweeps_by_gamma_counts_the_same_runs_and_respects_the_guarantee():
    mdp = dp.make_problem("corridor", slip=0.1, step_reward=0, goal_reward=1)
    gammas = (0.5, 0.9, 0.99, 1.0)
    curve = dp.sweeps_by_gamma(mdp, gammas, algorithm="value_iteration", theta=1e-6)
    for g, sync, in_place in zip(gammas, curve.synchronous, curve.in_place, strict=True):
        assert sync == dp.value_iteration(mdp, gamma=g, theta=1e-6).n_sweeps
        assert in_place == dp.value_iteration(mdp, gamma=g, theta=1e-6, in_place=True).n_sweeps
    assert (np.diff(curve.synchronous) >= 0).all()  # a longer horizon needs more sweeps
    finite = np.isfinite(curve.bound)
    assert finite.tolist() == [True, True, True, False]
    assert (curve.synchronous[finite] <= curve.bound[finite]).all()
    assert (curve.policy_final <= curve.synchronous).all() and curve.converged.all()


def test_sweeps_by_gamma_checks_its_arguments():
    with pytest.raises(ValueError, match="algorithm must be one of"):
        dp.sweeps_by_gamma(book_grid(), [0.9], algorithm="sarsa", theta=1e-3)
    with pytest.raises(ValueError, match="gamma must be"):
        dp.sweeps_by_gamma(book_grid(), [0.9, 2.0], algorithm="value_iteration", theta=1e-3)


# ------------------------------------------------------------------ problems


@pytest.mark.parametrize("name", [n for n in dp.PROBLEMS if n != "custom"])
def test_every_problem_builds_with_its_usual_settings(name):
    p = dp.PROBLEMS[name]
    mdp = dp.make_problem(name, slip=p.slip, step_reward=p.step_reward,
                          goal_reward=p.goal_reward)
    assert mdp.grid is not None and mdp.terminal.any()


def test_frozen_lake_problem_is_gymnasiums_own_model():
    from rlviz.envs import make_frozen_lake

    ours = dp.make_problem("frozen_lake_8x8", slip=2 / 3, step_reward=0, goal_reward=1)
    reference = make_frozen_lake("8x8")
    np.testing.assert_allclose(ours.P, reference.P)
    np.testing.assert_allclose(ours.R, reference.R)
    stepped = dp.make_problem("frozen_lake_4x4", slip=0.0, step_reward=-0.5, goal_reward=2)
    assert stepped.prob.max() == 1.0 and set(np.unique(stepped.R)) == {-0.5, 0.0, 2.0}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(name="custom", layout="S..G\n.."), "row 2 has 2 columns"),
        (dict(name="custom", layout="..G"), "no start"),
        (dict(name="custom", layout="S" + "." * 20 + "\n" + "." * 21 + ("\n" + "." * 21) * 19),
         "at most 400 cells"),
        (dict(name="mountain"), "unknown environment"),
        (dict(name="maze", slip=1.5), "slip must be a probability"),
        (dict(name="maze", step_reward=math.inf), "step reward must be a finite"),
    ],
)
def test_problem_errors_are_clear(kwargs, message):
    settings_ = dict(slip=0.0, step_reward=-1.0, goal_reward=0.0) | kwargs
    name = settings_.pop("name")
    with pytest.raises(ValueError, match=message):
        dp.make_problem(name, **settings_)


# ------------------------------------------------------------------ why a run did not converge

OPEN_20 = "\n".join(["S" + "." * 19] + ["." * 20] * 18 + ["." * 19 + "G"])


def test_a_slow_undiscounted_run_is_called_slow_not_stuck():
    mdp = dp.make_problem("custom", slip=0.0, step_reward=-1.0, goal_reward=-1.0,
                          layout=OPEN_20)
    trace = dp.policy_evaluation(mdp, dp.uniform_policy(mdp), gamma=1.0, theta=1e-10,
                                 max_sweeps=2000)
    assert not trace.converged
    assert "never" not in trace.message and "Every state does reach a terminal" in trace.message
    more = int(trace.message.split("about ")[2].split(" more")[0].replace(",", ""))
    # The run that is allowed to finish needs 65,221 sweeps in all.
    assert abs(2000 + more - 65_221) < 0.01 * 65_221


def test_states_that_cannot_end_are_named_as_the_reason():
    no_goal = "\n".join(["S" + "." * 9] + ["." * 10] * 9)
    mdp = dp.make_problem("custom", slip=0.2, step_reward=-1.0, goal_reward=0.0, layout=no_goal)
    for trace in (dp.value_iteration(mdp, gamma=1.0, theta=1e-6, max_sweeps=100),
                  dp.policy_iteration(mdp, gamma=1.0, theta=1e-6, max_sweeps=100),
                  dp.policy_evaluation(mdp, dp.uniform_policy(mdp), gamma=1.0, theta=1e-6,
                                       max_sweeps=100)):
        assert not trace.converged and "100 state(s) never do" in trace.message


def test_a_reward_loop_is_named_when_every_state_can_still_end():
    mdp = dp.make_problem("custom", slip=0.0, step_reward=1.0, goal_reward=1.0, layout="S..G")
    trace = dp.value_iteration(mdp, gamma=1.0, theta=1e-6, max_sweeps=50)
    assert not trace.converged and "keep growing" in trace.message


def test_reaches_terminal_under_a_policy_and_under_any_action():
    mdp = dp.make_problem("custom", slip=0.0, step_reward=-1.0, goal_reward=0.0, layout="S.G")
    assert reaches_terminal(mdp).all()
    left = np.zeros((mdp.n_states, mdp.n_actions))
    left[:, ACTION_NAMES.index("left")] = 1.0
    assert list(reaches_terminal(mdp, left)) == [False, False, True]


# ------------------------------------------------------------------ gymnasium rollouts


@pytest.mark.parametrize(("name", "seed"), [("frozen_lake_4x4", 0), ("frozen_lake_8x8", 1)])
def test_greedy_rollouts_in_gymnasium_agree_with_v_star(name, seed):
    problem = dp.PROBLEMS[name]
    kwargs = dict(slip=2 / 3, step_reward=0.0, goal_reward=1.0)
    mdp = dp.make_problem(name, **kwargs)
    trace = dp.value_iteration(mdp, gamma=0.99, theta=1e-10)
    check = dp.greedy_rollouts("FrozenLake-v1", problem.gym_kwargs(**kwargs),
                               trace.greedy_actions, gamma=0.99, episodes=2000, seed=seed,
                               step_budget=400_000)
    assert check.episodes == 2000 and not check.truncated.any()
    assert abs(check.mean_return - trace.final_values[mdp.start_state]) <= check.return_halfwidth
    assert 0.005 < check.return_halfwidth < 0.05  # an interval that can actually fail
    # Undiscounted, the same policy's value is its probability of reaching the goal.
    policy = dp.compare_with_exact(mdp, trace).policy
    success = policy_value(mdp, policy, 1.0)[mdp.start_state]
    low, high = check.success_interval
    assert low <= success <= high and check.success_rate > check.mean_return


def test_rollouts_without_the_wrappers_play_the_episodes_gymnasium_plays():
    import gymnasium as gym

    kwargs = dp.PROBLEMS["frozen_lake_4x4"].gym_kwargs(slip=2 / 3, step_reward=0, goal_reward=1)
    actions = [1, 3, 2, 3, 0, 0, 2, 0, 3, 1, 0, 0, 0, 2, 1, 0]
    check = dp.greedy_rollouts("FrozenLake-v1", kwargs, actions, gamma=0.9, episodes=300,
                               seed=5, max_steps=30)
    env = gym.make("FrozenLake-v1", max_episode_steps=30, **kwargs)
    state, _ = env.reset(seed=5)
    lengths, truncated = [], []
    for i in range(300):
        if i:
            state, _ = env.reset()
        steps = 0
        while True:
            state, _, done, cut, _ = env.step(actions[state])
            steps += 1
            if done or cut:
                break
        lengths.append(steps)
        truncated.append(cut and not done)
    np.testing.assert_array_equal(check.lengths, lengths)
    np.testing.assert_array_equal(check.truncated, truncated)
    assert check.truncated.any()


def test_expected_episode_length_by_hand_and_against_the_rollouts():
    kwargs = dict(slip=0.0, step_reward=0.0, goal_reward=1.0)
    mdp = dp.make_problem("frozen_lake_4x4", **kwargs)
    # Down, down, right, down, right, right on ice that does not slip: six steps to the goal.
    actions = [1, 2, 1, 0, 1, 0, 1, 0, 2, 1, 1, 0, 0, 2, 2, 0]
    assert dp.expected_episode_length(mdp, actions) == pytest.approx(6.0, abs=1e-12)
    assert dp.expected_episode_length(mdp, [0] * 16, max_steps=100) == pytest.approx(100.0)
    slippery = dict(kwargs, slip=2 / 3)
    mdp = dp.make_problem("frozen_lake_8x8", **slippery)
    greedy = dp.value_iteration(mdp, gamma=0.99, theta=1e-8).greedy_actions
    expected = dp.expected_episode_length(mdp, greedy)
    check = dp.greedy_rollouts("FrozenLake-v1", dp.PROBLEMS["frozen_lake_8x8"].gym_kwargs(
        **slippery), greedy, gamma=0.99, episodes=1000, seed=2)
    sem = check.lengths.std(ddof=1) / math.sqrt(check.episodes)
    assert abs(check.lengths.mean() - expected) < 4 * sem


def test_rollouts_are_reproducible_by_seed():
    kwargs = dp.PROBLEMS["frozen_lake_4x4"].gym_kwargs(slip=2 / 3, step_reward=0, goal_reward=1)
    actions = [1] * 16
    a = dp.greedy_rollouts("FrozenLake-v1", kwargs, actions, gamma=0.9, episodes=200, seed=3)
    b = dp.greedy_rollouts("FrozenLake-v1", kwargs, actions, gamma=0.9, episodes=200, seed=3)
    c = dp.greedy_rollouts("FrozenLake-v1", kwargs, actions, gamma=0.9, episodes=200, seed=4)
    np.testing.assert_array_equal(a.returns, b.returns)
    np.testing.assert_array_equal(a.lengths, b.lengths)
    assert not np.array_equal(a.lengths, c.lengths)


def test_identical_returns_still_get_an_interval():
    kwargs = dp.PROBLEMS["frozen_lake_4x4"].gym_kwargs(slip=0.0, step_reward=0, goal_reward=1)
    # Down, down, right, down, right, right on ice that does not slip: the goal every time.
    actions = [1, 2, 1, 0, 1, 0, 1, 0, 2, 1, 1, 0, 0, 2, 2, 0]
    check = dp.greedy_rollouts("FrozenLake-v1", kwargs, actions, gamma=0.9, episodes=100,
                               seed=0)
    np.testing.assert_allclose(check.returns, 0.9**5, rtol=1e-12)
    assert check.returns.std() == 0 and check.success_rate == 1.0
    assert check.return_halfwidth == pytest.approx(math.log(100) * 0.9**5 / 100)


def test_a_policy_that_never_finishes_is_cut_off_and_bounded():
    kwargs = dp.PROBLEMS["frozen_lake_4x4"].gym_kwargs(slip=0.0, step_reward=0, goal_reward=1)
    # Always "left" from the start on ice that does not slip: it never moves.
    check = dp.greedy_rollouts("FrozenLake-v1", kwargs, [0] * 16, gamma=1.0, episodes=500,
                               seed=0, max_steps=100, step_budget=1000)
    assert check.episodes == 10 and check.truncated.all() and check.success_rate == 0
    assert check.success_interval[0] == 0 and check.success_interval[1] > 0


# ------------------------------------------------------------------ figures


def test_sweep_figure_animates_with_fixed_colours():
    mdp = book_grid()
    trace = dp.policy_evaluation(mdp, dp.uniform_policy(mdp), gamma=1.0, theta=1e-4)
    fig = figs.sweep_figure(mdp, trace, sweep=3)
    heat = fig.data[0]
    assert isinstance(heat, go.Heatmap) and heat.zmin == -heat.zmax
    assert heat.zmax == pytest.approx(np.abs(trace.values).max())
    names = [f.name for f in fig.frames]
    assert names[:4] == ["0", "1", "2", "3"] and names[-1] == str(trace.n_sweeps)
    assert len(fig.frames) <= figs.MAX_FRAMES + 3
    assert fig.layout.sliders[0].active == names.index("3")
    assert [b.label for b in fig.layout.updatemenus[0].buttons] == ["▶ Play", "❚❚ Pause"]
    z3 = np.asarray(fig.frames[3].data[0].z, dtype=float)
    np.testing.assert_allclose(z3.ravel(), trace.values[3])
    values_trace = next(t for t in fig.data if t.name == "values")
    assert values_trace.text[1] == "-2.44" and values_trace.text[0] == ""  # terminal: no number


def test_frame_selection_keeps_early_sweeps_and_the_requested_ones():
    shown = figs.frame_sweeps(1000, include=(777,), limit=60)
    assert shown[0] == 0 and shown[-1] == 1000 and 777 in shown
    assert (np.diff(shown) > 0).all() and len(shown) <= 62
    np.testing.assert_array_equal(figs.frame_sweeps(10), np.arange(11))


def test_convergence_and_other_figures_show_their_markers():
    mdp = book_grid()
    trace = dp.policy_iteration(mdp, gamma=0.9, theta=1e-6)
    fig = figs.convergence_figure(trace, sweep=5)
    assert fig.layout.yaxis.type == "log"
    names = " ".join(t.name or "" for t in fig.data)
    assert "γ<sup>k</sup> bound" in names and "θ = 1e-06" in names and "values within θ" in names
    texts = " ".join(a.text for a in fig.layout.annotations)
    assert f"greedy policy final from sweep {trace.policy_last_changed}" in texts
    improved = next(t for t in fig.data if t.name.startswith("policy improved"))
    assert improved.x[0] == trace.cycle_end[0] + 0.5
    assert len(figs.cycles_figure(trace).data) == 2
    curve = dp.sweeps_by_gamma(mdp, (0.5, 0.9, 1.0), algorithm="value_iteration", theta=1e-6)
    gamma_fig = figs.gamma_figure(curve, gamma=0.9, sweeps=curve.synchronous[1])
    assert {t.name for t in gamma_fig.data} >= {"synchronous", "in place", "this run (γ = 0.9)"}
