"""Preference learning at the whiteboard: the DPO loss, the KL-regularised optimum, best-of-n."""

import numpy as np


def dpo_loss(logp_w, logp_l, ref_w, ref_l, beta):
    """−log σ(β[(log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l))])."""
    z = beta * ((logp_w - ref_w) - (logp_l - ref_l))
    return np.logaddexp(0.0, -z)  # −log σ(z) = log(1 + e^−z), no overflow


def optimal_policy(pi_ref, r, beta):
    """argmax_π E_π[r] − β KL(π‖π_ref) = π_ref · exp(r/β) / Z."""
    w = pi_ref * np.exp((r - r.max()) / beta)  # subtract the max: exp never overflows
    return w / w.sum()


def best_of_n(pi_ref, r, n):
    """P(best of n draws from π_ref is y) = F(y)ⁿ − F⁻(y)ⁿ (distinct rewards)."""
    order = np.argsort(r)
    upper = np.cumsum(pi_ref[order])  # F: mass at or below each reward
    p = np.empty_like(pi_ref)
    p[order] = upper**n - (upper - pi_ref[order]) ** n
    return p
