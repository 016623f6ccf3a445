"""TD control: hand-computed updates, compiled loops equal to the plain loop, the book's cliff
results."""

import dataclasses

import gymnasium as gym
import numpy as np
import pytest
from scipy.stats import t as student_t

from rlviz import td
from rlviz.envs import cliff_walking, gridworld
from rlviz.errors import InputError
from rlviz.figures import td as figs
from rlviz.mdp import TabularMDP, action_values

Q_NEXT = np.array([-3.0, -1.0, -4.0, -2.0])
BOOK = dict(episodes=500, runs=50, epsilon=0.1, alpha=0.5, gamma=1.0, seed=0)


@pytest.fixture(scope="module")
def cliff():
    return cliff_walking()


@pytest.fixture(scope="module")
def book(cliff):
    """The book's protocol, once per algorithm."""
    return {a: td.run_control(cliff, algorithm=a, **BOOK) for a in td.ALGORITHMS}


def edge_row(mdp):
    rows, cols = mdp.grid.shape
    return set(mdp.grid.state_of_cell[rows - 2, 1 : cols - 1].tolist())


# --------------------------------------------------------------------------- single updates
def test_q_learning_target_by_hand():
    assert td.q_learning_target(-1.0, Q_NEXT, gamma=0.9) == pytest.approx(-1.0 + 0.9 * -1.0)
    assert td.q_learning_target(-1.0, Q_NEXT, gamma=0.9, terminal=True) == -1.0


@pytest.mark.parametrize(("a_next", "expected"), [(0, -1 + 0.9 * -3), (1, -1 + 0.9 * -1),
                                                  (2, -1 + 0.9 * -4)])
def test_sarsa_target_by_hand(a_next, expected):
    assert td.sarsa_target(-1.0, Q_NEXT, a_next, gamma=0.9) == pytest.approx(expected)
    assert td.sarsa_target(-1.0, Q_NEXT, a_next, gamma=0.9, terminal=True) == -1.0


def test_expected_sarsa_target_by_hand():
    # pi = (0.025, 0.925, 0.025, 0.025): 0.025 * (-3 - 4 - 2) + 0.925 * -1 = -1.15
    y = td.expected_sarsa_target(-1.0, Q_NEXT, gamma=0.9, epsilon=0.1)
    assert y == pytest.approx(-1.0 + 0.9 * -1.15)
    assert td.expected_sarsa_target(-1.0, Q_NEXT, gamma=0.9, epsilon=0.1, terminal=True) == -1.0


def test_expected_sarsa_is_the_policy_weighted_sum_and_q_learning_at_epsilon_zero():
    rng = np.random.default_rng(3)
    q = rng.normal(size=(6, 4))
    q[0, 1] = q[0, 3] = q[0].max() + 1  # a tie for the best action
    for eps in (0.0, 0.1, 0.7, 1.0):
        probs = td.epsilon_greedy_probs(q, eps)
        np.testing.assert_allclose(
            td.expected_sarsa_target(0.5, q, gamma=0.8, epsilon=eps),
            0.5 + 0.8 * (probs * q).sum(axis=1), rtol=1e-13,
        )
    np.testing.assert_array_equal(
        td.expected_sarsa_target(0.5, q, gamma=0.8, epsilon=0.0),
        td.q_learning_target(0.5, q, gamma=0.8),
    )


def test_double_q_target_by_hand():
    # the selecting table ties actions 1 and 2: the first wins, and the other table values it
    y = td.double_q_target(-1.0, [0.0, 2.0, 2.0, 1.0], [5.0, -4.0, 7.0, 0.0], gamma=0.5)
    assert y == pytest.approx(-1.0 + 0.5 * -4.0)
    assert td.double_q_target(-1.0, [0, 2, 2, 1], [5, -4, 7, 0], gamma=0.5, terminal=True) == -1


def test_targets_broadcast_over_a_batch():
    q = np.stack([Q_NEXT, Q_NEXT + 10])
    y = td.q_learning_target(np.array([-1.0, 2.0]), q, gamma=0.5, terminal=np.array([False, True]))
    np.testing.assert_allclose(y, [-1.5, 2.0])
    y = td.sarsa_target(np.array([0.0, 0.0]), q, np.array([2, 0]), gamma=1.0)
    np.testing.assert_allclose(y, [-4.0, 7.0])


def test_td_update_moves_alpha_of_the_way():
    assert td.td_update(-2.0, -1.9, 0.5) == pytest.approx(-1.95)
    assert td.td_update(-2.0, 6.0, 1.0) == 6.0


