import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from rlviz import ppo

F64 = torch.float64
MU = (1.0, 0.5, 0.0, -0.5, -1.0)


def t(*values):
    return torch.tensor(values, dtype=F64)


def autograd_dl_dr(ratio, advantage, epsilon):
    r = torch.tensor(ratio, dtype=F64, requires_grad=True)
    (g,) = torch.autograd.grad(
        ppo.clipped_surrogate(r, torch.tensor(advantage, dtype=F64), epsilon=epsilon).sum(), r
    )
    return g.numpy()


# ----------------------------------------------------------------- the clipped surrogate
@pytest.mark.parametrize(
    ("r", "a", "eps", "expected"),
    [
        (1.0, 2.0, 0.2, 2.0),  # inside: r A
        (1.1, 1.0, 0.2, 1.1),
        (1.5, 1.0, 0.2, 1.2),  # A > 0, above the range: (1 + eps) A
        (0.5, 1.0, 0.2, 0.5),  # A > 0, below: r A (pessimistic)
        (0.5, -1.0, 0.2, -0.8),  # A < 0, below: (1 - eps) A
        (1.5, -1.0, 0.2, -1.5),  # A < 0, above: r A (pessimistic)
        (3.0, 2.0, 0.1, 2.2),
        (0.2, -2.0, 0.3, -1.4),
        (2.0, 0.0, 0.2, 0.0),
    ],
)
def test_clipped_surrogate_hand_values(r, a, eps, expected):
    got = ppo.clipped_surrogate(t(r), t(a), epsilon=eps)
    assert got.item() == pytest.approx(expected, abs=1e-15)


def test_clipped_surrogate_accepts_arrays_and_keeps_shape():
    got = ppo.clipped_surrogate(np.array([[0.5, 1.5]]), np.array([[1.0, 1.0]]), epsilon=0.2)
    assert isinstance(got, torch.Tensor) and got.shape == (1, 2) and got.dtype == F64
    np.testing.assert_array_equal(got.numpy(), [[0.5, 1.2]])


eps_st = st.floats(0.01, 0.9)
ratio_st = st.floats(1e-3, 5.0)
# Advantages are 0 or at least 1e-300 in size: autograd splits a tie of the two branches into
# halves A/2 + A/2, which rounds for subnormal A.
adv_st = st.one_of(st.just(0.0), st.floats(1e-300, 10.0), st.floats(-10.0, -1e-300))


@settings(max_examples=300, deadline=None)
@given(eps=eps_st, r=ratio_st, a=adv_st)
def test_autograd_equals_the_analytic_gradient(eps, r, a):
    got = autograd_dl_dr([r], [a], eps)
    assert got[0] == ppo.surrogate_grad(np.array([r]), np.array([a]), epsilon=eps)[0]


@settings(max_examples=200, deadline=None)
@given(eps=eps_st, u=st.floats(0.0, 1.0), a=adv_st)
def test_surrogate_equals_r_times_a_inside_the_clip_range(eps, u, a):
    r = (1 - eps) + u * 2 * eps
    r = min(max(r, 1 - eps), 1 + eps)
    assert ppo.clipped_surrogate(t(r), t(a), epsilon=eps).item() == r * a


@settings(max_examples=200, deadline=None)
@given(eps=eps_st, r=ratio_st, a=adv_st)
def test_objective_is_a_pessimistic_bound_on_the_unclipped_surrogate(eps, r, a):
    assert ppo.clipped_surrogate(t(r), t(a), epsilon=eps).item() <= r * a


@pytest.mark.parametrize("eps", [0.1, 0.2, 0.3])
@pytest.mark.parametrize(
    ("side", "a", "expected"),
    [("hi", 1.0, 1.0), ("hi", -1.0, -1.0), ("lo", 1.0, 1.0), ("lo", -1.0, -1.0)],
)
def test_gradient_at_the_kinks_is_the_slope_from_inside(eps, side, a, expected):
    r = 1 + eps if side == "hi" else 1 - eps
    assert autograd_dl_dr([r], [a], eps)[0] == expected
    assert ppo.surrogate_grad(np.array([r]), np.array([a]), epsilon=eps)[0] == expected
    # A hair past the kink on the flat side, the gradient is exactly zero.
    past = math.nextafter(r, math.inf if side == "hi" else -math.inf)
    if (side == "hi") == (a > 0):
        assert autograd_dl_dr([past], [a], eps)[0] == 0.0


