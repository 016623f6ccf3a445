import math

import numpy as np
import pytest

from rlviz import mdp, prediction, returns
from rlviz.errors import InputError
from rlviz.interview.whiteboard import multistep_td as wb
from tests.oracle_prediction import (
    n_step_td_loop,
    offline_lambda_return_loop,
    td_lambda_loop,
    true_online_loop,
)


@pytest.fixture(scope="module")
def walk19():
    return prediction.sample_runs(19, runs=4, episodes=3, seed=11)


@pytest.fixture(scope="module")
def walk5():
    return prediction.sample_runs(5, runs=5, episodes=6, seed=3)


# --------------------------------------------------------------------------- the walks
@pytest.mark.parametrize(("n", "expected"), [(5, np.arange(1, 6) / 6),
                                             (19, (np.arange(1, 20) - 10) / 10)])
def test_true_values_are_the_books_straight_lines(n, expected):
    np.testing.assert_allclose(prediction.true_values(n)[1:-1], expected, atol=1e-12)
    np.testing.assert_allclose(prediction.linear_true_values(n), expected, atol=1e-15)
    assert prediction.true_values(n)[0] == prediction.true_values(n)[-1] == 0.0


def test_discounted_true_values_come_from_the_linear_solve():
    walk = returns.random_walk(5, left_reward=0.0, right_reward=1.0)
    want = mdp.policy_value(walk, np.full((7, 2), 0.5), 0.9)
    np.testing.assert_allclose(prediction.true_values(5, 0.9), want)


def test_the_runs_are_whole_episodes_from_the_centre(walk19):
    r = walk19
    assert r.lengths.shape == (4, 3) and r.states.shape[1] == r.run_lengths.max()
    for run in range(r.n_runs):
        for e in range(r.n_episodes):
            sl = r.episode(run, e)
            assert r.states[run, sl.start] == 10
            assert r.dones[run, sl.stop - 1] and not r.dones[run, sl.start: sl.stop - 1].any()
            assert r.next_states[run, sl.stop - 1] in (0, 20)
            np.testing.assert_array_equal(np.abs(r.next_states[run, sl] - r.states[run, sl]), 1)
        assert (r.episode_of_step[run, r.run_lengths[run]:] == r.n_episodes).all()
    end = r.episode_end[0, : r.run_lengths[0]]
    assert r.dones[0, end].all()


def test_same_seed_same_runs_and_more_runs_keep_the_first():
    a = prediction.sample_runs(19, runs=3, episodes=4, seed=5)
    b = prediction.sample_runs(19, runs=8, episodes=4, seed=5)
    c = prediction.sample_runs(19, runs=3, episodes=4, seed=6)
    np.testing.assert_array_equal(a.lengths, b.lengths[:3])
    np.testing.assert_array_equal(a.states, b.head(3).states)
    assert not np.array_equal(a.lengths, c.lengths)


def test_head_cuts_runs_and_episodes(walk19):
    h = walk19.head(2, 2)
    assert h.lengths.shape == (2, 2)
    np.testing.assert_array_equal(h.states[1, : h.run_lengths[1]],
                                  walk19.states[1, : h.run_lengths[1]])
    assert (h.states[:, h.run_lengths.min():][h.episode_of_step[:, h.run_lengths.min():] == 2]
            == 0).all()


# --------------------------------------------------------------------------- the steps by hand
def test_n_step_td_step_by_hand():
    v = np.array([[0.0, 0.2, 0.6, 0.0], [0.0, 0.5, -0.5, 0.0]]).T.copy()  # a column per lane
    g = prediction.n_step_td_step(v, np.array([1, 2]), np.array([0.0, 1.0]), np.array([2, 3]),
                                  0.81, np.array([0.5, 1.0]))
    np.testing.assert_allclose(g, [0.81 * 0.6, 1.0])  # the second ends on the terminal
    np.testing.assert_allclose(v.T, [[0, 0.2 + 0.5 * (0.486 - 0.2), 0.6, 0], [0, 0.5, 1.0, 0]])


