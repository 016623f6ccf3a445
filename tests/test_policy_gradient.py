"""The short corridor's exact values and gradient, the learners, the gradient-estimator study."""

import math

import numpy as np
import pytest

from rlviz import policy_gradient as pg
from rlviz.errors import InputError
from rlviz.interview.whiteboard import policy_gradient as whiteboard
from tests.policy_gradient_reference import run_loop

GRID = np.linspace(0.02, 0.98, 49)


# --------------------------------------------------------------------------- exact values
def test_the_corridor_moves_as_in_example_13_1():
    right = [pg.corridor_step(np.array([s]), np.array([pg.RIGHT]))[0][0] for s in range(3)]
    left = [pg.corridor_step(np.array([s]), np.array([pg.LEFT]))[0][0] for s in range(3)]
    assert right == [1, 0, pg.GOAL]  # in state 1 the actions are reversed
    assert left == [0, 2, 1]  # left in S stays in S
    assert pg.corridor_step(np.array([2]), np.array([pg.RIGHT]))[1] == -1.0  # into G costs −1


def test_transition_matrix_by_hand():
    P = pg.transition_matrix(0.3)
    np.testing.assert_allclose(P, [[0.7, 0.3, 0.0], [0.3, 0.0, 0.7], [0.0, 0.7, 0.0]])
    np.testing.assert_allclose(P.sum(axis=1), [1.0, 1.0, 0.7])  # the rest goes to G


def test_values_solve_the_bellman_equations_and_match_the_closed_form():
    v = pg.state_values(GRID)
    p = GRID[:, None]
    P = pg.transition_matrix(GRID)
    np.testing.assert_allclose(v, -1.0 + (P @ v[..., None])[..., 0], atol=1e-9)
    np.testing.assert_allclose(v[:, 0], pg.closed_form_value(GRID), rtol=1e-12)
    # v(3) = −1 + (1 − p) v(2): from the last state right ends the episode.
    np.testing.assert_allclose(v[:, 2], -1.0 + (1 - p[:, 0]) * v[:, 1], rtol=1e-12)
    assert pg.start_value(0.5) == pytest.approx(-12.0)  # (1 − 4) / (1/4)


def test_the_optimum_is_two_minus_root_two():
    star = pg.optimal_probability()
    assert star == pytest.approx(2 - math.sqrt(2), abs=1e-15)
    assert pg.argmax_value() == pytest.approx(star, abs=1e-7)
    assert pg.start_value(star) == pytest.approx(-(4 - 2 * star) / (star * (1 - star)))
    assert pg.start_value(star) == pytest.approx(-11.66, abs=0.005)  # the book: about −11.6
    assert (pg.start_value(GRID) <= pg.start_value(star) + 1e-12).all()


def test_epsilon_greedy_values_are_about_minus_44_and_minus_82():
    eps = pg.epsilon_greedy_values(0.1)  # greedy action with probability 0.95
    assert eps["right"] == pytest.approx(-2.1 / 0.0475)  # J(0.95) = (1.9 − 4)/(0.95 · 0.05)
    assert eps["left"] == pytest.approx(-3.9 / 0.0475)  # J(0.05) = (0.1 − 4)/(0.05 · 0.95)
    assert round(eps["right"]) == -44 and round(eps["left"]) == -82


def test_expected_visits_sum_to_the_episode_length():
    eta = pg.visits(GRID)
    assert (eta > 0).all()
    np.testing.assert_allclose(eta.sum(axis=1), -pg.start_value(GRID), rtol=1e-12)


@pytest.mark.parametrize("p", [0.05, 0.2, 0.5, 2 - math.sqrt(2), 0.8, 0.95])
def test_exact_gradient_matches_closed_form_and_finite_difference(p):
    theta = np.array([0.3, 0.3 - math.log(p / (1 - p))])
    g = pg.exact_gradient(theta)
    assert g[1] == pytest.approx(-g[0])
    assert g[0] == pytest.approx(pg.closed_form_gradient(p), rel=1e-10, abs=1e-10)
    h = 1e-6
    for i in range(2):
        e = np.eye(2)[i] * h
        fd = (pg.start_value(pg.policy(theta + e)[0]) - pg.start_value(pg.policy(theta - e)[0]))
        assert g[i] == pytest.approx(fd / (2 * h), rel=1e-6, abs=1e-6)


