"""GAE at a whiteboard: TD errors, then one backward pass."""

import numpy as np


def gae(rewards, values, last_value, dones, gamma, lam):
    """A_t = delta_t + gamma lam (1 - done_t) A_{t+1}, delta_t = r_t + gamma V(s_{t+1}) - V(s_t).

    dones[t] is True when s_{t+1} is terminal: no bootstrap, and the sum restarts.
    """
    T = len(rewards)
    next_v = np.append(values[1:], last_value) * (1 - dones)   # V(s_{t+1}), 0 after an end
    delta = rewards + gamma * next_v - values
    adv, running = np.zeros(T), 0.0
    for t in reversed(range(T)):
        running = delta[t] + gamma * lam * (1 - dones[t]) * running
        adv[t] = running
    return adv                                                  # returns = adv + values
