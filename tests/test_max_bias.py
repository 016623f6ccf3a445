"""The maximization-bias engine and estimators: hand-worked steps, loop equality, closed forms."""

import math

import numpy as np
import pytest

from rlviz import max_bias as mb
from rlviz import td
from rlviz.bandits.book import EXPECTED_MAX_OF_10
from rlviz.errors import InputError

BOOK_MDP = mb.MaxBiasMDP()


# ----------------------------------------------------------------------------- ε-greedy
@pytest.mark.parametrize(("q", "explore_u", "pick_u", "epsilon", "want"), [
    ([1.0, 3.0, 3.0], 0.5, 0.0, 0.1, 1),  # greedy, two tied best: the first of them
    ([1.0, 3.0, 3.0], 0.5, 0.6, 0.1, 2),  # ... k = ⌊0.6 · 2⌋ = 1: the second
    ([1.0, 3.0, 2.0], 0.5, 0.99, 0.1, 1),  # one best action, whatever pick_u says
    ([1.0, 3.0, 2.0], 0.05, 0.99, 0.1, 2),  # exploring: ⌊0.99 · 3⌋ = 2
    ([1.0, 3.0, 2.0], 0.05, 0.34, 0.1, 1),  # exploring: ⌊0.34 · 3⌋ = 1
    ([0.0, 0.0], 0.0, 0.5, 0.0, 1),  # ε = 0 never explores (u = 0 is not below 0)
])
def test_epsilon_greedy_by_hand(q, explore_u, pick_u, epsilon, want):
    got = mb.epsilon_greedy(np.array([q]), np.array([explore_u]), np.array([pick_u]), epsilon)
    assert got.tolist() == [want]
    one = mb.epsilon_greedy(np.array(q), np.float64(explore_u), np.float64(pick_u), epsilon)
    assert int(one) == want


def test_epsilon_greedy_frequencies_are_the_epsilon_greedy_policy():
    rng = np.random.default_rng(1)
    q = np.array([0.5, 2.0, 2.0, -1.0, 2.0])
    n = 200_000
    actions = mb.epsilon_greedy(np.broadcast_to(q, (n, 5)), rng.random(n), rng.random(n), 0.3)
    freq = np.bincount(actions, minlength=5) / n
    want = td.epsilon_greedy_probs(q, 0.3)
    assert np.abs(freq - want).max() < 4 * math.sqrt(0.25 / n)


# ----------------------------------------------------------------------------- the step
def test_two_episodes_of_q_learning_by_hand():
    # Run 1 goes left (explore, pick 0) then picks b = 2 of 3 (explore, pick 0.7); then again.
    u = np.zeros((mb.N_UNIFORMS, 1))
    u[mb.A_EXPLORE], u[mb.A_PICK], u[mb.B_EXPLORE], u[mb.B_PICK] = 0.0, 0.1, 0.0, 0.7
    q_a, q_b = np.zeros((1, 1, 2)), np.zeros((1, 1, 3))
    kw = dict(algorithm="q_learning", epsilon=0.5, alpha=0.1, gamma=1.0, mean=-0.1, sigma=2.0)
    left = mb.episode(q_a, q_b, u, np.array([0.8]), **kw)
    assert left.tolist() == [True]
    r1 = -0.1 + 2.0 * 0.8  # 1.5
    assert q_a[0, 0].tolist() == [0.0, 0.0]  # target max Q(B) = 0, Q(A, left) stays 0
    assert q_b[0, 0].tolist() == [0.0, 0.0, 0.1 * r1]
    mb.episode(q_a, q_b, u, np.array([-0.3]), **kw)
    assert q_a[0, 0, mb.LEFT] == pytest.approx(0.1 * (0.1 * r1))  # bootstraps on max = 0.15
    r2 = -0.1 + 2.0 * -0.3
    assert q_b[0, 0, 2] == pytest.approx(0.1 * r1 + 0.1 * (r2 - 0.1 * r1))


