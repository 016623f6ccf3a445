"""rlviz.bandits: random numbers, testbeds, agents, the vectorised race, bounds, book values."""

import inspect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from rlviz import bandits as B
from rlviz.bandits import beta as cheng
from rlviz.bandits import noise as noise_module
from rlviz.bandits import races as race_module
from rlviz.errors import InputError
from tests.bandits_reference import Draws, beta, mix, race_loop

S = B.Stream


# ------------------------------------------------------------------------------ random numbers
@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**40),
    stream=st.integers(0, 63),
    step=st.integers(0, B.MAX_STEPS - 1),
    run=st.integers(0, B.MAX_RUNS - 1),
    arm=st.integers(0, B.MAX_ARMS - 1),
    draw=st.integers(0, 255),
)
def test_bits_equal_splitmix64_on_python_integers(seed, stream, step, run, arm, draw):
    key = B.Noise(seed).key
    index = (stream << 58) | (step << 36) | (run << 16) | (arm << 8) | draw
    expected = mix((key + index * 0x9E3779B97F4A7C15) % 2**64)
    assert int(B.Noise(seed).bits(stream, step, run, arm, draw)) == expected


def test_splitmix64_matches_its_published_first_output():
    # SplitMix64 seeded with 0 starts 0xe220a8397b1dcdaf (Vigna's reference implementation).
    assert mix(0x9E3779B97F4A7C15) == 0xE220A8397B1DCDAF


def test_vectorised_draws_equal_scalar_draws():
    noise, draws = B.Noise(7), Draws(7)
    runs, arms = np.arange(0, 3000, 37), np.arange(6)[:, None]
    normal = noise.normal(S.REWARD, 11, runs, arms)
    uniform = noise.uniform(S.TIE, 11, runs, arms)
    for a in range(6):
        for j, r in enumerate(runs):
            assert normal[a, j] == draws.normal(S.REWARD, 11, int(r), a)
            assert uniform[a, j] == draws.unit(S.TIE, 11, int(r), a)


def test_cells_then_bits_at_equals_bits():
    noise = B.Noise(3)
    cells = noise.cells(np.arange(50), np.arange(4)[:, None])
    np.testing.assert_array_equal(
        B.Noise.bits_at(cells, S.SAMPLE, 9, 5), noise.bits(S.SAMPLE, 9, np.arange(50),
                                                           np.arange(4)[:, None], 5)
    )
    draws = np.array([[2], [7]])
    np.testing.assert_array_equal(
        B.Noise.bits_at(cells[0], S.SAMPLE, 9, draws)[1], B.Noise.bits_at(cells[0], S.SAMPLE, 9, 7)
    )


def test_normals_and_uniforms_have_the_right_distribution():
    noise = B.Noise(0)
    z = np.concatenate([noise.normal(S.REWARD, t, np.arange(5000)) for t in range(40)])
    u = np.concatenate([noise.uniform(S.REWARD, t, np.arange(5000)) for t in range(40)])
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    assert abs(z.mean()) < 4 / math.sqrt(z.size) and abs(z.var() - 1) < 0.02
    assert abs(stats.kurtosis(z)) < 0.05
    assert 0 < u.min() and u.max() < 1


@pytest.mark.parametrize("axis", ["step", "run", "arm", "stream", "seed"])
def test_neighbouring_indices_are_uncorrelated(axis):
    n = 20_000
    runs = np.arange(n)
    base = B.Noise(1).normal(S.REWARD, 5, runs, 3)
    other = {
        "step": B.Noise(1).normal(S.REWARD, 6, runs, 3),
        "run": B.Noise(1).normal(S.REWARD, 5, runs + 1, 3),
        "arm": B.Noise(1).normal(S.REWARD, 5, runs, 4),
        "stream": B.Noise(1).normal(S.WALK, 5, runs, 3),
        "seed": B.Noise(2).normal(S.REWARD, 5, runs, 3),
    }[axis]
    assert abs(np.corrcoef(base, other)[0, 1]) < 4 / math.sqrt(n)


@pytest.mark.parametrize("seed", [-1, 1.5, True, "3"])
def test_bad_seed_is_a_clear_message(seed):
    with pytest.raises(ValueError, match="seed"):
        B.Noise(seed)


def test_out_of_range_indices_are_rejected():
    noise = B.Noise(0)
    with pytest.raises(ValueError, match="run"):
        noise.cells(B.MAX_RUNS)
    with pytest.raises(ValueError, match="arm"):
        noise.cells(0, B.MAX_ARMS)
    with pytest.raises(ValueError, match="out of range"):
        noise.bits(S.REWARD, B.MAX_STEPS, 0)
    with pytest.raises(ValueError, match="out of range"):
        noise.bits(S.REWARD, 0, 0, 0, 256)


# ------------------------------------------------------------------------------ Beta sampler
def beta_params(p: float, q: float, size: int) -> np.ndarray:
    """``[5, size]`` rows ``p``, ``q`` and Cheng's constants, as ``BetaThompson`` keeps them."""
    params = np.empty((5, size))
    params[0], params[1] = p, q
    params[2:] = cheng.constants(params[0], params[1])
    return params


def draw(cells: np.ndarray, step: int, params: np.ndarray) -> np.ndarray:
    """One Beta draw per cell at one step, as ``BetaThompson`` makes them for these shapes."""
    if not cheng.single_precision(params[0, 0], params[1, 0]):
        return cheng.exact_draws(cells, step, params)
    single = np.empty((6, params.shape[1]), dtype=np.float32)
    single[:5], single[5] = params, cheng.margin(*params)
    counters = cells.reshape(-1) + noise_module._step_offset(S.SAMPLE, step)
    return cheng.draws(cells, step, params, single, cheng.uniforms32(noise_module._mix(counters)))


