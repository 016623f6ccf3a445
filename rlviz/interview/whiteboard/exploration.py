"""Deep exploration at a whiteboard: what PSRL and the count bonus solve every episode.

Both planners finish each episode's planning with finite-horizon backward induction in the model
they believe (a posterior sample, or the empirical model plus a bonus); the random walker's
chance of the deep sea's treasure is one line.
"""

import numpy as np


def backward_induction(P, R, H):
    """Optimal Q_h(s, a) for h = 0..H-1 of a model P[s, a, s'], R[s, a] with horizon H."""
    S, A = R.shape
    Q = np.zeros((H, S, A))
    V = np.zeros(S)  # nothing follows the last step
    for h in reversed(range(H)):
        Q[h] = R + P @ V  # reward now plus the value of where we land
        V = Q[h].max(axis=1)
    return Q


def bonus_reward(r_sum, n, beta, r_max):
    """MBIE-EB's optimistic reward: mean + beta / sqrt(N); an untried pair gets r_max + beta."""
    tried = n > 0
    return np.where(tried, r_sum / np.maximum(n, 1) + beta / np.sqrt(np.maximum(n, 1)),
                    r_max + beta)


def random_walker_episodes(N):
    """Expected episodes until a uniformly random walker first finds the deep sea's treasure."""
    p = 0.5**N  # N rights in a row
    return 1 / p  # geometric first success
