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