@pytest.mark.parametrize("eps", [0.05, 0.2, 0.45])
def test_flat_regions_are_exactly_where_the_issue_says(eps):
    s = ppo.clip_surface(ppo.ratio_grid(), ppo.advantage_grid(201), epsilon=eps)
    r, a = np.meshgrid(s.ratio, s.advantage)
    expected = ((a > 0) & (r > 1 + eps)) | ((a < 0) & (r < 1 - eps))
    np.testing.assert_array_equal(s.flat, expected)
    nonzero_a = a != 0
    np.testing.assert_array_equal((s.grad == 0) & nonzero_a, expected)
    np.testing.assert_array_equal(s.grad[~expected], a[~expected])


def test_surface_matches_numpy_formula_and_analytic_gradient():
    s = ppo.clip_surface(ppo.ratio_grid(150), ppo.advantage_grid(170, limit=3.0), epsilon=0.25)
    r, a = np.meshgrid(s.ratio, s.advantage)
    assert s.objective.shape == (170, 150)
    np.testing.assert_array_equal(s.objective, np.minimum(r * a, np.clip(r, 0.75, 1.25) * a))
    np.testing.assert_array_equal(s.unclipped, r * a)
    np.testing.assert_array_equal(s.grad, ppo.surrogate_grad(r, a, epsilon=0.25))
    with pytest.raises(ValueError):
        s.objective[0, 0] = 1.0


def test_surface_in_blocks_equals_one_block(monkeypatch):
    grid = (ppo.ratio_grid(97), ppo.advantage_grid(89))
    blocked = ppo.clip_surface(*grid, epsilon=0.2)
    monkeypatch.setattr(ppo.surface, "SERIAL_BLOCK", 1_000_000)
    whole = ppo.clip_surface(*grid, epsilon=0.2)
    monkeypatch.setattr(ppo.surface, "SERIAL_BLOCK", 7)
    tiny = ppo.clip_surface(*grid, epsilon=0.2)
    for other in (whole, tiny):
        np.testing.assert_array_equal(blocked.objective, other.objective)
        np.testing.assert_array_equal(blocked.grad, other.grad)


@pytest.mark.parametrize("eps", [0.1, 0.2, 0.5])
def test_surface_checks_are_all_zero(eps):
    checks = ppo.surface_checks(ppo.clip_surface(ppo.ratio_grid(), ppo.advantage_grid(),
                                                 epsilon=eps))
    assert checks == ppo.SurfaceChecks(0.0, 0.0, 0.0, 0.0)
    assert math.copysign(1.0, checks.cancel_loss) == 1.0


def test_surface_checks_catch_a_wrong_surface():
    s = ppo.clip_surface(ppo.ratio_grid(), ppo.advantage_grid(), epsilon=0.2)
    broken = ppo.ClipSurface(s.epsilon, s.ratio, s.advantage, s.objective + 1e-3, s.unclipped,
                             np.where(s.flat, 0.5, s.grad), s.flat)
    checks = ppo.surface_checks(broken)
    assert checks.inside_gap == pytest.approx(1e-3) and checks.flat_grad == 0.5
    assert checks.analytic_gap == 0.5


# ----------------------------------------------------------------- explain a point
@pytest.mark.parametrize(
    ("r", "a", "branch", "region", "objective", "grad", "words"),
    [
        (1.0, 0.5, "both", "inside", 0.5, 0.5, "clip does nothing"),
        (1.5, 1.0, "clipped", "flat", 1.2, 0.0, "exactly 0"),
        (0.5, -1.0, "clipped", "flat", -0.8, 0.0, "less likely"),
        (0.5, 1.0, "unclipped", "pessimistic", 0.5, 1.0, "wrong way"),
        (1.5, -2.0, "unclipped", "pessimistic", -3.0, -2.0, "pulling the ratio back"),
        (1.2, 1.0, "both", "edge", 1.2, 1.0, "from inside"),
        (0.8, -1.0, "both", "edge", -0.8, -1.0, "from inside"),
        (1.7, 0.0, "both", "zero", 0.0, 0.0, "no signal"),
    ],
)
def test_explain_point(r, a, branch, region, objective, grad, words):
    e = ppo.explain_point(r, a, epsilon=0.2)
    assert (e.branch, e.region) == (branch, region)
    assert e.objective == pytest.approx(objective, abs=1e-15)
    assert e.grad == grad
    assert words in e.reason
    assert e.objective == min(e.unclipped_term, e.clipped_term)