def test_epsilon_greedy_probs_split_ties():
    np.testing.assert_allclose(
        td.epsilon_greedy_probs([1.0, 3.0, 3.0, 0.0], 0.2), [0.05, 0.45, 0.45, 0.05]
    )
    np.testing.assert_allclose(td.epsilon_greedy_probs([0.0, 0.0], 1.0), [0.5, 0.5])


def test_worked_update_by_hand():
    w = td.worked_update(-2.0, -1.0, Q_NEXT, 0, gamma=0.9, alpha=0.5, epsilon=0.1)
    assert w.targets == pytest.approx(
        {"q_learning": -1.9, "sarsa": -3.7, "expected_sarsa": -2.035}
    )
    assert w.td_errors == pytest.approx(
        {"q_learning": 0.1, "sarsa": -1.7, "expected_sarsa": -0.035}
    )
    assert w.new_values == pytest.approx(
        {"q_learning": -1.95, "sarsa": -2.85, "expected_sarsa": -2.0175}
    )
    assert w.greedy_next == 1 and w.max_next == -1.0
    np.testing.assert_allclose(w.policy_next, [0.025, 0.925, 0.025, 0.025])
    assert w.expected_next == pytest.approx(-1.15)


def test_worked_update_terminal_targets_are_the_reward():
    w = td.worked_update(-2.0, -1.0, Q_NEXT, 0, gamma=0.9, alpha=0.5, epsilon=0.1,
                         terminal=True)
    assert set(w.targets.values()) == {-1.0}
    assert set(w.new_values.values()) == {-1.5}


def test_greedy_a_next_makes_sarsa_equal_q_learning():
    w = td.worked_update(0.3, 1.0, Q_NEXT, 1, gamma=0.7, alpha=0.2, epsilon=0.3)
    assert w.targets["sarsa"] == w.targets["q_learning"]
    assert w.targets["expected_sarsa"] != w.targets["q_learning"]


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(a_next=4), "a' must be one of the 4 actions"),
    (dict(a_next=-1), "a' must be one of"),
    (dict(q_next=[]), "one value per action"),
    (dict(q_next=[1.0, np.nan]), "every Q"),
    (dict(q_sa=np.inf), "Q\\(s, a\\) must be a finite number"),
    (dict(alpha=0.0), "step size α"),
    (dict(gamma=1.5), "discount γ"),
    (dict(epsilon=-0.1), "exploration rate ε"),
])
def test_worked_update_rejects_bad_input(kwargs, match):
    args = dict(q_sa=-2.0, reward=-1.0, q_next=Q_NEXT, a_next=0, gamma=0.9, alpha=0.5,
                epsilon=0.1) | kwargs
    with pytest.raises(InputError, match=match):
        td.worked_update(args.pop("q_sa"), args.pop("reward"), args.pop("q_next"),
                         args.pop("a_next"), **args)


# --------------------------------------------------------------------------- compiled = loop
def _random_start(mdp):
    start = np.zeros(mdp.n_states)
    start[mdp.grid.state_of_cell[[0, 1, 2], [0, 3, 0]]] = [0.2, 0.3, 0.5]
    return dataclasses.replace(mdp, start=start)


def _corridor(n_states=9):
    """A line of states with the goal at the right end and the starts just before it: an episode
    cut short far to the left restarts near the goal, so its run may finish soon after."""
    next_state = np.zeros((n_states, 2, 1), dtype=np.int64)
    next_state[:, 0, 0] = np.maximum(np.arange(n_states) - 1, 0)
    next_state[:, 1, 0] = np.minimum(np.arange(n_states) + 1, n_states - 1)
    next_state[-1] = n_states - 1
    reward = -np.ones((n_states, 2, 1))
    reward[-1] = 0.0
    terminal = np.arange(n_states) == n_states - 1
    start = np.zeros(n_states)
    start[[-3, -2]] = 0.5
    return TabularMDP(next_state=next_state, prob=np.ones((n_states, 2, 1)), reward=reward,
                      terminal=terminal, start=start, action_names=("left", "right"))