def test_the_gradient_vanishes_at_the_optimum_only():
    star = pg.optimal_probability()
    assert pg.closed_form_gradient(star) == pytest.approx(0.0, abs=1e-12)
    signs = np.sign(pg.closed_form_gradient(GRID))
    assert (signs[GRID < star] > 0).all() and (signs[GRID > star] < 0).all()


# --------------------------------------------------------------------------- the policy
def test_policy_is_the_softmax_even_for_huge_preferences():
    rng = np.random.default_rng(0)
    theta = np.concatenate([rng.normal(size=(50, 2)) * 3, [[800.0, -800.0], [-1e4, 2.0]]])
    pi = pg.policy(theta)
    np.testing.assert_allclose(pi, pg.softmax(theta), atol=1e-15)
    np.testing.assert_allclose(pi.sum(axis=1), 1.0)
    assert np.isfinite(pi).all()


def test_score_is_onehot_minus_pi_and_the_derivative_of_log_pi():
    rng = np.random.default_rng(1)
    theta = rng.normal(size=(20, 2))
    action = rng.integers(0, 2, size=20)
    pi = pg.policy(theta)
    np.testing.assert_allclose(pg.score(pi, action), np.eye(2)[action] - pi)
    h = 1e-6
    for i in range(2):
        e = np.eye(2)[i] * h
        fd = (np.log(pg.softmax(theta + e)[np.arange(20), action])
              - np.log(pg.softmax(theta - e)[np.arange(20), action])) / (2 * h)
        np.testing.assert_allclose(pg.score(pi, action)[:, i], fd, atol=1e-7)


def test_score_with_general_features():
    rng = np.random.default_rng(2)
    features = rng.normal(size=(3, 4))  # three actions, four features
    theta = rng.normal(size=4)
    pi = pg.softmax(features @ theta)
    for a in range(3):
        h = 1e-6
        fd = [(np.log(pg.softmax(features @ (theta + h * e))[a])
               - np.log(pg.softmax(features @ (theta - h * e))[a])) / (2 * h) for e in np.eye(4)]
        np.testing.assert_allclose(pg.score(pi, np.intp(a), features), fd, atol=1e-7)
    # Its expectation under π is zero.
    mean = sum(pi[a] * pg.score(pi, np.intp(a), features) for a in range(3))
    np.testing.assert_allclose(mean, 0.0, atol=1e-12)


def test_whiteboard_score_and_estimate_equal_rlviz_on_random_inputs():
    rng = np.random.default_rng(3)
    for _ in range(20):
        theta = rng.normal(size=2) * 2
        pi = pg.policy(theta)
        a = int(rng.integers(0, 2))
        np.testing.assert_allclose(whiteboard.softmax_score(theta, a), pg.score(pi, np.intp(a)))
        T = int(rng.integers(1, 30))
        actions = rng.integers(0, 2, size=T)
        rewards = rng.normal(size=T)
        b = float(rng.normal())
        ours = pg.episode_gradient(pi, actions, pg.returns_to_go(rewards) - b)
        np.testing.assert_allclose(whiteboard.reinforce_gradient(theta, actions, rewards, b), ours,
                                   atol=1e-12)


# --------------------------------------------------------------------------- Monte Carlo
def test_returns_to_go_by_hand():
    np.testing.assert_array_equal(pg.returns_to_go(np.array([[-1.0, -1, -1, 0, 0]])),
                                  [[-3, -2, -1, 0, 0]])


def test_episode_gradient_is_the_sum_of_scores():
    rng = np.random.default_rng(4)
    pi = pg.policy(rng.normal(size=(6, 2)))
    actions = rng.integers(0, 2, size=(6, 11))
    weights = rng.normal(size=(6, 11))
    direct = np.einsum("rt,rta->ra", weights, pg.score(pi[:, None, :], actions))
    np.testing.assert_allclose(pg.episode_gradient(pi, actions, weights), direct, atol=1e-12)


# --------------------------------------------------------------------------- the compiled learners
# Seed 8's first numbers are 0.327, 0.987, 0.319: at π(right) near ½ they make the episode
# right (S → 2), left (reversed: 2 → 3), right (3 → G), three steps.
R_L_R = 8


def _one_episode(kernel, *extra, p0=0.5, alpha_theta=1.0, alpha_w=0.5, max_steps=100,
                 budget=10**6, episodes=1):
    returns, p_right = np.full(episodes, np.nan), np.full(episodes, np.nan)
    half = 0.5 * math.log(p0 / (1 - p0))
    out = kernel(np.random.default_rng(R_L_R), half, -half, alpha_theta, alpha_w, *extra,
                 max_steps, budget, returns, p_right)
    return out, returns, p_right


