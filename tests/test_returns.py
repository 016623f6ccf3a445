import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlviz import mdp, returns
from rlviz.errors import InputError
from tests.oracle_returns import (
    gae_loop,
    lambda_return_loop,
    n_step_loop,
    returns_loop,
)

NAN = np.nan
# A tiny trajectory worked by hand: gamma = 0.5, V(s_3) = 40.
R3 = [1.0, 2.0, 3.0]
V3 = [10.0, 20.0, 30.0]


def random_batch(seed, shape, *, p_done=0.05, p_trunc=0.05):
    rng = np.random.default_rng(seed)
    dones = rng.random(shape) < p_done
    truncated = rng.random(shape) < p_trunc
    cut = np.where(truncated, rng.normal(size=shape), NAN)
    return dict(
        rewards=rng.normal(size=shape), values=rng.normal(size=shape),
        last_value=rng.normal(size=shape[:-1]) if len(shape) > 1 else float(rng.normal()),
        dones=dones, truncated=truncated, truncated_values=cut,
    )


# --------------------------------------------------------------------------- hand-computed
@pytest.mark.parametrize(
    ("kw", "expected"),
    [
        ({}, [2.75, 3.5, 3.0]),
        ({"last_value": 4.0}, [3.25, 4.5, 5.0]),
        ({"last_value": 4.0, "dones": [1, 0, 0]}, [1.0, 4.5, 5.0]),
        ({"last_value": 4.0, "truncated": [1, 0, 0], "truncated_values": [10, NAN, NAN]},
         [6.0, 4.5, 5.0]),
        ({"last_value": 4.0, "dones": [0, 0, 1]}, [2.75, 3.5, 3.0]),
    ],
)
def test_discounted_returns_by_hand(kw, expected):
    np.testing.assert_allclose(returns.discounted_returns(R3, 0.5, **kw), expected, atol=1e-12)


@pytest.mark.parametrize(
    ("n", "expected"),
    [(1, [11.0, 17.0, 23.0]), (2, [9.5, 13.5, 23.0]), (3, [7.75, 13.5, 23.0]),
     (10, [7.75, 13.5, 23.0])],
)
def test_n_step_returns_by_hand(n, expected):
    got = returns.n_step_returns(R3, V3, gamma=0.5, n=n, last_value=40.0)
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_n_step_returns_stop_at_a_termination_and_bootstrap_at_a_truncation():
    got = returns.n_step_returns(R3, V3, gamma=0.5, n=3, last_value=40.0, dones=[0, 1, 0])
    np.testing.assert_allclose(got, [2.0, 2.0, 23.0])
    got = returns.n_step_returns(R3, V3, gamma=0.5, n=3, last_value=40.0, truncated=[0, 1, 0],
                                 truncated_values=[NAN, 8.0, NAN])
    np.testing.assert_allclose(got, [1 + 1 + 0.25 * 8, 2 + 4, 23.0])


def test_td_errors_and_gae_by_hand():
    kw = dict(gamma=0.5, last_value=40.0)
    np.testing.assert_allclose(returns.td_errors(R3, V3, **kw), [1.0, -3.0, -7.0])
    np.testing.assert_allclose(returns.gae(R3, V3, lam=0.5, **kw), [-0.1875, -4.75, -7.0])
    # A termination after step 1: no bootstrap there, and the recursion restarts.
    np.testing.assert_allclose(returns.gae(R3, V3, lam=0.5, dones=[0, 1, 0], **kw),
                               [-3.5, -18.0, -7.0])
    # A truncation after step 1 bootstraps from the cut state's value 8, not from V(s_2) = 30.
    np.testing.assert_allclose(
        returns.gae(R3, V3, lam=0.5, truncated=[0, 1, 0], truncated_values=[NAN, 8.0, NAN], **kw),
        [-2.5, -14.0, -7.0],
    )
    np.testing.assert_allclose(
        returns.lambda_returns(R3, V3, lam=0.5, **kw), np.array([-0.1875, -4.75, -7.0]) + V3
    )


def test_termination_wins_when_a_step_is_flagged_both_ways():
    both = returns.gae(R3, V3, gamma=0.5, lam=0.5, last_value=40.0, dones=[0, 1, 0],
                       truncated=[0, 1, 0], truncated_values=[NAN, 8.0, NAN])
    np.testing.assert_allclose(both, [-3.5, -18.0, -7.0])


