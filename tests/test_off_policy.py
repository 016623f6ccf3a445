import numpy as np
import pytest
from scipy.stats import chi2_contingency

from rlviz import off_policy as op
from rlviz.errors import InputError
from rlviz.interview.whiteboard.importance_sampling import off_policy_estimates
from tests import oracle_off_policy as oracle

BOOK = op.BLACKJACK_BOOK_STATE


# --------------------------------------------------------------------------- hand-computed
def test_ordinary_and_weighted_on_three_episodes():
    w, g = np.array([2.0, 0.0, 4.0]), np.array([1.0, 5.0, -1.0])
    assert op.ordinary_is(w, g) == pytest.approx((2 - 4) / 3)
    assert op.weighted_is(w, g) == pytest.approx((2 - 4) / 6)
    np.testing.assert_allclose(op.ordinary_is_running(w, g), [2.0, 1.0, -2 / 3])
    np.testing.assert_allclose(op.weighted_is_running(w, g), [1.0, 1.0, -1 / 3])


def test_weighted_is_is_zero_while_every_weight_is_zero():
    w, g = np.array([0.0, 0.0, 3.0]), np.array([1.0, 1.0, 2.0])
    np.testing.assert_array_equal(op.weighted_is_running(w, g), [0.0, 0.0, 2.0])
    assert op.weighted_is(np.zeros(4), np.ones(4)) == 0.0


def test_weighted_running_equals_the_books_incremental_algorithm():
    rng = np.random.default_rng(3)
    w = rng.exponential(size=200) * (rng.random(200) < 0.7)
    g = rng.normal(size=200)
    np.testing.assert_allclose(op.weighted_is_running(w, g), oracle.weighted_incremental(w, g),
                               atol=1e-12)


def test_per_decision_and_doubly_robust_by_hand():
    rho = np.array([[2.0, 0.5, 1.0]])
    r = np.array([[1.0, 2.0, 3.0]])
    gamma = 0.5
    # rho_{0:t} = 2, 1, 1; discounts 1, 0.5, 0.25
    assert op.per_decision_is(rho, r, gamma) == pytest.approx(2 * 1 + 0.5 * 1 * 2 + 0.25 * 1 * 3)
    q = np.array([[0.5, 1.0, 2.0]])
    v = np.array([[0.25, 0.75, 1.5]])
    expected = (2 * (1 - 0.5) + 1 * 0.25) + 0.5 * (1 * (2 - 1) + 2 * 0.75) \
        + 0.25 * (1 * (3 - 2) + 1 * 1.5)
    assert op.doubly_robust(rho, r, q, v, gamma) == pytest.approx(expected)


def test_kish_ess():
    assert op.kish_ess(np.ones(7)) == pytest.approx(7)
    assert op.kish_ess(np.array([0.0, 5.0, 0.0])) == pytest.approx(1)
    assert op.kish_ess(np.array([1.0, 3.0])) == pytest.approx(16 / 10)
    assert op.kish_ess(np.zeros(3)) == 0.0


def test_importance_ratio_is_the_product_over_steps():
    pi = np.array([[0.9, 0.2, 1.0]])
    b = np.array([[0.5, 0.5, 0.25]])
    assert op.importance_ratio(pi, b)[0] == pytest.approx(1.8 * 0.4 * 4)


# --------------------------------------------------------------------------- identities
def _random_data(rng, shape=(3, 40, 6)):
    ratios = rng.choice([0.0, 0.4, 1.0, 1.6, 2.0], size=shape)
    rewards = rng.normal(size=shape)
    q = rng.normal(size=shape)
    v = rng.normal(size=shape)
    return ratios, rewards, q, v


def test_doubly_robust_with_no_critic_is_per_decision():
    ratios, rewards, _, _ = _random_data(np.random.default_rng(0))
    zero = np.zeros_like(ratios)
    np.testing.assert_allclose(op.doubly_robust(ratios, rewards, zero, zero, 0.9),
                               op.per_decision_is(ratios, rewards, 0.9), atol=1e-12)


def test_per_decision_is_ordinary_when_the_only_reward_is_last():
    ratios, rewards, _, _ = _random_data(np.random.default_rng(1))
    rewards[..., :-1] = 0.0
    weights = op.importance_ratio(ratios, np.ones_like(ratios))
    returns = rewards.sum(axis=-1)
    np.testing.assert_allclose(op.per_decision_is(ratios, rewards, 1.0),
                               op.ordinary_is(weights, returns), atol=1e-12)


