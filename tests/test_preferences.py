import itertools
import math

import numpy as np
import pytest

from rlviz import preferences as pref
from rlviz.errors import InputError
from rlviz.interview.whiteboard import rlhf as wb


@pytest.fixture(scope="module")
def data():
    return pref.preference_data()


@pytest.fixture(scope="module")
def run(data):
    return pref.alignment(data)


def kl_of(p, q):
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.sum(np.where(p > 0, p * np.log(p / q), 0.0)))


def random_policy(rng, k):
    return pref._log_normalise(rng.normal(size=k) * 2)


# ------------------------------------------------------------------- Bradley–Terry loss
def test_bradley_terry_loss_by_hand():
    assert pref.bradley_terry_loss(1.0, 0.0) == pytest.approx(math.log1p(math.exp(-1.0)))
    assert pref.bradley_terry_loss(0.0, 0.0) == pytest.approx(math.log(2))
    assert pref.bradley_terry_loss(2.5, 0.5) == pytest.approx(-math.log(1 / (1 + math.exp(-2))))


def test_bradley_terry_loss_is_stable_at_large_margins():
    big = np.array([1000.0, -1000.0, 40.0])
    loss = pref.bradley_terry_loss(big, np.zeros(3))
    assert np.all(np.isfinite(loss))
    np.testing.assert_allclose(loss, [0.0, 1000.0, math.exp(-40.0)], rtol=1e-12, atol=1e-300)


def test_bradley_terry_loss_ignores_a_constant_shift():
    rng = np.random.default_rng(0)
    w, lo = rng.normal(size=50), rng.normal(size=50)
    np.testing.assert_allclose(pref.bradley_terry_loss(w + 7.3, lo + 7.3),
                               pref.bradley_terry_loss(w, lo), atol=1e-13)


# -------------------------------------------------------------------------- DPO loss
def test_dpo_loss_the_issue_case():
    value = pref.dpo_loss(0.5, -0.5, 0.0, 0.0, beta=0.1)
    assert value == pytest.approx(-math.log(1 / (1 + math.exp(-0.1))), abs=1e-15)
    assert value < math.log(2)


def test_dpo_loss_is_log_two_at_the_reference_policy():
    rng = np.random.default_rng(2)
    ref_w, ref_l = rng.normal(size=10), rng.normal(size=10)
    np.testing.assert_allclose(pref.dpo_loss(ref_w, ref_l, ref_w, ref_l, beta=0.7),
                               math.log(2), rtol=1e-14)


def test_dpo_loss_is_bradley_terry_on_the_implicit_reward():
    rng = np.random.default_rng(3)
    lw, ll, rw, rl = rng.normal(size=(4, 30))
    beta = 0.25
    np.testing.assert_allclose(pref.dpo_loss(lw, ll, rw, rl, beta=beta),
                               pref.bradley_terry_loss(beta * (lw - rw), beta * (ll - rl)),
                               rtol=1e-14)


def test_dpo_training_gradient_is_the_gradient_of_its_loss(data):
    """One DPO step from π_ref moves u exactly as Adam's first step on the numerical gradient."""
    beta, space, pairs = 0.3, data.space, data.pairs

    def loss(u):
        logp = pref._policy(u, space.features, space.log_ref, beta)
        return float(np.mean(pref.dpo_loss(logp[pairs.chosen], logp[pairs.rejected],
                                           space.log_ref[pairs.chosen],
                                           space.log_ref[pairs.rejected], beta=beta)))

    eps = 1e-6
    grad = (loss(np.array([eps])) - loss(np.array([-eps]))) / (2 * eps)
    first = pref.train_dpo(space, pairs, beta=beta, steps=1, l2=0.0).params[0, 0]
    # Adam's first step is −lr · sign(g) (m̂/√v̂ = ±1).
    assert first == pytest.approx(-pref.DPO_LR * np.sign(grad), rel=1e-6)
    assert grad < 0  # longer answers win the pairs: raising u lowers the loss