def _random_mdp(n_actions, *, seed=0, n_states=7, n_outcomes=3):
    """Uneven outcome probabilities, rewards that are not whole numbers, two start states (one a
    step from a terminal state) and two terminal states: the model paths the cliff never takes."""
    rng = np.random.default_rng(seed)
    terminal = np.zeros(n_states, dtype=bool)
    terminal[-2:] = True
    next_state = rng.integers(0, n_states, (n_states, n_actions, n_outcomes))
    next_state[0, 0, 0] = n_states - 1
    prob = rng.dirichlet(np.ones(n_outcomes), (n_states, n_actions))
    prob[1, :, 1:] = 0.0  # a single outcome here (K = 1 padded)
    prob[1, :, 0] = 1.0
    reward = np.round(rng.normal(-0.5, 1.0, (n_states, n_actions, n_outcomes)), 3)
    for s in np.flatnonzero(terminal):
        next_state[s], reward[s], prob[s] = s, 0.0, 0.0
        prob[s, :, 0] = 1.0
    start = np.zeros(n_states)
    start[[0, 2]] = [0.4, 0.6]
    return TabularMDP(next_state=next_state, prob=prob, reward=reward, terminal=terminal,
                      start=start, action_names=tuple("abcdefgh"[:n_actions]))


CASES = {
    "book": (lambda: cliff_walking(), dict(episodes=40, runs=4), None),
    "slip-decay-discount": (
        lambda: cliff_walking(cols=8, slip=0.2),
        dict(episodes=30, runs=3, epsilon=0.3, alpha=0.3, gamma=0.9, epsilon_decay=True), None,
    ),
    "cuts-across-tiny-blocks": (
        lambda: cliff_walking(), dict(episodes=25, runs=5, epsilon=0.3, max_steps=9), 7,
    ),
    "start-next-to-goal": (
        lambda: gridworld("...\nSG.\n...", slip=0.3),
        dict(episodes=30, runs=4, epsilon=0.5, alpha=0.7, max_steps=6), 5,
    ),
    "step-budget": (
        lambda: cliff_walking(),
        dict(episodes=60, runs=5, epsilon=0.2, max_steps=150, max_total_steps=1100), 7,
    ),
    "random-start": (
        lambda: _random_start(cliff_walking(rows=3, cols=6)),
        dict(episodes=30, runs=3, epsilon=0.2, gamma=0.95), None,
    ),
    "random-start-after-cuts-far-away": (
        _corridor, dict(episodes=6, runs=8, epsilon=0.9, max_steps=4), None,
    ),
    "uneven-odds-fractional-rewards-5-actions": (
        lambda: _random_mdp(5, seed=1),
        dict(episodes=40, runs=4, epsilon=0.3, alpha=0.4, gamma=0.9, max_steps=12), 9,
    ),
    "uneven-odds-6-actions-decay-budget": (
        lambda: _random_mdp(6, seed=2),
        dict(episodes=50, runs=5, epsilon=0.4, alpha=0.6, gamma=0.8, max_steps=8,
             epsilon_decay=True, max_total_steps=80), 11,
    ),
}


@pytest.mark.parametrize("algorithm", td.ALGORITHMS)
@pytest.mark.parametrize("case", CASES)
def test_the_compiled_loops_equal_the_loop_reference_draw_for_draw(algorithm, case, monkeypatch):
    make, kwargs, block = CASES[case]
    if block is not None:  # the reference draws its rows in tiny blocks: the rows are the same
        monkeypatch.setattr(td.dice, "BLOCK", block)
    mdp = make()
    fast = td.run_control(mdp, algorithm=algorithm, seed=11, **kwargs)
    slow = td.run_control_loop(mdp, algorithm=algorithm, seed=11, **kwargs)
    for field in ("returns", "lengths", "truncated", "q", "visits", "path_lengths"):
        np.testing.assert_array_equal(getattr(fast, field), getattr(slow, field), err_msg=field)
    np.testing.assert_array_equal(fast.played, slow.played)
    if "max_steps" in kwargs:
        assert fast.truncated.any(), "the case should cut some episodes short"
    if "max_total_steps" in kwargs:
        assert fast.stopped_early.any()


@pytest.mark.parametrize("algorithm", td.ALGORITHMS)
@pytest.mark.parametrize("case", ["slip-decay-discount", "step-budget", "random-start",
                                  "uneven-odds-6-actions-decay-budget"])