def test_td_lambda_step_by_hand():
    # One lane (a column) at two step sizes, which share its trace.
    v = np.array([[0.0, 1.0, 2.0, 0.0], [0.0, 1.0, 2.0, 0.0]])[:, :, None].copy()  # [A, S, 1]
    z = np.array([[0.0], [0.5], [0.0], [0.0]])
    delta = prediction.td_lambda_step(v, z, np.array([2]), np.array([1.0]), np.array([3]),
                                      gamma=0.9, lam=np.array([0.5]),
                                      alpha=np.array([[0.1], [0.2]]))
    np.testing.assert_allclose(delta, [[1.0 - 2.0], [1.0 - 2.0]])  # the next state is terminal
    np.testing.assert_allclose(z[:, 0], [0, 0.225, 1.0, 0])
    np.testing.assert_allclose(v[0, :, 0], [0, 1.0 - 0.1 * 0.225, 2.0 - 0.1, 0])
    np.testing.assert_allclose(v[1, :, 0], [0, 1.0 - 0.2 * 0.225, 2.0 - 0.2, 0])
    v, z = v[:1].copy(), z.copy()
    held = np.zeros_like(v)
    prediction.td_lambda_step(v, z, np.array([1]), np.array([0.0]), np.array([2]), gamma=1.0,
                              lam=np.array([1.0]), alpha=np.array([[1.0]]), out=held)
    np.testing.assert_allclose(v[0, :, 0], [0, 0.9775, 1.9, 0])  # offline: v untouched
    delta = 1.9 - 0.9775
    np.testing.assert_allclose(held[0, :, 0], [0, 1.225 * delta, 1.0 * delta, 0])


def test_true_online_step_by_hand():
    v = np.array([[0.0], [1.0], [2.0], [0.0]])  # one lane: a column
    z = np.array([[0.0], [0.5], [0.25], [0.0]])
    v_old = np.array([0.5])
    prediction.true_online_td_lambda_step(v, z, v_old, np.array([1]), np.array([1.0]),
                                          np.array([2]), gamma=0.9, lam=np.array([0.5]),
                                          alpha=np.array([0.2]))
    delta = 1.0 + 0.9 * 2.0 - 1.0
    z_new = np.array([0, 0.45 * 0.5 + 1 - 0.2 * 0.45 * 0.5, 0.45 * 0.25, 0])
    want = np.array([0, 1.0, 2.0, 0]) + 0.2 * (delta + 1.0 - 0.5) * z_new
    want[1] -= 0.2 * (1.0 - 0.5)
    np.testing.assert_allclose(z[:, 0], z_new)
    np.testing.assert_allclose(v[:, 0], want)
    assert v_old[0] == 2.0


def test_offline_lambda_return_update_makes_the_moves_in_turn():
    # One run, one α: states 1, 2, 1 then the right end, reward 1 at the end.
    v = np.array([[[0.0, 0.2, 0.4, 0.0]]])
    run, states = np.zeros(3, dtype=np.int64), np.array([1, 2, 1])
    rewards, dones = np.array([0.0, 0.0, 1.0]), np.array([False, False, True])
    g = prediction.offline_lambda_return_update(v, run, states, rewards, dones, gamma=1.0,
                                                lam=0.5, alpha=np.array([[0.5]]))
    g2 = 1.0
    g1 = 0 + 0.5 * 0.2 + 0.5 * g2
    g0 = 0 + 0.5 * 0.4 + 0.5 * g1
    np.testing.assert_allclose(g[0], [g0, g1, g2])
    s1 = 0.2 + 0.5 * (g0 - 0.2)
    s1 = s1 + 0.5 * (g2 - s1)  # the second visit moves from where the first left it
    np.testing.assert_allclose(v[0, 0], [0, s1, 0.4 + 0.5 * (g1 - 0.4), 0])


def test_later_visits_counts_each_key_from_the_end():
    key = np.array([3, 1, 3, 3, 1, 7])
    np.testing.assert_array_equal(prediction._later_visits(key), [2, 1, 1, 0, 0, 0])


