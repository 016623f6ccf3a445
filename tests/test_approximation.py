"""rlviz.approximation: Baird's counterexample, w → 2w, TDC, emphatic TD and the switchboard."""

import math

import numpy as np
import pytest

from rlviz import approximation as ap
from rlviz.errors import InputError
from rlviz.interview.whiteboard import deadly_triad as wb

BOOK = ap.baird()  # γ = 0.99, π always solid: Sutton & Barto (2018), Example 11.1


# --------------------------------------------------------------------------- the problem
def test_baird_features_by_hand():
    x = ap.baird_features()
    assert x.shape == (7, 8)
    np.testing.assert_array_equal(x[0], [2, 0, 0, 0, 0, 0, 0, 1])
    np.testing.assert_array_equal(x[5], [0, 0, 0, 0, 0, 2, 0, 1])
    np.testing.assert_array_equal(x[6], [0, 0, 0, 0, 0, 0, 1, 2])
    assert np.linalg.matrix_rank(x) == 7  # every value function is representable
    np.testing.assert_array_equal(x @ ap.NULL_WEIGHTS, np.zeros(7))
    np.testing.assert_array_equal(x @ ap.BOOK_START, [3, 3, 3, 3, 3, 3, 12])


def test_baird_policies_distributions_and_ratios():
    np.testing.assert_allclose(BOOK.behaviour_distribution, np.full(7, 1 / 7), atol=1e-12)
    np.testing.assert_allclose(BOOK.target_distribution, np.eye(7)[6], atol=1e-12)
    np.testing.assert_allclose(BOOK.rho[:, ap.SOLID], 7.0)
    np.testing.assert_allclose(BOOK.rho[:, ap.DASHED], 0.0)
    np.testing.assert_allclose(BOOK.target_matrix, np.tile(np.eye(7)[6], (7, 1)))
    np.testing.assert_allclose(BOOK.true_values, 0.0)
    half = ap.baird(target_solid=0.5)
    np.testing.assert_allclose(half.target_distribution, [1 / 12] * 6 + [0.5], atol=1e-12)
    np.testing.assert_allclose(half.rho[0], [3.5, 7 / 12])


def test_tabular_variant_starts_from_the_same_values():
    tab = ap.baird(tabular=True)
    np.testing.assert_array_equal(tab.features, np.eye(7))
    np.testing.assert_array_equal(tab.features @ tab.start_weights,
                                  BOOK.features @ BOOK.start_weights)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"gamma": 1.0}, "discount"), ({"gamma": -0.1}, "discount"),
     ({"target_solid": 1.5}, r"π\(solid\)"), ({"gamma": float("nan")}, "discount")],
)
def test_bad_problems_are_input_errors(kwargs, message):
    with pytest.raises(InputError, match=message):
        ap.baird(**kwargs)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ap.sample_transitions(BOOK, steps=0, runs=1, seed=0), "Steps"),
        (lambda: ap.sample_transitions(BOOK, steps=10, runs=ap.MAX_RUNS + 1, seed=0), "Runs"),
        (lambda: ap.run_expected_td([BOOK], alpha=0.0, steps=10, on_policy=[False]), "step size"),
        (lambda: ap.run_expected_tdc(BOOK, alpha=0.01, beta=2.0, steps=10), "β"),
        (lambda: ap.two_state(gamma=0.9, alpha=0.1, updates=ap.MAX_STEPS + 1), "Updates"),
        (lambda: ap.switchboard(n=0), "n"),
    ],
)
def test_bad_settings_are_input_errors(call, message):
    with pytest.raises(InputError, match=message):
        call()


# --------------------------------------------------------------------------- errors
def test_value_error_and_pbe_at_the_start_weights_by_hand():
    v = np.array([3.0] * 6 + [12.0])
    assert ap.value_error(BOOK, ap.BOOK_START) == pytest.approx(math.sqrt((6 * 9 + 144) / 7))
    bellman = 0.99 * 12 - v  # every state's expected next state is the lower one
    assert ap.projected_bellman_error(BOOK, ap.BOOK_START) == pytest.approx(
        math.sqrt(np.mean(bellman**2)), rel=1e-12)
    assert ap.value_error(BOOK, ap.NULL_WEIGHTS * 3.7) == pytest.approx(0.0, abs=1e-12)