def test_each_compiled_loop_does_what_its_python_source_says(algorithm, case):
    """The kernel's own source run by Python (``py_func``) on the same dice gives the same run."""
    make, kwargs, _ = CASES[case]
    mdp = make()
    kernel = getattr(td, f"{algorithm}_run")
    settings = dict(epsilon=0.1, alpha=0.5, gamma=1.0, max_steps=td.DEFAULT_MAX_STEPS) | {
        k: v for k, v in kwargs.items() if k in ("epsilon", "alpha", "gamma", "max_steps")}
    epsilons = td.epsilon_schedule(settings["epsilon"], kwargs["episodes"],
                                   decay=kwargs.get("epsilon_decay", False))
    budget = kwargs.get("max_total_steps", 10**9)
    runs = []
    for fn in (kernel, kernel.py_func):
        shape = (2,) * (algorithm == "double_q") + (mdp.n_states, mdp.n_actions)
        q, records = np.zeros(shape), (np.full(len(epsilons), np.nan),
                                       np.zeros(len(epsilons), dtype=np.int64),
                                       np.zeros(len(epsilons), dtype=bool),
                                       np.zeros(mdp.n_states, dtype=np.int64))
        played = fn(np.random.default_rng(3), q, epsilons, settings["alpha"], settings["gamma"],
                    settings["max_steps"], budget, td.engine._model(mdp), records)
        runs.append((played, q, records))
    (played, q, records), (played_py, q_py, records_py) = runs
    assert played == played_py and played >= 1
    np.testing.assert_array_equal(q, q_py)
    for got, expected in zip(records, records_py, strict=True):
        np.testing.assert_array_equal(got, expected)


def _three_state_corridor():
    """S → M → G with a single action, reward −1 per step: every decision is forced."""
    next_state = np.array([[[1]], [[2]], [[2]]])
    return TabularMDP(next_state=next_state, prob=np.ones((3, 1, 1)),
                      reward=np.array([[[-1.0]], [[-1.0]], [[0.0]]]),
                      terminal=np.array([False, False, True]), start=np.array([1.0, 0.0, 0.0]),
                      action_names=("on",))


@pytest.mark.parametrize("algorithm", ["q_learning", "sarsa", "expected_sarsa"])
def test_two_episodes_of_a_forced_walk_by_hand(algorithm):
    # α = 0.5, γ = 1. Episode 1: Q(S) ← 0 + 0.5 (−1 + Q(M) − 0) = −0.5, Q(M) ← 0.5 (−1) = −0.5.
    # Episode 2: Q(S) ← −0.5 + 0.5 (−1 − 0.5 + 0.5) = −1, Q(M) ← −0.5 + 0.5 (−1 + 0.5) = −0.75.
    res = td.run_control(_three_state_corridor(), algorithm=algorithm, episodes=2, runs=1,
                         epsilon=0.5, alpha=0.5, gamma=1.0, seed=0)
    np.testing.assert_array_equal(res.q[0, :, 0], [-1.0, -0.75, 0.0])
    np.testing.assert_array_equal(res.returns, [[-2.0, -2.0]])
    np.testing.assert_array_equal(res.lengths, [[2, 2]])
    np.testing.assert_array_equal(res.visits, [[2, 2, 0]])


def test_double_q_updates_the_table_its_coin_picks_by_hand():
    mdp, seed = _three_state_corridor(), 0
    rows = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0]).random((4, 6))
    # Steps 0-3 (S, M, S, M) update Q1 where their coin is below 0.5: here Q1, Q2, Q2, Q2.
    assert (rows[:, td.TABLE_COIN] < 0.5).tolist() == [True, False, False, False]
    # step 0: Q1(S) ← 0.5 (−1 + Q2(M) = 0) = −0.5      step 1: Q2(M) ← 0.5 (−1) = −0.5
    # step 2: Q2(S) ← 0.5 (−1 + Q1(M) = 0) = −0.5      step 3: Q2(M) ← −0.5 + 0.5 (−1 + 0.5)
    res = td.run_control(mdp, algorithm="double_q", episodes=2, runs=1, alpha=0.5, seed=seed)
    # Q1 = (−0.5, 0), Q2 = (−0.5, −0.75): Q is their mean
    np.testing.assert_array_equal(res.q[0, :, 0], [-0.5, -0.375, 0.0])
    np.testing.assert_array_equal(res.returns, [[-2.0, -2.0]])


