"""rlviz.llm: advantages, estimators, the token mask, the exact metrics, the trainers."""

import itertools
import math

import numpy as np
import pytest
import torch

from rlviz import llm, ppo
from rlviz.errors import InputError

T = torch.float64


def tensor(x):
    return torch.tensor(x, dtype=T)


# --------------------------------------------------------------------------- advantages
def test_the_whiteboard_group_by_hand():
    w = llm.worked_group([1, 0, 0, 1])
    s = math.sqrt(1 / 3)  # sample std of [1, 0, 0, 1]
    np.testing.assert_allclose(w.advantages["grpo"], np.array([1, -1, -1, 1]) * 0.5 / (s + 1e-4))
    np.testing.assert_allclose(w.advantages["dr_grpo"], [0.5, -0.5, -0.5, 0.5])
    np.testing.assert_allclose(w.advantages["rloo"], [2 / 3, -2 / 3, -2 / 3, 2 / 3])
    np.testing.assert_allclose(w.advantages["reinforce"], [1, 0, 0, 1])
    assert w.mean == 0.5 and w.std == pytest.approx(s) and not w.all_equal


@pytest.mark.parametrize("value", [0.0, 1.0, -3.5])
def test_an_all_equal_group_gets_zero_advantage_and_no_nan(value):
    w = llm.worked_group([value] * 6)
    assert w.all_equal
    for name in ("grpo", "dr_grpo", "rloo"):
        assert np.all(w.advantages[name] == 0.0), name
    assert np.isfinite(w.advantages["grpo"]).all()


def test_identities_between_the_group_advantages():
    r = torch.from_numpy(np.random.default_rng(0).normal(size=(3, 4, 7)))
    g = r.shape[-1]
    grpo, rloo, dr = llm.grpo_advantages(r), llm.rloo_advantages(r), llm.dr_grpo_advantages(r)
    torch.testing.assert_close(grpo.mean(-1), torch.zeros(3, 4, dtype=T), atol=1e-12, rtol=0)
    torch.testing.assert_close(rloo.sum(-1), torch.zeros(3, 4, dtype=T), atol=1e-12, rtol=0)
    torch.testing.assert_close(rloo, g / (g - 1) * dr)
    torch.testing.assert_close(grpo * (r.std(-1, keepdim=True) + llm.GRPO_EPS), dr)
    torch.testing.assert_close(llm.reinforce_advantages(r), r)


def test_rloo_is_the_reward_minus_the_mean_of_the_others():
    r = [3.0, 1.0, 4.0, 1.0, 5.0]
    loop = [r[i] - np.mean([r[j] for j in range(5) if j != i]) for i in range(5)]
    np.testing.assert_allclose(llm.rloo_advantages(r).numpy(), loop)


def test_leading_axes_are_independent_groups():
    r = torch.from_numpy(np.random.default_rng(1).integers(0, 2, size=(5, 4, 8)).astype(float))
    batched = llm.grpo_advantages(r)
    for i, j in itertools.product(range(5), range(4)):
        torch.testing.assert_close(batched[i, j], llm.grpo_advantages(r[i, j]))


@pytest.mark.parametrize("bad", [[1.0], [], [1.0, float("nan")], [0.0, float("inf")]])
def test_bad_groups_are_the_users_mistake(bad):
    with pytest.raises(InputError):
        llm.grpo_advantages(bad)


@pytest.mark.parametrize(
    ("text", "values"),
    [("1, 0, 0, 1", (1, 0, 0, 1)), ("[1 0 0 1]", (1, 0, 0, 1)), ("0.5,-2", (0.5, -2)),
     (" 1 ,, 2 ", (1, 2))],
)
def test_parse_rewards(text, values):
    assert llm.parse_rewards(text) == values


@pytest.mark.parametrize(("text", "message"), [
    ("1", "at least two"), ("1, x", "reward 2 of the group is not a number"),
    ("1, nan", "reward 2"), ("1, 1e9", "reward 2"), (", ".join(["1"] * 65), "at most 64"),
])
def test_bad_reward_text_says_what_is_wrong(text, message):
    with pytest.raises(InputError, match=message):
        llm.parse_rewards(text)