def test_truncation_ignores_the_next_episodes_first_value():
    kw = random_batch(3, (40,))
    kw["truncated"][:] = False
    kw["dones"][:] = False
    kw["truncated"][17] = True
    kw["truncated_values"][17] = 0.25
    base = returns.gae(gamma=0.9, lam=0.8, **kw)
    kw["values"] = kw["values"].copy()
    kw["values"][18] += 100.0  # the first state of the next episode
    moved = returns.gae(gamma=0.9, lam=0.8, **kw)
    np.testing.assert_allclose(base[:18], moved[:18], rtol=0, atol=1e-12)
    assert abs(moved[18] - base[18]) > 50  # ...which is that episode's own business


def test_termination_and_truncation_differ_by_the_discounted_cut_value():
    r, v = np.ones(6), np.zeros(6)
    cut = np.full(6, NAN)
    cut[2] = 5.0
    flags = np.array([0, 0, 1, 0, 0, 0], bool)
    term = returns.gae(r, v, gamma=0.9, lam=0.5, dones=flags)
    trunc = returns.gae(r, v, gamma=0.9, lam=0.5, truncated=flags, truncated_values=cut)
    np.testing.assert_allclose(trunc[:3] - term[:3], 0.9 * 5.0 * 0.45 ** np.array([2, 1, 0]))
    np.testing.assert_array_equal(trunc[3:], term[3:])


@pytest.mark.parametrize(
    ("lam", "horizon", "expected"),
    [(0.5, 3, [0.5, 0.25, 0.25]), (0.0, 4, [1, 0, 0, 0]), (1.0, 3, [0, 0, 1]), (0.9, 1, [1])],
)
def test_lambda_weights(lam, horizon, expected):
    np.testing.assert_allclose(returns.lambda_weights(lam, horizon), expected, atol=1e-15)


@pytest.mark.parametrize("lam", [0.0, 0.3, 0.95, 1.0])
def test_lambda_weights_sum_to_one(lam):
    assert returns.lambda_weights(lam, 50).sum() == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------- identities
