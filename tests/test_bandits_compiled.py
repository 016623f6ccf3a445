"""rlviz.bandits' compiled loops: hand-computed cases, and equal to the numpy code they replace."""

import math

import numpy as np
import pytest

from rlviz import bandits as B
from rlviz.bandits import agents as agents_module
from rlviz.bandits import beta as cheng
from rlviz.bandits import noise as noise_module
from rlviz.bandits import races as races_module
from tests.bandits_reference import Draws, beta, mix
from tests.test_bandits import SHAPES, SINGLE_SHAPES, beta_params, draw

S = B.Stream


def test_mix64_and_unit64_by_hand():
    # SplitMix64 seeded with 0 starts 0xe220a8397b1dcdaf (Vigna's reference implementation).
    assert int(noise_module.mix64(np.uint64(0x9E3779B97F4A7C15))) == 0xE220A8397B1DCDAF
    for z in (0, 1, 2**63, 2**64 - 1, 0x0123456789ABCDEF):
        assert int(noise_module.mix64(np.uint64(z))) == mix(z)
    assert noise_module.unit64(np.uint64(0)) == 2.0**-54  # (0 + 1/2) / 2**53
    assert noise_module.unit64(np.uint64(2**64 - 1)) == 1.0 - 2.0**-54
    assert noise_module.unit64(np.uint64(3 << 11)) == 3.5 * 2.0**-53


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_first_argmax_by_hand(dtype):
    values = np.array([[1.0, 5.0, 2.0, -np.inf],
                       [3.0, 5.0, 2.0, -1.0],
                       [3.0, 1.0, 2.0, np.inf]], dtype=dtype)  # [A=3, R=4]
    out = agents_module._first_argmax(values, np.full(4, -7, dtype=np.int64))
    np.testing.assert_array_equal(out, [1, 0, 0, 2])


def test_keyed_ties_by_hand():
    # Run 0: one best arm. Run 1: arms 0 and 2 tie. Run 2: all three tie. Run 3: two untried
    # arms (+inf) tie.
    values = np.array([[0.0, 4.0, 1.0, np.inf],
                       [2.0, 3.0, 1.0, 0.5],
                       [1.0, 4.0, 1.0, np.inf]])
    noise, draws, step = B.Noise(5), Draws(5), 12
    cells = noise.cells(np.arange(4), np.arange(3)[:, None])
    out = agents_module._argmax_keyed_ties(values, cells, noise_module._step_offset(S.TIE, step),
                                           np.empty(4, dtype=np.int64))

    def by_keys(run, tied):
        keys = [draws.unit(S.TIE, step, run, a) for a in tied]
        return tied[keys.index(max(keys))]

    expected = [1, by_keys(1, [0, 2]), by_keys(2, [0, 1, 2]), by_keys(3, [0, 2])]
    np.testing.assert_array_equal(out, expected)


def test_keyed_ties_pick_every_tied_arm_equally_often():
    values = np.zeros((3, 30_000))
    values[1] = -1.0  # arms 0 and 2 tie in every run
    cells = B.Noise(0).cells(np.arange(30_000), np.arange(3)[:, None])
    out = agents_module._argmax_keyed_ties(values, cells, noise_module._step_offset(S.TIE, 0),
                                           np.empty(30_000, dtype=np.int64))
    assert set(np.unique(out)) == {0, 2}
    assert abs((out == 0).mean() - 0.5) < 4 * math.sqrt(0.25 / 30_000)


@pytest.mark.parametrize(("step_size", "expected"), [
    (0.0, [0.0, 2.0, 5.0, 0.0]),  # sample averages: (3 + 1) / 2 and 5
    (0.5, [0.0, 1.25, 2.5, 0.0]),  # 0 → 1.5 → 1.5 + 0.5 (1 − 1.5); 0 → 2.5
])
def test_update_pulled_by_hand(step_size, expected):
    q, n = np.zeros(4), np.zeros(4)
    agents_module._update_pulled(q, n, np.array([1, 2]), np.array([3.0, 5.0]), step_size)
    agents_module._update_pulled(q, n, np.array([1]), np.array([1.0]), step_size)
    np.testing.assert_array_equal(q, expected)
    np.testing.assert_array_equal(n, [0.0, 2.0, 1.0, 0.0])