def test_with_unit_ratios_every_estimator_but_dr_is_the_average_return():
    rng = np.random.default_rng(2)
    rewards = rng.normal(size=(4, 30, 5))
    ones = np.ones_like(rewards)
    mc = rewards.sum(axis=-1).mean(axis=-1)
    w = np.ones((4, 30))
    for est in (op.ordinary_is(w, rewards.sum(-1)), op.weighted_is(w, rewards.sum(-1)),
                op.per_decision_is(ones, rewards, 1.0)):
        np.testing.assert_allclose(est, mc, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_estimators_equal_the_plain_loops(seed):
    ratios, rewards, q, v = _random_data(np.random.default_rng(seed))
    gamma = 0.9
    weights = op.importance_ratio(ratios, np.ones_like(ratios))
    returns = np.sum(gamma ** np.arange(ratios.shape[-1]) * rewards, axis=-1)
    vectorised = np.stack([
        op.ordinary_is(weights, returns), op.weighted_is(weights, returns),
        op.per_decision_is(ratios, rewards, gamma),
        op.doubly_robust(ratios, rewards, q, v, gamma)], axis=1)
    loops = np.array([oracle.estimators_loop(ratios[r], rewards[r], q[r], v[r], gamma)
                      for r in range(ratios.shape[0])])
    np.testing.assert_allclose(vectorised, loops, atol=1e-10)


@pytest.mark.parametrize("seed", range(5))
def test_whiteboard_equals_the_library(seed):
    ratios, rewards, q, v = _random_data(np.random.default_rng(seed), shape=(25, 7))
    gamma = 0.8
    weights = op.importance_ratio(ratios, np.ones_like(ratios))
    returns = np.sum(gamma ** np.arange(7) * rewards, axis=-1)
    library = (op.ordinary_is(weights, returns), op.weighted_is(weights, returns),
               op.per_decision_is(ratios, rewards, gamma),
               op.doubly_robust(ratios, rewards, q, v, gamma))
    np.testing.assert_allclose(off_policy_estimates(ratios, rewards, q, v, gamma), library,
                               atol=1e-12)


# --------------------------------------------------------------------------- blackjack
@pytest.mark.parametrize(
    ("total", "usable", "card", "expected"),
    [(13, True, 10, (13, False)), (13, True, 1, (14, True)), (12, False, 1, (13, False)),
     (5, False, 1, (16, True)), (10, False, 1, (21, True)), (20, True, 5, (15, False)),
     (15, False, 7, (22, False))],
)
def test_add_card(total, usable, card, expected):
    t, u = op.add_card(total, usable, card)
    assert (int(t), bool(u)) == expected


def test_the_exact_value_matches_the_books_estimate():
    value = op.blackjack_value(BOOK)
    # 100 million episodes: the standard error is about 1e-4.
    assert value == pytest.approx(op.BLACKJACK_BOOK_VALUE, abs=3e-4)
    assert value == pytest.approx(-0.277204, abs=1e-6)


@pytest.mark.parametrize("showing", range(1, 11))
def test_dealer_probabilities_sum_to_one(showing):
    probs = op.dealer_final_probs(showing)
    assert sum(probs) == pytest.approx(1.0, abs=1e-12)
    assert min(probs) > 0


def test_ratio_moments_identities():
    for state in (BOOK, op.BlackjackState(12, False, 10), op.BlackjackState(20, False, 1)):
        # E_b[rho] = 1 and E_b[rho G] = v_pi.
        assert op.blackjack_moment(state, ratio_power=1, payoff=(1, 1, 1)) == pytest.approx(1)
        assert op.blackjack_moment(state, ratio_power=1, payoff=(-1, 0, 1)) == pytest.approx(
            op.blackjack_value(state))


def test_sampled_moments_match_the_exact_ones():
    w, g = op.blackjack_episodes(400_000, BOOK, np.random.default_rng(0))
    n = w.size
    mean, se = (w * g).mean(), (w * g).std() / np.sqrt(n)
    assert abs(mean - op.blackjack_value(BOOK)) < 4 * se
    second = op.blackjack_moment(BOOK, ratio_power=2, payoff=(1, 0, 1))
    assert (w * g) @ (w * g) / n == pytest.approx(second, rel=0.05)
    assert abs(w.mean() - 1) < 4 * w.std() / np.sqrt(n)


def _categories(weights, returns):
    # w * g + 0.0: an episode of weight 0 counts the same whatever its return (no "-0").
    return [f"{w:g}|{w * g + 0.0:g}" for w, g in zip(weights, returns, strict=True)]


def test_vectorised_episodes_match_the_plain_loop_in_distribution():
    w, g = op.blackjack_episodes(100_000, BOOK, np.random.default_rng(1))
    rng = np.random.default_rng(2)
    loop = np.array([oracle.blackjack_episode_loop(BOOK, rng) for _ in range(30_000)])
    a, b = _categories(w, g), _categories(loop[:, 0], loop[:, 1])
    keys = sorted(set(a) | set(b))
    table = np.array([[a.count(k) for k in keys], [b.count(k) for k in keys]])
    table = table[:, table.min(axis=0) >= 5]
    assert chi2_contingency(table).pvalue > 1e-3


def test_gymnasium_blackjack_agrees_with_the_exact_value():
    gym = pytest.importorskip("gymnasium")
    env = gym.make("Blackjack-v1", sab=True)
    env.reset(seed=0)
    game = env.unwrapped
    returns = []
    for _ in range(20_000):
        env.reset()
        game.player = [1, 2]  # 13 with a usable ace
        game.dealer = [2, int(game.np_random.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10]))]
        total, reward, done = 13, 0.0, False
        while not done:
            (total, _, _), reward, done, _, _ = env.step(int(total < 20))
        returns.append(reward)
    returns = np.array(returns)
    se = returns.std() / np.sqrt(returns.size)
    assert abs(returns.mean() - op.blackjack_value(BOOK)) < 4 * se