# --------------------------------------------------------------------------- KL estimators
def test_the_estimators_by_hand_and_as_ppo_defines_them():
    logp, logp_ref = tensor([-0.5, -2.0, -1.0]), tensor([-1.0, -1.0, -1.0])
    k1, k2, k3 = llm.kl_estimates(logp, logp_ref)
    log_rho = logp_ref - logp
    torch.testing.assert_close(k1, -log_rho)
    torch.testing.assert_close(k2, 0.5 * log_rho**2)
    torch.testing.assert_close(k3, torch.exp(log_rho) - 1 - log_rho)
    same = ppo.approx_kl(logp_ref, logp)
    for a, b in zip((k1, k2, k3), same, strict=True):
        torch.testing.assert_close(a, b)


def test_k1_and_k3_average_to_the_exact_kl_and_k3_is_never_negative():
    rng = np.random.default_rng(2)
    p = rng.dirichlet(np.ones(6))
    q = rng.dirichlet(np.ones(6))
    kl = float(np.sum(p * np.log(p / q)))
    k1, k2, k3 = llm.kl_estimates(torch.from_numpy(np.log(p)), torch.from_numpy(np.log(q)))
    assert float(torch.from_numpy(p) @ k1) == pytest.approx(kl)
    assert float(torch.from_numpy(p) @ k3) == pytest.approx(kl)
    assert float(torch.from_numpy(p) @ k2) != pytest.approx(kl)
    assert bool((k3 >= 0).all()) and bool((k2 >= 0).all())


def test_k1_in_the_loss_has_zero_expected_gradient_and_k3_pulls_back():
    """The expected gradient of E_{x~pi}[k(x)] treated as a loss on pi's logits."""
    theta = torch.tensor([0.5, -0.3, 0.2, 1.0], dtype=T, requires_grad=True)
    ref = torch.log(tensor([0.4, 0.3, 0.2, 0.1]))
    logp = theta - torch.logsumexp(theta, 0)
    probs = logp.exp().detach()  # the sampler: its probabilities are constants
    grads = {}
    for name in ("k1", "k3"):
        est = getattr(llm.kl_estimates(logp, ref), name)
        (grads[name],) = torch.autograd.grad(probs @ est, theta, retain_graph=True)
    torch.testing.assert_close(grads["k1"], torch.zeros(4, dtype=T), atol=1e-12, rtol=0)
    assert float(grads["k3"].norm()) > 0.1
    # k3's expected gradient is the gradient of KL(pi_ref || pi) (Tang & Munos, 2025)
    reverse = (ref.exp() * (ref - (theta - torch.logsumexp(theta, 0)))).sum()
    (want,) = torch.autograd.grad(reverse, theta)
    torch.testing.assert_close(grads["k3"], want)


# --------------------------------------------------------------------------- the loss
MASK = torch.tensor([[1, 1, 1, 0], [1, 0, 0, 0], [1, 1, 0, 0]], dtype=torch.bool)


def test_token_weights_by_hand():
    n = MASK.to(T)
    torch.testing.assert_close(llm.token_weights(MASK, "sequence_sum"), n / 3)
    torch.testing.assert_close(llm.token_weights(MASK, "sequence_mean"),
                               n / (3 * tensor([[3.0], [1.0], [2.0]])))
    torch.testing.assert_close(llm.token_weights(MASK, "constant", max_tokens=5), n / 15)
    torch.testing.assert_close(llm.token_weights(MASK, "token_mean"), n / 6)
    assert float(llm.token_weights(MASK, "token_mean").sum()) == pytest.approx(1.0)
    for how in llm.AGGREGATIONS.values():
        assert float(llm.token_weights(MASK, how, max_tokens=4)[~MASK].abs().sum()) == 0.0


def test_the_small_case_masked_per_token_loss_is_minus_one():
    zeros = torch.zeros(MASK.shape, dtype=T)
    loss = llm.policy_loss(zeros, zeros, torch.ones(MASK.shape, dtype=T),
                           llm.token_weights(MASK, "token_mean"), epsilon=0.2)
    assert float(loss) == pytest.approx(-1.0, abs=1e-15)