# ----------------------------------------------------------------- losses from log-probs
def test_ppo_loss_equals_minus_mean_surrogate_and_its_gradient():
    gen = torch.Generator().manual_seed(3)
    logp_old = torch.log_softmax(torch.randn(6, generator=gen, dtype=F64), 0)
    logp = (logp_old + 0.4 * torch.randn(6, generator=gen, dtype=F64)).requires_grad_(True)
    adv = torch.randn(6, generator=gen, dtype=F64)
    loss = ppo.ppo_clip_loss(logp, logp_old, adv, epsilon=0.2)
    ratio = torch.exp(logp - logp_old).detach()
    expected = -ppo.clipped_surrogate(ratio, adv, epsilon=0.2).mean()
    assert loss.item() == pytest.approx(expected.item(), abs=1e-15)
    (g,) = torch.autograd.grad(loss, logp)
    # chain rule: d/dlogp = -(1/T) dL/dr * r
    analytic = -ppo.surrogate_grad(ratio.numpy(), adv.numpy(), epsilon=0.2) * ratio.numpy() / 6
    np.testing.assert_allclose(g.numpy(), analytic, rtol=1e-13, atol=1e-16)


def test_old_log_probs_are_constants():
    logp = t(-1.0, -2.0).requires_grad_(True)
    logp_old = t(-1.2, -1.9).requires_grad_(True)
    loss = ppo.ppo_clip_loss(logp, logp_old, t(1.0, -1.0), epsilon=0.2)
    loss.backward()
    assert logp_old.grad is None and logp.grad is not None


def test_loss_is_zero_at_ratio_one_with_cancelling_advantages():
    logp = torch.log(t(0.1, 0.2, 0.3, 0.4))
    adv = t(1.0, -1.0, 2.5, -2.5)
    assert ppo.ppo_clip_loss(logp, logp, adv, epsilon=0.2).item() == 0.0
    assert ppo.surrogate_loss(logp, logp, adv).item() == 0.0
    assert ppo.ppo_clip_loss(logp, logp, t(1.0, 1.0, 1.0, 1.0), epsilon=0.2).item() == -1.0


def test_clip_and_plain_surrogate_agree_inside_the_range():
    logp_old = torch.log(t(0.25, 0.25, 0.5))
    logp = logp_old + t(0.05, -0.1, 0.02)
    adv = t(1.0, 2.0, -3.0)
    assert ppo.ppo_clip_loss(logp, logp_old, adv, epsilon=0.2).item() == pytest.approx(
        ppo.surrogate_loss(logp, logp_old, adv).item(), abs=1e-15
    )
    far = logp_old + t(1.0, 0.0, 0.0)  # ratio e for a positive advantage: clipped at 1.2
    clip = ppo.ppo_clip_loss(far, logp_old, adv, epsilon=0.2).item()
    assert clip == pytest.approx(-(1.2 * 1.0 + 2.0 - 3.0) / 3, abs=1e-15)
    assert clip > ppo.surrogate_loss(far, logp_old, adv).item()


def test_kl_penalty_loss_hand_value_and_beta_zero():
    logp_old = torch.log(t(0.5, 0.5))
    logp = torch.log(t(0.6, 0.4))
    adv = t(1.0, -1.0)
    kl = t(0.1, 0.3)
    expected = -((1.2 * 1.0 - 2 * 0.1) + (0.8 * -1.0 - 2 * 0.3)) / 2
    got = ppo.kl_penalty_loss(logp, logp_old, adv, kl, beta=2.0).item()
    assert got == pytest.approx(expected, abs=1e-15)
    assert ppo.kl_penalty_loss(logp, logp_old, adv, kl, beta=0.0).item() == pytest.approx(
        ppo.surrogate_loss(logp, logp_old, adv).item(), abs=1e-15)