@pytest.mark.parametrize("seed", range(4))
def test_lambda_zero_is_the_td_error_and_lambda_one_the_monte_carlo_advantage(seed):
    kw = random_batch(seed, (3, 50), p_done=0.1, p_trunc=0.1)
    gamma = 0.93
    np.testing.assert_allclose(returns.gae(gamma=gamma, lam=0.0, **kw),
                               returns.td_errors(gamma=gamma, **kw), atol=1e-12)
    g = returns.discounted_returns(kw["rewards"], gamma, last_value=kw["last_value"],
                                   dones=kw["dones"], truncated=kw["truncated"],
                                   truncated_values=kw["truncated_values"])
    np.testing.assert_allclose(returns.gae(gamma=gamma, lam=1.0, **kw), g - kw["values"],
                               atol=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_n_step_with_the_whole_horizon_is_the_monte_carlo_return(seed):
    kw = random_batch(seed, (2, 30))
    g = returns.discounted_returns(kw["rewards"], 0.9, last_value=kw["last_value"],
                                   dones=kw["dones"], truncated=kw["truncated"],
                                   truncated_values=kw["truncated_values"])
    np.testing.assert_allclose(returns.n_step_returns(gamma=0.9, n=30, **kw), g, atol=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_lambda_return_is_the_weighted_mix_of_n_step_returns(seed):
    kw = random_batch(seed, (2, 12), p_done=0.15, p_trunc=0.15)
    np.testing.assert_allclose(returns.lambda_returns(gamma=0.8, lam=0.7, **kw),
                               lambda_return_loop(gamma=0.8, lam=0.7, **kw), atol=1e-10)


@pytest.mark.parametrize("step", range(10))
def test_breakdown_weights_times_n_step_advantages_is_gae(step):
    kw = random_batch(11, (10,), p_done=0.2, p_trunc=0.2)
    b = returns.breakdown(gamma=0.9, lam=0.6, step=step, **kw)
    assert b.weights.sum() == pytest.approx(1.0)
    assert b.n_step_advantages.size == b.horizons[step]
    assert b.weights @ b.n_step_advantages == pytest.approx(b.advantages[step], abs=1e-12)
    np.testing.assert_allclose(b.td_advantages, b.td_errors, atol=1e-12)
    np.testing.assert_allclose(b.mc_advantages, b.returns - kw["values"], atol=1e-12)
    np.testing.assert_allclose(b.lambda_returns, b.advantages + kw["values"])


def test_breakdown_horizons():
    b = returns.breakdown(np.zeros(6), np.zeros(6), gamma=0.9, lam=0.5, dones=[0, 1, 0, 0, 0, 0],
                          truncated=[0, 0, 0, 1, 0, 0], truncated_values=[0, 0, 0, 1, 0, 0])
    np.testing.assert_array_equal(b.horizons, [2, 1, 2, 1, 2, 1])
    np.testing.assert_array_equal(b.dones, [0, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(b.truncated, [0, 0, 0, 1, 0, 0])


# --------------------------------------------------------------------------- filter vs loop
@pytest.mark.parametrize("shape", [(1,), (15,), (16,), (17,), (33,), (4, 64), (2, 3, 21)])
@pytest.mark.parametrize(("gamma", "lam"), [(0.99, 0.95), (1.0, 1.0), (0.5, 0.0), (0.9, 0.3)])
def test_gae_equals_the_loop(shape, gamma, lam):
    kw = random_batch(sum(shape), shape, p_done=0.1, p_trunc=0.1)
    np.testing.assert_allclose(returns.gae(gamma=gamma, lam=lam, **kw),
                               gae_loop(gamma=gamma, lam=lam, **kw), rtol=0, atol=1e-10)


@pytest.mark.parametrize("seed", range(3))
def test_returns_and_n_step_equal_the_loop(seed):
    kw = random_batch(seed, (3, 37), p_done=0.08, p_trunc=0.08)
    rkw = {k: kw[k] for k in ("last_value", "dones", "truncated", "truncated_values")}
    np.testing.assert_allclose(returns.discounted_returns(kw["rewards"], 0.97, **rkw),
                               returns_loop(kw["rewards"], 0.97, **rkw), atol=1e-10)
    for n in (1, 2, 5, 16, 40):
        np.testing.assert_allclose(returns.n_step_returns(gamma=0.97, n=n, **kw),
                                   n_step_loop(gamma=0.97, n=n, **kw), atol=1e-10)


def test_the_backward_sums_by_hand():
    x = np.array([1.0, 2.0, 3.0, 4.0])
    # One stream: 4, 3 + 0.5·4 = 5, 2 + 0.5·5 = 4.5, 1 + 0.5·4.5 = 3.25.
    assert returns._backward_sums(x.copy(), 0.5, np.zeros(0, np.int64)).tolist() == [
        3.25, 4.5, 5.0, 4.0]
    # A segment ends at step 1: step 1 takes nothing from step 2.
    assert returns._backward_sums(x.copy(), 0.5, np.array([1])).tolist() == [2.0, 2.0, 5.0, 4.0]
    # Ends at every step: each sum is its own term.
    assert returns._backward_sums(x.copy(), 0.5, np.arange(3)).tolist() == x.tolist()


@pytest.mark.parametrize(("gamma", "lam"), [(0.99, 0.95), (0.9, 0.3)])
def test_gae_is_the_loop_to_the_last_bit(gamma, lam):
    """The compiled sums take the loop's steps in the loop's order: equal, not merely close."""
    kw = random_batch(11, (3, 5_000), p_done=0.01, p_trunc=0.01)
    np.testing.assert_array_equal(returns.gae(gamma=gamma, lam=lam, **kw),
                                  gae_loop(gamma=gamma, lam=lam, **kw))


def test_the_warm_up_compiles_what_the_page_passes():
    from rlviz.returns import filter as module

    module._warm_up()
    before = list(module._backward_sums.signatures)
    kw = random_batch(3, (2, 9), p_done=0.2, p_trunc=0.2)
    returns.gae(gamma=0.99, lam=0.95, **kw)
    returns.discounted_returns(kw["rewards"], 0.9)
    returns.bias_variance_study(n_states=5, left_reward=0.0, right_reward=1.0, gamma=0.99,
                                lams=(0.0, 0.5), critic_bias=0.1, critic_noise=0.1,
                                n_episodes=20, seed=0)
    assert list(module._backward_sums.signatures) == before  # nothing new to compile


def test_gae_equals_the_loop_on_a_long_stream_without_discounting():
    kw = random_batch(5, (2, 100_000), p_done=0.001, p_trunc=0.001)
    np.testing.assert_allclose(returns.gae(gamma=1.0, lam=1.0, **kw),
                               gae_loop(gamma=1.0, lam=1.0, **kw), rtol=0, atol=1e-10)


@settings(max_examples=60, deadline=None)
@given(
    data=st.data(),
    length=st.integers(1, 40),
    gamma=st.floats(0.0, 1.0),
    lam=st.floats(0.0, 1.0),
)
def test_gae_equals_the_loop_for_any_flags(data, length, gamma, lam):
    flags = st.lists(st.booleans(), min_size=length, max_size=length)
    numbers = st.lists(st.floats(-10, 10), min_size=length, max_size=length)
    kw = dict(rewards=data.draw(numbers), values=data.draw(numbers),
              last_value=data.draw(st.floats(-10, 10)), dones=data.draw(flags),
              truncated=data.draw(flags), truncated_values=data.draw(numbers))
    np.testing.assert_allclose(returns.gae(gamma=gamma, lam=lam, **kw),
                               gae_loop(gamma=gamma, lam=lam, **kw), rtol=0, atol=1e-10)


def test_inputs_are_not_mutated():
    kw = random_batch(7, (3, 20))
    before = {k: np.copy(v) for k, v in kw.items()}
    returns.gae(gamma=0.9, lam=0.9, **kw)
    returns.n_step_returns(gamma=0.9, n=3, **kw)
    returns.discounted_returns(kw["rewards"], 0.9, dones=kw["dones"])
    for k, v in kw.items():
        np.testing.assert_array_equal(v, before[k])


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (dict(rewards=[], values=[]), "empty"),
        (dict(rewards=[1, NAN, 2], values=[0, 0, 0]), r"reward r_t at step 1 is empty"),
        (dict(rewards=[1, 2], values=[0, np.inf]), r"value V\(s_t\) at step 1"),
        (dict(rewards=[1, 2, 3], values=[0, 0]), r"values has shape \(2,\) but rewards has "
                                                 r"shape \(3,\)"),
        (dict(rewards=[1, 2], values=[0, 0], dones=[0, 1, 0]), "dones has shape"),
        (dict(rewards=[1, 2], values=[0, 0], dones=[0, 2]), "dones must be 0 or 1"),
        (dict(rewards=[1, 2], values=[0, 0], truncated=[0, 1]), "step 1 is truncated.*pass "
                                                                "truncated_values"),
        (dict(rewards=[1, 2], values=[0, 0], truncated=[1, 0], truncated_values=[NAN, 1]),
         "step 0 is truncated but the value of the state where the episode was cut"),
        (dict(rewards=[[1, 2], [3, 4]], values=[[0, 0], [0, NAN]]), "step 1 of trajectory 1"),
        (dict(rewards=[1, 2], values=[0, 0], last_value=NAN), "last_value"),
        (dict(rewards=[[1, 2]], values=[[0, 0]], last_value=[1, 2]), "one number per trajectory"),
        (dict(rewards=[1, 2], values=[0, 0], gamma=1.5), r"gamma must be in \[0, 1\]"),
        (dict(rewards=[1, 2], values=[0, 0], lam=-0.1), r"lam must be in \[0, 1\]"),
        (dict(rewards=3.0, values=1.0), "array over time"),
    ],
)
def test_bad_input_gives_a_clear_message(kw, message):
    kw = {"gamma": 0.9, "lam": 0.5, **kw}
    with pytest.raises(InputError, match=message):
        returns.gae(**kw)


def test_cut_values_are_only_needed_where_truncated():
    got = returns.gae([1, 2], [0, 0], gamma=0.9, lam=0.5, truncated=[0, 1],
                      truncated_values=[NAN, 3.0])
    assert np.isfinite(got).all()


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_n_must_be_a_positive_whole_number(n):
    with pytest.raises(InputError, match="n must be a whole number"):
        returns.n_step_returns([1, 2], [0, 0], gamma=0.9, n=n)


def test_breakdown_rejects_a_step_outside_the_trajectory():
    with pytest.raises(InputError, match="step 3 is outside the trajectory of 3 steps"):
        returns.breakdown(R3, V3, gamma=0.9, lam=0.5, step=3)


# --------------------------------------------------------------------------- the random walk
@pytest.mark.parametrize(
    ("n", "expected"),
    [(5, np.arange(1, 6) / 6), (19, (np.arange(1, 20) - 10) / 10)],
)
def test_true_values_of_the_book_random_walks(n, expected):
    left, right = returns.SUTTON_BARTO_WALKS[n]
    walk = returns.random_walk(n, left_reward=left, right_reward=right)
    v = mdp.policy_value(walk, np.full((n + 2, 2), 0.5), 1.0)
    np.testing.assert_allclose(v[1:-1], expected, atol=1e-12)
    assert v[0] == v[-1] == 0.0
    assert walk.start_state == (n + 1) // 2


@pytest.mark.parametrize("n", [5, 19])
def test_sampled_walks_are_valid_episodes(n):
    left, right = returns.SUTTON_BARTO_WALKS[n]
    ep = returns.sample_walks(n, 3000, np.random.default_rng(1), left_reward=left,
                              right_reward=right)
    assert ep.lengths.sum() == ep.states.size and ep.lengths.min() >= 1
    np.testing.assert_array_equal(ep.next_states - ep.states, 2 * ep.actions - 1)
    assert ((ep.states >= 1) & (ep.states <= n)).all()
    starts = np.concatenate([[0], np.cumsum(ep.lengths)[:-1]])
    assert (ep.states[starts] == (n + 1) // 2).all()
    ends = np.cumsum(ep.lengths) - 1
    np.testing.assert_array_equal(np.flatnonzero(ep.dones), ends)
    assert np.isin(ep.next_states[ends], [0, n + 1]).all()
    inner = np.setdiff1d(np.arange(ep.states.size), ends)
    assert ((ep.next_states[inner] >= 1) & (ep.next_states[inner] <= n)).all()
    np.testing.assert_array_equal(np.flatnonzero(ep.rewards), np.flatnonzero(
        ep.dones & (ep.next_states == n + 1) if left == 0 else ep.dones))
    # Gambler's ruin: mean duration k (n + 1 - k) from the centre k, both exits equally likely.
    k = (n + 1) // 2
    se = ep.lengths.std() / np.sqrt(ep.lengths.size)
    assert abs(ep.lengths.mean() - k * (n + 1 - k)) < 4 * se
    assert abs((ep.next_states[ends] == n + 1).mean() - 0.5) < 4 * 0.5 / np.sqrt(3000)


def test_sampling_is_reproducible_and_chunk_sizes_do_not_break_episodes():
    a = returns.sample_walks(19, 200, np.random.default_rng(4), left_reward=-1, right_reward=1)
    b = returns.sample_walks(19, 200, np.random.default_rng(4), left_reward=-1, right_reward=1)
    c = returns.sample_walks(19, 200, np.random.default_rng(5), left_reward=-1, right_reward=1)
    np.testing.assert_array_equal(a.states, b.states)
    assert a.states.size != c.states.size or (a.states != c.states).any()
    small = returns.sample_walks(19, 200, np.random.default_rng(4), left_reward=-1,
                                 right_reward=1, chunk=3)
    assert np.isin(small.next_states[small.dones], [0, 20]).all()
    assert (np.abs(np.diff(small.states)[~small.dones[:-1]]) == 1).all()


# --------------------------------------------------------------------------- the study
STUDY = dict(n_states=5, left_reward=0.0, right_reward=1.0, gamma=0.95, n_episodes=400)


def study_loop(seed, lams, critic_bias, critic_noise):
    """The study's numbers from scratch: the same draws, the loop GAE, a loop over groups."""
    critic_ss, walk_ss = np.random.SeedSequence(seed).spawn(2)
    walk = returns.random_walk(5, left_reward=0.0, right_reward=1.0)
    v = mdp.policy_value(walk, np.full((7, 2), 0.5), 0.95)
    noise = np.random.default_rng(critic_ss).standard_normal(7)
    critic = np.where(walk.terminal, 0.0, v + critic_bias + critic_noise * noise)
    ep = returns.sample_walks(5, 400, np.random.default_rng(walk_ss), left_reward=0.0,
                              right_reward=1.0)
    out = []
    for lam in lams:
        adv = gae_loop(ep.rewards, critic[ep.states], gamma=0.95, lam=lam,
                       last_value=0.0, dones=ep.dones)
        err = adv - (ep.rewards + 0.95 * v[ep.next_states] - critic[ep.states])
        bias2 = variance = 0.0
        for s in range(1, 6):
            for a in (0, 1):
                e = err[(ep.states == s) & (ep.actions == a)]
                if e.size:
                    bias2 += e.size * e.mean() ** 2 / err.size
                    variance += e.size * e.var() / err.size
        out.append((bias2, variance))
    return np.array(out)


def test_study_equals_a_loop_over_steps_and_groups():
    lams = [0.0, 0.5, 0.9, 1.0]
    res = returns.bias_variance_study(lams=lams, critic_bias=0.2, critic_noise=0.1, seed=3,
                                      **STUDY)
    ref = study_loop(3, lams, 0.2, 0.1)
    np.testing.assert_allclose(res.bias2, ref[:, 0], atol=1e-12)
    np.testing.assert_allclose(res.variance, ref[:, 1], atol=1e-12)
    np.testing.assert_allclose(res.mse, res.bias2 + res.variance)
    assert res.best == int(np.argmin(res.mse))


def test_study_is_deterministic_per_seed():
    a = returns.bias_variance_study(lams=[0.5], critic_bias=0.1, critic_noise=0.2, seed=1,
                                    **STUDY)
    b = returns.bias_variance_study(lams=[0.5], critic_bias=0.1, critic_noise=0.2, seed=1,
                                    **STUDY)
    c = returns.bias_variance_study(lams=[0.5], critic_bias=0.1, critic_noise=0.2, seed=2,
                                    **STUDY)
    assert a.mse[0] == b.mse[0] and a.n_steps == b.n_steps
    np.testing.assert_array_equal(a.critic, b.critic)
    assert a.mse[0] != c.mse[0]
    assert not np.array_equal(a.critic, c.critic)


def test_a_perfect_critic_makes_td_exact_and_every_lambda_unbiased_on_average():
    res = returns.bias_variance_study(lams=np.linspace(0, 1, 11), critic_bias=0.0,
                                      critic_noise=0.0, seed=0, **STUDY)
    assert res.bias2[0] == 0.0 and res.variance[0] == 0.0
    assert res.best == 0
    assert np.all(np.diff(res.variance) > 0)
    assert np.all(res.bias2 < 0.05 * res.variance[-1])


def test_one_step_bias_is_the_discounted_critic_error_of_the_next_state():
    res = returns.bias_variance_study(lams=[0.0, 1.0], critic_bias=0.3, critic_noise=0.2, seed=5,
                                      **STUDY)
    critic_ss, walk_ss = np.random.SeedSequence(5).spawn(2)
    ep = returns.sample_walks(5, 400, np.random.default_rng(walk_ss), left_reward=0.0,
                              right_reward=1.0)
    error = res.critic - res.true_values
    assert res.bias2[0] == pytest.approx(np.mean((0.95 * error[ep.next_states]) ** 2), rel=1e-12)
    assert res.variance[0] == pytest.approx(0.0, abs=1e-15)
    assert res.bias2[1] < 0.1 * res.bias2[0]  # Monte Carlo: unbiased up to sampling noise
    assert res.variance[1] > res.variance[0]


def test_study_rejects_bad_settings():
    with pytest.raises(InputError, match="lam must be in"):
        returns.bias_variance_study(lams=[0.5, 1.2], critic_bias=0, critic_noise=0, seed=0,
                                    **STUDY)
    with pytest.raises(InputError, match="noise must be at least 0"):
        returns.bias_variance_study(lams=[0.5], critic_bias=0, critic_noise=-1, seed=0, **STUDY)
