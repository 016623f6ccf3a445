"""Bandits at a whiteboard: UCB's choice and the incremental sample average."""

import numpy as np


def ucb_action(Q, N, t, c):
    """argmax_a Q(a) + c sqrt(ln t / N(a)); an arm never pulled goes first."""
    bonus = c * np.sqrt(np.log(t) / np.maximum(N, 1))
    return int(np.argmax(np.where(N > 0, Q + bonus, np.inf)))


def update(Q, N, a, reward, alpha=None):
    """Q(a) <- Q(a) + (R - Q(a)) / N(a): the running mean (or a constant step alpha)."""
    Q, N = Q.copy(), N.copy()
    N[a] += 1
    Q[a] += (1.0 / N[a] if alpha is None else alpha) * (reward - Q[a])
    return Q, N