SHAPES = [(1.0, 1.0), (1.0, 6.0), (9.0, 1.0), (2.0, 3.0), (30.0, 70.0), (400.0, 600.0),
          (1.5, 1.0001), (0.5, 0.5), (0.05, 2.0), (3.0, 0.2), (0.05, 1000.0)]


@pytest.mark.parametrize(("p", "q"), SHAPES)
def test_beta_draws_have_the_beta_distribution(p, q):
    cells = B.Noise(0).cells(np.arange(5000), np.arange(4)[:, None])
    params = beta_params(p, q, cells.size)
    draws = np.concatenate([draw(cells, t, params) for t in range(5)])  # 100 000
    assert np.all((draws > 0) & (draws <= 1))  # within 1e-16 of 1 rounds to 1
    assert stats.kstest(draws, stats.beta(p, q).cdf).pvalue > 1e-3
    mean, sd = p / (p + q), stats.beta(p, q).std()
    assert abs(draws.mean() - mean) < 4 * sd / math.sqrt(draws.size)


@pytest.mark.parametrize(("p", "q"), SHAPES)
def test_cheng_envelope_lies_above_the_beta_density(p, q):
    # An attempt is accepted when u2 <= r(u1), where r = f / (M g) is the Beta density over the
    # scaled envelope. Exactness needs r <= 1 everywhere, so u2 just above 1 is never accepted;
    # and the constants make the bound tight: r = 1 at the envelope's mode u1 = 1/2.
    inv, cinv, a = cheng.constants(np.array(p), np.array(q))
    # Every u1 the draws can give: (h + 1/2) / 2**32 has |ln(u1 / (1 - u1))| < 22.9.
    u1 = 1.0 / (1.0 + np.exp(-np.linspace(-22.9, 22.9, 400_001)))
    logit = np.log(u1 / (1.0 - u1))
    for u2, expected in ((1.0 + 1e-9, False), (1.0 - 1e-9, True)):
        _, accepted = cheng.attempt(
            logit, np.log(4.0 * u1 * u1 * u2), p, q, inv, cinv, a
        )
        assert accepted[200_000] == expected  # u1 = 1/2
        if not expected:
            assert not accepted.any()


@pytest.mark.parametrize(("p", "q"), [(1.0, 1000.0), (0.05, 1000.0), (20.0, 30.0)])
def test_beta_draws_equal_the_scalar_sampler_draw_for_draw(p, q):
    # Low acceptance (0.3-0.7) sends cells through several rounds of further attempts.
    runs, arms, step = 700, 3, 17
    cells = B.Noise(5).cells(np.arange(runs), np.arange(arms)[:, None])
    draws = draw(cells, step, beta_params(p, q, cells.size)).reshape(arms, runs)
    scalar = Draws(5)
    for arm in range(arms):
        for run in range(runs):
            assert draws[arm, run] == beta(scalar, step, run, arm, p, q,
                                           cheng.single_precision(p, q))


SINGLE_SHAPES = [s for s in SHAPES if cheng.single_precision(*s)] + [(4000.0, 2.0), (1.0, 4e6)]


@pytest.mark.parametrize(("p", "q"), SINGLE_SHAPES)
def test_single_precision_attempts_decide_like_double_precision(p, q):
    # What the single-precision test is sure of, the double-precision test decides the same
    # way; the rest (within the margin) is decided again in double precision.
    bits = noise_module._mix(np.arange(200_000, dtype=np.uint64) * noise_module._GOLDEN)
    params = beta_params(p, q, 1)[:, 0]
    single = np.append(params, cheng.margin(*params)).astype(np.float32)
    _, test = cheng.attempt32(*cheng.uniforms32(bits), *single[:5])
    accepted, unsure = test >= single[5], np.abs(test) < single[5]
    _, exact = cheng.attempt(*cheng.uniforms(bits), *params)
    assert np.array_equal(accepted, exact & accepted)
    assert not np.any(exact & ~accepted & ~unsure)
    # The margin is a worst case: wide for very skewed posteriors, which are then mostly
    # decided in double precision.
    assert unsure.mean() < (0.02 if max(p, q) / min(p, q) < 1000 else 1.0)


@pytest.mark.parametrize(("p", "q"), SINGLE_SHAPES)
def test_single_precision_draws_are_the_exact_draws_rounded(p, q):
    cells = B.Noise(2).cells(np.arange(3000), np.arange(3)[:, None])
    params = beta_params(p, q, cells.size)
    for step in range(3):
        # The same attempts accepted, so the same draws but for W's single-precision rounding.
        np.testing.assert_allclose(draw(cells, step, params),
                                   cheng.exact_draws(cells, step, params), rtol=2e-5, atol=0)


@pytest.mark.parametrize(("p", "q"), SHAPES + [(4000.0, 2.0)])
def test_every_way_of_drawing_makes_the_same_draws(p, q):
    # Single-precision attempts with margins, double-precision decisions with or without
    # attempts made ahead: the same decisions, and the same candidates.
    cells = B.Noise(4).cells(np.arange(700), np.arange(3)[:, None])
    params = beta_params(p, q, cells.size)
    single = np.empty((6, cells.size), dtype=np.float32)
    single[:5], single[5] = params, cheng.margin(*params)
    counters = cells.reshape(-1) + noise_module._step_offset(S.SAMPLE, 9)
    bits = noise_module._mix(counters + noise_module._DRAW_OFFSETS[:cheng.AHEAD, None])
    ahead = cheng.ahead_uniforms(bits)
    rows = cheng.single_precision(p, q)
    got = [cheng.exact_draws(cells, 9, params, single=rows),
           cheng.exact_draws(cells, 9, params, single=rows, ahead=ahead)]
    if rows:
        got.append(draw(cells, 9, params))
    for other in got[1:]:
        np.testing.assert_array_equal(other, got[0])