def test_whiteboard_dpo_loss_equals_the_library():
    rng = np.random.default_rng(4)
    for _ in range(20):
        args = rng.normal(size=(4, 7)) * 3
        beta = float(rng.uniform(0.01, 2))
        np.testing.assert_allclose(wb.dpo_loss(*args, beta), pref.dpo_loss(*args, beta=beta),
                                   rtol=1e-14)


# ---------------------------------------------------------------------- sampled KL
def test_sampled_kl_by_hand():
    logp, ref = np.log(0.5), np.log(0.25)
    assert pref.sampled_kl(logp, ref, estimator="k1") == pytest.approx(math.log(2))
    assert pref.sampled_kl(logp, ref, estimator="k2") == pytest.approx(0.5 * math.log(2) ** 2)
    assert pref.sampled_kl(logp, ref, estimator="k3") == pytest.approx(0.5 - 1 + math.log(2))


@pytest.mark.parametrize("seed", range(5))
def test_k1_and_k3_are_unbiased_and_k3_is_never_negative(seed):
    rng = np.random.default_rng(seed)
    logp, ref = random_policy(rng, 12), random_policy(rng, 12)
    p = np.exp(logp)
    kl = float(p @ (logp - ref))
    assert p @ pref.sampled_kl(logp, ref, estimator="k1") == pytest.approx(kl, abs=1e-12)
    assert p @ pref.sampled_kl(logp, ref, estimator="k3") == pytest.approx(kl, abs=1e-12)
    assert np.all(pref.sampled_kl(logp, ref, estimator="k3") >= 0)
    assert np.any(pref.sampled_kl(logp, ref, estimator="k1") < 0)


def test_an_unknown_estimator_is_a_user_error():
    with pytest.raises(InputError, match="k1"):
        pref.sampled_kl(0.0, 0.0, estimator="k4")


# ------------------------------------------------------------------------ best-of-n
def best_of_n_by_enumeration(p_ref, reward, n):
    """Every sequence of n draws, the best kept, ties broken uniformly among the draws."""
    out = np.zeros_like(p_ref)
    for seq in itertools.product(range(p_ref.size), repeat=n):
        prob = np.prod(p_ref[list(seq)])
        top = max(reward[i] for i in seq)
        winners = [i for i in seq if reward[i] == top]
        for i in winners:
            out[i] += prob / len(winners)
    return out


@pytest.mark.parametrize(
    ("p_ref", "reward"),
    [([0.5, 0.3, 0.2], [0.0, 1.0, 2.0]),
     ([0.5, 0.25, 0.25], [0.0, 1.0, 1.0]),  # a tie at the top
     ([0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 1.0, 0.0]),  # two tied pairs
     ([0.25, 0.25, 0.25, 0.25], [3.0, 3.0, 3.0, 3.0])],  # all tied: best-of-n is π_ref
)
@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_best_of_n_equals_enumerating_every_draw(p_ref, reward, n):
    p_ref, reward = np.array(p_ref), np.array(reward)
    np.testing.assert_allclose(pref.best_of_n(p_ref, reward, n),
                               best_of_n_by_enumeration(p_ref, reward, n), atol=1e-14)


def test_best_of_n_by_hand_with_a_tie():
    p = pref.best_of_n(np.array([0.5, 0.25, 0.25]), np.array([0.0, 1.0, 1.0]), 2)
    np.testing.assert_allclose(p, [0.25, 0.375, 0.375])


def test_best_of_n_against_sampling():
    rng = np.random.default_rng(5)
    p_ref = rng.dirichlet(np.ones(8))
    reward = rng.integers(0, 4, size=8).astype(float)  # ties on purpose
    n, m = 5, 200_000
    draws = rng.choice(8, size=(m, n), p=p_ref)
    r = reward[draws]
    tied = r == r.max(1, keepdims=True)
    pick = np.argmax(tied * rng.random((m, n)), axis=1)  # uniform among the tied draws
    freq = np.bincount(draws[np.arange(m), pick], minlength=8) / m
    exact = pref.best_of_n(p_ref, reward, n)
    assert np.all(np.abs(freq - exact) <= 5 * np.sqrt(exact * (1 - exact) / m) + 1e-9)