def test_projection_is_the_d_orthogonal_projection():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(9, 3))
    d = rng.dirichlet(np.ones(9))
    pi = ap.projection(x, d)
    np.testing.assert_allclose(pi @ pi, pi, atol=1e-12)  # idempotent
    np.testing.assert_allclose(np.diag(d) @ pi, (np.diag(d) @ pi).T, atol=1e-12)  # self-adjoint
    v = rng.normal(size=9)
    np.testing.assert_allclose(x.T @ (d * (v - pi @ v)), 0.0, atol=1e-12)  # residual ⟂ features
    np.testing.assert_allclose(pi @ x, x, atol=1e-12)  # representable values are kept
    # Baird's features span every value function: Π = I, so PBE is the Bellman error.
    np.testing.assert_allclose(ap.projection(BOOK.features, BOOK.behaviour_distribution),
                               np.eye(7), atol=1e-9)


def test_pbe_with_dependent_features_uses_the_pseudo_inverse():
    x = np.array([[1.0, 1.0], [2.0, 2.0], [0.0, 0.0]])  # one direction, twice
    d = np.array([0.5, 0.25, 0.25])
    pi = ap.projection(x, d)
    np.testing.assert_allclose(pi @ np.array([1.0, 2.0, 5.0]), [1.0, 2.0, 0.0], atol=1e-12)


# --------------------------------------------------------------------------- the steps
def test_one_td_step_by_hand():
    # Upper state 1, solid (ρ = 7) to the lower state: δ = 0.99·12 − 3 = 8.88.
    x, x_next = BOOK.features[0], BOOK.features[6]
    w = ap.semi_gradient_td_step(ap.BOOK_START, x, x_next, 0.0, 7.0, gamma=0.99, alpha=0.01)
    expected = ap.BOOK_START.copy()
    expected[0] += 0.01 * 7 * 8.88 * 2
    expected[7] += 0.01 * 7 * 8.88 * 1
    np.testing.assert_allclose(w, expected, rtol=1e-14)


def _random_transitions(rng, n=6, f=5):
    return (rng.normal(size=(n, f)), rng.normal(size=(n, f)), rng.normal(size=(n, f)),
            rng.normal(size=n), rng.uniform(0, 3, size=n))