def test_study_is_deterministic_and_follows_the_seed():
    a = op.blackjack_study(runs=5, episodes=300, seed=4)
    b = op.blackjack_study(runs=5, episodes=300, seed=4)
    c = op.blackjack_study(runs=5, episodes=300, seed=5)
    np.testing.assert_array_equal(a.final["ordinary"], b.final["ordinary"])
    assert not np.array_equal(a.final["ordinary"], c.final["ordinary"])


def test_study_equals_the_loop_reference_statistically():
    fast = op.blackjack_study(runs=40, episodes=2000, seed=0)
    ordinary, weighted = oracle.blackjack_study_loop(40, 2000, seed=0)
    v = fast.true_value
    # Both are unbiased for the same MSE curve; compare their MSE at the end within bands.
    for name, curve in (("ordinary", ordinary), ("weighted", weighted)):
        loop_mse = ((curve[:, -1] - v) ** 2).mean()
        assert fast.mse[name][-1] == pytest.approx(loop_mse, rel=0.6)
    assert fast.mse["ordinary"][-1] == pytest.approx(fast.per_episode_variance / 2000, rel=0.5)


def test_weighted_starts_below_ordinary_on_figure_5_3():
    s = op.blackjack_study(runs=100, episodes=100, seed=0)
    assert s.mse["weighted"][:10].mean() < s.mse["ordinary"][:10].mean() / 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"runs": 0}, "number of runs"), ({"episodes": 10**6}, "number of episodes"),
     ({"seed": -1}, "seed")],
)
def test_blackjack_study_rejects_bad_settings(kwargs, message):
    with pytest.raises(InputError, match=message):
        op.blackjack_study(**kwargs)


def test_a_blackjack_state_is_validated():
    with pytest.raises(InputError, match="player's sum"):
        op.BlackjackState(player_sum=11, usable_ace=False, dealer_card=2)
    with pytest.raises(InputError, match="dealer"):
        op.BlackjackState(player_sum=15, usable_ace=False, dealer_card=11)


# --------------------------------------------------------------------------- Example 5.5
def test_weighted_is_exactly_one_after_the_first_hit():
    s = op.infinite_variance_study(runs=10, episodes=5000, seed=3)
    assert (s.first_hit > 0).all()
    assert s.weighted_gap_after == 0.0
    assert s.weighted_before == 0.0
    for r in range(s.runs):
        before = s.at < s.first_hit[r]
        np.testing.assert_array_equal(s.weighted[r][before], 0.0)
        np.testing.assert_array_equal(s.weighted[r][~before], 1.0)