def test_right_ends_with_zero_and_double_q_updates_the_coins_table():
    u = np.full((mb.N_UNIFORMS, 2), 0.9)
    u[mb.A_EXPLORE] = 0.0  # explore...
    u[mb.A_PICK] = [0.9, 0.9]  # ...and pick right in both runs
    u[mb.COIN_A] = [0.2, 0.7]  # run 1 updates Q1, run 2 Q2
    q_a = np.array([[[0.0, 0.5], [0.0, 0.5]], [[0.0, -0.5], [0.0, -0.5]]])
    q_b = np.zeros((2, 2, 4))
    left = mb.episode(q_a, q_b, u, np.zeros(2), algorithm="double_q", epsilon=0.1, alpha=0.5,
                      gamma=1.0, mean=-0.1, sigma=1.0)
    assert not left.any()
    assert q_a[0, :, mb.RIGHT].tolist() == [0.25, 0.5]  # Q1 halved towards 0 in run 1 only
    assert q_a[1, :, mb.RIGHT].tolist() == [-0.5, -0.25]
    assert not q_b.any()


def test_double_q_targets_read_the_other_table_at_the_first_best():
    u = np.zeros((mb.N_UNIFORMS, 2))
    u[mb.A_PICK] = 0.1  # explore left in both runs
    u[mb.COIN_A] = [0.2, 0.7]
    u[mb.B_EXPLORE] = 0.99  # greedy in B
    q_a = np.zeros((2, 2, 2))
    q_b = np.array([[[1.0, 3.0, 3.0], [5.0, 0.0, 0.0]], [[7.0, 11.0, 13.0], [2.0, 4.0, 1.0]]])
    mb.episode(q_a, q_b, u, np.zeros(2), algorithm="double_q", epsilon=0.5, alpha=1.0,
               gamma=0.5, mean=0.0, sigma=1.0)
    assert q_a[0, 0, mb.LEFT] == 0.5 * 11.0  # Q1 picks b2 (first of the tied best), Q2 values it
    assert q_a[1, 1, mb.LEFT] == 0.5 * 0.0  # Q2 picks b2 (4.0), Q1 values it (0.0)


# ----------------------------------------------------------------------------- the engine
CASES = [
    dict(),
    dict(mdp=mb.MaxBiasMDP(n_actions=1)),
    dict(mdp=mb.MaxBiasMDP(n_actions=7, mean=0.3, sigma=0.0), epsilon=0.0),
    dict(mdp=mb.MaxBiasMDP(n_actions=12, sigma=2.5), epsilon=0.5, alpha=1.0, gamma=0.8),
]


@pytest.mark.parametrize("algorithm", mb.METHODS)
@pytest.mark.parametrize("case", CASES, ids=["book", "one_action", "no_noise", "wild"])
def test_lockstep_equals_the_loop_draw_for_draw(algorithm, case):
    case = dict(case)
    mdp = case.pop("mdp", BOOK_MDP)
    settings = dict(episodes=70, runs=23, seed=5, **case)  # 70: a block and a part
    fast = mb.run(mdp, algorithms=(algorithm,), keep=23, **settings).methods[algorithm]
    slow = mb.run_loop(mdp, algorithm=algorithm, **settings)
    np.testing.assert_array_equal(fast.kept_q_a, slow["q_a"])
    np.testing.assert_array_equal(fast.kept_q_b, slow["q_b"])
    np.testing.assert_array_equal(fast.kept_left, slow["left"])
    np.testing.assert_array_equal(fast.left.mean, slow["left"].mean(axis=0))
    q_left = slow["q_a"][:, 1:, :, mb.LEFT].mean(axis=2)
    np.testing.assert_allclose(fast.q_left.mean, q_left.mean(axis=0), rtol=0, atol=1e-14)
    np.testing.assert_array_equal(fast.final_q_b, slow["q_b"][:, -1].mean(axis=1))


def test_a_run_does_not_depend_on_how_many_runs_there_are():
    few = mb.run(BOOK_MDP, runs=3, episodes=40, keep=3, seed=9)
    many = mb.run(BOOK_MDP, runs=200, episodes=40, keep=3, seed=9)
    for algo in mb.METHODS:
        np.testing.assert_array_equal(few.methods[algo].kept_q_b, many.methods[algo].kept_q_b)
        np.testing.assert_array_equal(few.methods[algo].kept_left, many.methods[algo].kept_left)


def test_one_method_alone_equals_the_same_method_among_all():
    alone = mb.run(BOOK_MDP, algorithms=("double_q",), runs=50, episodes=40, seed=4)
    together = mb.run(BOOK_MDP, runs=50, episodes=40, seed=4)
    np.testing.assert_array_equal(alone.methods["double_q"].left.mean,
                                  together.methods["double_q"].left.mean)


