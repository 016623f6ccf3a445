"""Value iteration at a whiteboard: the Bellman optimality backup, swept until it stops moving."""

import numpy as np


def value_iteration(P, R, terminal, gamma, theta=1e-10, max_sweeps=10_000):
    """V(s) <- max_a [R(s, a) + gamma sum_s' P(s' | s, a) V(s')], all states at once.

    P is [S, A, S'], R is [S, A] (the expected reward), terminal is [S] (value 0 there).
    Returns V* and the greedy policy.
    """
    V = np.zeros(P.shape[0])
    for _ in range(max_sweeps):
        Q = R + gamma * P @ V              # [S, A]: one-step lookahead
        Q[terminal] = 0.0
        V_new = Q.max(axis=1)
        done = np.abs(V_new - V).max() < theta
        V = V_new
        if done:
            break
    return V, Q.argmax(axis=1)