def test_lambda_return_increments_by_hand():
    v = np.array([[0.0, 0.2, 0.4, 0.0]])
    states, nxt = np.array([[1, 2, 1]]), np.array([[2, 1, 3]])
    rewards, valid = np.array([[0.0, 0.0, 1.0]]), np.ones((1, 3), bool)
    inc = prediction.lambda_return_increments(v, states, rewards, nxt, valid, gamma=1.0,
                                              lam=np.array([0.5]), alpha=np.array([0.5]))
    g2, g1 = 1.0, 0.5 * 0.2 + 0.5 * 1.0
    g0 = 0.5 * 0.4 + 0.5 * g1
    want = [0, 0.5 * (g0 - 0.2) + 0.5 * (g2 - 0.2), 0.5 * (g1 - 0.4), 0]
    np.testing.assert_allclose(inc[0], want)


# --------------------------------------------------------------------------- engines = loops
@pytest.mark.parametrize("gamma", [1.0, 0.9])
@pytest.mark.parametrize("n", [1, 2, 3, 8, 1000])
def test_n_step_td_equals_the_books_loop(walk19, walk5, n, gamma):
    for runs in (walk19, walk5):
        sweep = prediction.n_step_td(runs, ns=[n], alphas=[0.1, 0.7], gamma=gamma)
        for a, alpha in enumerate((0.1, 0.7)):
            for r in range(runs.n_runs):
                loop = n_step_td_loop(runs, r, n=n, alpha=alpha, gamma=gamma)
                np.testing.assert_allclose(sweep.values[0, a, r], loop[:, 1:-1], atol=1e-12)


@pytest.mark.parametrize("offline", [False, True])
@pytest.mark.parametrize("lam", [0.0, 0.6, 1.0])
def test_td_lambda_equals_the_loop(walk19, walk5, lam, offline):
    for runs in (walk19, walk5):
        sweep = prediction.td_lambda(runs, lams=[lam], alphas=[0.05, 0.3], gamma=0.95,
                                     offline=offline)
        for a, alpha in enumerate((0.05, 0.3)):
            for r in range(runs.n_runs):
                loop = td_lambda_loop(runs, r, lam=lam, alpha=alpha, gamma=0.95, offline=offline)
                np.testing.assert_allclose(sweep.values[0, a, r], loop[:, 1:-1], atol=1e-10)


@pytest.mark.parametrize("lam", [0.0, 0.7, 1.0])
def test_true_online_equals_the_books_box(walk5, lam):
    sweep = prediction.true_online_td_lambda(walk5, lams=[lam], alphas=[0.2, 0.6], gamma=0.9)
    for a, alpha in enumerate((0.2, 0.6)):
        for r in range(walk5.n_runs):
            loop = true_online_loop(walk5, r, lam=lam, alpha=alpha, gamma=0.9)
            np.testing.assert_allclose(sweep.values[0, a, r], loop[:, 1:-1], atol=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.5, 0.9, 1.0])
def test_offline_lambda_return_equals_the_definition(walk5, lam):
    sweep = prediction.offline_lambda_return(walk5, lams=[lam], alphas=[0.3, 1.0], gamma=0.8)
    for a, alpha in enumerate((0.3, 1.0)):
        for r in range(walk5.n_runs):
            loop = offline_lambda_return_loop(walk5, r, lam=lam, alpha=alpha, gamma=0.8)
            np.testing.assert_allclose(sweep.values[0, a, r], loop[:, 1:-1], atol=1e-12)


def test_a_grid_is_its_lanes_one_by_one(walk19):
    grid = prediction.td_lambda(walk19, lams=[0.4, 0.9], alphas=[0.1, 0.5])
    for i, lam in enumerate((0.4, 0.9)):
        for j, alpha in enumerate((0.1, 0.5)):
            one = prediction.td_lambda(walk19, lams=[lam], alphas=[alpha])
            np.testing.assert_array_equal(grid.values[i, j], one.values[0, 0])


@pytest.mark.parametrize("method", ["n_step", "td_lambda", "true_online"])
def test_one_setting_of_a_summary_is_that_setting_swept_alone(walk19, method):
    params = [1, 4, 16] if method == "n_step" else [0.4, 0.9, 1.0]
    grid = prediction.run_sweep(method, walk19, params=params, alphas=[0.1, 1.0]).summary()
    for p, param in enumerate(params):
        alone = prediction.run_sweep(method, walk19, params=[param], alphas=[0.1, 1.0]).summary()
        got = grid.only(p)
        for name in ("params", "curve", "curve_half", "by_episode", "values", "values_half",
                     "first_run", "diverged"):
            np.testing.assert_allclose(getattr(got, name), getattr(alone, name), rtol=1e-14,
                                       atol=1e-15, err_msg=name)
        assert (got.runs, got.episodes, got.method) == (alone.runs, alone.episodes, alone.method)