def test_same_seed_same_result_other_seed_other_result():
    a, b = (mb.run(BOOK_MDP, runs=100, episodes=50, seed=s) for s in (1, 1))
    c = mb.run(BOOK_MDP, runs=100, episodes=50, seed=2)
    for algo in mb.METHODS:
        np.testing.assert_array_equal(a.methods[algo].q_left.mean, b.methods[algo].q_left.mean)
        assert not np.array_equal(a.methods[algo].left.mean, c.methods[algo].left.mean)


def test_paired_dice_without_exploration_make_expected_sarsa_q_learning():
    # ε = 0: Expected SARSA's target is 0 · mean + 1 · max, Q-learning's exactly.
    res = mb.run(mb.MaxBiasMDP(n_actions=6), runs=300, episodes=60, epsilon=0.0, seed=3,
                 keep=300)
    q, e = res.methods["q_learning"], res.methods["expected_sarsa"]
    np.testing.assert_array_equal(q.kept_q_b, e.kept_q_b)
    np.testing.assert_array_equal(q.left.mean, e.left.mean)


def test_q_right_stays_zero_and_the_bands_hold_the_means():
    res = mb.run(BOOK_MDP, runs=500, episodes=100, seed=0)
    for m in res.methods.values():
        assert not m.q_right.mean.any()
        assert (m.left.low <= m.left.mean).all() and (m.left.mean <= m.left.high).all()
        assert (m.left.low >= 0).all() and (m.left.high <= 1).all()
        assert (m.q_left.low <= m.q_left.mean + 1e-15).all()
        assert (m.q_left.mean <= m.q_left.high + 1e-15).all()
    single = mb.run(BOOK_MDP, runs=1, episodes=20)
    curve = single.methods["q_learning"].q_left
    np.testing.assert_array_equal(curve.low, curve.high)


def test_the_book_figure():
    """Sutton & Barto (2018), Figure 6.5, at 2000 runs (the book: 10,000)."""
    res = mb.run(BOOK_MDP, runs=2000, episodes=300, seed=0)
    q, d, e = (res.methods[a] for a in ("q_learning", "double_q", "expected_sarsa"))
    assert q.left.mean[0] == pytest.approx(0.5, abs=0.04)  # ties broken at random
    assert q.left.mean.max() > 0.85  # "initially learns to take left much more often"
    assert (q.left.low > 0.05).all()  # "always significantly more often than 5%"
    assert abs(d.left_fraction(251, 300) - 0.05) < 0.03  # "essentially unaffected"
    assert q.left_fraction(251, 300) > d.left_fraction(251, 300) + 0.03
    assert e.left.mean.max() > 0.6  # Expected SARSA's target is mostly the same max
    assert q.q_left.mean.max() > 0.05 > 0 > res.mdp.q_left()  # Q(A, left) overestimated
    assert mb.book_settings(res)
    known = mb.known_answers(res, mb.estimator_study())
    assert all(_ok(k) for k in known), [k.label for k in known if not _ok(k)]
    assert len(known) == 9


def _ok(k: mb.Known) -> bool:
    if k.passed is not None:
        return bool(k.passed)
    return abs(float(k.value) - float(k.reference)) <= k.tol


def test_no_noise_means_no_bias_once_b_is_explored():
    res = mb.run(mb.MaxBiasMDP(sigma=0.0), runs=1000, episodes=300, seed=0)
    tails = [m.left_fraction(201, 300) for m in res.methods.values()]
    assert max(tails) - min(tails) < 1e-12  # the same dice and no noise: the same choices
    assert abs(tails[0] - 0.05) < 0.01


def test_worked_targets_match_the_kept_tables():
    res = mb.run(BOOK_MDP, runs=20, episodes=30, seed=0)
    w = mb.worked_targets(res, 12)
    q_b = res.methods["q_learning"].kept_q_b[0, 11, 0]
    assert w.value["q_learning"] == q_b.max()
    assert w.target["q_learning"] == td.q_learning_target(0.0, q_b, gamma=1.0)
    d = res.methods["double_q"].kept_q_b[0, 11]
    assert w.value["double_q"] == d[1, d[0].argmax()]
    e_q = res.methods["expected_sarsa"].kept_q_b[0, 11, 0]
    assert w.target["expected_sarsa"] == pytest.approx(
        float(td.epsilon_greedy_probs(e_q, 0.1) @ e_q), abs=1e-15)
    q_a = res.methods["q_learning"].kept_q_a[0, 11, 0, mb.LEFT]
    assert w.new_q_left["q_learning"] == td.td_update(q_a, w.target["q_learning"], 0.1)
    with pytest.raises(InputError, match="between 1 and 30"):
        mb.worked_targets(res, 31)


