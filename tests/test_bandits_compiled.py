"""rlviz.bandits' compiled loops: hand-computed cases, and equal to the numpy code they replace."""

import math

import numpy as np
import pytest

from rlviz import bandits as B
from rlviz.bandits import agents as agents_module
from rlviz.bandits import beta as cheng
from rlviz.bandits import noise as noise_module
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