def test_best_of_n_vectorised_over_n_and_normalised():
    rng = np.random.default_rng(6)
    p_ref, reward = rng.dirichlet(np.ones(30)), rng.normal(size=30)
    ns = np.array([1, 2, 7, 64, 1024])
    p = pref.best_of_n(p_ref, reward, ns)
    assert p.shape == (5, 30)
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-12)
    np.testing.assert_allclose(p[0], p_ref, atol=1e-15)
    for row, n in zip(p, ns, strict=True):
        np.testing.assert_allclose(row, pref.best_of_n(p_ref, reward, int(n)), atol=1e-15)


@pytest.mark.parametrize("seed", range(6))
def test_whiteboard_best_of_n_equals_the_library_without_ties(seed):
    rng = np.random.default_rng(seed)
    p_ref, reward, n = rng.dirichlet(np.ones(40)), rng.normal(size=40), int(rng.integers(1, 300))
    np.testing.assert_allclose(wb.best_of_n(p_ref, reward, n), pref.best_of_n(p_ref, reward, n),
                               atol=1e-13)


def test_best_of_n_kl_approaches_the_formula_on_a_fine_space_and_never_exceeds_it():
    k = 20_000  # almost continuous: many tiny atoms
    space_ref, reward = np.full(k, 1.0 / k), np.arange(k, dtype=float)
    for n in (2, 16, 256):
        p = pref.best_of_n(space_ref, reward, n)
        kl = kl_of(p, space_ref)
        bound = math.log(n) - (n - 1) / n
        assert kl <= bound + 1e-12
        assert kl == pytest.approx(bound, abs=0.02)


def test_best_of_n_kl_saturates_on_two_outcomes():
    """Beirami et al.'s counterexample: uniform on two outcomes, KL stays below log 2."""
    for n in (2, 64, 1024):
        kl = kl_of(pref.best_of_n(np.array([0.5, 0.5]), np.array([0.0, 1.0]), n), 0.5)
        assert kl <= math.log(2) + 1e-15
    assert math.log(1024) - 1023 / 1024 > 5.9


@pytest.mark.parametrize("n", [1, 2, 16, 1024])
def test_best_of_n_win_rate_is_below_n_over_n_plus_one_by_at_most_half_an_atom(data, n):
    bon = pref.best_of_n_stats(data.space, data.proxy, n)
    assert 0 <= bon.win_bound - bon.win_rate <= bon.win_slack + 1e-12
    assert bon.kl <= bon.kl_bound + 1e-12
    if n == 1:
        assert bon.kl == pytest.approx(0.0, abs=1e-12)
        assert bon.win_rate == pytest.approx(0.5)


def test_best_of_n_win_rate_by_sampling(data):
    rng = np.random.default_rng(7)
    bon = pref.best_of_n_stats(data.space, data.proxy, 4)
    m = 200_000
    a = rng.choice(data.space.n, size=m, p=bon.probs)
    b = rng.choice(data.space.n, size=m, p=data.space.p_ref)
    r = data.proxy
    wins = (r[a] > r[b]) + 0.5 * (r[a] == r[b])
    assert abs(wins.mean() - bon.win_rate) < 5 * wins.std() / math.sqrt(m)


# ---------------------------------------------------------------- the KL-regularised optimum
def test_closed_form_beats_random_policies(data):
    rng = np.random.default_rng(8)
    space, r = data.space, data.proxy
    for beta in (0.01, 0.2, 3.0):
        best = pref.kl_objective(pref.kl_optimal_policy(space.log_ref, r, beta), space.log_ref,
                                 r, beta)
        assert best == pytest.approx(beta * np.logaddexp.reduce(space.log_ref + r / beta))
        for _ in range(20):
            other = random_policy(rng, space.n)
            assert pref.kl_objective(other, space.log_ref, r, beta) <= best + 1e-12