def test_one_state_episodes_match_the_loop_in_distribution():
    w, g = op.one_state_episodes(100_000, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    loop = np.array([oracle.one_state_episode_loop(rng) for _ in range(30_000)])
    # Ending on left after k steps has probability (0.45)^(k-1) * 0.05; weight 2^k.
    for k in range(1, 5):
        p = 0.45 ** (k - 1) * 0.05
        for sample in ((w, g), (loop[:, 0], loop[:, 1])):
            share = np.mean(sample[0] == 2.0**k)
            assert abs(share - p) < 5 * np.sqrt(p * (1 - p) / sample[0].size)
            assert np.all(sample[1][sample[0] == 2.0**k] == 1.0)
    assert np.all(g[w == 0] == 0)


# --------------------------------------------------------------------------- the chain
def _all_action_sequences_value(mdp, pi, horizon):
    """v_pi(start) by enumerating every action sequence and outcome (brute force)."""
    total = 0.0
    stack = [(mdp.start_state, 0, 1.0, 0.0)]
    while stack:
        s, t, p, ret = stack.pop()
        if t == horizon:
            total += p * ret
            continue
        for a in range(mdp.n_actions):
            for k in range(mdp.prob.shape[2]):
                q = mdp.prob[s, a, k]
                if q > 0:
                    stack.append((int(mdp.next_state[s, a, k]), t + 1, p * pi[s, a] * q,
                                  ret + mdp.reward[s, a, k]))
    return total


@pytest.mark.parametrize(("delta", "horizon"), [(0.0, 3), (0.5, 5), (1.0, 4)])
def test_finite_horizon_values_equal_brute_force(delta, horizon):
    mdp = op.chain_mdp()
    pi, _ = op.chain_policies(delta)
    _, v = op.finite_horizon_q(mdp.P, mdp.R, pi, horizon, 1.0)
    assert v[horizon, mdp.start_state] == pytest.approx(
        _all_action_sequences_value(mdp, pi, horizon))


def test_the_fitted_model_recovers_the_chain_from_much_data():
    mdp = op.chain_mdp()
    _, b = op.chain_policies(0.0)
    data = op.sample_episodes(mdp, b, shape=(1, 20_000), horizon=8,
                              rng=np.random.default_rng(0))
    p_hat, r_hat = op.fit_models(data, np.zeros(20_000, dtype=np.int64), 1, 5, 2)
    np.testing.assert_allclose(p_hat[0, 0], mdp.P, atol=0.02)
    np.testing.assert_allclose(r_hat[0, 0], mdp.R, atol=0.02)


def test_the_study_at_pi_equal_b_is_on_policy_monte_carlo():
    s = op.estimator_study(delta=0.0, runs=20, episodes=30, seed=1)
    i = int(np.flatnonzero(s.deltas == 0)[0])
    for name in ("ordinary", "weighted", "per_decision"):
        np.testing.assert_allclose(s.estimates[name][i], s.on_policy, atol=1e-12)
    np.testing.assert_allclose(s.ess[i], 30)


@pytest.mark.slow
@pytest.mark.parametrize("critic", ["cross_fitted", "true", "zero"])
def test_unbiased_estimators_are_unbiased(critic):
    s = op.estimator_study(delta=0.7, horizon=4, runs=4000, episodes=20, critic=critic,
                           seed=0, max_work=10**7)
    for name in ("ordinary", "per_decision", "doubly_robust"):
        bias = s.estimates[name].mean(axis=1) - s.true_values
        se = s.estimates[name].std(axis=1) / np.sqrt(s.runs)
        assert np.all(np.abs(bias) < 4.5 * se + 1e-12), (name, bias, se)


def test_the_estimators_keep_their_order_of_variance():
    s = op.estimator_study(delta=0.8, horizon=6, runs=200, episodes=50, seed=2)
    i = s.chosen
    mse = {k: s.mse(k)[0][i] for k in op.ESTIMATORS}
    assert mse["per_decision"] < mse["ordinary"]
    assert mse["weighted"] < mse["ordinary"]
    assert mse["doubly_robust"] < mse["per_decision"]


def test_the_true_critic_beats_the_fitted_one_and_no_critic_is_per_decision():
    args = dict(delta=0.6, horizon=5, runs=100, episodes=40, seed=3)
    fitted = op.estimator_study(critic="cross_fitted", **args)
    true = op.estimator_study(critic="true", **args)
    none = op.estimator_study(critic="zero", **args)
    np.testing.assert_allclose(none.estimates["doubly_robust"], none.estimates["per_decision"],
                               atol=1e-12)
    i = true.chosen
    assert true.mse("doubly_robust")[0][i] < fitted.mse("doubly_robust")[0][i]
    # The data and the other estimators do not depend on the critic.
    np.testing.assert_array_equal(true.estimates["ordinary"], fitted.estimates["ordinary"])


def test_weights_distribution_and_second_moment():
    s = op.estimator_study(delta=0.5, horizon=3, runs=50, episodes=100, seed=0)
    np.testing.assert_allclose(s.weight_values, [0.125, 0.375, 1.125, 3.375])
    assert s.weight_episodes.sum() == pytest.approx(1)
    assert s.weight_mass.sum() == pytest.approx(1)
    np.testing.assert_allclose(s.second_moment, (1 + s.deltas**2) ** 3)
    assert s.mean_weight == pytest.approx(1, abs=4 * s.mean_weight_half)


def test_the_chosen_delta_joins_the_grid():
    s = op.estimator_study(delta=0.35, runs=10, episodes=10)
    assert s.deltas[s.chosen] == pytest.approx(0.35)
    assert len(s.deltas) == len(op.DELTA_GRID) + 1
    assert op.estimator_study(delta=0.3, runs=10, episodes=10).deltas.size == len(op.DELTA_GRID)


def test_chain_study_is_deterministic():
    a = op.estimator_study(runs=10, episodes=10, seed=7)
    b = op.estimator_study(runs=10, episodes=10, seed=7)
    c = op.estimator_study(runs=10, episodes=10, seed=8)
    np.testing.assert_array_equal(a.estimates["doubly_robust"], b.estimates["doubly_robust"])
    assert not np.array_equal(a.estimates["ordinary"], c.estimates["ordinary"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"delta": 1.5}, "distance"), ({"horizon": 0}, "horizon"), ({"critic": "x"}, "critic"),
     ({"runs": 1}, "runs"), ({"runs": 500, "episodes": 200, "horizon": 10}, "lower one")],
)
def test_chain_study_rejects_bad_settings(kwargs, message):
    with pytest.raises(InputError, match=message):
        op.estimator_study(**kwargs)


