"""GRPO at the whiteboard: the group advantage and the clipped, KL-regularised loss, in numpy."""

import numpy as np


def grpo_advantages(rewards, eps=1e-4):
    """A_i = (r_i - mean r) / (std r + eps) within one group."""
    r = np.asarray(rewards, dtype=float)  # [G]: one prompt's group of responses
    return (r - r.mean()) / (r.std(ddof=1) + eps)  # all rewards equal -> 0, not NaN


def grpo_loss(logp, logp_old, logp_ref, rewards, mask, clip=0.2, beta=0.04):
    """GRPO's loss for one group: clipped ratio times A, minus beta k3, per-response mean."""
    adv = grpo_advantages(rewards)[:, None]  # [G, 1]: the same for every token
    ratio = np.exp(logp - logp_old)  # [G, T] per-token ratio to the sampling policy
    surr = np.minimum(ratio * adv, np.clip(ratio, 1 - clip, 1 + clip) * adv)
    log_rho = logp_ref - logp
    k3 = np.exp(log_rho) - log_rho - 1  # per-token KL(pi || pi_ref) estimate, >= 0
    per_token = (surr - beta * k3) * mask  # mask: response tokens only
    return -np.mean(per_token.sum(axis=1) / mask.sum(axis=1))  # tokens, then responses


def live_check(settings):
    """The page's worked group's advantages, and the loss of a fixed-seed group at its ε, β."""
    from rlviz import llm
    from rlviz.interview.whiteboard import LiveCheck, setting

    rewards = np.asarray(llm.parse_rewards(str(setting(settings, "rewards", "1, 0, 0, 1"))))
    eps, beta = float(setting(settings, "eps", 0.2)), float(setting(settings, "beta", 0.04))
    rng = np.random.default_rng(0)
    g, t = len(rewards), 7
    logp = np.log(rng.random((g, t)))
    old, ref = logp + 0.2 * rng.standard_normal((g, t)), np.log(rng.random((g, t)))
    mask = rng.random((g, t)) < 0.7
    mask[:, 0] = True
    board = np.append(grpo_advantages(rewards),
                      grpo_loss(logp, old, ref, rewards, mask, clip=eps, beta=beta))
    lib = np.append(llm.grpo_advantages(rewards).numpy(),
                    float(llm.grpo_loss(logp, old, ref, rewards, mask, epsilon=eps, beta=beta)))
    return LiveCheck(f"the advantages of rewards {', '.join(f'{x:g}' for x in rewards)} and "
                     f"the group's loss at ε = {eps:g}, β = {beta:g}", board, lib, tol=1e-9)