@pytest.mark.parametrize("k", [16, 64, 256])
@pytest.mark.parametrize("beta", [0.01, 0.05, 0.2, 1.0, 5.0])
def test_a_numerical_optimiser_reaches_the_closed_form(k, beta):
    d = pref.preference_data(n_responses=k, n_pairs=100)
    space, r = d.space, d.proxy
    star = pref.kl_objective(pref.kl_optimal_policy(space.log_ref, r, beta), space.log_ref, r,
                             beta)
    found = pref.kl_objective(pref.numerical_optimum(space.log_ref, r, beta), space.log_ref, r,
                              beta)
    assert found <= star + 1e-10 * max(1, abs(star))
    assert found == pytest.approx(star, abs=1e-8 * max(1, abs(star)))


def test_closed_form_limits_and_shift(data):
    space, r = data.space, data.proxy
    np.testing.assert_allclose(pref.kl_optimal_policy(space.log_ref, r, 1e6), space.log_ref,
                               atol=1e-4)
    p = np.exp(pref.kl_optimal_policy(space.log_ref, r, 1e-4))
    assert p[np.argmax(r)] == pytest.approx(1.0)
    np.testing.assert_allclose(pref.kl_optimal_policy(space.log_ref, r + 9.0, 0.3),
                               pref.kl_optimal_policy(space.log_ref, r, 0.3), atol=1e-12)


def test_closed_form_vectorised_over_beta(data):
    betas = np.array([0.1, 1.0])
    lp = pref.kl_optimal_policy(data.space.log_ref, data.proxy, betas)
    for row, b in zip(lp, betas, strict=True):
        np.testing.assert_allclose(row, pref.kl_optimal_policy(data.space.log_ref, data.proxy,
                                                               float(b)))


@pytest.mark.parametrize("seed", range(5))
def test_whiteboard_optimal_policy_equals_the_library(seed):
    rng = np.random.default_rng(seed)
    p_ref, r, beta = rng.dirichlet(np.ones(25)), rng.normal(size=25) * 3, rng.uniform(0.01, 5)
    np.testing.assert_allclose(wb.optimal_policy(p_ref, r, beta),
                               np.exp(pref.kl_optimal_policy(np.log(p_ref), r, beta)),
                               atol=1e-13)


# -------------------------------------------------------------------------- the data
def test_response_space_is_a_valid_distribution_with_legendre_features():
    s = pref.response_space(64, degree=3)
    assert s.features.shape == (64, 3)
    assert s.p_ref.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(s.features[:, 0], 2 * s.x - 1)
    np.testing.assert_allclose(s.features[:, 1], 0.5 * (3 * (2 * s.x - 1) ** 2 - 1))
    assert abs(s.x[np.argmax(s.gold)] - pref.GOLD_PEAK) < 1 / 63


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [(dict(n_responses=4), "number of responses"), (dict(n_responses=999), "number of"),
     (dict(degree=0), "degree"), (dict(degree=7), "degree"),
     (dict(ref_width=0.0), "spread"), (dict(ref_centre=2.0), "centre")],
)
def test_bad_spaces_are_user_errors(kwargs, message):
    with pytest.raises(InputError, match=message):
        pref.response_space(**kwargs)


def test_bad_pairs_and_training_settings_are_user_errors(data):
    rng = np.random.default_rng(0)
    with pytest.raises(InputError, match="pairs"):
        pref.sample_pairs(data.space, 0, rng=rng)
    with pytest.raises(InputError, match="flip"):
        pref.sample_pairs(data.space, 10, flip=0.7, rng=rng)
    with pytest.raises(InputError, match="β"):
        pref.train_dpo(data.space, data.pairs, beta=0.0)
    with pytest.raises(InputError, match="policy class"):
        pref.train_dpo(data.space, data.pairs, beta=0.1, policy="mlp")
    with pytest.raises(InputError, match="batch"):
        pref.train_policy_gradient(data.space, data.proxy, beta=0.1, batch=1)
    with pytest.raises(InputError, match="runs"):
        pref.train_policy_gradient(data.space, data.proxy, beta=0.1, runs=0)
    with pytest.raises(InputError, match="best-of-n"):
        pref.best_of_n_stats(data.space, data.proxy, 2000)


