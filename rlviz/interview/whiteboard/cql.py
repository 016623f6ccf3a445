"""CQL at a whiteboard: the fitted-Q loss plus the conservative gap, on a Q-table."""

import numpy as np


def logsumexp(x, axis=-1):
    """The log-sum-exp of x along an axis, the max subtracted first so nothing overflows."""
    m = x.max(axis=axis, keepdims=True)
    return (m + np.log(np.exp(x - m).sum(axis=axis, keepdims=True))).squeeze(axis)


def cql_loss(Q, s, a, r, s_next, done, gamma, alpha):
    """The loss: mean [ 1/2 (Q(s,a) - y)^2 + alpha (log sum_a' exp Q(s,a') - Q(s,a)) ].

    y = r + gamma (1 - done) max_a' Q(s', a') is held fixed (a target, no gradient).
    """
    y = r + gamma * (1 - done) * Q[s_next].max(axis=1)
    q_sa = Q[s, a]
    td = 0.5 * (q_sa - y) ** 2
    gap = logsumexp(Q[s]) - q_sa       # >= 0: pushes every action down, the data's up
    return np.mean(td + alpha * gap)


def live_check(settings):
    """The CQL loss at the page's α and γ on a fixed-seed Q-table and batch."""
    import torch

    from rlviz import offline
    from rlviz.interview.whiteboard import LiveCheck, setting

    alpha, gamma = float(setting(settings, "alpha", 1.0)), float(setting(settings, "gamma", 0.95))
    rng = np.random.default_rng(0)
    states, actions, n = 6, 4, 32
    q = rng.normal(size=(states, actions))
    s, a, s2 = (rng.integers(k, size=n) for k in (states, actions, states))
    r, done = rng.normal(size=n), rng.random(n) < 0.2
    qt = torch.tensor(q)[None]
    y = offline.bellman_targets(qt, torch.tensor(r), torch.tensor(s2), torch.tensor(done), gamma)
    loss, _, _ = offline.offline_loss(qt, torch.tensor(s), torch.tensor(a), y,
                                      torch.tensor([alpha], dtype=torch.float64),
                                      torch.full((n,), 1.0 / n, dtype=torch.float64))
    # rlviz's targets multiply γ by a bool tensor, which rounds γ to float32 first.
    return LiveCheck(f"the CQL loss at α = {alpha:g}, γ = {gamma:g} on a {states}×{actions} "
                     "Q-table", cql_loss(q, s, a, r, s2, done, gamma, alpha), float(loss[0]),
                     tol=1e-5)