def test_sarsa_chooses_a_prime_before_it_updates_q_s_a():
    # One state that loops on itself with action 0 (reward −1) and ends with action 1 (reward 0).
    # ε = 0 and Q starts at 0: both actions tie in the first step, so the tie-break keys choose.
    # If a' were chosen after Q(s, 0) fell to −0.5, SARSA could never pick 0 again; chosen before,
    # from the tie, it picks 0 whenever the next step's key for 0 is the larger one.
    next_state = np.array([[[0], [1]], [[1], [1]]])
    reward = np.array([[[-1.0], [0.0]], [[0.0], [0.0]]])
    mdp = TabularMDP(next_state=next_state, prob=np.ones((2, 2, 1)), reward=reward,
                     terminal=np.array([False, True]), start=np.array([1.0, 0.0]),
                     action_names=("stay", "leave"))
    for seed in range(40):
        rows = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0]).random((3, 7))
        keys = rows[:, td.TIE_KEYS:]
        if keys[0, 0] > keys[0, 1] and keys[1, 0] > keys[1, 1]:
            break
    else:
        pytest.fail("no seed whose first two steps both prefer action 0 on a tie")
    res = td.run_control(mdp, algorithm="sarsa", episodes=1, runs=1, epsilon=0.0, alpha=0.5,
                         gamma=1.0, seed=seed)
    # step 0: stay (tie, key), a' = stay (still a tie: Q(s, ·) = 0 when a' is chosen); the
    # update makes Q(s, stay) = 0.5 (−1 + 0) = −0.5; step 1: leave is now greedy.
    assert res.lengths[0, 0] == 3 and res.returns[0, 0] == -2.0
    q_learning = td.run_control(mdp, algorithm="q_learning", episodes=1, runs=1, epsilon=0.0,
                                alpha=0.5, gamma=1.0, seed=seed)
    assert q_learning.lengths[0, 0] == 2 and q_learning.returns[0, 0] == -1.0


def test_the_warm_up_compiles_what_the_page_calls():
    from rlviz import compiled

    compiled.warm_up()
    kernels = [getattr(td, f"{a}_run") for a in td.ALGORITHMS]
    before = [list(k.signatures) for k in kernels]
    assert all(before)
    for slip, decay in ((0.0, False), (0.3, True)):  # the page's settings
        for algorithm in td.ALGORITHMS:
            td.run_control(cliff_walking(rows=3, cols=5, slip=slip), algorithm=algorithm,
                           episodes=3, runs=2, epsilon=0.1, alpha=0.5, gamma=0.9, seed=1,
                           max_steps=250, epsilon_decay=decay, max_total_steps=30_000)
    td.run_control(cliff_walking(), algorithm="sarsa", episodes=2, epsilon=1, alpha=1, gamma=1)
    assert [list(k.signatures) for k in kernels] == before  # nothing new to compile


def test_a_run_does_not_depend_on_how_many_runs_there_are(cliff):
    many = td.run_control(cliff, algorithm="sarsa", episodes=30, runs=4, seed=5)
    one = td.run_control(cliff, algorithm="sarsa", episodes=30, runs=1, seed=5)
    three = td.run_control(cliff, algorithm="sarsa", episodes=30, runs=3, seed=5)
    np.testing.assert_array_equal(one.returns[0], many.returns[0])
    np.testing.assert_array_equal(three.q[2], many.q[2])


def test_paired_dice_all_algorithms_walk_alike_when_every_action_is_random(cliff):
    # With ε = 1 no decision depends on Q, so every algorithm must see the very same episodes.
    results = [
        td.run_control(cliff, algorithm=a, episodes=15, runs=3, epsilon=1.0, max_steps=60, seed=2)
        for a in td.ALGORITHMS
    ]
    for res in results[1:]:
        np.testing.assert_array_equal(res.returns, results[0].returns)
        np.testing.assert_array_equal(res.visits, results[0].visits)
    assert not np.array_equal(results[0].q, results[1].q)  # ...while learning differently


def test_same_seed_same_result_different_seed_different(cliff):
    a = td.run_control(cliff, algorithm="q_learning", episodes=40, runs=3, seed=1)
    b = td.run_control(cliff, algorithm="q_learning", episodes=40, runs=3, seed=1)
    c = td.run_control(cliff, algorithm="q_learning", episodes=40, runs=3, seed=2)
    np.testing.assert_array_equal(a.returns, b.returns)
    np.testing.assert_array_equal(a.q, b.q)
    assert not np.array_equal(a.returns, c.returns)


# --------------------------------------------------------------------------- bookkeeping
@pytest.mark.parametrize("algorithm", td.ALGORITHMS)
def test_records_add_up(algorithm, cliff):
    res = td.run_control(cliff, algorithm=algorithm, episodes=60, runs=4, seed=3)
    assert res.returns.shape == res.lengths.shape == (4, 60)
    assert res.q.shape == (4, cliff.n_states, 4) and res.visits.shape == (4, cliff.n_states)
    # every step is taken from a visited state
    np.testing.assert_array_equal(res.visits.sum(axis=1), res.lengths.sum(axis=1))
    # on the cliff every move costs 1 and every fall 99 more
    falls = -res.returns - res.lengths
    assert (falls >= 0).all() and (falls % 99 == 0).all()
    assert res.visits[:, cliff.terminal].sum() == 0
    assert not res.returns.flags.writeable