@pytest.mark.parametrize(("alpha", "beta_", "single"), [
    (1.0, 1.0, True), (0.5, 7.0, True), (1e6, 1.0, True), (0.3, 1.0, False), (2.0, 2e6, False),
])
def test_beta_thompson_uses_single_precision_where_the_prior_allows(alpha, beta_, single):
    cells = B.Noise(0).cells(np.arange(3), np.arange(2)[:, None])
    assert cheng.Posteriors(cells, alpha, beta_, steps=5).single is single


def test_a_beta_draw_rejected_every_time_is_the_posterior_mean(monkeypatch):
    monkeypatch.setattr(cheng, "ATTEMPTS", 2)
    cells = B.Noise(1).cells(np.arange(3000))
    draws = draw(cells, 4, beta_params(0.05, 1000.0, cells.size))
    fallback = draws == 0.05 / 1000.05
    assert 0.3 < fallback.mean() < 0.7  # acceptance is about 0.3 per attempt
    scalar = Draws(1)
    assert all(draws[r] == beta(scalar, 4, r, 0, 0.05, 1000.0, False) for r in range(0, 3000, 7))


# ------------------------------------------------------------------------------ testbeds
def test_gaussian_testbed_draws_the_book_distribution():
    means = B.GaussianTestbed(arms=10, mean=4.0, spread=1.0).initial_means(
        B.Noise(0), np.arange(4000)
    )
    assert means.shape == (10, 4000)
    assert abs(means.mean() - 4.0) < 0.03 and abs(means.std() - 1.0) < 0.02


def test_bernoulli_rewards_are_zero_or_one_with_mean_p():
    result = B.race([B.EpsilonGreedy(1.0)], B.BernoulliTestbed(probs=(0.3,)), runs=2000,
                    steps=50, seed=0)
    counts = result.reward * 2000
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)
    assert abs(result.reward.mean() - 0.3) < 4 * math.sqrt(0.21 / 100_000)


def test_random_walk_means_spread_like_a_random_walk():
    result = B.race([B.EpsilonGreedy(0.1)], B.RandomWalkTestbed(arms=10, walk_sd=0.1),
                    runs=500, steps=400, seed=0)
    np.testing.assert_array_equal(result.means, 0.0)
    # After 399 increments each mean is N(0, 399 w²).
    assert abs(result.final_means.std() / (0.1 * math.sqrt(399)) - 1) < 0.05


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: B.GaussianTestbed(arms=0), "at least one arm"),
        (lambda: B.GaussianTestbed(arms=2.5), "whole number"),
        (lambda: B.GaussianTestbed(arms=300), "at most"),
        (lambda: B.GaussianTestbed(noise_sd=-1), "cannot be negative"),
        (lambda: B.GaussianTestbed(mean=float("nan")), "finite"),
        (lambda: B.BernoulliTestbed(probs=()), "at least one arm"),
        (lambda: B.BernoulliTestbed(probs=(0.5, 1.2)), r"\[0, 1\]"),
        (lambda: B.BernoulliTestbed(probs=(-0.1,)), r"\[0, 1\]"),
        (lambda: B.BernoulliTestbed(probs=("x",)), "number"),
        (lambda: B.RandomWalkTestbed(walk_sd=-0.01), "cannot be negative"),
    ],
)
def test_bad_testbeds_are_clear_messages(make, match):
    with pytest.raises(ValueError, match=match):
        make()


# ------------------------------------------------------------------------------ agents
@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: B.EpsilonGreedy(epsilon=1.5), r"ε .* \[0, 1\]"),
        (lambda: B.EpsilonGreedy(epsilon=-0.1), r"\[0, 1\]"),
        (lambda: B.EpsilonGreedy(step_size=0.0), r"\(0, 1\]"),
        (lambda: B.EpsilonGreedy(step_size=2.0), r"\(0, 1\]"),
        (lambda: B.EpsilonGreedy(decay=-1.0), "cannot be negative"),
        (lambda: B.Optimistic(initial=float("inf")), "finite"),
        (lambda: B.UCB(c=-1.0), "c must be 0 or more"),
        (lambda: B.GaussianThompson(prior_sd=0.0), "positive"),
        (lambda: B.GaussianThompson(noise_sd=-1.0), "positive"),
        (lambda: B.BetaThompson(alpha=0.0), "positive"),
        (lambda: B.BetaThompson(beta=0.01), "at least 0.05"),
        (lambda: B.Gradient(alpha=0.0), "positive"),
    ],
)
def test_bad_agent_parameters_are_clear_messages(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_agents_are_frozen_values():
    agent = B.UCB(c=2.0)
    assert agent == B.UCB(c=2.0) and hash(agent) == hash(B.UCB(c=2.0))
    with pytest.raises(AttributeError):
        agent.c = 1.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("agent", "kind", "label"),
    [
        (B.EpsilonGreedy(0.0), "greedy", "greedy"),
        (B.EpsilonGreedy(0.1, step_size=0.1), "epsilon_greedy", "ε-greedy ε=0.1, α=0.1"),
        (B.Optimistic(), "optimistic", "optimistic Q₁=5, α=0.1"),
        (B.UCB(math.sqrt(2)), "ucb", "UCB1 (c=√2)"),
        (B.GaussianThompson(), "thompson", "Thompson N(0, 1²)"),
        (B.BetaThompson(), "thompson", "Thompson Beta(1, 1)"),
        (B.Gradient(0.4, baseline=False), "gradient_no_baseline", "gradient α=0.4, no baseline"),
    ],
)
def test_kinds_and_labels(agent, kind, label):
    assert agent.kind == kind and agent.label == label


