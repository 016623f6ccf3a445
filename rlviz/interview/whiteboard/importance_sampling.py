"""Off-policy evaluation at a whiteboard: four estimators from per-step ratios, in plain numpy.

``rho[i, t] = pi(a_t | s_t) / b(a_t | s_t)`` and ``r[i, t]`` for ``n`` episodes of ``T`` steps;
``q[i, t]`` is a critic's ``Q(s_t, a_t)`` and ``v[i, t]`` its ``sum_a pi(a | s_t) Q(s_t, a)``.
"""

import numpy as np


def off_policy_estimates(rho, r, q, v, gamma):
    """Ordinary, weighted, per-decision and doubly robust estimates of v_pi(s_0)."""
    disc = gamma ** np.arange(r.shape[1])
    w_t = np.cumprod(rho, axis=1)                  # rho_{0:t}
    w_prev = np.hstack([np.ones((len(r), 1)), w_t[:, :-1]])  # rho_{0:t-1}
    w, g = w_t[:, -1], (disc * r).sum(axis=1)      # episode weight and return
    ordinary = np.mean(w * g)
    weighted = np.sum(w * g) / np.sum(w) if np.sum(w) > 0 else 0.0
    per_decision = np.mean((disc * w_t * r).sum(axis=1))
    doubly_robust = np.mean((disc * (w_t * (r - q) + w_prev * v)).sum(axis=1))
    return ordinary, weighted, per_decision, doubly_robust


def live_check(settings):
    """The four estimates on a fixed-seed data set of the page's small MDP (δ, T, n, γ)."""
    from rlviz import off_policy as op
    from rlviz.interview.whiteboard import LiveCheck, setting

    delta, horizon = float(setting(settings, "delta", 0.5)), int(setting(settings, "horizon", 5))
    n, gamma = min(int(setting(settings, "n", 100)), 200), float(setting(settings, "pd_gamma", 1.0))
    rng = np.random.default_rng(0)
    right = rng.random((n, horizon)) < 0.5  # b: left or right with 1/2 each
    rho = np.where(right, 1 + delta, 1 - delta)  # π(right) = (1 + δ)/2
    r = right + 0.5 * rng.standard_normal((n, horizon))
    q, v = 0.5 + 0.1 * rng.standard_normal((2, n, horizon))  # a rough critic
    weights = op.importance_ratio(rho, np.ones_like(rho))
    returns = np.sum(gamma ** np.arange(horizon) * r, axis=-1)
    lib = (op.ordinary_is(weights, returns), op.weighted_is(weights, returns),
           op.per_decision_is(rho, r, gamma), op.doubly_robust(rho, r, q, v, gamma))
    return LiveCheck(f"ordinary, weighted, per-decision and doubly robust IS on {n} episodes of "
                     f"{horizon} steps (δ = {delta:g}, γ = {gamma:g})",
                     np.array(off_policy_estimates(rho, r, q, v, gamma)), np.array(lib), tol=1e-9)