def test_episodes_are_cut_at_max_steps(cliff):
    res = td.run_control(cliff, algorithm="q_learning", episodes=30, runs=3, epsilon=1.0,
                         max_steps=7, seed=4)
    assert res.lengths.max() == 7
    assert res.truncated.any()
    assert (res.lengths[res.truncated] == 7).all()
    assert (res.lengths[~res.truncated & (res.lengths < 7)] < 7).all()


def test_a_run_out_of_steps_stops_and_leaves_the_rest_unplayed(cliff):
    res = td.run_control(cliff, algorithm="sarsa", episodes=14, runs=6, epsilon=0.3,
                         max_steps=150, max_total_steps=1500, seed=9)
    assert res.stopped_early.any() and not res.stopped_early.all()
    np.testing.assert_array_equal(res.lengths.sum(axis=1)[res.stopped_early], 1500)
    assert (res.lengths.sum(axis=1) <= 1500).all()
    played = np.arange(14) < res.played[:, None]
    assert np.isnan(res.returns[~played]).all() and not np.isnan(res.returns[played]).any()
    assert (res.lengths[~played] == 0).all() and not res.truncated[~played].any()
    # the episode the budget interrupted is cut short
    last = res.played[res.stopped_early] - 1
    assert res.truncated[res.stopped_early, last].all()
    assert np.isfinite(res.mean_return(10))


def test_mean_return_uses_the_last_episodes_each_run_played():
    res = td.run_control(cliff_walking(), algorithm="q_learning", episodes=3, runs=2, seed=0)
    fake = dataclasses.replace(
        res, returns=np.array([[-10.0, -20.0, np.nan], [-30.0, -40.0, -50.0]]),
        played=np.array([2, 3]),
    )
    assert fake.mean_return(1) == pytest.approx(-35.0)
    assert fake.mean_return(2) == pytest.approx(-30.0)


def test_learning_curve_leaves_out_unplayed_episodes():
    curve = td.learning_curve(np.array([[1.0, 2.0, np.nan], [3.0, np.nan, np.nan]]), window=2)
    np.testing.assert_allclose(curve.mean[:2], [2.0, 1.5])  # run 1 played only episode 1
    assert curve.high[0] > curve.mean[0] > curve.low[0]
    assert curve.low[1] == curve.mean[1] == curve.high[1]  # one run: no band
    assert np.isnan(curve.mean[2]) and np.isnan(curve.low[2])


def test_epsilon_schedule():
    np.testing.assert_allclose(td.epsilon_schedule(0.1, 3, decay=True), [0.1, 0.05, 0.0])
    np.testing.assert_allclose(td.epsilon_schedule(0.1, 3), [0.1, 0.1, 0.1])
    np.testing.assert_allclose(td.epsilon_schedule(0.4, 1, decay=True), [0.4])


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(alpha=0.0), "step size α must be in \\(0, 1\\]"),
    (dict(alpha=1.5), "step size α"),
    (dict(alpha=float("nan")), "step size α"),
    (dict(epsilon=-0.1), "exploration rate ε must be between 0 and 1"),
    (dict(epsilon=1.1), "exploration rate ε"),
    (dict(gamma=1.2), "discount γ"),
    (dict(episodes=0), "number of episodes must be a whole number ≥ 1"),
    (dict(episodes=2.5), "number of episodes"),
    (dict(episodes=True), "number of episodes"),
    (dict(runs=0), "number of runs"),
    (dict(max_steps=0), "number of max_steps"),
    (dict(max_total_steps=0), "number of max_total_steps"),
])
def test_bad_settings_get_clear_messages(kwargs, match, cliff):
    args = dict(algorithm="sarsa", episodes=5) | kwargs
    with pytest.raises(InputError, match=match):
        td.run_control(cliff, **args)
    with pytest.raises(InputError, match=match):
        td.run_control_loop(cliff, **args)


def test_a_wrong_algorithm_name_or_environment_is_a_bug_not_a_users_mistake(cliff):
    with pytest.raises(ValueError, match="unknown algorithm 'td3'") as caught:
        td.run_control(cliff, algorithm="td3", episodes=5)
    assert caught.type is ValueError
    with pytest.raises(TypeError, match="TabularMDP"):
        td.run_control("cliff", algorithm="sarsa", episodes=5)


def test_an_episode_cannot_start_in_a_terminal_state(cliff):
    start = np.zeros(cliff.n_states)
    start[np.flatnonzero(cliff.terminal)[0]] = 1.0
    with pytest.raises(InputError, match="cannot start in a terminal state"):
        td.run_control(dataclasses.replace(cliff, start=start), algorithm="sarsa", episodes=3)