def test_beta_thompson_refuses_gaussian_rewards():
    with pytest.raises(ValueError, match="Bernoulli"):
        B.race([B.BetaThompson()], B.GaussianTestbed(), runs=2, steps=2, seed=0)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"agents": []}, InputError, "at least one racer"),
        ({"runs": 0}, InputError, "runs"),
        ({"steps": 0}, InputError, "steps"),
        ({"steps": 2.0}, InputError, "whole number"),
        ({"seed": -3}, InputError, "seed"),
        # A caller passing the wrong kind of object is a bug, not a user's mistake.
        ({"agents": ["ucb"]}, TypeError, "not a bandit agent"),
        ({"testbed": "gaussian"}, TypeError, "Testbed"),
    ],
)
def test_bad_race_arguments_are_clear_messages(kwargs, error, match):
    args = {"agents": [B.UCB()], "testbed": B.GaussianTestbed(), "runs": 3, "steps": 4,
            "seed": 0} | kwargs
    with pytest.raises(error, match=match) as caught:
        B.race(args.pop("agents"), args.pop("testbed"), **args)
    assert (caught.type is InputError) == (error is InputError)


@pytest.mark.parametrize(
    "make",
    [
        lambda: B.EpsilonGreedy(epsilon=1.5),
        lambda: B.EpsilonGreedy(step_size=0.0),
        lambda: B.EpsilonGreedy(decay=-1.0),
        lambda: B.UCB(c=-1.0),
        lambda: B.GaussianThompson(prior_sd=0.0),
        lambda: B.GaussianThompson(noise_sd=-1.0),
        lambda: B.BetaThompson(alpha=0.0),
        lambda: B.BetaThompson(beta=0.01),
        lambda: B.Gradient(alpha=0.0),
        lambda: B.Optimistic(initial=float("nan")),
        lambda: B.GaussianTestbed(arms=0),
        lambda: B.GaussianTestbed(noise_sd=-1.0),
        lambda: B.BernoulliTestbed(probs=(0.5, 1.5)),
        lambda: B.RandomWalkTestbed(walk_sd=-0.1),
        lambda: B.parse_probs("0.5, lots"),
        lambda: B.lai_robbins([0.5, 2.0], 10),
        lambda: B.race([B.BetaThompson()], B.GaussianTestbed(), runs=2, steps=2, seed=0),
    ],
)
def test_a_users_bad_setting_is_an_input_error(make):
    with pytest.raises(InputError):
        make()


def test_a_bad_index_into_the_random_streams_is_a_bug_not_an_input_error():
    with pytest.raises(ValueError) as caught:
        B.Noise(0).cells(-1)
    assert caught.type is ValueError


# ------------------------------------------------------------------------------ cost estimate
def agent_classes(cls=B.Agent):
    for sub in cls.__subclasses__():
        yield from ([] if inspect.isabstract(sub) else [sub])
        yield from agent_classes(sub)


def test_every_racer_and_testbed_declares_its_cost():
    classes = list(agent_classes())
    assert {c.__name__ for c in classes} >= {"EpsilonGreedy", "Optimistic", "UCB",
                                             "GaussianThompson", "BetaThompson", "Gradient"}
    for cls in classes:
        assert len(cls.cost) == 3 and min(cls.cost) > 0, cls
    assert B.RandomWalkTestbed.cost > B.GaussianTestbed.cost == (0.0, 0.0, 0.0)


def test_race_seconds_adds_up_the_costs():
    testbed, steps = B.BernoulliTestbed(arms=4), 7
    runs = B.CHUNK_CELLS // 4 + 1  # two chunks of runs
    costs = zip(B.RACE_COST, B.UCB.cost, B.Gradient.cost, strict=True)
    step, run, cell = (sum(parts) for parts in costs)
    expected = steps * (2 * step + runs * run + runs * 4 * cell)
    got = B.race_seconds([B.UCB(), B.Gradient()], testbed, runs=runs, steps=steps)
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("runs", "few"), [(256, True), (257, False), (2000, False)])
def test_race_seconds_prices_beta_draws_by_the_size_of_a_chunk(runs, few):
    testbed, steps = B.BernoulliTestbed(arms=4), 7  # up to 256 runs: at most 1024 cells
    cost = B.BetaThompson.few_cells_cost if few else B.BetaThompson.cost
    step, run, cell = (sum(parts) for parts in zip(B.RACE_COST, cost, strict=True))
    expected = steps * (step + runs * run + runs * 4 * cell)
    got = B.race_seconds([B.BetaThompson()], testbed, runs=runs, steps=steps)
    assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("grow", ["runs", "steps", "arms", "racers", "testbed"])
def test_race_seconds_grows_with_every_size(grow):
    args = {"agents": [B.EpsilonGreedy(0.1)], "testbed": B.GaussianTestbed(arms=5),
            "runs": 100, "steps": 100}
    bigger = dict(args) | {
        "runs": {"runs": 200}, "steps": {"steps": 200},
        "arms": {"testbed": B.GaussianTestbed(arms=6)},
        "racers": {"agents": [B.EpsilonGreedy(0.1), B.EpsilonGreedy(0.1)]},
        "testbed": {"testbed": B.RandomWalkTestbed(arms=5)},
    }[grow]
    assert B.race_seconds(**bigger) > B.race_seconds(**args)


def test_race_seconds_refuses_what_race_refuses():
    with pytest.raises(ValueError, match="Bernoulli"):
        B.race_seconds([B.BetaThompson()], B.GaussianTestbed(), runs=2, steps=2)
    with pytest.raises(ValueError, match="runs"):
        B.race_seconds([B.UCB()], B.GaussianTestbed(), runs=0, steps=2)


# ------------------------------------------------------------------------------ vectorised = loop
LINEUPS = {
    "gaussian": (B.GaussianTestbed(arms=5), [
        B.EpsilonGreedy(0.0), B.EpsilonGreedy(0.1),
        B.EpsilonGreedy(0.2, step_size=0.1, decay=0.05, initial=1.0),
        B.Optimistic(), B.UCB(2.0), B.UCB(0.0), B.GaussianThompson(),
        B.Gradient(0.1), B.Gradient(0.4, baseline=False),
    ]),
    "bernoulli_fixed": (B.BernoulliTestbed(probs=(0.2, 0.5, 0.5, 0.45)), [
        B.EpsilonGreedy(0.1), B.UCB(math.sqrt(2)), B.BetaThompson(), B.BetaThompson(0.5, 0.5),
    ]),
    "bernoulli_random": (B.BernoulliTestbed(arms=6), [B.EpsilonGreedy(0.0), B.BetaThompson()]),
    "random_walk": (B.RandomWalkTestbed(arms=4, walk_sd=0.1), [
        B.EpsilonGreedy(0.1), B.EpsilonGreedy(0.1, step_size=0.1), B.UCB(1.0),
    ]),
}


