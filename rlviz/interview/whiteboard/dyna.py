"""Dyna-Q at a whiteboard: one real step, the table model, and n replayed transitions."""

import numpy as np


def dyna_q_step(Q, model, s, a, r, s2, replays, alpha, gamma):
    """Tabular Dyna-Q after one real transition (s, a, r, s2); ``replays`` are (s, a) pairs."""
    Q[s, a] += alpha * (r + gamma * Q[s2].max() - Q[s, a])  # (d) direct RL: Q-learning
    model[s, a] = (r, s2)  # (e) the model is a table of what happened
    for ps, pa in replays:  # (f) planning: the same update on remembered transitions
        pr, ps2 = model[ps, pa]
        Q[ps, pa] += alpha * (pr + gamma * Q[ps2].max() - Q[ps, pa])
    return Q


def dyna_q_plus_reward(r, tau, kappa):
    """Dyna-Q+'s planning reward: a bonus that grows with the time since a pair was tried."""
    return r + kappa * np.sqrt(tau)