def test_pairs_are_two_different_responses_labelled_by_bradley_terry():
    space = pref.response_space(32, ref_width=0.3)
    pairs = pref.sample_pairs(space, 5000, rng=np.random.default_rng(0))
    assert np.all(pairs.chosen != pairs.rejected)
    # The label follows σ(r*(y_w) − r*(y_l)): calibrated on average.
    g = space.gold
    margin = np.abs(g[pairs.chosen] - g[pairs.rejected])
    expected = np.mean(1 / (1 + np.exp(-margin)))
    agree = np.mean(g[pairs.chosen] > g[pairs.rejected])
    assert abs(agree - expected) < 4 * math.sqrt(expected * (1 - expected) / 5000)


def test_a_flip_rate_of_one_half_makes_labels_noise():
    space = pref.response_space(32, ref_width=0.3)
    pairs = pref.sample_pairs(space, 5000, flip=0.5, rng=np.random.default_rng(1))
    agree = np.mean(space.gold[pairs.chosen] > space.gold[pairs.rejected])
    assert abs(agree - 0.5) < 4 * math.sqrt(0.25 / 5000)


def test_same_seed_same_pairs_and_flips_relabel_the_same_pairs():
    space = pref.response_space()
    a = pref.sample_pairs(space, 300, rng=np.random.default_rng(3))
    b = pref.sample_pairs(space, 300, rng=np.random.default_rng(3))
    c = pref.sample_pairs(space, 300, flip=0.2, rng=np.random.default_rng(3))
    d = pref.sample_pairs(space, 300, rng=np.random.default_rng(4))
    np.testing.assert_array_equal(a.chosen, b.chosen)
    same_pairs = np.sort(np.stack([a.chosen, a.rejected]), 0)
    np.testing.assert_array_equal(same_pairs, np.sort(np.stack([c.chosen, c.rejected]), 0))
    assert 0 < np.mean(a.chosen != c.chosen) < 0.4
    assert np.any(a.chosen != d.chosen)


def test_a_tiny_reference_still_gives_distinct_pairs():
    space = pref.response_space(16, ref_width=0.02)
    pairs = pref.sample_pairs(space, 50, rng=np.random.default_rng(0))
    assert np.all(pairs.chosen != pairs.rejected)


# ---------------------------------------------------------------------- reward model
def ridge_logistic_bfgs(x, l2):
    """A generic optimiser on the ridge logistic loss (1/N) Σ softplus(−x θ) + (l2/2)|θ|²."""
    from scipy.optimize import minimize

    def f(theta):
        z = x @ theta
        s = 1 / (1 + np.exp(z))
        return (np.logaddexp(0, -z).mean() + 0.5 * l2 * theta @ theta,
                -(x * s[:, None]).mean(0) + l2 * theta)

    return minimize(f, np.zeros(x.shape[1]), jac=True, method="BFGS",
                    options=dict(gtol=1e-12)).x


@pytest.mark.parametrize("degree", [1, 3, 6])
def test_reward_model_equals_a_generic_optimiser(degree):
    space = pref.response_space(64, degree=degree)
    pairs = pref.sample_pairs(space, 400, rng=np.random.default_rng(degree))
    rm = pref.fit_reward_model(space, pairs)
    x = space.features[pairs.chosen] - space.features[pairs.rejected]
    np.testing.assert_allclose(rm.theta, ridge_logistic_bfgs(x, pref.L2), atol=1e-6)
    assert rm.loss == pytest.approx(float(np.logaddexp(0, -(x @ rm.theta)).mean()))


def test_linear_reward_model_is_right_on_the_data_and_wrong_beyond(data):
    err = np.abs(data.aligned(data.proxy) - data.space.gold)
    covered = data.space.p_ref > 0.01
    assert err[covered].max() < 0.6
    assert err[data.space.x > 0.9].min() > 3.0
    assert pref.pair_accuracy(data.proxy, data.space.gold, data.space.p_ref) > 0.95
    star = np.exp(pref.kl_optimal_policy(data.space.log_ref, data.proxy, 0.2))
    assert pref.pair_accuracy(data.proxy, data.space.gold, star) < 0.5


