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


def live_check(settings):
    """GAE(γ, λ) of the page's trajectory table, here and by ``rlviz.returns.gae``.

    A truncated step bootstraps from V(cut) and starts a new sum: on the whiteboard that is the
    trajectory cut into pieces, each with its own last value.
    """
    from rlviz import returns
    from rlviz.interview.whiteboard import LiveCheck, setting

    ex = returns.EXAMPLES["goal_and_time_limit"]
    table = setting(settings, "traj", {"r": ex.rewards, "v": ex.values, "done": ex.dones,
                                       "trunc": ex.truncated, "v_cut": ex.truncated_values})
    r, v = np.asarray(table["r"], float), np.asarray(table["v"], float)
    done, trunc = np.asarray(table["done"], bool), np.asarray(table["trunc"], bool)
    cut = np.asarray(table["v_cut"], float)
    last = float(setting(settings, "v_last", ex.last_value))
    gamma, lam = float(setting(settings, "gamma", 0.99)), float(setting(settings, "lam", 0.95))
    if setting(settings, "as_terminal", False):
        done, trunc = done | trunc, np.zeros_like(trunc)
    trunc = trunc & ~done
    lib = returns.gae(r, v, gamma=gamma, lam=lam, last_value=last, dones=done, truncated=trunc,
                      truncated_values=np.where(trunc, cut, np.nan))
    ends = [*np.flatnonzero(trunc[:-1]) + 1, len(r)]
    board, start = [], 0
    for end in ends:
        tail = cut[end - 1] if trunc[end - 1] else last
        board.append(gae(r[start:end], v[start:end], tail, done[start:end], gamma, lam))
        start = end
    return LiveCheck(f"the {len(r)} advantages of this trajectory at γ = {gamma:g}, "
                     f"λ = {lam:g}", np.concatenate(board), lib, tol=1e-9)