def test_categorical_kl_hand_value_and_torch_distributions():
    p, q = t(0.5, 0.5), t(0.9, 0.1)
    got = ppo.categorical_kl(torch.log(p), torch.log(q)).item()
    assert got == pytest.approx(0.5 * math.log(0.5 / 0.9) + 0.5 * math.log(0.5 / 0.1), abs=1e-15)
    gen = torch.Generator().manual_seed(0)
    a = torch.log_softmax(torch.randn(4, 7, generator=gen, dtype=F64), -1)
    b = torch.log_softmax(torch.randn(4, 7, generator=gen, dtype=F64), -1)
    ref = torch.distributions.kl_divergence(
        torch.distributions.Categorical(logits=a), torch.distributions.Categorical(logits=b))
    np.testing.assert_allclose(ppo.categorical_kl(a, b).numpy(), ref.numpy(), rtol=1e-12)
    assert ppo.categorical_kl(a, a).abs().max().item() == 0.0


def test_kl_estimators_hand_values():
    est = ppo.approx_kl(torch.log(t(0.2)), torch.log(t(0.1)))  # r = 2
    assert est.k1.item() == pytest.approx(-math.log(2), abs=1e-15)
    assert est.k2.item() == pytest.approx(0.5 * math.log(2) ** 2, abs=1e-15)
    assert est.k3.item() == pytest.approx(1 - math.log(2), abs=1e-15)


def test_k1_and_k3_are_unbiased_and_k3_is_never_negative():
    gen = torch.Generator().manual_seed(1)
    logp_old = torch.log_softmax(torch.randn(6, generator=gen, dtype=F64), 0)
    logp = torch.log_softmax(torch.randn(6, generator=gen, dtype=F64), 0)
    est = ppo.approx_kl(logp, logp_old)
    weights = torch.exp(logp_old)  # the exact expectation over a ~ pi_old
    exact = ppo.categorical_kl(logp_old, logp).item()
    assert (weights * est.k1).sum().item() == pytest.approx(exact, rel=1e-12)
    assert (weights * est.k3).sum().item() == pytest.approx(exact, rel=1e-12)
    assert (weights * est.k2).sum().item() != pytest.approx(exact, rel=1e-3)
    assert (est.k3 >= 0).all() and (est.k1 < 0).any()


@pytest.mark.parametrize(
    ("kl", "beta"),
    [(0.001, 0.5), (0.01 / 1.5 - 1e-9, 0.5), (0.01 / 1.5, 1.0), (0.01, 1.0), (0.015, 1.0),
     (0.015 + 1e-9, 2.0), (0.5, 2.0), (0.0, 0.5)],
)
def test_adaptive_beta_rule(kl, beta):
    assert ppo.adapt_beta(1.0, kl, target=0.01) == beta


def test_clip_fraction():
    assert ppo.clip_fraction(t(0.5, 0.8, 1.0, 1.2, 1.21), epsilon=0.2) == 0.4


# ----------------------------------------------------------------- the value loss
def test_clipped_value_loss_hand_values():
    v_old, ret = t(0.0, 0.0, 0.0), t(1.0, 1.0, 1.0)
    v = t(0.1, 0.5, -1.0)
    # 0.1: inside, 0.5*(0.9)^2; 0.5: clipped at 0.2 is larger, 0.5*(0.8)^2; -1: unclipped, 0.5*4
    expected = (0.5 * 0.81 + 0.5 * 0.64 + 2.0) / 3
    got = ppo.clipped_value_loss(v, v_old, ret, epsilon=0.2).item()
    assert got == pytest.approx(expected, abs=1e-15)
    small = t(0.05, -0.1, 0.2)
    assert ppo.clipped_value_loss(small, v_old, ret, epsilon=0.2).item() == pytest.approx(
        0.5 * ((small - ret) ** 2).mean().item(), abs=1e-15)


def test_value_loss_slice_flat_where_the_value_moved_past_the_range_toward_the_target():
    grid = np.linspace(-1.0, 3.0, 401)
    s = ppo.value_loss_slice(grid, value_old=0.0, target=1.0, epsilon=0.2)
    flat = (grid > 0.2) & (grid < 1.8)
    assert (s.grad[flat] == 0).all() and (s.grad[~flat] != 0).all()
    np.testing.assert_array_equal(s.loss, np.maximum(s.unclipped, s.clipped))
    per_point = [ppo.clipped_value_loss(t(v), t(0.0), t(1.0), epsilon=0.2).item() for v in grid]
    np.testing.assert_allclose(s.loss, per_point, rtol=0, atol=1e-15)