def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def test_seed_8_plays_right_left_right():
    u = np.random.default_rng(R_L_R).random(3)
    # right below every π(right) met on the way (½, and ≈ 0.469 at actor-critic's third step),
    # left at or above every one (½, and σ(−½) ≈ 0.378 at actor-critic's second)
    assert u[0] < 0.5 and u[1] >= 0.5 and u[2] < 0.469


def test_reinforce_one_episode_by_hand():
    # p = ½ during the episode; G = −3, −2, −1; ∂ln π/∂θ_right = ½, −½, ½.
    # g = −3·½ − 2·(−½) − 1·½ = −1, so θ = (−1, 1) at α = 1 and π(right) = σ(−2).
    (steps, ran_away, cut), returns, p_right = _one_episode(pg.reinforce_run, False)
    assert (steps, ran_away, cut) == (3, -1, -1)
    assert returns[0] == -3
    assert p_right[0] == pytest.approx(_sigmoid(-2.0), rel=1e-12)


def test_reinforce_with_baseline_one_episode_by_hand():
    # w: 0 → −1.5 → −1.75 → −1.375 with δ = −3, −0.5, 0.75 (α_w = ½);
    # g = −3·½ − 0.5·(−½) + 0.75·½ = −0.875, θ = (−0.875, 0.875), π(right) = σ(−1.75).
    (steps, _, _), returns, p_right = _one_episode(pg.reinforce_run, True)
    assert steps == 3 and returns[0] == -3
    assert p_right[0] == pytest.approx(_sigmoid(-1.75), rel=1e-12)


def test_actor_critic_one_episode_by_hand():
    # Critic 0 everywhere, α_θ = α_w = ½, per-state critic. Every δ is −1 (v̂(S') − v̂(S) is 0
    # each time: S, 2, 3 are each met once, before any update to the next one).
    # Step 1, right at p = ½: θ_right −= ½·½.            θ gap −½.
    # Step 2, left at p = σ(−½): θ_right += ½·σ(−½).      gap −½ + σ(−½)
    # Step 3, right at p = σ(gap): θ_right −= ½·(1 − p).
    gap = -0.5
    gap += 2 * 0.5 * _sigmoid(gap)
    gap -= 2 * 0.5 * (1 - _sigmoid(gap))
    (steps, _, _), returns, p_right = _one_episode(pg.actor_critic_run, pg.CRITICS["per_state"],
                                                   alpha_theta=0.5)
    assert steps == 3 and returns[0] == -3
    assert p_right[0] == pytest.approx(_sigmoid(gap), rel=1e-12)


def test_compiled_learners_run_away_and_run_out_of_steps():
    for kernel, extra in ((pg.reinforce_run, (True,)),
                          (pg.actor_critic_run, (pg.CRITICS["one_value"],))):
        # An episode can never end in one step: with max_steps 1 the run runs away at once.
        (steps, ran_away, cut), returns, p_right = _one_episode(kernel, *extra, max_steps=1,
                                                                episodes=2)
        assert (steps, ran_away, cut) == (1, 0, -1)
        assert np.isnan(returns).all() and np.isnan(p_right).all()
        # The first episode takes 3 steps, the whole budget: the second is never started.
        (steps, ran_away, cut), returns, _ = _one_episode(kernel, *extra, budget=3, episodes=2)
        assert (steps, ran_away, cut) == (3, -1, 1)
        assert returns[0] == -3 and np.isnan(returns[1])


# --------------------------------------------------------------------------- episodes
def test_play_episodes_follows_the_corridor_step_by_step():
    rng = np.random.default_rng(7)
    p = np.array([0.05, 0.3, 0.5, 0.6, 0.9, 0.97])
    u = rng.random((6, 5000))
    ep = pg.play_episodes(p, lambda t0, n, rows: u[rows, t0:t0 + n], states=True)
    bare = pg.play_episodes(p, lambda t0, n, rows: u[rows, t0:t0 + n])
    assert bare.states is None
    np.testing.assert_array_equal(bare.actions, ep.actions)
    np.testing.assert_array_equal(bare.alive, ep.alive)
    for lane in range(6):
        s, t = pg.START, 0
        while s != pg.GOAL:
            a = pg.RIGHT if u[lane, t] < p[lane] else pg.LEFT
            assert ep.states[lane, t] == s and ep.actions[lane, t] == a
            s = pg.NEXT[s, a]
            t += 1
        assert ep.lengths[lane] == t and ep.finished[lane]
        assert ep.alive[lane, :t].all() and not ep.alive[lane, t:].any()