@pytest.mark.parametrize("name", list(LINEUPS))
def test_vectorised_race_equals_per_run_loop_draw_for_draw(name):
    testbed, agents = LINEUPS[name]
    result = B.race(agents, testbed, runs=7, steps=150, seed=3)
    loop = race_loop(agents, testbed, runs=7, steps=150, seed=3)
    np.testing.assert_array_equal(result.counts, loop["counts"])
    for field in ("reward", "optimal", "regret", "final_regret", "choice_by_rank"):
        np.testing.assert_allclose(getattr(result, field), loop[field], rtol=1e-12, atol=1e-12,
                                   err_msg=field)


def test_loop_reference_on_other_runs_equals_the_same_runs_of_a_bigger_race():
    testbed, agents = LINEUPS["gaussian"]
    big = B.race(agents, testbed, runs=40, steps=60, seed=5)
    loop = race_loop(agents, testbed, runs=4, steps=60, seed=5, first_run=30)
    np.testing.assert_array_equal(big.counts[:, 30:34], loop["counts"])
    np.testing.assert_allclose(big.final_regret[:, 30:34], loop["final_regret"], rtol=1e-12)


def test_a_run_does_not_depend_on_how_many_runs_there_are():
    testbed, agents = LINEUPS["bernoulli_fixed"]
    small = B.race(agents, testbed, runs=5, steps=80, seed=9)
    big = B.race(agents, testbed, runs=23, steps=80, seed=9)
    np.testing.assert_array_equal(small.counts, big.counts[:, :5])
    np.testing.assert_array_equal(small.final_regret, big.final_regret[:, :5])


def test_a_racer_does_not_depend_on_the_other_racers():
    alone = B.race([B.UCB(2.0)], B.GaussianTestbed(), runs=50, steps=200, seed=4)
    crowd = B.race([B.EpsilonGreedy(0.1), B.Gradient(), B.UCB(2.0)], B.GaussianTestbed(),
                   runs=50, steps=200, seed=4)
    np.testing.assert_array_equal(alone.counts[0], crowd.counts[2])
    np.testing.assert_array_equal(alone.reward[0], crowd.reward[2])


def test_select_is_the_race_of_those_racers_alone():
    testbed = B.GaussianTestbed(arms=5)
    racers = (B.UCB(), B.EpsilonGreedy(0.1), B.Gradient(0.1))
    both = B.race(racers, testbed, runs=40, steps=60, seed=2)
    alone = B.race(racers[2:0:-1], testbed, runs=40, steps=60, seed=2)
    picked = both.select(racers[2:0:-1])
    assert picked.agents == alone.agents and picked.labels == alone.labels
    for name in ("reward", "optimal", "regret", "regret_sd", "final_regret", "counts",
                 "choice_by_rank", "means", "rank_means"):
        np.testing.assert_allclose(getattr(picked, name), getattr(alone, name), rtol=1e-12)


def test_every_racer_faces_the_same_problems_and_rewards():
    # Two identical racers: identical runs, pull for pull.
    result = B.race([B.EpsilonGreedy(0.1), B.EpsilonGreedy(0.1)], B.GaussianTestbed(),
                    runs=30, steps=100, seed=2)
    np.testing.assert_array_equal(result.counts[0], result.counts[1])
    assert result.labels == ["ε-greedy ε=0.1", "ε-greedy ε=0.1 (2)"]


@pytest.mark.parametrize("lineup", ["random_walk", "bernoulli_fixed"])
def test_chunking_does_not_change_the_result(monkeypatch, lineup):
    testbed, agents = LINEUPS[lineup]
    whole = B.race(agents, testbed, runs=30, steps=60, seed=1)
    monkeypatch.setattr(race_module, "CHUNK_CELLS", 7 * testbed.arms)
    monkeypatch.setattr(noise_module, "BLOCK_CELLS", 50)  # random numbers 1 or 2 steps ahead
    monkeypatch.setattr(race_module, "STEP_BLOCK", 16)
    monkeypatch.setattr(race_module, "EVERY_CELL", -10**9)  # rewards drawn at the pulls only
    monkeypatch.setattr(cheng, "FEW_CELLS", 0)  # Beta attempts in single precision, none ahead
    chunked = B.race(agents, testbed, runs=30, steps=60, seed=1)
    np.testing.assert_array_equal(whole.counts, chunked.counts)
    np.testing.assert_allclose(whole.regret, chunked.regret, rtol=1e-12)
    np.testing.assert_allclose(whole.rank_means, chunked.rank_means, rtol=1e-12)


@pytest.mark.parametrize("every_cell", [10**9, -10**9])
def test_rewards_do_not_depend_on_how_they_are_drawn(monkeypatch, every_cell):
    # Drawn ahead at every cell, at the pulled cells (two racers), once per pulled cell (three).
    testbed = B.GaussianTestbed(arms=6)
    racers = [B.EpsilonGreedy(0.1), B.UCB(1.0), B.Gradient(0.2)]
    whole = B.race(racers, testbed, runs=40, steps=50, seed=6)
    monkeypatch.setattr(race_module, "EVERY_CELL", every_cell)
    for line_up in (racers[:2], racers):
        part = B.race(line_up, testbed, runs=40, steps=50, seed=6)
        np.testing.assert_array_equal(part.counts, whole.counts[:len(line_up)])
        np.testing.assert_array_equal(part.reward, whole.reward[:len(line_up)])


