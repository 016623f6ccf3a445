"""Plain-loop references for ``rlviz.prediction``: one run, one setting, one step at a time.

Each follows the book's pseudo-code (Sutton & Barto 2018: n-step TD on p. 144, TD(λ) on p. 293,
true online TD(λ) on p. 300, the offline λ-return of §12.1 from the definition of the λ-return
as a weighted sum of n-step returns). The vectorised engines must equal these element for
element; the benchmarks time ``n_step_grid_loop`` against ``prediction.n_step_td``.
"""

from __future__ import annotations

import numpy as np

from tests.oracle_returns import lambda_return_loop


def episodes_of(runs, r):
    """Run ``r``'s episodes as (states S_0..S_T, rewards R_1..R_T) pairs."""
    out = []
    for e in range(runs.n_episodes):
        sl = runs.episode(r, e)
        states = list(runs.states[r, sl]) + [int(runs.next_states[r, sl.stop - 1])]
        out.append((states, list(runs.rewards[r, sl])))
    return out


def start(runs):
    v = np.full(runs.walk.n_states + 2, runs.walk.initial_value)
    v[[0, -1]] = 0.0
    return v


def n_step_td_loop(runs, r, *, n, alpha, gamma=1.0):
    """[E+1, S] the book's n-step TD, with its time t and τ = t − n + 1."""
    v = start(runs)
    snaps = [v.copy()]
    for states, rewards in episodes_of(runs, r):
        T = len(rewards)
        t = 0
        while True:
            tau = t - n + 1
            if tau >= 0:
                g = sum(gamma ** (i - tau - 1) * rewards[i - 1]
                        for i in range(tau + 1, min(tau + n, T) + 1))
                if tau + n < T:
                    g += gamma**n * v[states[tau + n]]
                v[states[tau]] += alpha * (g - v[states[tau]])
            if tau == T - 1:
                break
            t += 1
        snaps.append(v.copy())
    return np.array(snaps)


def td_lambda_loop(runs, r, *, lam, alpha, gamma=1.0, offline=False):
    """[E+1, S] TD(λ) with accumulating traces; offline: the increments held to the end."""
    v = start(runs)
    snaps = [v.copy()]
    for states, rewards in episodes_of(runs, r):
        z = np.zeros_like(v)
        held = np.zeros_like(v)
        for t in range(len(rewards)):
            z = gamma * lam * z
            z[states[t]] += 1.0
            delta = rewards[t] + gamma * v[states[t + 1]] - v[states[t]]
            if offline:
                held += alpha * delta * z
            else:
                v = v + alpha * delta * z
        v = v + held
        snaps.append(v.copy())
    return np.array(snaps)


def true_online_loop(runs, r, *, lam, alpha, gamma=1.0):
    """[E+1, S] true online TD(λ) as in the book's box, with one-hot features."""
    w = start(runs)
    snaps = [w.copy()]
    n = w.size
    for states, rewards in episodes_of(runs, r):
        z = np.zeros(n)
        v_old = 0.0
        for t in range(len(rewards)):
            x = np.eye(n)[states[t]]
            x1 = np.eye(n)[states[t + 1]] if t + 1 < len(rewards) else np.zeros(n)
            big_v, big_v1 = w @ x, w @ x1
            delta = rewards[t] + gamma * big_v1 - big_v
            z = gamma * lam * z + (1 - alpha * gamma * lam * (z @ x)) * x
            w = w + alpha * (delta + big_v - v_old) * z - alpha * (big_v - v_old) * x
            v_old = big_v1
        snaps.append(w.copy())
    return np.array(snaps)


def offline_lambda_return_loop(runs, r, *, lam, alpha, gamma=1.0):
    """[E+1, S] the λ-returns from their definition with the episode's values, updates in turn."""
    v = start(runs)
    snaps = [v.copy()]
    for states, rewards in episodes_of(runs, r):
        values = [v[s] for s in states[:-1]]
        done = [False] * (len(rewards) - 1) + [True]
        g = lambda_return_loop(rewards, values, gamma=gamma, lam=lam, dones=done)
        for t in range(len(rewards)):
            v[states[t]] += alpha * (g[t] - v[states[t]])
        snaps.append(v.copy())
    return np.array(snaps)


def n_step_grid_loop(runs, *, ns, alphas):
    """Figure 7.2's grid, every (n, α, run) one after the other: [P, A, R, E+1, S]."""
    return np.array([[[n_step_td_loop(runs, r, n=n, alpha=a) for r in range(runs.n_runs)]
                      for a in alphas] for n in ns])