def test_first_run_dice_are_run_one_of_any_run():
    u, z = mb.first_run_dice(7, 40)
    block0, z0 = mb._dice(7, 5, 0)
    block1, z1 = mb._dice(7, 5, 1)
    np.testing.assert_array_equal(u[:32], block0[:, :, 0])
    np.testing.assert_array_equal(u[32:], block1[:8, :, 0])
    np.testing.assert_array_equal(z, np.concatenate([z0[:, 0], z1[:8, 0]]))


def test_dice_refilled_in_place_are_fresh_dice():
    first = mb._dice(3, 70, 0, (0, 1, 2, 3))
    again = mb._dice(3, 70, 1, (0, 1, 2, 3), out=mb._dice(3, 70, 0, (0, 1, 2, 3)))
    fresh = mb._dice(3, 70, 1, (0, 1, 2, 3))
    for a, b in zip(again, fresh, strict=True):
        np.testing.assert_array_equal(a, b)
    assert np.isnan(again[0][:, mb.COIN_A]).all() and not np.array_equal(first[1], fresh[1])


def test_methods_trained_one_call_each_on_shared_dice_equal_one_call():
    mdp = mb.MaxBiasMDP(n_actions=4, sigma=2.0)
    settings = dict(episodes=70, runs=300, epsilon=0.3, seed=4, keep=2)
    together = mb.run(mdp, **settings)
    with mb.shared_dice():
        apart = {a: mb.run(mdp, algorithms=(a,), **settings).methods[a] for a in mb.METHODS}
        with mb.shared_dice():  # nested: the outer block's dice serve
            again = mb.run(mdp, algorithms=("double_q",), **settings).methods["double_q"]
        shared = mb.mdp._SHARED.dice
        # every block of the six columns and the normals, each drawn once and kept
        assert len(shared.columns) == 3 * (mb.N_UNIFORMS + 1)
    assert mb.mdp._SHARED.dice is None  # dropped at the end of the block
    for a in mb.METHODS:
        for field in ("kept_q_a", "kept_q_b", "final_q_a", "final_q_b"):
            np.testing.assert_array_equal(getattr(apart[a], field),
                                          getattr(together.methods[a], field))
        np.testing.assert_array_equal(apart[a].q_left.mean, together.methods[a].q_left.mean)
    np.testing.assert_array_equal(again.kept_q_b, apart["double_q"].kept_q_b)


# ----------------------------------------------------------------------------- estimators
def test_max_estimators_by_hand():
    a = np.array([[1.0, 4.0, 2.0]])
    b = np.array([[3.0, 0.0, 2.0]])
    single, double = mb.max_estimators(a, b)
    assert single.tolist() == [2.0]  # means 2, 2, 2
    assert double.tolist() == [0.0]  # A picks the second, B says 0


@pytest.mark.parametrize(("m", "want"), [
    (1, 0.0),
    (2, 1 / math.sqrt(math.pi)),
    (3, 3 / (2 * math.sqrt(math.pi))),
    (10, EXPECTED_MAX_OF_10),
])
def test_expected_max_of_normals_has_its_known_values(m, want):
    assert mb.expected_max_of_normals(m) == pytest.approx(want, abs=1e-12)


def test_expected_max_grows_like_sqrt_two_log_m():
    values = [mb.expected_max_of_normals(m) for m in (10, 100)]
    assert values[0] < values[1] < math.sqrt(2 * math.log(100))


@pytest.mark.parametrize(("m", "sigma", "samples", "gap"), [
    (10, 1.0, 10, 0.0), (3, 2.0, 4, 0.0), (20, 0.5, 50, 0.3), (5, 1.0, 2, 1.0), (50, 3.0, 6, 0.1),
])
def test_monte_carlo_agrees_with_the_closed_forms(m, sigma, samples, gap):
    s = mb.estimator_study(m=m, sigma=sigma, samples=samples, gap=gap, trials=20_000, seed=1)
    for mc, half, exact in ((s.single_mc, s.single_half, s.single_exact),
                            (s.double_mc, s.double_half, s.double_exact),
                            (s.by_samples_single_mc, s.by_samples_single_half,
                             s.by_samples_single_exact),
                            (s.by_samples_double_mc, s.by_samples_double_half,
                             s.by_samples_double_exact)):
        assert (np.abs(mc - exact) <= 2.2 * half + 1e-12).all(), (mc, exact, half)