# ----------------------------------------------------------------- bad input
@pytest.mark.parametrize("eps", [0.0, 1.0, -0.1, 1.5, float("nan"), float("inf"), "wide"])
def test_invalid_epsilon_is_a_clear_message(eps):
    with pytest.raises(ValueError, match="clip range ε must"):
        ppo.clipped_surrogate(t(1.0), t(1.0), epsilon=eps)
    with pytest.raises(ValueError, match="clip range ε must"):
        ppo.clip_surface([1.0], [1.0], epsilon=eps)
    with pytest.raises(ValueError, match="clip range ε must"):
        ppo.explain_point(1.0, 1.0, epsilon=eps)


@pytest.mark.parametrize("bad", [0.0, -0.5])
def test_non_positive_ratios_are_a_clear_message(bad):
    with pytest.raises(ValueError, match="must be positive"):
        ppo.clipped_surrogate(t(1.0, bad), t(1.0, 1.0), epsilon=0.2)
    with pytest.raises(ValueError, match="must be positive"):
        ppo.surrogate_grad(np.array([bad]), np.array([1.0]), epsilon=0.2)
    with pytest.raises(ValueError, match="must be positive"):
        ppo.clip_surface([bad, 1.0], [1.0], epsilon=0.2)
    with pytest.raises(ValueError, match="must be positive"):
        ppo.explain_point(bad, 1.0, epsilon=0.2)


def test_other_bad_inputs():
    with pytest.raises(ValueError, match="same shape"):
        ppo.clipped_surrogate(t(1.0, 1.0), t(1.0), epsilon=0.2)
    with pytest.raises(ValueError, match="finite"):
        ppo.clipped_surrogate(t(1.0), t(float("nan")), epsilon=0.2)
    with pytest.raises(ValueError, match="finite"):
        ppo.clipped_surrogate(t(float("inf")), t(1.0), epsilon=0.2)
    with pytest.raises(ValueError, match="same shape"):
        ppo.ppo_clip_loss(t(0.0, 0.0), t(0.0), t(1.0, 1.0), epsilon=0.2)
    with pytest.raises(ValueError, match="empty"):
        ppo.ppo_clip_loss(t(), t(), t(), epsilon=0.2)
    with pytest.raises(ValueError, match="β"):
        ppo.kl_penalty_loss(t(0.0), t(0.0), t(1.0), t(0.0), beta=-1.0)
    with pytest.raises(ValueError, match="value clip range"):
        ppo.clipped_value_loss(t(0.0), t(0.0), t(1.0), epsilon=0.0)
    with pytest.raises(ValueError, match="KL target"):
        ppo.adapt_beta(1.0, 0.01, target=0.0)
    with pytest.raises(ValueError, match="1-D"):
        ppo.clip_surface([[1.0]], [1.0], epsilon=0.2)
    with pytest.raises(ValueError, match="at least 2"):
        ppo.ratio_grid(1)


# ----------------------------------------------------------------- the live toy
def reference_toy(true_rewards, *, batch_size, epochs, minibatch_size, lr, epsilon, beta,
                  adaptive_beta, kl_target, normalize_advantages, reward_noise, optimizer, seed):
    """Plain loops: one method at a time, its own parameters and optimiser, same random draws."""
    gen = torch.Generator().manual_seed(seed)
    mu = torch.tensor(true_rewards, dtype=F64)
    k = mu.numel()
    logp_old_all = torch.full((k,), -math.log(k), dtype=F64)
    probs_old = torch.exp(logp_old_all)
    actions = torch.multinomial(probs_old, batch_size, replacement=True, generator=gen)
    rewards = mu[actions] + reward_noise * torch.randn(batch_size, generator=gen, dtype=F64)
    adv = rewards - probs_old @ mu
    if normalize_advantages:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    orders = [torch.randperm(batch_size, generator=gen) for _ in range(epochs)]
    out = {}
    for method in ppo.METHODS:
        theta = torch.zeros(k, dtype=F64, requires_grad=True)
        opt = (torch.optim.Adam if optimizer == "adam" else torch.optim.SGD)([theta], lr=lr)
        b = beta
        probs = [torch.softmax(theta, 0).detach().clone()]
        for e in range(epochs):
            for start in range(0, batch_size, minibatch_size):
                idx = orders[e][start:start + minibatch_size]
                logp_all = torch.log_softmax(theta, 0)
                logp, lo, a = logp_all[actions[idx]], logp_old_all[actions[idx]], adv[idx]
                if method == "clipped":
                    loss = ppo.ppo_clip_loss(logp, lo, a, epsilon=epsilon)
                elif method == "unclipped":
                    loss = ppo.surrogate_loss(logp, lo, a)
                else:
                    kl = ppo.categorical_kl(logp_old_all, logp_all).expand(idx.numel())
                    loss = ppo.kl_penalty_loss(logp, lo, a, kl, beta=b)
                opt.zero_grad()
                loss.backward()
                opt.step()
            probs.append(torch.softmax(theta, 0).detach().clone())
            if method == "kl_penalty" and adaptive_beta:
                kl_now = ppo.categorical_kl(logp_old_all, torch.log(probs[-1])).item()
                b = ppo.adapt_beta(b, kl_now, target=kl_target)
        out[method] = torch.stack(probs).numpy()
    return actions.numpy(), adv.numpy(), out