# --------------------------------------------------------------------------- the book
def test_optimal_return_on_the_cliff_is_minus_13(cliff):
    v = td.optimal_values(cliff)
    assert v[cliff.start_state] == -13.0
    assert v[cliff.grid.state_of_cell[0, 0]] == -14.0  # down 2, right 11, down 1
    assert td.greedy_return(cliff, action_values(cliff, v, 1.0)) == -13.0


def test_optimal_values_agree_with_exact_evaluation_when_slippery():
    mdp = cliff_walking(slip=0.2)
    v = td.optimal_values(mdp)
    assert td.greedy_return(mdp, action_values(mdp, v, 1.0)) == pytest.approx(
        v[mdp.start_state], abs=1e-8
    )


def test_q_learning_learns_the_optimal_edge_path(book, cliff):
    res = book["q_learning"]
    assert res.path.reaches_goal and res.path.length == 13
    assert (res.path_lengths == 13).mean() >= 0.98
    assert set(res.path.states[1:-1].tolist()) >= edge_row(cliff)  # it walks the edge
    assert td.greedy_return(cliff, res.mean_q) == -13.0


def test_sarsa_learns_a_path_off_the_edge(book, cliff):
    res = book["sarsa"]
    assert res.path.reaches_goal and res.path.length > 13
    assert not set(res.path.states.tolist()) & edge_row(cliff)
    runs_off_edge = [
        not set(td.greedy_path(cliff, q).states.tolist()) & edge_row(cliff) for q in res.q
    ]
    assert np.mean(runs_off_edge) >= 0.6


def test_sarsa_earns_more_online_than_q_learning_as_in_figure_6_4(book):
    q_learning, sarsa = book["q_learning"].mean_return(100), book["sarsa"].mean_return(100)
    assert sarsa > q_learning
    assert -60 < q_learning < -40  # the book's figure: about -50
    assert -35 < sarsa < -18  # the book's figure: about -25


def test_with_epsilon_decaying_to_zero_the_gap_closes(cliff):
    settings = BOOK | dict(runs=20, epsilon_decay=True)
    q = td.run_control(cliff, algorithm="q_learning", **settings)
    sarsa = td.run_control(cliff, algorithm="sarsa", **settings)
    assert (q.returns[:, -1] == -13).all()  # the last episode is greedy, and optimal
    assert abs(sarsa.mean_return(20) - q.mean_return(20)) < 6
    assert sarsa.path.reaches_goal


# --------------------------------------------------------------------------- paths and curves
def test_greedy_path_reports_loops(cliff):
    path = td.greedy_path(cliff, np.zeros((cliff.n_states, 4)))  # "up" everywhere
    assert path.loops and not path.reaches_goal
    assert path.states[-1] == path.states[-2]  # bumps into the top edge
    right = np.zeros((cliff.n_states, 4))
    right[:, 1] = 1.0
    into_cliff = td.greedy_path(cliff, right)
    assert into_cliff.loops and into_cliff.states.tolist() == [cliff.start_state] * 2
    assert td.greedy_return(cliff, right) is None


def test_a_path_into_the_cliff_is_drawn_into_the_cliff_cell(cliff):
    right = np.zeros((cliff.n_states, 4))
    right[:, 1] = 1.0
    drawn = figs.path_states(cliff, td.greedy_path(cliff, right))
    assert drawn == [cliff.start_state, int(cliff.grid.state_of_cell[3, 1])]


def test_learning_curve_by_hand():
    values = np.array([[1.0, 2.0, 3.0, 4.0], [3.0, 4.0, 5.0, 6.0]])
    curve = td.learning_curve(values, window=2)
    np.testing.assert_allclose(curve.mean, [2.0, 2.5, 3.5, 4.5])
    half = student_t.ppf(0.975, 1) * np.sqrt(2.0) / np.sqrt(2.0)
    np.testing.assert_allclose(curve.high - curve.mean, half)
    np.testing.assert_allclose(curve.mean - curve.low, half)
    single = td.learning_curve(values[:1], window=3)
    np.testing.assert_allclose(single.mean, [1.0, 1.5, 2.0, 3.0])
    np.testing.assert_array_equal(single.low, single.high)
    with pytest.raises(InputError, match="smoothing window"):
        td.learning_curve(values, window=0)