def test_accuracies_by_hand():
    truth = np.array([0.0, 1.0, 2.0])
    q = np.array([0.2, 0.3, 0.5])
    assert pref.pair_accuracy(truth, truth, q) == 1.0
    assert pref.pair_accuracy(-truth, truth, q) == 0.0
    assert pref.pair_accuracy(np.zeros(3), truth, q) == 0.5
    space = pref.response_space(16)
    assert pref.label_accuracy(space.gold, space, 0.5) == pytest.approx(0.5)
    assert pref.label_accuracy(space.gold, space, 0.0) > pref.label_accuracy(
        space.gold, space, 0.2)


# ---------------------------------------------------------------------------- DPO
def test_dpo_on_the_features_lands_on_the_reward_models_closed_form(data, run):
    np.testing.assert_allclose(run.dpo.params[0], data.reward_model.theta, atol=1e-6)
    np.testing.assert_allclose(run.logp["dpo"], run.logp["closed_form"], atol=1e-5)
    assert run.dpo.loss[0, 0] == pytest.approx(math.log(2))
    assert run.dpo.loss[-1, 0] == pytest.approx(data.reward_model.loss, abs=1e-8)


def test_tabular_dpo_leaves_responses_in_no_pair_at_the_references_odds(data):
    t = pref.train_dpo(data.space, data.pairs, beta=0.2, steps=300, policy="table")
    unseen = data.counts == 0
    assert unseen.sum() > 5
    assert np.all(t.params[0][unseen] == 0.0)  # no gradient reaches them
    assert np.abs(t.params[0][~unseen]).max() > 0.5
    ratio = t.logp[-1, 0][unseen] - data.space.log_ref[unseen]
    np.testing.assert_allclose(ratio, ratio[0], atol=1e-12)


def test_dpo_on_exact_plentiful_pairs_recovers_the_gold_reward():
    space = pref.response_space(32, ref_width=0.2)
    implicit = pref.dpo_population_fit(space, beta=0.3)
    e = implicit - space.gold
    assert e.max() - e.min() < 1e-5


@pytest.mark.parametrize(("policy", "beta"), [("features", 0.2), ("table", 0.05)])
def test_dpo_equals_the_same_training_by_torch_autograd(data, policy, beta):
    from tests.preferences_reference import dpo_torch

    ours = pref.train_dpo(data.space, data.pairs, beta=beta, steps=120, policy=policy)
    theirs = dpo_torch(data.space, data.pairs, beta=beta, steps=120, policy=policy)
    if policy == "table":
        # Autograd's gradient for a response in no pair is rounding noise (the normaliser's
        # terms cancel), which Adam scales up to small steps; the closed-form gradient is 0.
        seen = data.counts > 0
        np.testing.assert_allclose(ours.params[0][seen], theirs[seen], atol=1e-9)
        assert np.all(ours.params[0][~seen] == 0) and np.abs(theirs[~seen]).max() < 1e-2
    else:
        np.testing.assert_allclose(ours.params[0], theirs, atol=1e-9)


def test_dpo_with_pair_weights_equals_repeating_pairs(data):
    pairs = pref.Pairs(chosen=data.pairs.chosen[:20], rejected=data.pairs.rejected[:20])
    doubled = pref.Pairs(chosen=np.concatenate([pairs.chosen, pairs.chosen[:5]]),
                         rejected=np.concatenate([pairs.rejected, pairs.rejected[:5]]))
    weights = np.ones(20)
    weights[:5] = 2
    a = pref.train_dpo(data.space, pairs, beta=0.5, steps=50, weights=weights)
    b = pref.train_dpo(data.space, doubled, beta=0.5, steps=50)
    np.testing.assert_allclose(a.params, b.params, atol=1e-12)