def test_whiteboard_equals_the_library(walk19):
    cases = [(prediction.n_step_td, {"ns": [3]}, wb.n_step_td, 3),
             (prediction.td_lambda, {"lams": [0.7]}, wb.td_lambda, 0.7),
             (prediction.true_online_td_lambda, {"lams": [0.7]}, wb.true_online_td_lambda, 0.7),
             (prediction.offline_lambda_return, {"lams": [0.7]}, wb.offline_lambda_return, 0.7)]
    for lib, kw, board, param in cases:
        sweep = lib(walk19, alphas=[0.3], **kw)
        for r in range(walk19.n_runs):
            v = np.zeros(21)
            for e in range(walk19.n_episodes):
                sl = walk19.episode(r, e)
                states = np.append(walk19.states[r, sl], walk19.next_states[r, sl.stop - 1])
                board(v, states, walk19.rewards[r, sl], param, 0.3)
            np.testing.assert_allclose(v[1:-1], sweep.values[0, 0, r, -1], atol=1e-12)


# --------------------------------------------------------------------------- identities
def test_the_identities_hold_to_rounding(walk19):
    ident = prediction.identities(walk19, lam=0.9, alpha=0.3, check_runs=4, check_episodes=3,
                                  max_steps=400)
    assert ident.forward_backward < 1e-13 and ident.forward_backward_count > 0
    assert ident.monte_carlo < 1e-13 and ident.monte_carlo_count > 0
    assert ident.true_online < 1e-13
    assert ident.true_online_steps == min(400, walk19.run_lengths[0])
    np.testing.assert_allclose(ident.forward, ident.backward, atol=1e-14)
    assert np.abs(ident.forward).max() > 0


@pytest.mark.parametrize("gamma", [1.0, 0.9])
def test_true_online_is_the_online_lambda_return_across_episodes(walk5, gamma):
    k = int(walk5.run_lengths[0])
    args = (walk5.states[0, :k], walk5.rewards[0, :k], walk5.next_states[0, :k],
            walk5.dones[0, :k], prediction.true_values(5) * 0 + np.r_[0, [0.5] * 5, 0])
    fwd = prediction.online_lambda_return(*args, gamma=gamma, lam=0.8, alpha=0.4)
    bwd = prediction.true_online_steps(*args, gamma=gamma, lam=0.8, alpha=0.4)
    np.testing.assert_allclose(fwd, bwd, atol=1e-13)
    assert fwd.shape == (k + 1, 7) and walk5.n_episodes > 1
    sweep = prediction.true_online_td_lambda(walk5, lams=[0.8], alphas=[0.4], gamma=gamma)
    ends = np.cumsum(walk5.lengths[0])
    np.testing.assert_allclose(bwd[ends, 1:-1], sweep.values[0, 0, 0, 1:], atol=1e-13)


def test_lambda_zero_is_one_step_td_and_lambda_one_offline_is_constant_alpha_mc(walk19):
    one = prediction.n_step_td(walk19, ns=[1], alphas=[0.2, 0.9]).values
    for f in (prediction.td_lambda, prediction.true_online_td_lambda):
        np.testing.assert_allclose(f(walk19, lams=[0.0], alphas=[0.2, 0.9]).values, one,
                                   atol=1e-15)
    mc = prediction.constant_alpha_mc(walk19, alphas=[0.2, 0.9]).values
    lr = prediction.offline_lambda_return(walk19, lams=[1.0], alphas=[0.2, 0.9]).values
    np.testing.assert_allclose(lr, mc, atol=1e-13)