def test_play_episodes_cuts_at_max_steps():
    p = np.array([1e-9, 0.5])
    rng = np.random.default_rng(8)
    u = rng.random((2, 2000))
    ep = pg.play_episodes(p, lambda t0, n, rows: u[rows, t0:t0 + n], max_steps=200, states=True)
    assert not ep.finished[0] and ep.lengths[0] == 200
    assert ep.finished[1] and ep.lengths[1] < 200
    assert ep.states.shape[1] == 200


# --------------------------------------------------------------------------- training
METHODS = [
    pg.Method("reinforce", 2.0**-13),
    pg.Method("reinforce", 2.0**-11),
    pg.Method("reinforce_with_baseline", 2.0**-9, 2.0**-6),
    pg.Method("actor_critic", 2.0**-6, 2.0**-4),
    pg.Method("actor_critic", 2.0**-6, 2.0**-4, critic="one_value"),
]


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
@pytest.mark.parametrize(("p0", "seed"), [(0.05, 3), (0.5, 11)])
def test_train_equals_the_plain_loop(method, p0, seed):
    t = pg.train([method], runs=3, episodes=120, p0=p0, seed=seed)
    ref = run_loop(method, runs=3, episodes=120, p0=p0, seed=seed)
    np.testing.assert_array_equal(t.returns[0], ref["returns"])
    np.testing.assert_allclose(t.p_right[0], ref["p_right"], atol=1e-6)
    np.testing.assert_array_equal(t.ran_away[0], ref["ran_away"])
    np.testing.assert_array_equal(t.cut[0], ref["cut"])
    np.testing.assert_array_equal(t.steps[0], ref["steps"])


@pytest.mark.parametrize("method", METHODS, ids=lambda m: m.name)
def test_train_equals_the_plain_loop_when_runs_run_out_of_steps(method):
    t = pg.train([method], runs=4, episodes=200, p0=0.05, seed=2, budget=1500, ac_budget=1500,
                 max_steps=700)
    ref = run_loop(method, runs=4, episodes=200, p0=0.05, seed=2, budget=1500, max_steps=700)
    assert ((t.cut[0] >= 0) | (t.ran_away[0] >= 0)).all()
    np.testing.assert_array_equal(t.returns[0], ref["returns"])
    np.testing.assert_allclose(t.p_right[0], ref["p_right"], atol=1e-6)
    np.testing.assert_array_equal(t.ran_away[0], ref["ran_away"])
    np.testing.assert_array_equal(t.cut[0], ref["cut"])
    np.testing.assert_array_equal(t.steps[0], ref["steps"])


def test_runaway_runs_stop_and_score_max_steps():
    m = pg.Method("actor_critic", 2.0**-6, 2.0**-4, critic="one_value")
    t = pg.train([m], runs=3, episodes=300, p0=0.05, seed=0, max_steps=500)
    ref = run_loop(m, runs=3, episodes=300, p0=0.05, seed=0, max_steps=500)
    assert (t.ran_away[0] >= 0).all()
    np.testing.assert_array_equal(t.ran_away[0], ref["ran_away"])
    for r, k in enumerate(t.ran_away[0]):
        assert (t.returns[0, r, k:] == -500).all() and np.isnan(t.p_right[0, r, k:]).all()
        assert t.p_right[0, r, k - 1] > 0.9  # the one-value critic pushed it right


def test_same_seed_same_runs_and_run_r_does_not_depend_on_the_number_of_runs():
    a = pg.train(METHODS[:1] + METHODS[3:4], runs=5, episodes=60, p0=0.05, seed=9)
    b = pg.train(METHODS[:1] + METHODS[3:4], runs=5, episodes=60, p0=0.05, seed=9)
    c = pg.train(METHODS[:1] + METHODS[3:4], runs=2, episodes=60, p0=0.05, seed=9)
    d = pg.train(METHODS[:1] + METHODS[3:4], runs=5, episodes=60, p0=0.05, seed=10)
    np.testing.assert_array_equal(a.returns, b.returns)
    np.testing.assert_array_equal(a.returns[:, :2], c.returns)
    assert not np.array_equal(a.returns, d.returns)