# ------------------------------------------------------------------ policy gradient
def test_the_policy_gradient_estimate_is_unbiased():
    """(1/B) Σ A_i (onehot(y_i) − π), averaged over many batches, is ∇_z(E[r] − β KL)."""
    rng = np.random.default_rng(9)
    k, beta, batch, m = 6, 0.4, 4, 400_000
    log_ref = random_policy(rng, k)
    reward = rng.normal(size=k)
    logp = random_policy(rng, k)
    p = np.exp(logp)
    h = reward - beta * (logp - log_ref)
    exact = p * (h - p @ h)  # ∂/∂z of E[r] − β KL for π = softmax(z)
    y = rng.choice(k, size=(m, batch), p=p)
    adv = pref.kl_penalised_advantages(reward[y], logp[y], log_ref[y], beta=beta)
    onehot = np.eye(k)[y]  # [m, B, k]
    per_batch = ((onehot - p) * adv[..., None]).mean(1)  # [m, k]
    se = per_batch.std(0) / math.sqrt(m)
    assert np.all(np.abs(per_batch.mean(0) - exact) < 5 * se)
    assert np.all(se < 0.05 * np.abs(exact).max())  # the test has power


def test_a_baseline_that_uses_the_sample_itself_would_be_biased():
    """The leave-one-out baseline matters: subtracting the batch mean shrinks the gradient."""
    rng = np.random.default_rng(10)
    k, beta, batch, m = 5, 0.3, 2, 200_000
    log_ref, logp, reward = random_policy(rng, k), random_policy(rng, k), rng.normal(size=k)
    p = np.exp(logp)
    h = reward - beta * (logp - log_ref)
    exact = p * (h - p @ h)
    y = rng.choice(k, size=(m, batch), p=p)
    score = reward[y] - beta * (logp[y] - log_ref[y])
    biased = score - score.mean(1, keepdims=True)  # includes y_i itself: (B−1)/B of the truth
    per_batch = ((np.eye(k)[y] - p) * biased[..., None]).mean(1)
    np.testing.assert_allclose(per_batch.mean(0), exact * (batch - 1) / batch,
                               atol=5 * per_batch.std(0).max() / math.sqrt(m))


def test_advantages_by_hand():
    logp = np.log(np.array([[0.1, 0.2, 0.3]]))
    r = np.array([[1.0, 2.0, 6.0]])
    # k1 = 0: each score minus the mean of the other two
    np.testing.assert_allclose(pref.kl_penalised_advantages(r, logp, logp, beta=0.5),
                               [[1 - 4, 2 - 3.5, 6 - 1.5]])
    # k1 = log 2 everywhere lowers every score equally: the advantages do not change
    np.testing.assert_allclose(
        pref.kl_penalised_advantages(r, logp, logp - math.log(2), beta=0.5),
        [[-3.0, -1.5, 4.5]])


def test_policy_gradient_on_the_features_reaches_the_closed_form(data, run):
    np.testing.assert_allclose(run.pg.params, np.broadcast_to(data.reward_model.theta,
                                                              run.pg.params.shape), atol=1e-3)
    assert run.pg.logp.shape == (run.pg.steps.size, 8, data.space.n)


def test_a_run_does_not_depend_on_how_many_runs_there_are(data):
    kw = dict(beta=0.2, steps=50, batch=16, policy="table", seed=5)
    several = pref.train_policy_gradient(data.space, data.proxy, runs=4, **kw)
    alone = pref.train_policy_gradient(data.space, data.proxy, runs=1, **kw)
    np.testing.assert_allclose(several.params[0], alone.params[0], atol=1e-12)


def test_sampling_follows_the_policy():
    rng = np.random.default_rng(11)
    logp = np.log(rng.dirichlet(np.ones(7), size=3))
    y = pref._sample(logp, rng.random((3, 100_000)))
    for row in range(3):
        freq = np.bincount(y[row], minlength=7) / 100_000
        p = np.exp(logp[row])
        assert np.all(np.abs(freq - p) < 5 * np.sqrt(p * (1 - p) / 100_000) + 1e-12)