TOY = dict(batch_size=48, epochs=6, minibatch_size=10, lr=0.05, epsilon=0.2, beta=1.0,
           adaptive_beta=True, kl_target=0.01, normalize_advantages=True, reward_noise=1.0,
           optimizer="adam", seed=7)


@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
@pytest.mark.parametrize("normalize", [True, False])
def test_vectorised_toy_equals_plain_loops(optimizer, normalize):
    kw = dict(TOY, optimizer=optimizer, normalize_advantages=normalize,
              lr=0.05 if optimizer == "adam" else 0.8)
    res = ppo.run_toy(MU, **kw)
    actions, adv, probs = reference_toy(MU, **kw)
    np.testing.assert_array_equal(res.actions, actions)
    np.testing.assert_array_equal(res.advantages, adv)
    for method in ppo.METHODS:
        np.testing.assert_allclose(res.run(method).probs, probs[method], rtol=1e-12, atol=1e-15)


def test_toy_is_deterministic_and_seed_dependent():
    a, b = ppo.run_toy(MU, **TOY), ppo.run_toy(MU, **TOY)
    c = ppo.run_toy(MU, **dict(TOY, seed=8))
    np.testing.assert_array_equal(a.actions, b.actions)
    np.testing.assert_array_equal(a.rewards, b.rewards)
    for ra, rb in zip(a.runs, b.runs, strict=True):
        np.testing.assert_array_equal(ra.ratios, rb.ratios)
        np.testing.assert_array_equal(ra.probs, rb.probs)
    assert not np.array_equal(a.rewards, c.rewards)
    assert not np.array_equal(a.run("clipped").probs, c.run("clipped").probs)


def test_toy_does_not_touch_global_torch_state():
    threads = torch.get_num_threads()
    state = torch.get_rng_state()
    ppo.run_toy(MU, **TOY)
    assert torch.equal(state, torch.get_rng_state())
    assert torch.get_num_threads() == threads


def test_toy_bookkeeping():
    res = ppo.run_toy(MU, **TOY)
    n, e1 = TOY["batch_size"], TOY["epochs"] + 1
    mu = np.array(MU)
    assert res.steps_per_epoch == 5  # 48 = 4 x 10 + 8
    np.testing.assert_allclose(res.advantages.mean(), 0.0, atol=1e-12)
    np.testing.assert_allclose(res.advantages.std(ddof=1), 1.0, rtol=1e-6)
    assert res.action_counts.sum() == n
    for run in res.runs:
        assert run.ratios.shape == (e1, n) and run.probs.shape == (e1, len(MU))
        np.testing.assert_array_equal(run.ratios[0], 1.0)
        assert run.kl_exact[0] == 0 and run.clip_fraction[0] == 0 and run.kl_k3[0] == 0
        np.testing.assert_allclose(run.probs.sum(axis=1), 1.0, rtol=1e-12)
        np.testing.assert_allclose(run.ratios, run.probs[:, res.actions] / 0.2, rtol=1e-12)
        np.testing.assert_allclose(run.expected_return, run.probs @ mu, rtol=1e-12, atol=1e-15)
        assert (run.kl_k3 >= 0).all() and (run.kl_exact >= 0).all()
        assert (run.flat_fraction <= run.clip_fraction).all()
        outside = (run.ratios < 0.8) | (run.ratios > 1.2)
        np.testing.assert_allclose(run.clip_fraction, outside.mean(axis=1))
        log_r = np.log(run.ratios)
        np.testing.assert_allclose(run.kl_k1, (-log_r).mean(axis=1), atol=1e-14)
        np.testing.assert_allclose(run.kl_k3, (run.ratios - 1 - log_r).mean(axis=1), atol=1e-14)
        with pytest.raises(ValueError):
            run.ratios[0, 0] = 2.0
    table = res.epoch_table()
    assert len(table["method"]) == 3 * e1 and len(res.sample_table()["ratio"]) == 3 * e1 * n


