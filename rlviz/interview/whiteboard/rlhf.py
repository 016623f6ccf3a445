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


def live_check(settings):
    """The KL-optimal policy at the page's β, best-of-n at its n, and DPO's loss at its β."""
    from rlviz import preferences as pref
    from rlviz.interview.whiteboard import LiveCheck, setting

    beta, n = float(setting(settings, "beta", 0.2)), int(setting(settings, "n", 16))
    k, dpo_beta = int(setting(settings, "responses", 16)), float(setting(settings, "dpo_beta", 0.1))
    rng = np.random.default_rng(0)
    pi_ref, r = rng.dirichlet(np.ones(k)), rng.normal(size=k)
    logps = rng.normal(size=(4, 8)) * 2
    board = np.concatenate([optimal_policy(pi_ref, r, beta), best_of_n(pi_ref, r, n),
                            dpo_loss(*logps, dpo_beta)])
    lib = np.concatenate([np.exp(pref.kl_optimal_policy(np.log(pi_ref), r, beta)),
                          pref.best_of_n(pi_ref, r, n), pref.dpo_loss(*logps, beta=dpo_beta)])
    return LiveCheck(f"π* at β = {beta:g} and best-of-{n} over {k} responses, and 8 DPO losses "
                     f"at β = {dpo_beta:g}", board, lib, tol=1e-12)