def test_policy_loss_is_the_weighted_clipped_surrogate_and_its_first_gradient_is_the_pg():
    rng = np.random.default_rng(3)
    logp = torch.from_numpy(np.log(rng.random((3, 4)))).requires_grad_(True)
    old = logp.detach() + torch.from_numpy(rng.normal(0, 0.3, (3, 4)))
    adv = torch.from_numpy(rng.normal(size=(3, 4)))
    w = llm.token_weights(MASK, "sequence_mean")
    loss = llm.policy_loss(logp, old, adv, w, epsilon=0.2)
    want = -(w * ppo.clipped_surrogate(torch.exp(logp - old), adv, epsilon=0.2)).sum()
    torch.testing.assert_close(loss, want)
    (grad,) = torch.autograd.grad(llm.policy_loss(logp, logp.detach(), adv, w, epsilon=0.2),
                                  logp)
    torch.testing.assert_close(grad, -w * adv)  # at rho = 1: -w A d(log pi)


# --------------------------------------------------------------------------- the toy model
def loop_probability(tokens, first, probs):
    p, prev = 1.0, first
    for tok in tokens:
        p *= probs[prev, tok]
        if tok == llm.EOS:
            break
        prev = tok
    return p


@pytest.mark.parametrize("max_len", [1, 2, 3, 5])
def test_enumeration_is_complete_and_probabilities_sum_to_one(max_len):
    resp = llm.enumerate_responses(max_len)
    assert len(resp.tokens) == (4 ** (max_len + 1) - 1) // 3
    assert len(set(resp.texts)) == len(resp.texts)
    assert (resp.lengths[~resp.ended] == max_len).all()
    total = sum(loop_probability(row, 2, llm.REF_PROBS) for row in resp.tokens)
    assert total == pytest.approx(1.0, abs=1e-12)


def test_the_reward_by_hand():
    task = llm.Task(length_penalty=0.25, offset=0.5)
    rows = {"ab.": 1.0, "cab.": 1.0, "ba.": 0.0, "aabab": 0.0, ".": 0.0, "dcab.": 1.0}
    tokens = torch.tensor([[llm.VOCAB.index(c) for c in text.ljust(5, ".")] for text in rows])
    lengths = torch.tensor([len(t) for t in rows], dtype=T)
    want = tensor(list(rows.values())) - 0.25 * lengths / 5 + 0.5
    torch.testing.assert_close(task.reward(tokens), want)


def test_exact_metrics_equal_a_loop_over_every_response():
    rng = np.random.default_rng(4)
    task = llm.Task(length_penalty=0.1)
    theta = rng.normal(size=(2, 5, 5))
    got = llm.exact_metrics(theta, task)
    resp = llm.enumerate_responses(task.max_len)
    rewards = task.reward(torch.from_numpy(resp.tokens.copy())).numpy()
    for r in range(2):
        probs = np.exp(theta[r] - np.logaddexp.reduce(theta[r], axis=1, keepdims=True))
        for p, prompt in enumerate(task.prompts):
            first = llm.VOCAB.index(prompt[1])
            pi = np.array([loop_probability(row, first, probs) for row in resp.tokens])
            ref = np.array([loop_probability(row, first, llm.REF_PROBS) for row in resp.tokens])
            assert got["reward_by_prompt"][r, p] == pytest.approx(pi @ rewards)
            assert got["kl_by_prompt"][r, p] == pytest.approx(pi @ np.log(pi / ref))
            assert got["total"][r, p] == pytest.approx(1.0)
    assert llm.exact_metrics(np.log(llm.REF_PROBS)[None], task)["kl"][0] == pytest.approx(
        0.0, abs=1e-12)


def loop_sample(logits, first, u):
    """One response at a time: softmax of the previous token's row, inverted at u."""
    probs = torch.softmax(logits, -1).numpy()
    out, prev = [], first
    for ut in u:
        tok = int(np.searchsorted(np.cumsum(probs[prev])[:-1], ut, side="right"))
        out.append(tok)
        if tok == llm.EOS:
            break
        prev = tok
    return out + [llm.EOS] * (len(u) - len(out))