def test_unnormalised_advantages_are_reward_minus_old_value():
    res = ppo.run_toy(MU, **dict(TOY, normalize_advantages=False))
    np.testing.assert_allclose(res.advantages, res.rewards - np.mean(MU), atol=1e-15)


def test_adaptive_beta_follows_the_rule_on_the_recorded_kl():
    run = ppo.run_toy(MU, **TOY).run("kl_penalty")
    assert run.beta[0] == 1.0
    for e in range(1, TOY["epochs"] + 1):
        assert run.beta[e] == ppo.adapt_beta(run.beta[e - 1], run.kl_exact[e], target=0.01)
    assert len(set(run.beta)) > 1
    fixed = ppo.run_toy(MU, **dict(TOY, adaptive_beta=False)).run("kl_penalty")
    np.testing.assert_array_equal(fixed.beta, 1.0)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_clipped_run_freezes_past_the_edge_while_unclipped_runs_away(seed):
    # Noise-free rewards: every sample of an action has the sign of mu(a) - J(pi_old), and
    # plain SGD moves only where the gradient is non-zero.
    eps = 0.2
    res = ppo.run_toy(MU, epochs=20, lr=1.0, optimizer="sgd", epsilon=eps, seed=seed,
                      reward_noise=0.0, normalize_advantages=False)
    clipped = res.run("clipped").probs / res.old_probs  # [E+1, K] each action's ratio
    unclipped = res.run("unclipped").probs / res.old_probs
    good, bad = np.array(MU) > 0, np.array(MU) < 0
    # Clipped: every sample is in a flat region, so the last epochs change nothing at all.
    assert res.run("clipped").flat_fraction[-1] == np.mean(res.actions != 2)
    np.testing.assert_array_equal(clipped[-1], clipped[-6])
    assert (clipped[-1, good] > 1 + eps).all() and (clipped[-1, good] < 1 + 3 * eps).all()
    assert (clipped[-1, bad] < 1 - eps).all()
    # Unclipped: the best action's ratio keeps rising epoch after epoch toward its ceiling
    # 1 / pi_old = 5 (all probability on one action).
    assert (np.diff(unclipped[:, 0]) > 0).all() and unclipped[-1, 0] > 4.5


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize(("optimizer", "lr"), [("sgd", 0.5), ("adam", 0.05)])
def test_clipped_ratios_level_off_while_unclipped_keep_going(seed, optimizer, lr):
    eps, epochs = 0.2, 20
    res = ppo.run_toy(MU, epochs=epochs, lr=lr, optimizer=optimizer, epsilon=eps, seed=seed)
    good = res.action_advantage > 0  # actions whose samples push their ratio up overall
    top = np.argmax(res.action_advantage)
    clipped = res.run("clipped").probs / res.old_probs
    unclipped = res.run("unclipped").probs / res.old_probs
    # Clipped: the good actions' ratios level off a little past 1 + eps. (They can pass it:
    # the bad actions are pushed down until 1 - eps and the freed probability flows to the
    # good ones; Adam's momentum carries on for a few steps after the gradient vanishes.)
    assert (clipped[-1, good] > 1).all() and clipped[epochs // 2 :, good].max() < 1 + 4 * eps
    # Unclipped: the top action's ratio keeps rising, far past the edge.
    assert (np.diff(unclipped[:, top]) > 0).all() and unclipped[-1, top] > 4.0


@pytest.mark.parametrize("method", ["clipped", "unclipped", "kl_penalty"])
def test_kl_grows_with_the_learning_rate(method):
    kls = [ppo.run_toy(MU, lr=lr, adaptive_beta=False, seed=0).run(method).kl_exact[-1]
           for lr in (0.002, 0.01, 0.05, 0.2)]
    assert all(a < b for a, b in zip(kls, kls[1:], strict=False)), kls


def test_clipped_run_equals_unclipped_while_ratios_stay_inside():
    res = ppo.run_toy(MU, lr=1e-3, epochs=3, optimizer="sgd", epsilon=0.5)
    assert res.run("clipped").clip_fraction.max() == 0
    np.testing.assert_array_equal(res.run("clipped").probs, res.run("unclipped").probs)


def test_tiny_kl_penalty_matches_unclipped_and_huge_one_stays_put():
    tiny = ppo.run_toy(MU, beta=1e-12, adaptive_beta=False)
    np.testing.assert_allclose(tiny.run("kl_penalty").probs, tiny.run("unclipped").probs,
                               atol=1e-9)
    huge = ppo.run_toy(MU, beta=100.0, adaptive_beta=False, optimizer="sgd", lr=0.005)
    kl = huge.run("kl_penalty").kl_exact
    assert kl.max() < 1e-4 < huge.run("unclipped").kl_exact.max()


def test_a_diverging_run_stays_finite():
    res = ppo.run_toy(MU, batch_size=256, minibatch_size=4, epochs=50, lr=5.0, beta=10.0,
                      adaptive_beta=False, optimizer="sgd", reward_noise=3.0)
    for run in res.runs:
        for name in ("ratios", "probs", "clip_fraction", "kl_k1", "kl_k3", "kl_exact",
                     "expected_return", "objective"):
            assert np.isfinite(getattr(run, name)).all(), (run.method, name)
    assert res.run("unclipped").kl_exact[-1] > 1.0  # it did run away


def test_overflowing_training_is_a_clear_message():
    with pytest.raises(ValueError, match="training diverged"):
        ppo.run_toy([1.5e308, -1.5e308], optimizer="sgd", lr=5.0, normalize_advantages=False)


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (dict(true_rewards=[1.0]), "between 2 and 16"),
        (dict(true_rewards=[1.0, float("nan")]), "finite"),
        (dict(batch_size=1), "at least 2 samples"),
        (dict(epochs=0), "at least 1 epoch"),
        (dict(minibatch_size=100), "minibatch size"),
        (dict(minibatch_size=0), "minibatch size"),
        (dict(lr=0.0), "learning rate"),
        (dict(beta=0.0), "β"),
        (dict(kl_target=-1.0), "KL target"),
        (dict(reward_noise=-1.0), "reward noise"),
        (dict(optimizer="rmsprop"), "optimiser"),
        (dict(epsilon=1.0), "clip range"),
    ],
)
def test_toy_rejects_bad_settings(kw, message):
    kw = dict(kw)
    rewards = kw.pop("true_rewards", MU)
    with pytest.raises(ValueError, match=message):
        ppo.run_toy(rewards, **kw)