# --------------------------------------------------------------------------- worked example
def test_worked_per_decision_by_hand():
    w = op.worked_per_decision([0.9, 0.9, 0.2, 0.9], [0.5] * 4, [1, 0, 0, 1], gamma=1.0)
    np.testing.assert_allclose(w.ratios, [1.8, 1.8, 0.4, 1.8])
    np.testing.assert_allclose(w.rho_upto, [1.8, 3.24, 1.296, 2.3328])
    assert w.episode_return == 2
    assert w.ordinary == pytest.approx(2.3328 * 2)
    assert w.per_decision == pytest.approx(1.8 + 2.3328)
    assert w.per_decision_terms.sum() == pytest.approx(w.per_decision)
    assert w.ordinary_terms.sum() == pytest.approx(w.ordinary)


def test_an_action_pi_never_takes_zeroes_only_the_later_rewards():
    w = op.worked_per_decision([0.9, 0.9, 0.0, 0.9], [0.5] * 4, [1, 1, 1, 1])
    assert w.ordinary == 0.0
    assert w.per_decision == pytest.approx(1.8 + 3.24)


@pytest.mark.parametrize(
    ("pi", "b", "r", "message"),
    [([0.5, np.nan], [0.5, 0.5], [1, 1], "π.*step 1 is empty"),
     ([0.5], [0.0], [1], "b.*step 0 is 0"), ([1.5], [0.5], [1], "step 0 is 1.5"),
     ([], [], [], "empty"), ([0.5], [0.5, 0.5], [1], "Every step")],
)
def test_worked_rejects_bad_cells(pi, b, r, message):
    with pytest.raises(InputError, match=message):
        op.worked_per_decision(pi, b, r)


def test_mse_is_bias_squared_plus_variance():
    s = op.estimator_study(delta=0.6, runs=30, episodes=20, seed=5)
    for name in op.ESTIMATORS:
        bias, _ = s.bias(name)
        np.testing.assert_allclose(s.mse(name)[0], bias**2 + s.variance(name), rtol=1e-10)