def test_the_sampler_equals_a_plain_loop():
    rng = np.random.default_rng(5)
    logits = torch.from_numpy(rng.normal(size=(3, 5, 5)))
    first = torch.tensor([2, 3])
    u = torch.from_numpy(rng.random((3, 2, 6, 5)))
    got = llm.sample_responses(logits, first, u).numpy()
    for r, p, g in itertools.product(range(3), range(2), range(6)):
        assert got[r, p, g].tolist() == loop_sample(logits[r], int(first[p]), u[r, p, g].numpy())


def test_sampled_responses_follow_the_exact_probabilities():
    rng = np.random.default_rng(6)
    n = 40_000
    u = torch.from_numpy(rng.random((1, 1, n, 5)))
    tokens = llm.sample_responses(torch.from_numpy(llm.Task().ref_logits)[None],
                                  torch.tensor([2]), u)[0, 0].numpy()
    resp = llm.enumerate_responses(5)
    index = {tuple(row): i for i, row in enumerate(resp.tokens)}
    counts = np.bincount([index[tuple(row)] for row in tokens], minlength=len(resp.tokens))
    exact = np.array([loop_probability(row, 2, llm.REF_PROBS) for row in resp.tokens])
    top = np.argsort(exact)[-20:]  # the likeliest responses, each seen often
    se = np.sqrt(exact[top] * (1 - exact[top]) / n)
    assert np.all(np.abs(counts[top] / n - exact[top]) < 5 * se)


# --------------------------------------------------------------------------- trainers
SHORT = dict(steps=12, seeds=2, seed=3)


def test_same_seed_same_result_and_another_seed_differs():
    a, b = llm.compare(**SHORT), llm.compare(**SHORT)
    np.testing.assert_array_equal(a.logits, b.logits)
    c = llm.compare(**{**SHORT, "seed": 4})
    assert not np.allclose(a.reward[:, :, -1], c.reward[:, :, -1])


def test_trainers_are_paired_and_batching_changes_nothing():
    together = llm.compare(**SHORT)
    assert np.all(together.sampled_reward[:, :, 0] == together.sampled_reward[0, :, 0])
    for k, name in enumerate(together.trainers):
        alone = llm.compare([name], **SHORT)
        np.testing.assert_allclose(alone.logits[0], together.logits[k], atol=1e-12)
    first_seed = llm.compare(["grpo"], steps=12, seeds=1, seed=3)
    np.testing.assert_allclose(first_seed.logits[0, 0], together.logits[2, 0], atol=1e-12)


def test_rloo_and_dr_grpo_follow_one_path_without_kl():
    res = llm.compare(["rloo", "dr_grpo"], settings=llm.Settings(beta=0.0), steps=30, seeds=2)
    # Their gradients differ by the constant (G-1)/(G*T); Adam's normalisation removes it.
    np.testing.assert_allclose(res.logits[0], res.logits[1], atol=1e-5)


def test_the_group_trainers_ignore_a_reward_offset_but_reinforce_does_not():
    base = llm.compare(**SHORT)
    shifted = llm.compare(task=llm.Task(offset=1.0), **SHORT)
    for name in ("rloo", "grpo", "dr_grpo"):
        k = base.index(name)
        np.testing.assert_allclose(shifted.logits[k], base.logits[k], atol=1e-12)
    k = base.index("reinforce")
    assert not np.allclose(shifted.logits[k], base.logits[k])


def test_replay_reproduces_the_training_groups():
    res = llm.compare(**SHORT)
    for k, name in enumerate(res.trainers):
        for step in (0, 7):
            views = [llm.replay_group(res, name, step, p, seed_index=1)
                     for p in range(len(res.task.prompts))]
            mean = np.mean([v.rewards.mean() for v in views])
            assert mean == pytest.approx(res.sampled_reward[k, 1, step])