def test_closed_forms_are_continuous_in_the_gap_and_signed():
    for m in (2, 10, 100):
        assert mb.single_estimator_bias(m, 1.0, 10, gap=1e-9) == pytest.approx(
            mb.single_estimator_bias(m, 1.0, 10), abs=1e-7)
        assert mb.double_estimator_bias(m, 1.0, 10, gap=0.5) < 0
        assert mb.single_estimator_bias(m, 1.0, 10, gap=5.0) < mb.single_estimator_bias(m, 1.0, 10)
    assert mb.single_estimator_bias(10, 1.0, 10) == pytest.approx(
        EXPECTED_MAX_OF_10 / math.sqrt(10), abs=1e-12)
    assert mb.single_estimator_bias(10, 0.0, 10) == 0.0 == mb.double_estimator_bias(10, 0.0, 10)


@pytest.mark.parametrize(("m", "sigma", "samples", "gap"), [
    (10, 1.0, 10, 0.0), (100, 3.0, 2, 2.0), (1, 1.0, 4, 0.5), (7, 0.0, 6, 0.3), (2, 0.0, 2, 0.0),
])
def test_the_study_equals_both_estimators_on_every_action(m, sigma, samples, gap):
    trials, seed = 300, 5
    s = mb.estimator_study(m=m, sigma=sigma, samples=samples, gap=gap, trials=trials, seed=seed)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,)))
    z = rng.standard_normal((2, trials, max(s.actions)))  # the study's draws

    def full(k, n):  # every one of the k actions, as a reader would write it
        means = np.where(np.arange(k) == 0, 0.0, -gap)
        sd = sigma / math.sqrt(n / 2)
        return mb.max_estimators(means + sd * z[0, :, :k], means + sd * z[1, :, :k])

    def mean(estimates):  # over the trials, added up as the study does
        return np.stack(estimates, axis=1).mean(axis=0)

    by_k = [full(k, samples) for k in s.actions]
    by_n = [full(m, n) for n in s.sample_grid]
    np.testing.assert_array_equal(s.single_mc, mean([x for x, _ in by_k]))
    np.testing.assert_array_equal(s.double_mc, mean([y for _, y in by_k]))
    np.testing.assert_array_equal(s.by_samples_single_mc, mean([x for x, _ in by_n]))
    np.testing.assert_array_equal(s.by_samples_double_mc, mean([y for _, y in by_n]))


def test_the_study_is_reproducible_and_nested():
    a = mb.estimator_study(seed=3)
    b = mb.estimator_study(seed=3)
    np.testing.assert_array_equal(a.single_mc, b.single_mc)
    assert a.m in a.actions and a.samples in a.sample_grid
    i = a.actions.index(a.m)
    j = a.sample_grid.index(a.samples)
    assert a.single_mc[i] == a.by_samples_single_mc[j]  # the same trials in both charts


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("call", "message"), [
    (lambda: mb.MaxBiasMDP(n_actions=0), "between 1 and 100 actions"),
    (lambda: mb.MaxBiasMDP(n_actions=101), "between 1 and 100 actions"),
    (lambda: mb.MaxBiasMDP(sigma=-1.0), "noise σ"),
    (lambda: mb.run(BOOK_MDP, epsilon=1.5), "exploration rate"),
    (lambda: mb.run(BOOK_MDP, alpha=0.0), "step size"),
    (lambda: mb.run(BOOK_MDP, gamma=2.0), "discount"),
    (lambda: mb.run(BOOK_MDP, episodes=0), "episodes"),
    (lambda: mb.run(BOOK_MDP, runs=mb.MAX_RUNS + 1), "runs"),
    (lambda: mb.run(BOOK_MDP, algorithms=()), "at least one method"),
    (lambda: mb.estimator_study(samples=3), "even"),
    (lambda: mb.estimator_study(trials=1), "trials"),
    (lambda: mb.estimator_study(gap=-0.1), "gap"),
])
def test_bad_settings_are_input_errors(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_an_unknown_method_is_a_bug_not_an_input_error():
    with pytest.raises(ValueError) as err:
        mb.run(BOOK_MDP, algorithms=("sarsa",))
    assert not isinstance(err.value, InputError)
