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