# --------------------------------------------------------------------------- the environment
def test_our_cliff_steps_like_gymnasium_along_a_route_with_a_fall(cliff):
    env = gym.make("CliffWalking-v1")
    s_gym, _ = env.reset(seed=0)
    s = cliff.start_state
    assert s == s_gym
    # right (into the cliff, back to the start), then up, eleven times right, down to the goal
    for a in [1, 0, *[1] * 11, 2]:
        s_gym, r_gym, terminated, _, _ = env.step(a)
        nxt, r = cliff.step(np.array([s]), np.array([a]), np.array([0.5]))
        s = int(nxt[0])
        assert (s, float(r[0])) == (s_gym, float(r_gym))
        assert bool(cliff.terminal[s]) == terminated
    assert terminated


# --------------------------------------------------------------------------- figures
def test_figures_draw_every_algorithm(book, cliff):
    results = {a: book[a] for a in ("q_learning", "sarsa")}
    fig = figs.learning_curves(results, window=10, optimal=-13.0)
    names = [t.name for t in fig.data]
    assert names == ["Q-learning 95% band", "Q-learning", "SARSA 95% band", "SARSA"]
    assert fig.layout.yaxis.range[0] < -13 - 80
    paths = figs.greedy_paths(cliff, results)
    drawn = [t for t in paths.data if t.name and t.name.startswith(("Q-learning", "SARSA"))]
    assert [t.name for t in drawn] == ["Q-learning: 13 moves", "SARSA: 17 moves"]
    frame = figs.episodes_frame(results, window=10)
    assert len(frame) == 1000 and set(frame["algorithm"]) == {"q_learning", "sarsa"}


def test_a_path_that_misses_the_goal_is_drawn_dotted(cliff):
    res = td.run_control(cliff, algorithm="sarsa", episodes=1, runs=1, seed=0)
    stuck = dataclasses.replace(res, path=td.greedy_path(cliff, np.zeros((cliff.n_states, 4))))
    fig = figs.greedy_paths(cliff, {"sarsa": stuck})
    line = [t for t in fig.data if t.name and t.name.startswith("SARSA")][0]
    assert line.line.dash == "dot" and "never reaches the goal" in line.name


def test_worked_update_steps_show_the_numbers():
    w = td.worked_update(-2.0, -1.0, Q_NEXT, 0, gamma=0.9, alpha=0.5, epsilon=0.1)
    steps = figs.worked_update_steps(w)
    assert steps["q_learning"].endswith(r"= \mathbf{-1.95}\end{aligned}")
    assert steps["sarsa"].endswith(r"= \mathbf{-2.85}\end{aligned}")
    assert steps["expected_sarsa"].endswith(r"= \mathbf{-2.0175}\end{aligned}")
    assert r"0.925 \cdot (-1)" in steps["expected_sarsa"]
    assert r"= -1.9 \\" in steps["q_learning"] and r"= -3.7 \\" in steps["sarsa"]
    fig = figs.worked_update_figure(w)
    assert len(fig.layout.annotations) == 3


def test_worked_update_shows_the_inputs_it_used_and_marks_rounded_results():
    w = td.worked_update(-2.345, -1.0, Q_NEXT, 0, gamma=0.975, alpha=0.333, epsilon=0.1)
    steps = figs.worked_update_steps(w)
    for text in steps.values():  # every input as entered, never rounded to fewer digits
        assert "0.975" in text and "0.333" in text and "(-2.345)" in text
    # -1 + 0.975 * (-1.15) = -2.12125 is shown to 4 decimals, after ≈, and so is what follows
    assert r"\approx -2.1212" in steps["expected_sarsa"] or r"\approx -2.1213" in steps[
        "expected_sarsa"]
    assert r"= -1.975 \\" in steps["q_learning"]  # exact: no ≈
    assert steps["q_learning"].endswith(r"\approx \mathbf{-2.2218}\end{aligned}")


def test_summary_reports_cut_episodes_and_runs_out_of_steps(cliff):
    res = td.run_control(cliff, algorithm="sarsa", episodes=14, runs=6, epsilon=0.3,
                         max_steps=150, max_total_steps=1500, seed=9)
    text = figs.summary({"sarsa": res}, last=5)
    assert f"{int(res.truncated.sum()):,} of {int(res.played.sum()):,} episodes" in text
    assert "used up their 1,500 steps before the last episode: SARSA 1 of 6." in text


def test_curve_axis_follows_a_learner_that_stays_far_below_the_optimum(book):
    res = book["sarsa"]
    bad = dataclasses.replace(res, returns=np.full_like(res.returns, -1000.0))
    fig = figs.learning_curves({"sarsa": bad}, window=10, optimal=-13.0)
    low, high = fig.layout.yaxis.range
    assert low < -1000 and -13 < high < 100