def test_policy_gradient_is_seeded_and_runs_differ(data):
    kw = dict(beta=0.2, steps=40, batch=16, runs=3, policy="table")
    a = pref.train_policy_gradient(data.space, data.proxy, seed=1, **kw)
    b = pref.train_policy_gradient(data.space, data.proxy, seed=1, **kw)
    c = pref.train_policy_gradient(data.space, data.proxy, seed=2, **kw)
    np.testing.assert_array_equal(a.params, b.params)
    assert not np.allclose(a.params, c.params)
    assert not np.allclose(a.params[0], a.params[1])


# ------------------------------------------------------------------------- frontier
def test_frontier_runs_from_the_reference_and_over_optimises(data):
    f = data.frontier
    assert f.sweep.kl[-1] < 2e-3  # β = 10: almost π_ref
    assert np.all(np.diff(f.sweep.kl) <= 1e-12)  # KL falls as β grows
    assert np.all(np.diff(f.sweep.proxy) <= 1e-12)
    assert f.sweep.gold[f.peak] > 0.3 and f.sweep.gold[0] < 0  # it peaks, then falls
    # No policy beats the gold reward's own π* on gold at the same KL.
    reach = f.sweep.kl <= f.gold_sweep.kl.max()
    best = np.interp(f.sweep.kl[reach], f.gold_sweep.kl[::-1], f.gold_sweep.gold[::-1])
    assert np.all(best >= f.sweep.gold[reach] - 1e-3)
    np.testing.assert_allclose(f.bon_kl_bound, np.log(f.ns) - (f.ns - 1) / f.ns)
    assert np.all(f.bon.kl <= f.bon_kl_bound + 1e-12)


def test_gao_fit_recovers_known_coefficients():
    d = np.linspace(0.01, 3, 50)
    assert pref.gao_fit(d, d * (0.8 - 0.3 * d), "bon") == pytest.approx((0.8, 0.3))
    assert pref.gao_fit(d, d * (0.5 - 0.2 * np.log(d)), "rl") == pytest.approx((0.5, 0.2))
    assert pref.gao_fit(np.zeros(3), np.zeros(3), "rl") == (0.0, 0.0)


# -------------------------------------------------------------------- whole views
def test_same_seed_same_views():
    a, b = pref.preference_data(seed=3), pref.preference_data(seed=3)
    np.testing.assert_array_equal(a.proxy, b.proxy)
    assert not np.array_equal(a.proxy, pref.preference_data(seed=4).proxy)


@pytest.mark.parametrize(
    ("data_kw", "run_kw"),
    [({}, {}),
     ({}, dict(policy="table", beta=0.05, n=1024)),
     (dict(degree=2, n_pairs=5000, flip=0.3), dict(beta=0.01, n=1)),
     (dict(n_responses=16, n_pairs=25, ref_width=0.05), dict(beta=5.0, runs=1, batch=8)),
     (dict(n_responses=256, degree=6, ref_width=0.3), dict(beta=1.0, policy="table")),
     (dict(flip=0.5), dict(beta=0.01))],
)
def test_every_check_holds(data_kw, run_kw):
    d = pref.preference_data(**data_kw)
    r = pref.alignment(d, **{"pg_steps": 100, "dpo_steps": 250, **run_kw})
    v = pref.verify(d, r)
    assert v.shift_gap < 1e-12
    star = v.objective["closed_form"]
    assert abs(v.objective["numerical"] - star) <= 1e-8 * max(1, abs(star))
    others = max(val for k, val in v.objective.items() if k != "closed_form")
    assert others <= star + 1e-10 * max(1, abs(star))
    assert v.implicit_error < 1e-4
    assert v.kl_identity < 1e-10
    assert abs(v.k1_error) <= 4 * v.k1_se
    if r.policy == "features":
        assert v.tv_dpo < 1e-3
    for sc in r.table(d).values():
        assert np.isfinite([float(sc.kl), float(sc.proxy), float(sc.gold)]).all()
    assert all(np.isfinite(x) for x in r.objective(d).values())


def test_import_is_light():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", "import rlviz.preferences, sys; "
                          "print('torch' in sys.modules, 'scipy' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"