def test_same_seed_same_race_other_seed_other_race():
    testbed, agents = LINEUPS["gaussian"]
    a = B.race(agents, testbed, runs=20, steps=50, seed=11)
    b = B.race(agents, testbed, runs=20, steps=50, seed=11)
    c = B.race(agents, testbed, runs=20, steps=50, seed=12)
    np.testing.assert_array_equal(a.regret, b.regret)
    np.testing.assert_array_equal(a.counts, b.counts)
    assert not np.array_equal(a.means, c.means)
    assert not np.array_equal(a.counts, c.counts)


# ------------------------------------------------------------------------------ regret
def test_regret_of_each_run_equals_gaps_times_pulls():
    testbed, agents = LINEUPS["gaussian"]
    result = B.race(agents, testbed, runs=25, steps=300, seed=0)
    gaps = result.means.max(axis=1, keepdims=True) - result.means  # [R, A]
    np.testing.assert_allclose(result.final_regret, (result.counts * gaps).sum(axis=2),
                               rtol=1e-10)


def test_expected_realised_regret_equals_gaps_times_expected_pulls():
    result = B.race([B.EpsilonGreedy(0.1), B.UCB(1.0)], B.GaussianTestbed(), runs=2000,
                    steps=300, seed=0)
    gaps = result.means.max(axis=1, keepdims=True) - result.means
    expected = (gaps[None] * result.counts).sum(axis=2).mean(axis=1)  # Σ_a Δ_a E[N_a]
    realised = (result.best_mean[None] - result.reward).sum(axis=1)  # E[T μ* − Σ R_t]
    # The realised rewards add noise σ = 1 per step: sd of the sum over 300 steps is √300.
    se = math.sqrt(300 / 2000)
    assert np.all(np.abs(realised - expected) < 4 * se)


def test_regret_statistics_are_consistent():
    result = B.race([B.EpsilonGreedy(0.1)], B.GaussianTestbed(), runs=300, steps=100, seed=0)
    np.testing.assert_allclose(result.regret[:, -1], result.final_regret.mean(axis=1))
    np.testing.assert_allclose(result.regret_sd[:, -1], result.final_regret.std(axis=1, ddof=1))
    low, high = result.regret_band(0.95)
    half = 1.959963984540054 * result.regret_sd / math.sqrt(300)
    np.testing.assert_allclose(high - result.regret, half)
    np.testing.assert_allclose(result.regret - low, half)
    assert np.all(np.diff(result.regret, axis=1) >= 0)
    np.testing.assert_allclose(result.choice_by_rank.sum(axis=2), 1.0)
    np.testing.assert_allclose(result.pulls_by_rank().sum(axis=1), 100)
    np.testing.assert_array_equal(result.counts.sum(axis=2), 100)
    with pytest.raises(ValueError, match="confidence level"):
        result.regret_band(1.0)
    with pytest.raises(ValueError, match="step"):
        result.pulls_by_rank(101)


def test_one_arm_means_no_regret():
    result = B.race([B.EpsilonGreedy(0.5), B.Gradient()], B.GaussianTestbed(arms=1), runs=10,
                    steps=20, seed=0)
    np.testing.assert_array_equal(result.regret, 0.0)
    np.testing.assert_array_equal(result.optimal, 1.0)


def ucb_on_sure_arms(c: float, steps: int) -> list[float]:
    """UCB on arms that always pay 1 and 0, by hand: regret after each step (1 per bad pull)."""
    n, q, regret, out = [0, 0], [0.0, 0.0], 0.0, []
    for t in range(1, steps + 1):
        if 0 in n:
            arm = n.index(0)  # both orders of the first two pulls give the same regret
        else:
            ucb = [q[a] + c * math.sqrt(math.log(t) / n[a]) for a in (0, 1)]
            arm = 0 if ucb[0] > ucb[1] else 1
        n[arm] += 1
        q[arm] += ((1.0 if arm == 0 else 0.0) - q[arm]) / n[arm]
        regret += arm == 1
        out.append(regret)
    return out


@pytest.mark.parametrize("c", [0.5, 1.0, 2.0])
def test_ucb_on_deterministic_arms_follows_the_hand_computed_sequence(c):
    result = B.race([B.UCB(c)], B.BernoulliTestbed(probs=(1.0, 0.0)), runs=3, steps=60, seed=0)
    # From step 2 on: the order of the first two pulls is random, their total regret is not.
    np.testing.assert_array_equal(result.regret[0, 1:], ucb_on_sure_arms(c, 60)[1:])


def test_greedy_on_a_sure_and_a_dead_arm_loses_one_pull_on_average():
    # Q starts tied at 0; a pull of the dead arm keeps the tie, a pull of the sure arm ends it.
    # The dead arm is pulled Geometric(1/2) - 1 + ... times: E[N] = Σ_k 2^-k = 1, sd √2.
    result = B.race([B.EpsilonGreedy(0.0)], B.BernoulliTestbed(probs=(1.0, 0.0)), runs=4000,
                    steps=60, seed=0)
    assert abs(result.final_regret.mean() - 1.0) < 4 * math.sqrt(2 / 4000)


def test_optimistic_values_try_every_arm_once_first():
    result = B.race([B.Optimistic(initial=5.0, step_size=0.1)], B.GaussianTestbed(), runs=200,
                    steps=10, seed=0)
    np.testing.assert_array_equal(result.counts, 1)


def test_ucb_tries_every_arm_once_first():
    result = B.race([B.UCB(2.0)], B.GaussianTestbed(arms=7), runs=100, steps=7, seed=0)
    np.testing.assert_array_equal(result.counts, 1)