def single_rows(params: np.ndarray) -> np.ndarray:
    single = np.empty((6, params.shape[1]), dtype=np.float32)
    single[:5], single[5] = params, cheng.margin(*params)
    return single


@pytest.mark.parametrize(("p", "q"), [s for s in SINGLE_SHAPES if cheng.single_precision(*s)])
def test_compiled_draws_equal_the_numpy_draws(p, q):
    cells = B.Noise(4).cells(np.arange(900), np.arange(3)[:, None])
    params = beta_params(p, q, cells.size)
    for step in (0, 9):
        np.testing.assert_array_equal(cheng.compiled_draws(cells, step, params,
                                                           single_rows(params)),
                                      draw(cells, step, params))


@pytest.mark.parametrize(("p", "q"), [(1.0, 1000.0), (20.0, 30.0), (0.5, 0.5)])
def test_compiled_draws_equal_the_scalar_sampler_draw_for_draw(p, q):
    runs, arms, step = 500, 3, 17
    cells = B.Noise(5).cells(np.arange(runs), np.arange(arms)[:, None])
    params = beta_params(p, q, cells.size)
    draws = cheng.compiled_draws(cells, step, params, single_rows(params)).reshape(arms, runs)
    scalar = Draws(5)
    for arm in range(arms):
        for run in range(runs):
            assert draws[arm, run] == beta(scalar, step, run, arm, p, q, True)


@pytest.mark.parametrize("single", [True, False])
@pytest.mark.parametrize(("p", "q"), SHAPES)
def test_compiled_attempts_equal_the_numpy_attempts(p, q, single):
    if single and not cheng.single_precision(p, q):
        pytest.skip("single-precision candidates need a prior that allows them")
    cells = B.Noise(8).cells(np.arange(700), np.arange(3)[:, None])
    params = beta_params(p, q, cells.size)
    counters = cells.reshape(-1) + noise_module._step_offset(S.SAMPLE, 3)
    numpy_way, compiled = np.full(cells.size, np.nan), np.full(cells.size, np.nan)
    cheng._attempt_exactly(numpy_way, np.arange(cells.size), 0, counters, params, single, 2)
    cheng._attempt_compiled(compiled, np.arange(cells.size), 0, counters, params, single, 4)
    np.testing.assert_array_equal(compiled, numpy_way)


def test_a_compiled_draw_rejected_every_time_is_the_posterior_mean(monkeypatch):
    monkeypatch.setattr(cheng, "ATTEMPTS", 2)
    cells = B.Noise(1).cells(np.arange(3000))
    params = beta_params(0.05, 1000.0, cells.size)
    y = np.full(cells.size, np.nan)
    counters = cells.reshape(-1) + noise_module._step_offset(S.SAMPLE, 4)
    cheng._attempt_compiled(y, np.arange(cells.size), 0, counters, params, False, 4)
    fallback = y == 0.05 / 1000.05
    assert 0.3 < fallback.mean() < 0.7
    scalar = Draws(1)
    assert all(y[r] == beta(scalar, 4, r, 0, 0.05, 1000.0, False) for r in range(0, 3000, 7))