# --------------------------------------------------------------------------- divergence
def test_a_diverging_lane_is_frozen_and_reported_without_touching_the_others(walk19):
    sweep = prediction.td_lambda(walk19, lams=[0.2, 1.0], alphas=[0.1, 1.0])
    assert (sweep.diverged_in[1, 1] > 0).all()  # λ = 1, α = 1 blows up in every run
    assert (sweep.diverged_in[0] == 0).all()
    d = sweep.diverged_in[1, 1, 0]
    assert np.isnan(sweep.values[1, 1, 0, d:]).all()
    assert np.isfinite(sweep.values[1, 1, 0, :d]).all()
    assert np.isinf(sweep.errors[1, 1, 0, d:]).all()
    s = sweep.summary()
    assert np.isinf(s.curve[1, 1]) and s.curve_half[1, 1] == 0.0 and s.diverged[1, 1] == 4
    assert np.isfinite(s.curve[0]).all() and not np.isnan(s.curve).any()
    assert s.best != (1, 1)


def test_the_book_form_of_the_offline_lambda_return_never_diverges():
    runs = prediction.sample_runs(19, runs=6, episodes=4, seed=2)
    sweep = prediction.offline_lambda_return(runs, lams=[0.0, 0.95, 1.0], alphas=[1.0])
    assert (sweep.diverged_in == 0).all() and np.nanmax(np.abs(sweep.values)) <= 1.0 + 1e-12


# --------------------------------------------------------------------------- summaries
def test_the_summary_is_the_mean_over_runs_with_a_t_interval(walk19):
    sweep = prediction.n_step_td(walk19, ns=[1, 4], alphas=[0.0, 0.4])
    s = sweep.summary()
    per_run = sweep.errors[..., 1:].mean(axis=-1)
    np.testing.assert_allclose(s.curve, per_run.mean(axis=-1))
    from scipy import stats

    half = stats.t.ppf(0.975, 3) * per_run.std(axis=-1, ddof=1) / 2
    np.testing.assert_allclose(s.curve_half, half)
    np.testing.assert_allclose(s.curve[:, 0], math.sqrt(0.3))  # α = 0 never moves
    assert s.values.shape == (2, 2, 4, 19) and s.first_run.shape == (2, 2, 4, 19)
    assert s.best == (1, 1) or s.best[1] == 1


def test_same_seed_same_sweep():
    a = prediction.sample_runs(19, runs=3, episodes=2, seed=9)
    b = prediction.sample_runs(19, runs=3, episodes=2, seed=9)
    np.testing.assert_array_equal(prediction.n_step_td(a, ns=[2], alphas=[0.5]).values,
                                  prediction.n_step_td(b, ns=[2], alphas=[0.5]).values)


# --------------------------------------------------------------------------- Example 6.2
def test_example_6_2_first_episode_moves_only_the_end_state_and_td_wins():
    ex = prediction.td_vs_mc(runs=20, seed=0, episodes=100)
    change = ex.estimates[1] - ex.estimates[0]
    moved = np.flatnonzero(np.abs(change) > 1e-12)
    assert moved.size == 1 and moved[0] in (0, 4) and abs(change[moved[0]]) == pytest.approx(0.05)
    np.testing.assert_allclose(ex.td_error[:, 0], math.sqrt(1 / 18))  # 0.5 against k/6
    assert ex.td_error[:, -1].min() < ex.mc_error[:, -1].min()
    assert ex.shown == (0, 1, 10, 100) and ex.estimates.shape == (4, 5)


# --------------------------------------------------------------------------- the backup
def test_the_backup_is_the_update_the_sweep_makes(walk19):
    sweep = prediction.n_step_td(walk19, ns=[4], alphas=[0.4])
    b = prediction.n_step_backup(walk19, n=4, alpha=0.4, episode=1, tau=0)
    np.testing.assert_allclose(b.values[1:-1], sweep.values[0, 0, 0, 1])  # after episode 1
    assert b.states[0] == 10 and b.states[-1] in (0, 20) and b.length == walk19.lengths[0, 1]
    assert b.used == min(4, b.length) and b.made_at == min(4, b.length) - 1
    assert b.target == pytest.approx(b.reward_sum + b.discount * b.boot_value)
    assert b.new_value == pytest.approx(b.old_value + 0.4 * (b.target - b.old_value))
    last = prediction.n_step_backup(walk19, n=4, alpha=0.4, episode=1, tau=b.length - 1)
    assert not last.bootstraps and last.used == 1 and last.boot_value == 0.0
    assert last.target == last.rewards[-1] and last.boot_state in (0, 20)