def test_batched_steps_equal_the_whiteboard_row_by_row():
    rng = np.random.default_rng(0)
    w, x, x_next, r, rho = _random_transitions(rng)
    v = rng.normal(size=w.shape)
    td = ap.semi_gradient_td_step(w, x, x_next, r, rho, gamma=0.9, alpha=0.1)
    tw, tv = ap.tdc_step(w, v, x, x_next, r, rho, gamma=0.9, alpha=0.1, beta=0.3)
    for i in range(len(r)):
        np.testing.assert_allclose(td[i], wb.off_policy_td(w[i], x[i], x_next[i], r[i], rho[i],
                                                           0.9, 0.1), rtol=1e-13, atol=1e-13)
        ww, vv = wb.tdc(w[i], v[i], x[i], x_next[i], r[i], rho[i], 0.9, 0.1, 0.3)
        np.testing.assert_allclose(tw[i], ww, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(tv[i], vv, rtol=1e-13, atol=1e-13)


def _expected_td_loop(w, x, d, p, r, gamma, alpha):
    """Equation 11.9 as a plain loop over states."""
    update = np.zeros_like(w)
    for s in range(len(d)):
        target = r[s] + gamma * sum(p[s, t] * (x[t] @ w) for t in range(len(d)))
        update += d[s] * (target - x[s] @ w) * x[s]
    return w + alpha * update


def test_expected_td_step_equals_the_loop_and_batches():
    rng = np.random.default_rng(1)
    xs = rng.normal(size=(3, 7, 8))
    ds = rng.dirichlet(np.ones(7), size=3)
    ps = rng.dirichlet(np.ones(7), size=(3, 7))
    rs = rng.normal(size=(3, 7))
    ws = rng.normal(size=(3, 8))
    gammas = np.array([0.5, 0.9, 0.99])
    batched = ap.expected_td_step(ws, xs, ds, ps, rs, gamma=gammas, alpha=0.05)
    for b in range(3):
        np.testing.assert_allclose(
            batched[b], _expected_td_loop(ws[b], xs[b], ds[b], ps[b], rs[b], gammas[b], 0.05),
            rtol=1e-12)


def test_expected_tdc_is_the_mean_of_sampled_tdc():
    """Averaging TDC's update over b's state and action distribution gives expected TDC."""
    rng = np.random.default_rng(2)
    pb = ap.baird(target_solid=0.6)
    w, v = rng.normal(size=8), rng.normal(size=8)
    mean_w, mean_v = np.zeros(8), np.zeros(8)
    x = pb.features
    for s in range(7):
        for a in range(2):
            for s2 in range(7):
                p = pb.behaviour_distribution[s] * pb.behaviour[s, a] * pb.transitions[s, a, s2]
                if p == 0:
                    continue
                nw, nv = ap.tdc_step(w, v, x[s], x[s2], 0.0, pb.rho[s, a], gamma=pb.gamma,
                                     alpha=1.0, beta=1.0)
                mean_w += p * (nw - w)
                mean_v += p * (nv - v)
    ew, ev = ap.expected_tdc_step(w, v, x, pb.behaviour_distribution, pb.target_matrix,
                                  pb.target_rewards, gamma=pb.gamma, alpha=1.0, beta=1.0)
    np.testing.assert_allclose(ew - w, mean_w, atol=1e-12)
    np.testing.assert_allclose(ev - v, mean_v, atol=1e-12)


def test_expected_emphasis_is_the_mean_followon_trace():
    """f_t = d(s) E[F_t | S_t = s], checked against the trace's exact distribution."""
    pb = ap.baird(target_solid=0.8)
    d, p = pb.behaviour_distribution, pb.target_matrix
    f = d.copy()
    # Exact E[F_t | S_t] by enumerating S_{t-1}, A_{t-1}: E[F_t | s] = 1 + γ Σ P(s̄, ā | s) ρ F.
    mean = np.ones(7)
    for _ in range(5):
        f = ap.emphasis_step(f, d, p, gamma=pb.gamma)
        joint = d[:, None, None] * pb.behaviour[:, :, None] * pb.transitions  # [s̄, ā, s]
        weight = joint * pb.rho[:, :, None] * mean[:, None, None]
        mean = 1.0 + pb.gamma * weight.sum(axis=(0, 1)) / joint.sum(axis=(0, 1))
        np.testing.assert_allclose(f, d * mean, rtol=1e-12)
    fixed = np.linalg.solve(np.eye(7) - pb.gamma * p.T, d)
    for _ in range(4000):
        f = ap.emphasis_step(f, d, p, gamma=pb.gamma)
    np.testing.assert_allclose(f, fixed, rtol=1e-9)


# --------------------------------------------------------------------------- sampling
def test_sampling_follows_the_policies():
    both = ap.sample_transitions(BOOK, steps=2000, runs=30, seed=0, on_policy=(False, True))
    off, on = ~both.on_policy, both.on_policy
    nxt = both.states[1:, off].ravel()
    freq = np.bincount(nxt, minlength=7) / nxt.size
    np.testing.assert_allclose(freq, 1 / 7, atol=0.01)  # b visits every state equally
    solid = both.actions[:, off] == ap.SOLID
    assert solid.mean() == pytest.approx(1 / 7, abs=0.01)
    np.testing.assert_array_equal(both.rho[:, off], np.where(solid, 7.0, 0.0))
    np.testing.assert_array_equal(both.states[1:, on], 6)  # π goes to the lower state
    np.testing.assert_array_equal(both.rho[:, on], 1.0)
    np.testing.assert_array_equal(both.states[0, off], both.states[0, on])  # paired starts


def test_paired_streams_coincide_when_the_target_is_the_behaviour():
    same = ap.baird(target_solid=1 / 7)
    both = ap.sample_transitions(same, steps=300, runs=5, seed=4, on_policy=(False, True))
    np.testing.assert_array_equal(both.states[:, :5], both.states[:, 5:])
    np.testing.assert_array_equal(both.actions[:, :5], both.actions[:, 5:])


def test_sampling_is_deterministic_per_seed():
    a = ap.sample_transitions(BOOK, steps=200, runs=3, seed=9)
    b = ap.sample_transitions(BOOK, steps=200, runs=3, seed=9)
    c = ap.sample_transitions(BOOK, steps=200, runs=3, seed=10)
    np.testing.assert_array_equal(a.states, b.states)
    assert not np.array_equal(a.states, c.states)


def _td_loop(problem, states, actions, alpha):
    """One run of off-policy TD(0) as a plain loop over steps."""
    x, w, out = problem.features, problem.start_weights.astype(float).copy(), []
    out.append(w.copy())
    for t in range(len(actions)):
        s, a, s2 = states[t], actions[t], states[t + 1]
        delta = problem.rewards[s, a] + problem.gamma * (x[s2] @ w) - x[s] @ w
        w = w + alpha * problem.rho[s, a] * delta * x[s]
        out.append(w.copy())
    return np.array(out)


def test_run_td_equals_the_plain_loop_run_by_run():
    pb = ap.baird(target_solid=0.7)
    exp = ap.sample_transitions(pb, steps=500, runs=4, seed=1)
    run = ap.run_td(pb, exp, alpha=0.02)
    np.testing.assert_array_equal(run.t, np.arange(501))
    for r in range(4):
        np.testing.assert_allclose(run.weights[:, r], _td_loop(pb, exp.states[:, r],
                                                                exp.actions[:, r], 0.02),
                                   rtol=1e-12)


# --------------------------------------------------------------------------- Figure 11.2
def test_semi_gradient_dp_grows_without_bound_at_the_rate_of_its_eigenvalue():
    (dp,) = ap.run_expected_td([BOOK], alpha=0.01, steps=ap.MAX_STEPS, on_policy=[False])
    assert dp.diverged_at is None
    norm = np.linalg.norm(dp.weights[:, 0] @ BOOK.features.T, axis=-1)
    assert np.all(np.diff(norm[-500:]) > 0)
    rate = (norm[-1] / norm[-101]) ** (1 / (dp.t[-1] - dp.t[-101]))
    # The second eigenvalue (1.0002) still shows a little after 2000 sweeps.
    assert rate == pytest.approx(ap.growth_per_sweep(BOOK, alpha=0.01), abs=5e-5)
    w = dp.weights[dp.t.tolist().index(1000), 0]  # the book's 1000 sweeps
    assert w[7] > w[0] > w[6] > 0  # w₈ fastest, then w₁…w₆, w₇ slowly (Figure 11.2)
    np.testing.assert_allclose(w[:6], w[0])


def test_sampled_td_follows_the_expected_update():
    exp = ap.baird_experiment(runs=30, steps=1000, seed=0)
    mean = exp.td.final
    assert mean[7] > mean[0] > mean[6]
    np.testing.assert_allclose(mean, exp.dp.final, rtol=0.15)
    assert exp.td.value_error[-1].mean() > 50 * exp.td.value_error[0].mean()


def test_on_policy_and_tabular_do_not_diverge():
    assert ap.growth_per_sweep(BOOK, alpha=0.01) > 1.002
    assert ap.growth_per_sweep(BOOK, alpha=0.01, on_policy=True) <= 1 + 1e-12
    assert ap.growth_per_sweep(ap.baird(tabular=True), alpha=0.01) < 1
    exp = ap.baird_experiment(steps=2000, runs=3)
    assert exp.dp_on.value_error[-1, 0] <= exp.dp_on.value_error[0, 0]
    assert exp.td_on.value_error[-1].max() <= exp.td_on.value_error[0].max() + 1e-9
    assert exp.growth > 1 and exp.growth_on <= 1 + 1e-12 and exp.growth_tabular < 1


def test_a_smaller_step_size_only_slows_the_divergence():
    slow, fast = (math.log(ap.growth_per_sweep(BOOK, alpha=a)) for a in (0.005, 0.01))
    assert slow > 0
    assert slow / fast == pytest.approx(0.5, rel=1e-2)
    assert ap.drift(BOOK) > 0
    assert wb.expected_td_diverges(BOOK.features, BOOK.behaviour_distribution,
                                   BOOK.target_matrix, BOOK.gamma)


def test_critical_discount_is_15_17_and_the_whiteboard_agrees_around_it():
    crit = ap.critical_gamma(BOOK)
    assert crit == pytest.approx(15 / 17, abs=1e-9)
    for gamma, grows in ((0.88, False), (0.885, True), (0.5, False), (0.99, True)):
        assert (ap.drift(BOOK, gamma=gamma) > 1e-12) is grows
        assert bool(wb.expected_td_diverges(BOOK.features, BOOK.behaviour_distribution,
                                            BOOK.target_matrix, gamma)) is grows
    assert ap.critical_gamma(ap.baird(tabular=True)) is None


@pytest.mark.parametrize("p", [1 / 7, 0.4, 0.6, 0.7, 0.9])
def test_how_off_policy_the_target_must_be(p):
    pb = ap.baird(target_solid=p)
    grows = ap.growth_per_sweep(pb, alpha=0.01) > 1 + 1e-12
    assert bool(grows) is (p > 0.63)  # the threshold at γ = 0.99 lies between 0.6 and 0.7
    assert ap.growth_per_sweep(pb, alpha=0.01, on_policy=True) <= 1 + 1e-12


def test_divergence_stops_cleanly_and_never_overflows():
    (dp,) = ap.run_expected_td([BOOK], alpha=0.1, steps=ap.MAX_STEPS, on_policy=[False])
    assert dp.diverged_at is not None and dp.diverged_at < ap.MAX_STEPS
    assert np.isfinite(dp.weights).all() and np.isfinite(dp.value_error).all()
    assert np.abs(dp.weights[dp.live - 1]).max() > ap.DIVERGED
    assert np.abs(dp.weights[dp.live - 2]).max() <= ap.DIVERGED
    assert dp.t[dp.live - 1] == dp.diverged_at
    exp = ap.sample_transitions(BOOK, steps=ap.MAX_STEPS, runs=6, seed=0)
    td = ap.run_td(BOOK, exp, alpha=0.1)
    assert (td.stopped > 0).all() and np.isfinite(td.weights).all()
    for r in range(6):  # a stopped run keeps its last weights
        after = td.t > td.stopped[r]
        np.testing.assert_array_equal(td.weights[after, r], td.weights[after, r][:1].repeat(
            after.sum(), axis=0))


def test_runs_record_about_a_thousand_points_and_every_stop():
    exp = ap.sample_transitions(BOOK, steps=ap.MAX_STEPS, runs=2, seed=0)
    td = ap.run_td(BOOK, exp, alpha=0.03)
    assert td.t[0] == 0 and td.t[-1] == ap.MAX_STEPS and (td.stopped > 0).all()
    assert td.t.size <= ap.RECORDED + 1 + (td.stopped > 0).sum()
    assert set(td.stopped[td.stopped > 0]) <= set(td.t)
    assert np.all(np.diff(td.t) > 0)


# --------------------------------------------------------------------------- Figures 11.5, 11.6
def test_tdc_drives_the_pbe_toward_zero_while_the_value_error_stays():
    tdc = ap.run_expected_tdc(BOOK, alpha=0.005, beta=0.05, steps=1000)
    pbe, ve = tdc.pbe[:, 0], tdc.value_error[:, 0]
    assert pbe[-1] < 0.01 < 5 < pbe[0]
    assert 1.8 < ve[-1] < 2.0  # "the VE ... remains almost 2" (Sutton & Barto, §11.7)
    longer = ap.run_expected_tdc(BOOK, alpha=0.005, beta=0.05, steps=ap.MAX_STEPS)
    assert longer.value_error[-1, 0] < ve[-1]  # converging, very slowly
    exp = ap.gradient_experiment(runs=10, steps=1000, seed=0)
    assert exp.tdc.pbe[-1].mean() < 0.1 * exp.tdc.pbe[0].mean()
    assert exp.tdc.value_error[-1].mean() == pytest.approx(ve[-1], rel=0.05)


def test_expected_emphatic_td_swings_then_settles_on_the_true_values():
    etd = ap.run_expected_etd(BOOK, alpha=0.03, steps=1000)
    ve = etd.value_error[:, 0]
    peak = int(np.argmax(ve))
    assert 0 < peak < 100 and ve[peak] > 1.5 * ve[0]  # the swing while the emphasis builds
    assert ve[-1] < 1e-9  # then the true values (Figure 11.6)
    w8 = etd.weights[:, 0, 7]
    assert w8.max() > 3 and w8.min() < w8[-1] - 0.2  # w₈ rises, overshoots its limit, returns
    np.testing.assert_allclose(BOOK.features @ etd.weights[-1, 0], 0.0, atol=1e-9)


def test_same_seed_same_runs():
    a = ap.gradient_experiment(runs=3, steps=200, seed=5)
    b = ap.gradient_experiment(runs=3, steps=200, seed=5)
    c = ap.gradient_experiment(runs=3, steps=200, seed=6)
    np.testing.assert_array_equal(a.tdc.weights, b.tdc.weights)
    assert not np.array_equal(a.tdc.weights, c.tdc.weights)


# --------------------------------------------------------------------------- w -> 2w
@pytest.mark.parametrize("gamma", [0.0, 0.4, 0.5, 0.6, 0.99])
@pytest.mark.parametrize("alpha", [0.001, 0.01, 0.1])
def test_two_state_growth_is_the_closed_form(gamma, alpha):
    res = ap.two_state(gamma=gamma, alpha=alpha, updates=300)
    factor = 1 + alpha * (2 * gamma - 1)
    assert ap.two_state_growth(gamma, alpha) == pytest.approx(factor, rel=1e-15)
    np.testing.assert_allclose(res.w, factor ** np.arange(res.w.size), rtol=1e-11)
    on = factor * (1 - 4 * alpha)
    np.testing.assert_allclose(res.w_on, on ** np.arange(res.w_on.size), rtol=1e-11)
    assert bool(res.w[-1] > 1) == (gamma > 0.5)


def test_two_state_stops_past_the_limit():
    res = ap.two_state(gamma=0.99, alpha=0.1, updates=1000)
    k = math.ceil(math.log(ap.DIVERGED) / math.log(1 + 0.1 * 0.98))
    assert res.diverged_at == k and res.w.size == k + 1
    assert res.diverged_at_on is None and res.w_on.size == 1001


# --------------------------------------------------------------------------- the switchboard
def test_only_all_three_together_diverge():
    sb = ap.switchboard(steps=500, n=1)
    for key, rho in sb.growth.items():
        assert (rho > 1 + 1e-9) is (key == (1, 1, 1)), key
    assert sb.runs[(1, 1, 1)].value_error[-1, 0] > 10 * sb.runs[(1, 1, 1)].value_error[0, 0]
    tab, mc = sb.runs[(1, 1, 0)], sb.runs[(1, 0, 1)]
    assert mc.value_error[-1, 0] < mc.value_error[0, 0]
    assert np.isfinite(tab.value_error).all()


def test_n_step_on_baird_is_one_step_with_discount_gamma_n():
    for n in (1, 2, 5):
        p, r, g = ap.n_step_model(BOOK, n)
        np.testing.assert_allclose(p, BOOK.target_matrix, atol=1e-12)  # Pⁿ = P here
        assert g == pytest.approx(0.99**n)
        np.testing.assert_allclose(r, 0.0)
        assert ap.growth_per_sweep(BOOK, alpha=0.01, n=n) == pytest.approx(
            ap.growth_per_sweep(ap.baird(gamma=0.99**n), alpha=0.01, n=1), rel=1e-12)
    p, r, g = ap.n_step_model(BOOK, None)
    assert g == 0.0 and np.array_equal(r, BOOK.true_values)
    sb = ap.switchboard(steps=10, n=1)
    assert sb.first_stable_n == math.ceil(math.log(15 / 17) / math.log(0.99)) == 13
    assert sb.growth_by_n[(1, 1)][11] > 1 > sb.growth_by_n[(1, 1)][12]


def test_n_step_reward_model_by_hand():
    rng = np.random.default_rng(0)
    pb = ap.Problem(features=np.eye(3), transitions=rng.dirichlet(np.ones(3), size=(3, 1)),
                    rewards=rng.normal(size=(3, 1)), behaviour=np.ones((3, 1)),
                    target=np.ones((3, 1)), start_weights=np.zeros(3), gamma=0.8)
    p, r = pb.target_matrix, pb.target_rewards
    pn, rn, g = ap.n_step_model(pb, 3)
    np.testing.assert_allclose(pn, p @ p @ p)
    np.testing.assert_allclose(rn, r + 0.8 * p @ r + 0.64 * p @ p @ r)
    assert g == pytest.approx(0.512)
