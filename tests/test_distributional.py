"""The C51 projection: hand-computed cases, the paper's identities, torch against the oracle."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlviz import distributional as dist


def project(probs, rewards, dones, *, gamma, support):
    """Both implementations, as float64 numpy, for tests that must hold for each."""
    torch_m = dist.categorical_projection(
        probs, rewards, dones, gamma=gamma, support=support
    ).probs.numpy()
    loop_m = dist.projection_reference(probs, rewards, dones, gamma=gamma, support=support)
    return torch_m, loop_m


# ------------------------------------------------------------------------- hand-computed
def test_hand_computed_split_with_clipping():
    # z = [-1, 0, 1], r = 0.5, γ = 1: targets -0.5, 0.5, 1.5 (clipped to 1).
    z = dist.make_support(-1.0, 1.0, 3)
    probs = np.array([[0.2, 0.5, 0.3]])
    proj = dist.categorical_projection(probs, [0.5], [False], gamma=1.0, support=z)
    np.testing.assert_allclose(proj.target_atoms.numpy(), [[-0.5, 0.5, 1.5]])
    np.testing.assert_allclose(proj.clipped_atoms.numpy(), [[-0.5, 0.5, 1.0]])
    assert proj.clipped.numpy().tolist() == [[False, False, True]]
    np.testing.assert_allclose(proj.position.numpy(), [[0.5, 1.5, 2.0]])
    assert proj.lower.numpy().tolist() == [[0, 1, 1]]
    assert proj.upper.numpy().tolist() == [[1, 2, 2]]
    np.testing.assert_allclose(proj.weight_lower.numpy(), [[0.5, 0.5, 0.0]])
    np.testing.assert_allclose(proj.weight_upper.numpy(), [[0.5, 0.5, 1.0]])
    for m in project(probs, [0.5], [False], gamma=1.0, support=z):
        np.testing.assert_allclose(m, [[0.1, 0.35, 0.55]], atol=1e-15)


def test_hand_computed_shrink_and_shift():
    # z = [0, 1, 2, 3], r = 0.25, γ = 0.5: targets 0.25, 0.75, 1.25, 1.75, nothing clipped.
    z = dist.make_support(0.0, 3.0, 4)
    probs = np.array([[0.1, 0.2, 0.3, 0.4]])
    for m in project(probs, [0.25], [False], gamma=0.5, support=z):
        np.testing.assert_allclose(m, [[0.125, 0.5, 0.375, 0.0]], atol=1e-15)
        assert m[0] @ z == pytest.approx(0.25 + 0.5 * 2.0, abs=1e-15)


@pytest.mark.parametrize(
    ("reward", "expected"),
    [
        (0.3, [0.0, 0.0, 0.7, 0.3, 0.0]),  # between z = 0 and z = 1
        (-1.0, [0.0, 1.0, 0.0, 0.0, 0.0]),  # exactly on z = -1
        (5.0, [0.0, 0.0, 0.0, 0.0, 1.0]),  # clipped to V_max
        (-7.5, [1.0, 0.0, 0.0, 0.0, 0.0]),  # clipped to V_min
    ],
)
def test_done_sends_all_mass_to_the_projection_of_r(reward, expected):
    z = dist.make_support(-2.0, 2.0, 5)
    probs = np.array([[0.1, 0.3, 0.2, 0.25, 0.15], [0.0, 0.0, 0.0, 0.0, 1.0]])
    for m in project(probs, [reward] * 2, [True, True], gamma=0.9, support=z):
        np.testing.assert_allclose(m, [expected, expected], atol=1e-15)


def test_gamma_zero_equals_done():
    z = dist.make_support(-3.0, 3.0, 7)
    probs = np.array([[0.05, 0.1, 0.2, 0.3, 0.2, 0.1, 0.05]])
    zero = dist.categorical_projection(probs, [1.4], [False], gamma=0.0, support=z).probs
    done = dist.categorical_projection(probs, [1.4], [True], gamma=0.9, support=z).probs
    torch.testing.assert_close(zero, done, rtol=0, atol=0)
    np.testing.assert_allclose(zero[0, 4:6].numpy(), [0.6, 0.4], atol=1e-12)


@pytest.mark.parametrize(
    ("v_min", "v_max", "n_atoms"),
    [(-10.0, 10.0, 51), (-10.0, 10.0, 21), (0.0, 1.0, 11), (-3.7, 12.1, 201), (-1.0, 1.0, 2)],
)
def test_r_zero_gamma_one_is_the_identity(v_min, v_max, n_atoms):
    z = dist.make_support(v_min, v_max, n_atoms)
    rng = np.random.default_rng(n_atoms)
    probs = rng.dirichlet(np.ones(n_atoms), size=3)
    for m in project(probs, np.zeros(3), np.zeros(3, dtype=bool), gamma=1.0, support=z):
        np.testing.assert_allclose(m, probs, atol=1e-12)


# ------------------------------------------------------------------------- the naive bug
def test_naive_projection_loses_every_exact_hit():
    z = dist.make_support(0.0, 2.0, 3)
    probs = np.array([[0.2, 0.3, 0.5]])
    naive = dist.naive_projection(probs, [0.0], [False], gamma=1.0, support=z).numpy()
    np.testing.assert_array_equal(naive, np.zeros((1, 3)))  # every atom hits a point
    correct = dist.categorical_projection(probs, [0.0], [False], gamma=1.0, support=z).probs
    np.testing.assert_allclose(correct.numpy(), probs, atol=1e-15)


def test_naive_projection_loses_clipped_atoms_and_keeps_the_rest():
    # r = 0.5, γ = 1 on z = [-1, 0, 1]: atoms 0 and 1 split; atom 2 is clipped onto V_max.
    z = dist.make_support(-1.0, 1.0, 3)
    probs = np.array([[0.2, 0.5, 0.3]])
    naive = dist.naive_projection(probs, [0.5], [False], gamma=1.0, support=z).numpy()
    np.testing.assert_allclose(naive, [[0.1, 0.35, 0.25]], atol=1e-15)
    assert naive.sum() == pytest.approx(0.7, abs=1e-15)


def test_naive_equals_correct_when_no_atom_lands_on_a_point():
    z = dist.make_support(-5.0, 5.0, 11)
    probs = np.random.default_rng(3).dirichlet(np.ones(11), size=4)
    args = dict(gamma=0.53, support=z)
    rewards, dones = [0.31, -0.77, 0.123, 1.49], [False] * 4
    proj = dist.categorical_projection(probs, rewards, dones, **args)
    assert not bool((proj.position == proj.position.floor()).any())
    torch.testing.assert_close(
        dist.naive_projection(probs, rewards, dones, **args), proj.probs, rtol=0, atol=1e-14
    )


# ------------------------------------------------------------------------- properties
@st.composite
def batches(draw, *, clip: bool = True):
    """A random batch on a random support, often with atoms landing exactly on points."""
    n = draw(st.integers(2, 40))
    batch = draw(st.integers(1, 6))
    v_min = draw(st.floats(-50, 50, allow_nan=False))
    v_max = v_min + draw(st.floats(0.1, 100, allow_nan=False))
    z = dist.make_support(v_min, v_max, n)
    dz = (v_max - v_min) / (n - 1)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    raw = rng.random((batch, n)) * (rng.random((batch, n)) < draw(st.floats(0.2, 1.0)))
    raw[np.arange(batch), rng.integers(0, n, batch)] += 0.1  # no all-zero row
    probs = raw / raw.sum(axis=1, keepdims=True)
    gamma = draw(st.sampled_from([0.0, 0.5, 0.9, 0.99, 1.0]) | st.floats(0, 1))
    if clip:
        on_grid = rng.integers(-n, n, batch) * dz  # r = k Δz: exact hits when γ = 1
        anywhere = rng.uniform(-1.5, 1.5, batch) * (v_max - v_min)
        rewards = np.where(rng.random(batch) < 0.5, on_grid, anywhere)
    dones = rng.random(batch) < draw(st.sampled_from([0.0, 0.3, 1.0]))
    if not clip:  # r + γ(1 − done) z stays inside [V_min, V_max] for every atom
        discount = np.where(dones, 0.0, gamma)
        rewards = rng.uniform(v_min * (1 - discount), v_max * (1 - discount))
    return probs, rewards, dones, gamma, z


@settings(max_examples=150, deadline=None)
@given(case=batches())
def test_mass_is_preserved(case):
    probs, rewards, dones, gamma, z = case
    proj = dist.categorical_projection(probs, rewards, dones, gamma=gamma, support=z)
    m = proj.probs.numpy()
    assert (m >= 0).all()
    np.testing.assert_allclose(m.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(proj.weight_lower + proj.weight_upper, 1.0, atol=0)
    assert bool((proj.upper == proj.lower + 1).all())  # two distinct neighbours, always
    assert int(proj.lower.min()) >= 0 and int(proj.upper.max()) <= len(z) - 1
    assert bool(((proj.weight_upper >= 0) & (proj.weight_upper <= 1)).all())


@settings(max_examples=150, deadline=None)
@given(case=batches())
def test_torch_equals_the_loop_reference(case):
    probs, rewards, dones, gamma, z = case
    torch_m, loop_m = project(probs, rewards, dones, gamma=gamma, support=z)
    np.testing.assert_allclose(torch_m, loop_m, rtol=0, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(case=batches())
def test_equals_the_triangular_kernel_form(case):
    # Bellemare et al. (2017), eq. 7: m_i = Σ_j [1 − |ẑ_j − z_i| / Δz]_0^1 p_j.
    probs, rewards, dones, gamma, z = case
    proj = dist.categorical_projection(probs, rewards, dones, gamma=gamma, support=z)
    dz = (z[-1] - z[0]) / (len(z) - 1)
    hat = proj.clipped_atoms.numpy()
    kernel = np.clip(1 - np.abs(hat[:, :, None] - z[None, None, :]) / dz, 0, 1)  # [B, j, i]
    np.testing.assert_allclose(
        proj.probs.numpy(), np.einsum("bj,bji->bi", probs, kernel), atol=1e-9
    )


@settings(max_examples=100, deadline=None)
@given(case=batches(clip=False))
def test_mean_is_preserved_without_clipping(case):
    probs, rewards, dones, gamma, z = case
    proj = dist.categorical_projection(probs, rewards, dones, gamma=gamma, support=z)
    scale = max(abs(z[0]), abs(z[-1]), 1.0)
    assert not bool(proj.clipped.any())
    discount = np.where(dones, 0.0, gamma)
    np.testing.assert_allclose(
        proj.probs.numpy() @ z, rewards + discount * (probs @ z), atol=1e-9 * scale
    )


@settings(max_examples=100, deadline=None)
@given(case=batches())
def test_mean_equals_the_clipped_target_mean_and_variance_grows_by_the_split(case):
    probs, rewards, dones, gamma, z = case
    proj = dist.categorical_projection(probs, rewards, dones, gamma=gamma, support=z)
    m, hat = proj.probs.numpy(), proj.clipped_atoms.numpy()
    scale = max(abs(z[0]), abs(z[-1]), 1.0)
    mean_hat = (probs * hat).sum(axis=1)
    np.testing.assert_allclose(m @ z, mean_hat, atol=1e-9 * scale)
    dz = (z[-1] - z[0]) / (len(z) - 1)
    var_hat = (probs * (hat - mean_hat[:, None]) ** 2).sum(axis=1)
    split = dz**2 * (probs * proj.weight_lower.numpy() * proj.weight_upper.numpy()).sum(axis=1)
    var_m = (m * (z[None, :] - (m @ z)[:, None]) ** 2).sum(axis=1)
    np.testing.assert_allclose(var_m, var_hat + split, atol=1e-8 * scale**2)


def test_each_row_of_a_batch_is_projected_on_its_own():
    z = dist.make_support(-10.0, 10.0, 51)
    rng = np.random.default_rng(7)
    probs = rng.dirichlet(np.ones(51), size=8)
    rewards, dones = rng.normal(0, 5, 8), rng.random(8) < 0.3
    batched = dist.categorical_projection(probs, rewards, dones, gamma=0.97, support=z)
    for k in range(8):
        alone = dist.categorical_projection(
            probs[k : k + 1], rewards[k : k + 1], dones[k : k + 1], gamma=0.97, support=z
        )
        torch.testing.assert_close(alone.probs[0], batched.probs[k], rtol=0, atol=0)
        torch.testing.assert_close(alone.position[0], batched.position[k], rtol=0, atol=0)


def test_dtype_follows_the_input_and_inputs_are_not_mutated():
    z = dist.make_support(-1.0, 1.0, 5)
    probs = torch.tensor([[0.1, 0.2, 0.4, 0.2, 0.1]], dtype=torch.float32)
    rewards, dones = torch.tensor([0.3]), torch.tensor([0])
    before = (probs.clone(), rewards.clone(), dones.clone(), z.copy())
    proj = dist.categorical_projection(probs, rewards, dones, gamma=0.9, support=z)
    assert proj.probs.dtype == torch.float32 and proj.lower.dtype == torch.int64
    for a, b in zip((probs, rewards, dones), before[:3], strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)
    np.testing.assert_array_equal(z, before[3])
    ints = dist.categorical_projection([[0, 1, 0, 0, 0]], [0.0], [1], gamma=1.0, support=z)
    assert ints.probs.dtype == torch.float64
    lists = dist.categorical_projection([[0.5, 0.5, 0, 0, 0]], [0.0], [1], gamma=1.0, support=z)
    assert lists.probs.dtype == torch.float64
    array32 = np.full((1, 5), 0.2, dtype=np.float32)
    assert dist.categorical_projection(array32, [0.0], [1], gamma=1.0,
                                       support=z).probs.dtype == torch.float32


def test_python_float_rewards_keep_double_precision():
    # 0.3 is not a float32 number: a detour through float32 would move every atom by ~1e-8.
    z = dist.make_support(-10.0, 10.0, 11)
    probs = np.array([[0.0] * 6 + [1.0] + [0.0] * 4])
    proj = dist.categorical_projection(probs, [0.3], [False], gamma=0.75, support=z)
    assert float(proj.target_atoms[0, 6]) == 0.3 + 0.75 * 2.0
    assert float(proj.probs[0] @ torch.as_tensor(z)) == pytest.approx(1.8, abs=1e-15)
    loss = dist.cross_entropy([[0.0, 0.0]], [[0.3, 0.7]])
    assert float(loss[0]) == pytest.approx(math.log(2.0), abs=1e-15)


def test_float32_batch_matches_float64():
    z = dist.make_support(-10.0, 10.0, 51)
    rng = np.random.default_rng(11)
    probs = rng.dirichlet(np.ones(51), size=64)
    rewards, dones = rng.normal(0, 3, 64), rng.random(64) < 0.2
    m64 = dist.categorical_projection(probs, rewards, dones, gamma=0.99, support=z).probs
    m32 = dist.categorical_projection(
        torch.tensor(probs, dtype=torch.float32), rewards, dones, gamma=0.99, support=z
    ).probs
    np.testing.assert_allclose(m32.numpy(), m64.numpy(), atol=1e-5)


# ------------------------------------------------------------------------- clear messages
GOOD = dict(probs=[[0.5, 0.5]], rewards=[0.0], dones=[False], gamma=0.9, support=[0.0, 1.0])


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (dict(support=[0.0]), "at least two atoms"),
        (dict(support=[1.0, 0.0]), "V_min (1) must be below V_max (0)"),
        (dict(support=[0.0, 1.0, 3.0], probs=[[0.2, 0.3, 0.5]]), "evenly spaced"),
        (dict(probs=[[0.5, 0.6]]), "must sum to one over the atoms; row 0 sums to 1.1"),
        (dict(probs=[[1.5, -0.5]]), "non-negative"),
        (dict(probs=[[math.nan, 1.0]]), "NaN or infinite"),
        (dict(probs=[0.5, 0.5]), "shape [batch, atoms]"),
        (dict(probs=[[0.2, 0.3, 0.5]]), "3 atoms per row but the support has 2"),
        (dict(rewards=[0.0, 1.0]), "rewards and dones must have shape [1]"),
        (dict(rewards=[math.inf]), "rewards must be finite"),
        (dict(dones=[2]), "booleans or 0/1"),
        (dict(gamma=1.5), "γ must lie in [0, 1]"),
        (dict(gamma=math.nan), "γ must lie in [0, 1]"),
    ],
)
@pytest.mark.parametrize(
    "fn", [dist.categorical_projection, dist.naive_projection, dist.projection_reference]
)
def test_bad_inputs_are_clear_messages(fn, change, fragment):
    args = {**GOOD, **change}
    with pytest.raises(ValueError) as err:
        fn(args["probs"], args["rewards"], args["dones"], gamma=args["gamma"],
           support=args["support"])
    assert fragment in str(err.value)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((3.0, -2.0, 11), "V_min (3) must be below V_max (-2)"),
        ((1.0, 1.0, 11), "must be below"),
        ((-1.0, 1.0, 1), "at least two atoms (got 1)"),
        ((-math.inf, 1.0, 11), "finite"),
    ],
)
def test_make_support_rejects_bad_bounds(args, fragment):
    with pytest.raises(ValueError) as err:
        dist.make_support(*args)
    assert fragment in str(err.value)


def test_make_support_is_the_c51_grid():
    z = dist.make_support(-10.0, 10.0, 51)
    assert z.shape == (51,) and z[0] == -10.0 and z[-1] == 10.0
    np.testing.assert_allclose(np.diff(z), 0.4, atol=1e-12)


# ------------------------------------------------------------------------- the loss
def test_cross_entropy_hand_value_and_minimum():
    target = torch.tensor([[0.25, 0.75], [1.0, 0.0]], dtype=torch.float64)
    logits = torch.tensor([[0.0, 0.0], [math.log(3.0), 0.0]], dtype=torch.float64)
    loss = dist.cross_entropy(logits, target)
    np.testing.assert_allclose(loss.numpy(), [math.log(2.0), -math.log(0.75)], atol=1e-15)
    # Predicting the target itself gives its entropy, the smallest possible loss.
    at_target = dist.cross_entropy(torch.log(target[:1]), target[:1])
    entropy = -(0.25 * math.log(0.25) + 0.75 * math.log(0.75))
    assert float(at_target) == pytest.approx(entropy, abs=1e-15)


def test_cross_entropy_is_stable_and_its_gradient_is_softmax_minus_target():
    logits = torch.tensor([[1e4, -1e4, 0.0], [500.0, 499.0, 498.0]], dtype=torch.float64,
                          requires_grad=True)
    target = torch.tensor([[0.5, 0.25, 0.25], [0.2, 0.3, 0.5]], dtype=torch.float64)
    loss = dist.cross_entropy(logits, target)
    assert bool(torch.isfinite(loss).all())
    assert float(loss[0].detach()) == pytest.approx(0.25 * 2e4 + 0.25 * 1e4, rel=1e-12)
    loss.sum().backward()
    expected = torch.softmax(logits.detach(), dim=-1) - target
    torch.testing.assert_close(logits.grad, expected, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    ("logits", "target", "fragment"),
    [
        ([[0.0, 0.0]], [[0.5, 0.5, 0.0]], "must both have shape"),
        ([[math.nan, 0.0]], [[0.5, 0.5]], "logits contain NaN"),
        ([[0.0, 0.0]], [[0.5, 0.6]], "target probabilities must sum to one"),
    ],
)
def test_cross_entropy_rejects_bad_inputs(logits, target, fragment):
    with pytest.raises(ValueError) as err:
        dist.cross_entropy(logits, target)
    assert fragment in str(err.value)


# ------------------------------------------------------------------------- sources
Z = dist.make_support(-10.0, 10.0, 201)


def test_gaussian_source_has_the_requested_moments():
    p = dist.source_distribution("gaussian", Z, mean=0.5, width=1.5)
    mean, var = dist.moments(p, Z)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert mean == pytest.approx(0.5, abs=1e-8) and var == pytest.approx(2.25, rel=1e-3)


def test_narrow_gaussian_does_not_underflow():
    p = dist.source_distribution("gaussian", Z, mean=3.0, width=1e-6)
    assert np.isfinite(p).all() and p.max() == pytest.approx(1.0) and Z[p.argmax()] == 3.0


def test_bimodal_source_is_symmetric_with_two_modes():
    p = dist.source_distribution("bimodal", Z, mean=1.0, width=0.8, separation=6.0)
    assert dist.moments(p, Z)[0] == pytest.approx(1.0, abs=1e-9)
    peaks = Z[1:-1][(p[1:-1] > p[:-2]) & (p[1:-1] > p[2:])]
    np.testing.assert_allclose(peaks, [-2.0, 4.0], atol=0.11)
    # Mirror image about μ = 1: z_i = -10 + 0.1 i reflects to index 220 - i.
    np.testing.assert_allclose(p[20:], p[20:][::-1], atol=1e-12)


@pytest.mark.parametrize(("mean", "atom"), [(0.33, 0.3), (-20.0, -10.0), (10.0, 10.0)])
def test_point_mass_sits_on_the_nearest_atom(mean, atom):
    p = dist.source_distribution("point", Z, mean=mean)
    assert p.sum() == 1.0 and p.max() == 1.0 and Z[p.argmax()] == pytest.approx(atom)


def test_uniform_and_custom_sources():
    z = dist.make_support(0.0, 3.0, 4)
    np.testing.assert_array_equal(dist.source_distribution("uniform", z), [0.25] * 4)
    np.testing.assert_allclose(
        dist.source_distribution("custom", z, weights=[1, 0, 3, 4]), [0.125, 0, 0.375, 0.5]
    )


@pytest.mark.parametrize(
    ("weights", "fragment"),
    [
        ([1.0, math.nan, 2.0], "Weight 1 is empty or not a finite number"),
        ([1.0, -0.5, 2.0], "weight 1 is -0.5"),
        ([0.0, 0.0, 0.0], "All weights are zero"),
        ([1.0, math.inf, 0.0], "Weight 1 is empty"),
    ],
)
def test_custom_weights_that_cannot_be_normalised(weights, fragment):
    with pytest.raises(ValueError) as err:
        dist.normalise_weights(weights)
    assert fragment in str(err.value)


@pytest.mark.parametrize(
    ("shape", "kwargs", "fragment"),
    [
        ("triangle", {}, "Unknown shape 'triangle'"),
        ("gaussian", {"width": 0.0}, "σ must be positive"),
        ("custom", {}, "needs one weight per atom"),
        ("custom", {"weights": [1.0, 2.0]}, "2 custom weights but 4 atoms"),
    ],
)
def test_bad_sources_are_clear_messages(shape, kwargs, fragment):
    with pytest.raises(ValueError) as err:
        dist.source_distribution(shape, dist.make_support(0.0, 3.0, 4), **kwargs)
    assert fragment in str(err.value)


# ------------------------------------------------------------------------- walkthrough
def test_walkthrough_of_the_exact_hit_case():
    z = dist.make_support(-10.0, 10.0, 21)  # Δz = 1: r = 0, γ = 1 puts every atom on a point
    p = dist.source_distribution("gaussian", z, mean=0.0, width=3.0)
    w = dist.walkthrough(p, reward=0.0, gamma=1.0, done=False, support=z)
    assert w.exact_hits.all() and w.n_clipped == 0
    # Each atom keeps its place: l = j with weight 1 (the last one, at V_max, uses u = N − 1).
    np.testing.assert_array_equal(w.lower, [*range(20), 19])
    np.testing.assert_array_equal(w.upper, [*range(1, 21), 20])
    np.testing.assert_array_equal(w.weight_upper, [0.0] * 20 + [1.0])
    np.testing.assert_allclose(w.projected, p, atol=1e-15)
    assert w.naive_mass == 0.0 and w.mass_after == pytest.approx(1.0, abs=1e-15)
    assert w.split_variance == 0.0
    assert w.after == pytest.approx(w.before, abs=1e-12)


def test_walkthrough_moments():
    z = dist.make_support(0.0, 3.0, 4)
    w = dist.walkthrough([0.1, 0.2, 0.3, 0.4], reward=0.25, gamma=0.5, done=False, support=z)
    assert w.delta_z == 1.0 and w.n_atoms == 4 and w.discount == 0.5
    assert w.before == pytest.approx((2.0, 1.0))
    assert w.target == pytest.approx((1.25, 0.25))
    assert w.clipped_target == pytest.approx(w.target)
    # m = [0.125, 0.5, 0.375, 0]: mean 1.25, E[z²] = 0.5 + 1.5 = 2.0, variance 0.4375.
    assert w.after == pytest.approx((1.25, 0.4375))
    # Each atom sits a quarter of the way between points: Δz² Σ p · ¼ · ¾ = 0.1875.
    assert w.split_variance == pytest.approx(0.1875)
    assert w.after[1] == pytest.approx(w.clipped_target[1] + w.split_variance)
    done = dist.walkthrough([0.1, 0.2, 0.3, 0.4], reward=9.0, gamma=0.5, done=True, support=z)
    assert done.discount == 0.0 and done.n_clipped == 4 and done.target == (9.0, 0.0)
    assert done.clipped_target == pytest.approx((3.0, 0.0)) and done.naive_mass == 0.0


# ------------------------------------------------------------------------- figures
def test_panels_draw_each_split_at_the_height_of_its_share():
    from rlviz.figures import distributional as figs

    z = dist.make_support(0.0, 3.0, 4)
    w = dist.walkthrough([0.1, 0.2, 0.3, 0.4], reward=0.25, gamma=0.5, done=False, support=z)
    fig = figs.projection_panels(w, atom=2, show_naive=True)
    by_name = {t.name: t for t in fig.data if t.name}
    assert [t.yaxis for t in fig.data if t.name == "projected m"] == ["y3"]
    ends = next(t for t in fig.data if t.hovertext and "sends" in t.hovertext[0])
    heights = sorted(np.round(ends.y, 12))
    # Shares p·(u − b) and p·(b − l) of each atom (see test_hand_computed_shrink_and_shift).
    assert heights == sorted(np.round([0.075, 0.05, 0.225, 0.1, 0.025, 0.15, 0.075, 0.3], 12))
    assert "naive floor/ceil (keeps 1 of the mass)" in by_name
    titles = [a for a in fig.layout.annotations if a.text in figs.TITLES]
    assert len(titles) == 3 and {(a.x, a.xanchor) for a in titles} == {(0.0, "left")}
    means = sorted(a.text for a in fig.layout.annotations if a.text.startswith("mean"))
    assert means == ["mean 1.25", "mean 1.25", "mean 2"]  # E[p]; E[clipped target]; E[m]
    assert not any(name.startswith("clipped") for name in by_name)
    followed = [t for t in fig.data if t.yaxis == "y3" and t.legendgroup == "atom"][0]
    np.testing.assert_allclose(followed.y, [0.225, 0.075])  # atom 2 sends 0.225 and 0.075


def test_panels_mark_clipped_atoms_and_the_story_names_exact_hits():
    from rlviz.figures import distributional as figs

    z = dist.make_support(-1.0, 1.0, 3)
    w = dist.walkthrough([0.2, 0.5, 0.3], reward=0.5, gamma=1.0, done=False, support=z)
    names = [t.name for t in figs.projection_panels(w).data if t.name]
    assert "clipped (1): where r + γz would be" in names
    story = figs.atom_story(w, 2)
    assert "r + γ(1 − done)z = 0.5 + 1 × 1 = 1.5, clipped to 1" in story
    assert "exactly on z = 1, so all of p goes there" in story
    assert "sends u − b = 50.0% (0.1) to z = -1 and b − l = 50.0% (0.1) to z = 0" in (
        figs.atom_story(w, 0))