def test_single_precision_decisions_by_hand():
    # Margin 1 everywhere; with A / (q + W) = 1 (log 0), logit 0 and ln(4 u1² u2) = −t, the test
    # is t: accepted for sure at 2, rejected for sure at −2, unsure at 0.5 and −0.5.
    tests = np.float32([2.0, -2.0, 0.5, -0.5, 3.0])
    single = np.ones((6, 5), dtype=np.float32)
    u = np.stack([np.zeros(5, dtype=np.float32), -tests])
    w = np.float32([1.0, 1.0, 3.0, 1.0, 1.0])
    y, unsure, rejected = np.full(5, np.nan), np.empty(5, dtype=np.int64), np.empty(5, np.int64)
    n, r = cheng._decide32(u, w, np.zeros(5, dtype=np.float32), single, np.full(5, 1.0), y,
                           unsure, rejected)
    assert (n, r) == (2, 1)
    np.testing.assert_array_equal(unsure[:n], [2, 3])
    np.testing.assert_array_equal(rejected[:r], [1])
    np.testing.assert_array_equal(y, [0.5, 0.5, 0.75, 0.5, 0.5])  # W / (q + W), q = 1
    # Later attempts, in order: cell 7 accepts its second (W = 3), cell 8 is unsure at its
    # second (attempt 2), cell 9 rejects both (next attempt 3), cell 6 accepts its first.
    tests = np.float32([[-2.0, -2.0, -2.0, 2.0], [2.0, 0.0, -2.0, -2.0]])  # [J=2, 4 cells]
    u = np.stack([np.zeros((2, 4), dtype=np.float32), -tests])
    w = np.float32([[1.0, 1.0, 1.0, 1.0], [3.0, 1.0, 1.0, 1.0]])
    y, todo, tried = np.full(10, np.nan), np.full(10, -1), np.full(10, -1)
    start = cheng._decide32_at(u, w, np.zeros((2, 4), dtype=np.float32),
                               np.ones((6, 4), dtype=np.float32), np.full(10, 1.0), y,
                               np.array([7, 8, 9, 6]), todo, tried, 3)
    assert start == 5
    np.testing.assert_array_equal(todo[3:5], [8, 9])
    np.testing.assert_array_equal(tried[3:5], [2, 3])
    assert (y[7], y[6]) == (0.75, 0.5)
    assert np.isnan(y[[8, 9]]).all()


def test_later_single_precision_attempts_equal_uniforms32():
    cells = B.Noise(3).cells(np.arange(50), np.arange(2)[:, None])
    counters = cells.reshape(-1) + noise_module._step_offset(S.SAMPLE, 6)
    params = beta_params(2.0, 5.0, cells.size)
    single = single_rows(params)
    todo = np.array([7, 0, 99, 42])
    out = np.empty((2, 2, todo.size), dtype=np.float32)
    sub = cheng._ratios32_at(counters, todo, noise_module._DRAW_OFFSETS[1:3], single, out,
                             np.empty((6, todo.size), dtype=np.float32))
    np.testing.assert_array_equal(sub, single[:, todo])
    bits = noise_module._mix(counters[todo] + noise_module._DRAW_OFFSETS[1:3, None])
    np.testing.assert_array_equal(np.log(out), cheng.uniforms32(bits).swapaxes(0, 1))


@pytest.mark.parametrize("single", [True, False])
def test_compiled_attempts_from_each_cells_own_attempt(single):
    # Cells starting at attempts 0, 1 and 3 make the attempts the numpy code makes from there.
    cells = B.Noise(2).cells(np.arange(600), np.arange(3)[:, None])
    params = beta_params(0.5, 30.0, cells.size)
    counters = cells.reshape(-1) + noise_module._step_offset(S.SAMPLE, 8)
    start = np.arange(cells.size) % 3
    start[start == 2] = 3
    numpy_way, compiled = np.full(cells.size, np.nan), np.full(cells.size, np.nan)
    for tried in (0, 1, 3):
        todo = (start == tried).nonzero()[0]
        cheng._attempt_exactly(numpy_way, todo, tried, counters, params, single, 2)
    cheng._attempt_compiled(compiled, np.arange(cells.size), start.copy(), counters, params,
                            single, 4)
    np.testing.assert_array_equal(compiled, numpy_way)