def test_gradient_with_a_baseline_makes_no_first_update():
    # R̄_1 = R_1, so R_1 − R̄_1 = 0: the policy is still uniform at step 2.
    result = B.race([B.Gradient(0.5)], B.GaussianTestbed(arms=4), runs=4000, steps=2, seed=0)
    assert np.all(np.abs(result.choice_by_rank[0, 1] - 0.25) < 4 * math.sqrt(0.1875 / 4000))


def test_epsilon_greedy_explores_at_rate_epsilon():
    # Greedy values tie forever on an all-zero Bernoulli bandit, so count the EXPLORE coin:
    # arm 0 has p = 1 and is found by exploring or by a tie; once found greedy keeps it.
    result = B.race([B.EpsilonGreedy(0.2)], B.BernoulliTestbed(probs=(1.0, 0.0, 0.0, 0.0)),
                    runs=3000, steps=400, seed=0)
    # Eventually the best arm is chosen except on exploring steps that pick another arm.
    tail = result.optimal[0, -100:].mean()
    assert abs(tail - (1 - 0.2 * 3 / 4)) < 4 * math.sqrt(0.15 * 0.85 / 300_000) + 1e-3


def test_epsilon_decay_explores_less_and_less():
    flat = B.race([B.EpsilonGreedy(0.3)], B.GaussianTestbed(), runs=1000, steps=600, seed=0)
    decayed = B.race([B.EpsilonGreedy(0.3, decay=0.05)], B.GaussianTestbed(), runs=1000,
                     steps=600, seed=0)
    assert decayed.optimal[0, -100:].mean() > flat.optimal[0, -100:].mean() + 0.05


# ------------------------------------------------------------------------------ lessons
PROBS = (0.9, 0.5, 0.4, 0.2)


@pytest.fixture(scope="module")
def long_bernoulli_race():
    agents = [B.EpsilonGreedy(0.1), B.UCB(math.sqrt(2)), B.BetaThompson()]
    return B.race(agents, B.BernoulliTestbed(probs=PROBS), runs=300, steps=4000, seed=0)


def test_ucb_and_thompson_regret_is_sublinear_and_below_epsilon_greedy(long_bernoulli_race):
    r = long_bernoulli_race
    late = r.regret[:, 3999] - r.regret[:, 2999]  # regret added over steps 3001-4000
    early = r.regret[:, 1999] - r.regret[:, 999]  # ... and over steps 1001-2000
    eps, ucb, ts = late / early
    assert eps > 0.85  # linear: the same every thousand steps
    assert ucb < 0.7 and ts < 0.7  # logarithmic: ln(4/3) / ln 2 = 0.42
    # ε-greedy keeps paying ε times the average gap on every step: 0.1 · (0 + .4 + .5 + .7) / 4.
    assert abs(late[0] / 1000 - 0.04) < 0.004
    assert r.regret[1, -1] < r.regret[0, -1] and r.regret[2, -1] < r.regret[0, -1]


def test_thompson_tracks_the_lai_robbins_rate(long_bernoulli_race):
    r = long_bernoulli_race
    rate = B.lai_robbins(PROBS, 2)[1] / math.log(2)  # Σ Δ/KL
    slope = (r.regret[2, -1] - r.regret[2, 399]) / math.log(10)  # d regret / d ln t
    assert 0.5 * rate < slope < 1.5 * rate
    ucb_slope = (r.regret[1, -1] - r.regret[1, 399]) / math.log(10)
    assert ucb_slope > 1.5 * rate  # UCB1 is consistent but not asymptotically optimal


def test_ucb1_stays_below_its_finite_time_bound(long_bernoulli_race):
    r = long_bernoulli_race
    bound = B.ucb1_bound(PROBS, r.steps)
    high = r.regret_band(0.99)[1][1]
    assert np.all(high[1:] < bound[1:])


def test_gradient_bandits_need_a_baseline():
    testbed = B.GaussianTestbed(mean=4.0)
    r = B.race([B.Gradient(0.1), B.Gradient(0.1, baseline=False)], testbed, runs=1000,
               steps=1000, seed=0)
    with_baseline, without = r.optimal[:, -100:].mean(axis=1)
    assert with_baseline > 0.75 and without < with_baseline - 0.2


def test_nonstationary_problems_need_a_constant_step_size():
    agents = [B.EpsilonGreedy(0.1), B.EpsilonGreedy(0.1, step_size=0.1)]
    r = B.race(agents, B.RandomWalkTestbed(), runs=300, steps=5000, seed=0)
    average, constant = r.reward[:, -1000:].mean(axis=1)
    assert constant > average + 0.1
    assert r.optimal[1, -1000:].mean() > r.optimal[0, -1000:].mean() + 0.1


# ------------------------------------------------------------------------------ bounds
def test_kl_bernoulli_by_hand():
    assert B.kl_bernoulli(0.5, 0.25) == pytest.approx(0.5 * math.log(2) + 0.5 * math.log(2 / 3))
    assert B.kl_bernoulli(0.3, 0.3) == 0.0
    assert B.kl_bernoulli(0.0, 0.5) == pytest.approx(math.log(2))
    assert B.kl_bernoulli(0.5, 1.0) == math.inf
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        B.kl_bernoulli(1.5, 0.5)


def test_lai_robbins_curve_by_hand():
    curve = B.lai_robbins((0.5, 0.25, 0.5), 100)
    kl = 0.25 * math.log(0.25 / 0.5) + 0.75 * math.log(0.75 / 0.5)  # KL(μ_a, μ*) = KL(1/4, 1/2)
    rate = 0.25 / kl  # the tied best arm costs nothing
    assert curve[0] == 0.0
    assert curve[99] == pytest.approx(rate * math.log(100))
    # An arm with μ* = 1 and μ_a < 1 has KL = ∞: the bound is 0 (it is learned in O(1) pulls).
    np.testing.assert_array_equal(B.lai_robbins((1.0, 0.5), 10), 0.0)