def test_ppo_token_advantages_with_lambda_one_are_return_minus_value():
    res = llm.compare(["ppo", "grpo"], settings=llm.Settings(lam=1.0), steps=6, seeds=1)
    view = llm.replay_group(res, "grpo", 5, 1)
    adv = view.advantages["ppo"]
    table = res.values[0, 5]
    for i in range(adv.shape[0]):
        ctx = np.concatenate([[llm.EOS], view.tokens[i, :-1]])
        v = table[np.arange(len(ctx)), ctx]
        counted = np.flatnonzero(view.counted[i])
        np.testing.assert_allclose(adv[i, counted], view.rewards[i] - v[counted], atol=1e-12)


@pytest.mark.parametrize("lam", [0.0, 0.5, 0.95, 1.0])
def test_ppo_token_gae_equals_the_returns_package(lam):
    from rlviz import returns

    rng = np.random.default_rng(4)
    n, t = 40, 7  # two prompt tokens and up to five response tokens
    length = rng.integers(1, t - 1, n)
    pos = np.arange(t)
    is_response = (pos >= 2) & (pos < 2 + length[:, None])
    last = 1 + length[:, None]
    rewards = np.where(pos == last, rng.random((n, 1)), 0.0) - 0.1 * rng.random((n, t)) * (
        pos <= last)
    values = rng.normal(size=(n, t))
    adv, target = llm._gae_advantages(torch.from_numpy(rewards), torch.from_numpy(values),
                                      torch.from_numpy(is_response), lam=lam)
    v = np.where(pos <= last, values, 0.0)
    expected = returns.gae(rewards, v, gamma=1.0, lam=lam, dones=pos == last)
    np.testing.assert_allclose(adv.numpy(), expected, atol=1e-12)
    np.testing.assert_allclose(target.numpy(), expected + v, atol=1e-12)


def test_the_kl_study_starts_at_zero_and_k3_stays_non_negative():
    res = llm.compare(["grpo"], steps=40, seeds=1, settings=llm.Settings(lr=0.05))
    study = llm.kl_study(res, "grpo", n_samples=400, checkpoints=5)
    assert study.steps.tolist() == [0, 10, 20, 30, 40]
    np.testing.assert_allclose(study.mean[:, 0], 0.0, atol=1e-15)
    assert (study.low[2] >= 0).all() and study.low[0].min() < 0
    assert np.all(np.abs(study.bias[[0, 2]]) < 5 * study.se[[0, 2]] + 1e-12)


def test_exact_reward_rises_and_grpo_keeps_wrong_responses_longest():
    res = llm.compare(steps=120, seeds=3, seed=0)
    assert (res.reward[:, :, -1] > res.reward[:, :, 0] + 0.4).all()
    wrong = res.wrong_length[:, :, -1].mean(axis=1)
    assert wrong[res.index("grpo")] > wrong[res.index("dr_grpo")] + 0.05


@pytest.mark.parametrize(("kwargs", "message"), [
    (dict(trainers=[]), "at least one trainer"),
    (dict(trainers=["grpo", "dpo"]), "unknown trainer"),
    (dict(settings=llm.Settings(group_size=1)), "2 to 64"),
    (dict(steps=0), "1 to 2000"),
    (dict(settings=llm.Settings(beta=-1.0)), "KL coefficient"),
    (dict(settings=llm.Settings(kl_place="prompt")), "KL goes in"),
])
def test_bad_settings_are_input_errors(kwargs, message):
    trainers = kwargs.pop("trainers", llm.TRAINERS)
    with pytest.raises(InputError, match=message):
        llm.compare(trainers, **kwargs)


def test_the_step_limit_keeps_the_defaults_and_shrinks_with_work():
    assert llm.max_steps(5, 5, 8, 1) >= 200
    assert llm.max_steps(5, 10, 32, 4) < llm.max_steps(5, 5, 8, 1)
    assert llm.max_steps(1, 1, 2, 1) == llm.MAX_STEPS
    assert all(llm.max_steps(5, s, g, u) % 10 == 0
               for s, g, u in itertools.product((1, 10), (2, 32), (1, 4)))