def test_learners_share_their_random_numbers():
    t = pg.train(METHODS[:3], runs=6, episodes=5, p0=0.05, seed=1)
    # Same policy, same numbers: the Monte-Carlo learners' first episodes are the same (the
    # actor-critic's policy moves within its first episode).
    assert (t.returns[:, :, 0] == t.returns[0, :, 0]).all()


def test_join_keeps_the_learners_in_order():
    parts = [pg.train([m], runs=2, episodes=10, p0=0.05, seed=0) for m in METHODS[:3]]
    joined = pg.Training.join(parts)
    assert joined.methods == tuple(METHODS[:3])
    np.testing.assert_array_equal(joined.returns[1], parts[1].returns[0])
    with pytest.raises(InputError):
        pg.Training.join([parts[0], pg.train(METHODS[:1], runs=3, episodes=10, p0=0.05, seed=0)])


@pytest.mark.slow
def test_the_book_step_sizes_approach_the_optimum():
    methods = [pg.Method("reinforce", 2.0**-13), pg.Method("reinforce_with_baseline", 2.0**-9,
                                                           2.0**-6)]
    t = pg.train(methods, runs=100, episodes=1000, p0=0.05, seed=0)
    best = pg.start_value(pg.optimal_probability())
    for m in methods:
        assert abs(t.final_mean(m) - best) < 0.1 * abs(best)
    assert (t.ran_away == -1).all() and (t.cut == -1).all()
    # The baseline learns much faster (Figure 13.2).
    early = t.returns[:, :, :100].mean(axis=(1, 2))
    assert early[1] > early[0] + 15


def test_learning_curve_by_hand():
    values = np.array([[1.0, 3.0, np.nan], [3.0, 5.0, 7.0]])
    c = pg.learning_curve(values)
    np.testing.assert_allclose(c.mean, [2.0, 4.0, 7.0])
    half = 12.706204736 * math.sqrt(2.0) / math.sqrt(2)  # t(0.975, 1) · s / √2, s = √2
    np.testing.assert_allclose(c.high - c.mean, [half, half, 0.0], rtol=1e-8)
    smooth = pg.learning_curve(values, window=2)
    np.testing.assert_allclose(smooth.mean, [2.0, 3.0, 6.0])


# --------------------------------------------------------------------------- gradient study
@pytest.fixture(scope="module")
def studies():
    return {p: pg.gradient_study(p, episodes=3000, constant=-20.0, seed=4)
            for p in (0.1, 0.3, 0.6, 0.9)}


def test_every_baseline_and_the_exact_critic_are_unbiased(studies):
    for s in studies.values():
        for k in ("none", "constant", "learned", "true_v", "optimal", "td_true"):
            i = s.index(k)
            assert abs(s.means[i] - s.exact) <= 1.5 * s.half_widths[i], (s.p, k)


def test_the_one_value_critic_is_biased_towards_right(studies):
    for s in studies.values():
        i = s.index("td_one")
        assert s.means[i] == pytest.approx(-s.one_value * (1 - s.p), abs=3 * s.half_widths[i])
        assert s.means[i] > 0 and abs(s.means[i] - s.exact) > 5 * s.half_widths[i]


def test_the_optimal_baseline_has_the_least_variance(studies):
    for s in studies.values():
        var = s.variances
        assert var[s.index("optimal")] <= var[: s.index("optimal") + 1].min() + 1e-9
        assert var[s.index("td_true")] < var[s.index("optimal")] / 10


def test_the_parabola_is_the_constant_baselines_variance(studies):
    for s in studies.values():
        assert s.variance_at(np.array(s.constant)) == pytest.approx(
            s.variances[s.index("constant")], rel=1e-9)
        grid = np.linspace(-200, 50, 101)
        assert (s.variance_at(grid) >= s.variance_at(np.array(s.best_constant)) - 1e-6).all()


def test_the_learned_baseline_is_where_the_per_step_update_settles():
    p = 0.4
    s = pg.gradient_study(p, episodes=200, constant=0.0, seed=0)
    eta, v = pg.visits(p), pg.state_values(p)
    assert s.learned == pytest.approx(eta @ v / eta.sum())
    # Fixed point of w ← w + α (G_t − w): E[Σ_t (G_t − w)] = Σ_s η(s) (v(s) − w) = 0.
    assert eta @ (v - s.learned) == pytest.approx(0.0, abs=1e-9)