def test_posterior_updates_by_hand():
    cells = B.Noise(0).cells(np.arange(1200), np.arange(2)[:, None])  # more than FEW_CELLS
    posteriors = cheng.Posteriors(cells, 1.0, 1.0, steps=10)
    assert posteriors.rows32 is not None
    posteriors.add(np.array([5, 1205]), np.array([True, False]))  # Beta(2, 1) and Beta(1, 2)
    posteriors.add(np.array([5]), np.array([False]))  # Beta(2, 2)
    # Beta(2, 2): λ = √((2pq − A)/(A − 2)) = √2 (algorithm BB); Beta(1, 2): λ = min = 1 (BC).
    np.testing.assert_allclose(posteriors.params[:, 5],
                               [2.0, 2.0, 1 / math.sqrt(2), (2 + math.sqrt(2)) / math.sqrt(2), 4.0],
                               rtol=1e-15)
    np.testing.assert_array_equal(posteriors.params[:, 1205], [1.0, 2.0, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(posteriors.params[:, 0], [1.0, 1.0, 1.0, 2.0, 2.0])
    # The single-precision rows and margins are those the numpy functions make.
    expected = single_rows(posteriors.params)
    np.testing.assert_array_equal(posteriors.rows32, expected)
    inv, cinv, a = cheng.constants(posteriors.params[0], posteriors.params[1])
    np.testing.assert_array_equal(posteriors.params[2:], np.array([inv, cinv, a]))


# ------------------------------------------------------- the agents' and the race's other loops
def test_mix_all_equals_splitmix64_on_python_integers():
    z = np.array([0, 1, 2**63, 2**64 - 1, 0x0123456789ABCDEF], dtype=np.uint64)
    expected = [mix(int(x)) for x in z]
    noise_module._mix_all(z)
    assert [int(x) for x in z] == expected


def test_box_muller_inputs_by_hand():
    bits = np.array([0, (2**32 - 1) << 32, 1 << 30, (1 << 32) | (3 << 30)], dtype=np.uint64)
    u1, angle = np.empty(4), np.empty(4, dtype=np.float32)
    noise_module._halves(bits, u1, angle)
    np.testing.assert_array_equal(u1, [2.0**-33, 1 - 2.0**-33, 2.0**-33, 1.5 * 2.0**-32])
    np.testing.assert_array_equal(angle, np.float32([0.0, 0.0, math.pi / 2, 3 * math.pi / 2]))
    u32, angle32 = np.empty(4, dtype=np.float32), np.empty(4, dtype=np.float32)
    noise_module._halves32(bits, u32, angle32)
    np.testing.assert_array_equal(u32, u1.astype(np.float32))  # 1 − 2**−33 rounds to 1
    assert u32[1] == 1.0
    np.testing.assert_array_equal(angle32, angle)


def test_shifted_preferences_by_hand():
    h = np.array([[1.0, 3.0], [2.0, 0.0], [-1.0, 3.0]])
    out = agents_module._shifted(h, np.empty((3, 2), dtype=np.float32))
    np.testing.assert_array_equal(out, np.float32([[-1.0, 0.0], [0.0, -3.0], [-3.0, 0.0]]))


def test_invert_cdf_by_hand():
    e = np.float32([[1.0, 1.0, 1.0], [2.0, 1.0, 1.0], [1.0, 2.0, 2.0]])  # Σe = 4 in each run
    u = np.float32([0.5, 0.1, 1.0])  # u·Σe = 2 (cumulative 1, 3, 4), 0.4, 4 (every arm)
    total = np.zeros(3, dtype=np.float32)
    out = agents_module._invert_cdf(e, u, total, np.full(3, -1, dtype=np.int64))
    np.testing.assert_array_equal(out, [1, 0, 2])
    np.testing.assert_array_equal(total, [4.0, 4.0, 4.0])


@pytest.mark.parametrize(("with_baseline", "t", "h_after", "baseline_after"), [
    (False, 1.0, [-0.75, 0.75], 0.0),  # R − R̄ = 3, α(R − R̄) = 1.5, π = (1/2, 1/2)
    (True, 1.0, [0.0, 0.0], 3.0),  # R̄ = 0 + (3 − 0)/1 = 3: nothing to learn
    (True, 2.0, [-0.375, 0.375], 1.5),  # R̄ = 3/2, α(R − R̄) = 0.75
])
def test_gradient_step_by_hand(with_baseline, t, h_after, baseline_after):
    h, baseline = np.zeros((2, 1)), np.zeros(1)
    e, total = np.float32([[1.0], [1.0]]), np.float32([2.0])
    agents_module._gradient_step(h, e, total, baseline, np.array([1]), np.array([3.0]), 0.5,
                                 with_baseline, t)
    np.testing.assert_array_equal(h[:, 0], h_after)
    assert baseline[0] == baseline_after


def test_gradient_loops_equal_the_numpy_steps():
    rng = np.random.default_rng(3)
    h = rng.normal(size=(7, 300)) * 3
    u = rng.random(300).astype(np.float32)
    e = np.exp((h - h.max(axis=0)).astype(np.float32))
    np.testing.assert_array_equal(
        agents_module._shifted(h, np.empty(h.shape, np.float32)),
        (h - h.max(axis=0)).astype(np.float32))
    total = np.empty(300, dtype=np.float32)
    out = agents_module._invert_cdf(e, u, total, np.empty(300, dtype=np.int64))
    cum = np.add.accumulate(e, axis=0)
    np.testing.assert_array_equal(total, np.add.reduce(e, axis=0))
    np.testing.assert_array_equal(out, np.minimum((cum <= u * total).sum(axis=0), 6))
    pulls = out * 300 + np.arange(300)
    rewards, baseline, step = rng.normal(size=300), rng.normal(size=300), 4
    expected, expected_baseline = h.copy(), baseline + (rewards - baseline) / (step + 1.0)
    move = 0.1 * (rewards - expected_baseline)
    expected -= (move / total) * e
    expected.ravel()[pulls] += move
    agents_module._gradient_step(h, e, total, baseline, pulls, rewards, 0.1, True, step + 1.0)
    np.testing.assert_array_equal(h, expected)
    np.testing.assert_array_equal(baseline, expected_baseline)


def test_upper_bounds_by_hand():
    q, n = np.array([[1.0, 0.0], [0.5, 2.0]]), np.array([[4.0, 0.0], [1.0, 9.0]])
    out = agents_module._upper_bounds(q, n, 2.0, 4.0, np.empty((2, 2)))
    # 1 + 2√(4/4) = 3; untried: +inf; 0.5 + 2√(4/1) = 4.5; 2 + 2√(4/9) = 10/3.
    np.testing.assert_array_equal(out, [[3.0, np.inf], [4.5, 2.0 + 2.0 * math.sqrt(4.0 / 9.0)]])


def test_gaussian_thompson_loops_by_hand():
    z = np.float32([[1.0, -1.0], [0.5, 2.0]])
    sd, mean = np.float32([[1.0, 1.0], [2.0, 0.5]]), np.float32([[0.0, 0.0], [0.0, -1.0]])
    # θ = [[1, −1], [1, 0]]: run 0 ties (the first arm wins), run 1 picks arm 1.
    out = agents_module._argmax_sample(z, sd, mean, np.full(2, -1, dtype=np.int64))
    np.testing.assert_array_equal(out, [0, 1])
    n, s = np.zeros(4), np.zeros(4)
    m, d = np.zeros(4, dtype=np.float32), np.ones(4, dtype=np.float32)
    # Prior N(0, 1), noise σ = 1: after a reward of 2, λ = 2, m = 2/2 = 1, sd = 1/√2.
    agents_module._posterior_step(n, s, m, d, np.array([2]), np.array([2.0]), 1.0, 0.0, 1.0)
    np.testing.assert_array_equal([n[2], s[2], m[2]], [1.0, 2.0, 1.0])
    assert d[2] == np.float32(1 / math.sqrt(2))
    # Prior N(1, 2²), noise σ = 2, a second reward of 0: λ = 1/4 + 2/4, m = (1/4 + 2/4)/λ = 1.
    agents_module._posterior_step(n, s, m, d, np.array([2]), np.array([0.0]), 0.25, 0.25, 4.0)
    np.testing.assert_array_equal([n[2], s[2], m[2]], [2.0, 2.0, 1.0])
    assert d[2] == np.float32(1 / math.sqrt(0.75))
    np.testing.assert_array_equal(n[[0, 1, 3]], 0.0)


def test_book_stationary_by_hand():
    # Two runs, three arms; flat cells a·2 + r. Gaps and ranks of the six cells:
    gaps, ranks = np.array([0.0, 1.0, 0.5, 0.0, 2.0, 3.0]), np.uint8([0, 1, 1, 0, 2, 2])
    flat = np.array([[0, 3], [2, 5], [0, 1]])  # steps × runs
    cum, running = np.array([10.0, 0.0]), np.empty((3, 2))
    by_rank, count = np.zeros((3, 3), dtype=np.int64), np.zeros(6, dtype=np.int64)
    races_module._book_stationary(flat, gaps, ranks, cum, running, by_rank, count)
    np.testing.assert_array_equal(running, [[10.0, 0.0], [10.5, 3.0], [10.5, 4.0]])
    np.testing.assert_array_equal(cum, [10.5, 4.0])
    np.testing.assert_array_equal(by_rank, [[2, 0, 0], [0, 1, 1], [1, 1, 0]])
    np.testing.assert_array_equal(count, [2, 1, 1, 1, 0, 1])


def test_record_by_hand():
    means = np.array([[0.0, 5.0], [2.0, 1.0], [1.0, 5.0]])  # [A=3, R=2], flat cells a·2 + r
    best, pulls = means.max(axis=0), np.array([[2, 1], [4, 5]])  # racer 0: arms 1, 0; racer 1: 2, 2
    flat, gap = np.zeros((2, 3, 2), dtype=np.int64), np.zeros((2, 3, 2))
    rank, chosen = np.zeros((2, 3, 2), dtype=np.uint8), np.zeros((2, 2))
    races_module._record(1, pulls, means, best, True, flat, gap, rank, chosen)
    np.testing.assert_array_equal(chosen, [[2.0, 5.0], [1.0, 5.0]])
    np.testing.assert_array_equal(flat[:, 1], pulls)
    np.testing.assert_array_equal(gap[:, 1], [[0.0, 0.0], [1.0, 0.0]])
    np.testing.assert_array_equal(rank[:, 1], [[0, 0], [1, 0]])
    assert not flat[:, [0, 2]].any() and not gap[:, [0, 2]].any()


def test_pulled_cells_hashed_and_spread_back():
    pulls = np.array([[5, 1, 7], [1, 1, 6]])  # [K=2, R=3] flat cells of 9
    pulled, cells = np.ones(9, dtype=bool), np.empty(9, dtype=np.int64)
    distinct = races_module._pulled_cells(pulls.reshape(-1), pulled, cells)
    np.testing.assert_array_equal(distinct, [1, 5, 6, 7])
    flat_cells = B.Noise(3).cells(np.arange(3), np.arange(3)[:, None]).reshape(-1)
    offset = noise_module._step_offset(S.REWARD, 11)
    bits = races_module._mixed_at(flat_cells, distinct, offset, np.empty(9, dtype=np.uint64))
    np.testing.assert_array_equal(bits, B.Noise.bits_at(flat_cells[[1, 5, 6, 7]], S.REWARD, 11))
    out = races_module._spread(np.array([10.0, 50.0, 60.0, 70.0]), distinct, np.zeros(9), pulls,
                               np.empty((2, 3)))
    np.testing.assert_array_equal(out, [[50.0, 10.0, 70.0], [10.0, 10.0, 60.0]])
