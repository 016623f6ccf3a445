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