def test_a_long_n_is_monte_carlo_in_the_backup(walk19):
    b = prediction.n_step_backup(walk19, n=512, alpha=0.5, episode=0, tau=0)
    assert not b.bootstraps and b.used == b.length and b.target == b.rewards.sum()


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("call", "message"),
    [(lambda r: prediction.n_step_td(r, ns=[0], alphas=[0.1]), "n must be a whole number"),
     (lambda r: prediction.n_step_td(r, ns=[2], alphas=[1.5]), "α must be in"),
     (lambda r: prediction.td_lambda(r, lams=[-0.1], alphas=[0.1]), "λ must be in"),
     (lambda r: prediction.td_lambda(r, lams=[], alphas=[0.1]), "at least one value of λ"),
     (lambda r: prediction.n_step_backup(r, n=2, alpha=0.1, episode=9, tau=0), "episode 10"),
     (lambda r: prediction.n_step_backup(r, n=2, alpha=0.1, episode=0, tau=10_000), "τ ="),
     (lambda r: prediction.run_sweep("sarsa", r, params=[1], alphas=[0.1]), "the method")],
)
def test_bad_input_is_an_input_error(walk19, call, message):
    with pytest.raises(InputError, match=message):
        call(walk19)


def test_only_the_books_walks_and_real_counts():
    with pytest.raises(InputError, match="5-state and 19-state"):
        prediction.sample_runs(7, runs=1, episodes=1, seed=0)
    with pytest.raises(InputError, match="runs must be a whole number"):
        prediction.sample_runs(19, runs=0, episodes=1, seed=0)


# --------------------------------------------------------------------------- the book's figures
@pytest.mark.slow
def test_figure_7_2_best_n_is_four_near_alpha_0_4():
    runs = prediction.sample_runs(19, runs=100, episodes=10, seed=0)
    s = prediction.n_step_td(runs, ns=prediction.NS, alphas=prediction.ALPHAS_7_2).summary()
    p, a = s.best
    assert s.params[p] == 4 and s.alphas[a] == pytest.approx(0.4)
    assert 0.24 < s.best_error < 0.3
    assert (s.curve[:, -1] > s.best_error).all()  # every n is worse at α = 1


@pytest.mark.slow
def test_figure_12_3_check_needs_only_n_step_at_alpha_one():
    runs = prediction.sample_runs(19, runs=100, episodes=10, seed=0)
    s = prediction.offline_lambda_return(runs, lams=prediction.LAMBDAS,
                                         alphas=prediction.ALPHAS).summary()
    full = prediction.n_step_td(runs, ns=prediction.NS, alphas=prediction.ALPHAS).summary()
    at_one = prediction.n_step_td(runs, ns=prediction.NS, alphas=[1.0]).summary()
    np.testing.assert_allclose(at_one.curve[:, -1], full.curve[:, -1], rtol=1e-14)
    ident = prediction.identities(runs, lam=0.8, alpha=0.4)
    ex = prediction.td_vs_mc(runs=10, seed=0)

    def check(n_step):
        rows = prediction.known_answers(example=ex, sweep=s, ident=ident, n_step=n_step,
                                        compare=None, whiteboard=None)
        return [r for r in rows if r.label.startswith("Figure 12.3: at α = 1")]

    (row,) = check(at_one)
    assert row.passed and row == check(full)[0]
    assert check(None) == []


@pytest.mark.slow
def test_chapter_12_best_lambda_is_intermediate_and_td_lambda_blows_up():
    runs = prediction.sample_runs(19, runs=100, episodes=10, seed=1)
    got = {m: prediction.run_sweep(m, runs, params=prediction.LAMBDAS,
                                   alphas=prediction.ALPHAS).summary()
           for m in ("offline_lambda_return", "td_lambda", "true_online")}
    for s in got.values():
        assert 0 < s.best[0] < len(prediction.LAMBDAS) - 1
        assert 0.24 < s.best_error < 0.3
    assert got["td_lambda"].diverged.sum() > 0
    assert got["true_online"].diverged.sum() == got["offline_lambda_return"].diverged.sum() == 0
    assert got["true_online"].best_error <= got["offline_lambda_return"].best_error + 0.005