def test_the_study_is_deterministic():
    a = pg.gradient_study(0.3, episodes=300, constant=-10.0, seed=5)
    b = pg.gradient_study(0.3, episodes=300, constant=-10.0, seed=5)
    c = pg.gradient_study(0.3, episodes=300, constant=-10.0, seed=6)
    np.testing.assert_array_equal(a.samples, b.samples)
    assert not np.array_equal(a.samples, c.samples)


# --------------------------------------------------------------------------- worked score
def test_worked_score_by_hand_and_by_finite_difference():
    w = pg.worked_score(0.5, -0.5, pg.LEFT, ret=-12.0, baseline=-10.0, alpha=0.01)
    p = 1 / (1 + math.exp(-1.0))
    np.testing.assert_allclose(w.pi, [p, 1 - p])
    np.testing.assert_allclose(w.score, [-p, p])
    np.testing.assert_allclose(w.finite_difference, w.score, atol=1e-8)
    np.testing.assert_allclose(w.new_theta, [0.5 + 0.01 * -2 * -p, -0.5 + 0.01 * -2 * p])
    assert w.new_pi[pg.LEFT] < w.pi[pg.LEFT]  # G − b < 0: the action taken loses probability


# --------------------------------------------------------------------------- input errors
@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pg.start_value(0.0), "strictly between 0 and 1"),
        (lambda: pg.start_value(float("nan")), "strictly between 0 and 1"),
        (lambda: pg.initial_theta(1.0), "initial π"),
        (lambda: pg.Method("sarsa", 0.1), "unknown learner"),
        (lambda: pg.Method("reinforce", -1.0), "positive"),
        (lambda: pg.Method("actor_critic", 0.1, 0.5), "at most 1/4"),
        (lambda: pg.Method("actor_critic", 0.1, 0.1, critic="none"), "unknown critic"),
        (lambda: pg.train([], runs=2, episodes=2, p0=0.5, seed=0), "at least one"),
        (lambda: pg.train(METHODS[:1], runs=0, episodes=2, p0=0.5, seed=0), "number of runs"),
        (lambda: pg.train(METHODS[:1], runs=2, episodes=2, p0=0.5, seed=-1), "seed"),
        (lambda: pg.train(METHODS[:1] * 2, runs=2, episodes=2, p0=0.5, seed=0), "once"),
        (lambda: pg.gradient_study(0.3, episodes=5, constant=0.0, seed=0), "episodes"),
        (lambda: pg.gradient_study(0.3, episodes=50, constant=math.inf, seed=0), "finite"),
        (lambda: pg.worked_score(0.0, 0.0, 2, ret=0.0, baseline=0.0, alpha=0.1), "right or"),
        (lambda: pg.worked_score(900.0, -900.0, 0, ret=0.0, baseline=0.0, alpha=0.1), "700"),
        (lambda: pg.epsilon_greedy_values(0.0), "ε"),
        (lambda: pg.exact_gradient([1.0, 2.0, 3.0]), "one preference per action"),
    ],
)
def test_user_mistakes_raise_input_errors(call, message):
    with pytest.raises(InputError, match=message):
        call()


def test_reinforce_step_sizes_trained_together_equal_each_alone():
    ms = [pg.Method("reinforce", a) for a in pg.BOOK_REINFORCE]
    together = pg.train(ms, runs=3, episodes=80, p0=0.05, seed=4)
    for i, m in enumerate(ms):
        alone = pg.train([m], runs=3, episodes=80, p0=0.05, seed=4)
        np.testing.assert_array_equal(together.returns[i], alone.returns[0])
        np.testing.assert_array_equal(together.p_right[i], alone.p_right[0])


def test_the_warm_up_compiles_what_train_calls():
    from rlviz import compiled

    compiled.warm_up()
    kernels = (pg.reinforce_run, pg.actor_critic_run)
    before = [list(k.signatures) for k in kernels]
    assert all(before)
    methods = [pg.Method("reinforce", 2.0**-13), pg.Method("reinforce_with_baseline", 0.01, 0.1),
               pg.Method("actor_critic", 0.01, 0.1), pg.Method("actor_critic", 0.01, 0.1,
                                                               critic="one_value")]
    pg.train(methods, runs=2, episodes=3, p0=0.3, seed=1)
    assert [list(k.signatures) for k in kernels] == before  # nothing new to compile