# ----------------------------------------------------------------- figures
def test_figures_mark_the_flat_regions_and_the_edges():
    from rlviz.figures import ppo as figs

    s = ppo.clip_surface(ppo.ratio_grid(), ppo.advantage_grid(), epsilon=0.25)
    fig = figs.surface_heatmap(s)
    edges = sorted(sh.x0 for sh in fig.layout.shapes if sh.type == "line")
    assert edges == [0.75, 1.25]
    hatched = [t for t in fig.data if t.type == "scatter" and t.fill == "toself"]
    assert [(min(t.x), max(t.x), min(t.y), max(t.y)) for t in hatched] == [
        (1.25, 2.0, 0.0, 1.0), (0.01, 0.75, -1.0, 0.0)]
    pair = ppo.clip_surface(ppo.ratio_grid(400, low=0.005), [1.0, -1.0], epsilon=0.25)
    flat = [t for t in figs.slices(pair).data if t.name == "flat: ∂L/∂r = 0"]
    assert min(flat[0].x) > 1.25 and max(flat[1].x) < 0.75
    assert all((np.asarray(t.y) == t.y[0]).all() for t in flat)  # flat means constant


def test_batch_figure_survives_ratios_that_underflow():
    from rlviz.figures import ppo as figs

    res = ppo.run_toy(MU, lr=5.0, optimizer="sgd", epochs=50, minibatch_size=4)
    assert res.run("unclipped").ratios.min() < 1e-3
    fig = figs.batch_on_surface(res, 50)
    low, high = fig.layout.xaxis.range
    assert np.isfinite([low, high]).all() and low == pytest.approx(-3.0)