def test_ucb1_bound_by_hand():
    curve = B.ucb1_bound((0.9, 0.8), 100)
    assert curve[99] == pytest.approx(8 * math.log(100) / 0.1 + (1 + math.pi**2 / 3) * 0.1)
    assert curve[0] == pytest.approx((1 + math.pi**2 / 3) * 0.1)


@pytest.mark.parametrize("probs", [(), (0.5, 1.5), ((0.1, 0.2),)])
def test_bounds_reject_bad_means(probs):
    with pytest.raises(ValueError):
        B.lai_robbins(probs, 10)
    with pytest.raises(ValueError):
        B.ucb1_bound(probs, 10)


# ------------------------------------------------------------------------------ the book
def test_expected_max_of_ten_normals():
    value, _ = integrate.quad(
        lambda x: x * 10 * stats.norm.pdf(x) * stats.norm.cdf(x) ** 9, -np.inf, np.inf
    )
    assert B.EXPECTED_MAX_OF_10 == pytest.approx(value, abs=1e-9)


@pytest.fixture(scope="module")
def book():
    return B.book_race(seed=0)


@pytest.mark.parametrize("value", B.BOOK_VALUES, ids=lambda v: v.label)
def test_book_values(book, value):
    assert abs(value.ours(book) - value.value) <= value.tol


def test_best_possible_reward_of_the_book_testbed(book):
    # sd of the max of 10 standard normals is 0.587: 3 standard errors over 2000 runs.
    assert abs(book.best_mean[0] - B.EXPECTED_MAX_OF_10) < 3 * 0.587 / math.sqrt(2000)


def test_book_curves_are_ordered_like_the_figures(book):
    greedy, eps01, eps1, ucb = book.reward[:, -200:].mean(axis=1)
    assert greedy < eps01 < eps1 < ucb
    early = book.reward[:, 50:150].mean(axis=1)
    assert early[2] > early[1]  # ε = 0.1 learns faster than ε = 0.01 at first


# ------------------------------------------------------------------------------ figures
@pytest.fixture(scope="module")
def small_bernoulli_race():
    agents = [B.EpsilonGreedy(0.1), B.EpsilonGreedy(0.01), B.UCB(math.sqrt(2)), B.BetaThompson()]
    return B.race(agents, B.BernoulliTestbed(probs=PROBS), runs=40, steps=300, seed=0)


def test_each_racer_keeps_one_colour_in_every_figure(small_bernoulli_race):
    from rlviz.figures import bandits as F

    r = small_bernoulli_race
    colours = F.racer_colors(r)
    assert len(set(colours)) == len(colours)  # two ε-greedy racers, two colours
    assert colours[0] == F.color("epsilon_greedy") and colours[2] == F.color("ucb")
    for fig in (F.regret_race(r), F.regret_race(r, log_axes=True), F.reward_curves(r),
                F.optimal_curves(r)):
        drawn = {t.name: t.line.color for t in fig.data if t.name in r.labels}
        assert drawn == dict(zip(r.labels, colours, strict=True))
    snap = F.snapshot(r, 150)
    bars = {t.name: t.marker.color for t in snap.data if t.type == "bar" and t.name}
    assert bars == dict(zip(r.labels, colours, strict=True))


def test_bounds_are_drawn_only_for_fixed_bernoulli_arms(small_bernoulli_race):
    from rlviz.figures import bandits as F

    names = {t.name for t in F.regret_race(small_bernoulli_race).data}
    assert {"Lai–Robbins rate (lower bound, asymptotic)",
            "UCB1 upper bound (Auer et al. 2002)"} <= names
    gaussian = B.race([B.UCB()], B.GaussianTestbed(), runs=5, steps=50, seed=0)
    assert not any("bound" in (t.name or "") for t in F.regret_race(gaussian).data)


def test_regret_axes(small_bernoulli_race):
    from rlviz.figures import bandits as F

    r = small_bernoulli_race
    linear = F.regret_race(r, step=100)
    assert linear.layout.xaxis.type == "linear" and linear.layout.yaxis.range[0] == 0
    assert linear.layout.yaxis.range[1] >= r.regret_band()[1].max()
    loglog = F.regret_race(r, log_axes=True)
    assert loglog.layout.xaxis.type == "log" and loglog.layout.yaxis.type == "log"
    assert all(np.all(np.asarray(t.y) > 0) for t in loglog.data)
    assert np.all(np.isfinite(loglog.layout.yaxis.range))
    # The means of a random walk start equal: no regret at step 1, and still a finite axis.
    walk = B.race([B.EpsilonGreedy(0.1)], B.RandomWalkTestbed(arms=3), runs=5, steps=50, seed=0)
    assert walk.regret[0, 0] == 0
    assert np.all(np.isfinite(F.regret_race(walk, log_axes=True).layout.yaxis.range))


def test_snapshot_shows_step_t_and_animates_the_race(small_bernoulli_race):
    from rlviz.figures import bandits as F

    r = small_bernoulli_race
    snap = F.snapshot(r, 120, frames=10)
    leader = snap.data[0]
    np.testing.assert_allclose(leader.x, r.regret[:, 119])
    np.testing.assert_allclose(snap.data[-1].y, r.rank_means[119])
    shares = np.array([t.y for t in snap.data[1:-1]])
    np.testing.assert_allclose(shares.sum(axis=1), 100.0)
    names = [f.name for f in snap.frames]
    assert "120" in names and names[0] == "1" and names[-1] == "300"
    with pytest.raises(ValueError, match="step"):
        F.snapshot(r, 301)


def test_pull_shares_figure_matches_the_counts(small_bernoulli_race):
    from rlviz.figures import bandits as F

    r = small_bernoulli_race
    z = np.asarray(F.pull_shares(r).data[0].z)
    np.testing.assert_allclose(z, 100 * r.pull_shares())
    # With the same arms in every run, rank j is arm j here (the probabilities are sorted).
    by_arm = r.counts.sum(axis=1) / (r.runs * r.steps)
    np.testing.assert_allclose(z / 100, by_arm)
