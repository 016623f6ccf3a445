"""n-step TD and TD(λ) at a whiteboard: one episode of each, in plain numpy.

``V`` holds every state's value, terminals included (worth 0); an episode is its states
``S_0 … S_T`` (``S_T`` terminal) and rewards ``R_1 … R_T``. Each function updates ``V`` in place
and returns it.
"""

import numpy as np


def n_step_td(V, states, rewards, n, alpha, gamma=1.0):
    """n-step TD: V(S_τ) moves toward n rewards plus the discounted value n steps on."""
    T = len(rewards)
    for tau in range(T):  # the book updates τ at time τ + n − 1; the order is the same
        end = min(tau + n, T)
        G = sum(gamma ** (i - tau) * rewards[i] for i in range(tau, end))
        if tau + n < T:
            G += gamma**n * V[states[tau + n]]
        V[states[tau]] += alpha * (G - V[states[tau]])
    return V


def td_lambda(V, states, rewards, lam, alpha, gamma=1.0):
    """TD(λ) with accumulating traces, online: every visited state shares each TD error."""
    z = np.zeros_like(V)
    for t in range(len(rewards)):
        z *= gamma * lam
        z[states[t]] += 1.0
        delta = rewards[t] + gamma * V[states[t + 1]] - V[states[t]]
        V += alpha * delta * z
    return V


def true_online_td_lambda(V, states, rewards, lam, alpha, gamma=1.0):
    """True online TD(λ): dutch traces and a correction, equal to the online λ-return."""
    z, v_old = np.zeros_like(V), 0.0
    for t in range(len(rewards)):
        s, s1 = states[t], states[t + 1]
        v, v1 = V[s], V[s1]
        delta = rewards[t] + gamma * v1 - v
        zx = z[s]  # zᵀx before the decay
        z *= gamma * lam
        z[s] += 1.0 - alpha * gamma * lam * zx
        V += alpha * (delta + v - v_old) * z
        V[s] -= alpha * (v - v_old)
        v_old = v1
    return V


def offline_lambda_return(V, states, rewards, lam, alpha, gamma=1.0):
    """Offline λ-return: λ-returns from the episode's values, then the T updates in turn."""
    T = len(rewards)
    G = np.zeros(T)
    G[-1] = rewards[-1]
    for t in range(T - 2, -1, -1):
        G[t] = rewards[t] + gamma * ((1 - lam) * V[states[t + 1]] + lam * G[t + 1])
    for t in range(T):
        V[states[t]] += alpha * (G[t] - V[states[t]])
    return V


def live_check(settings):
    """The page's method at its n or λ and α on three episodes of the 19-state walk."""
    from rlviz import prediction as pr
    from rlviz.interview.whiteboard import LiveCheck, setting

    method, alpha = setting(settings, "method", "n_step"), float(setting(settings, "alpha", 0.4))
    n, lam = int(setting(settings, "n", 4)), float(setting(settings, "lam", 0.8))
    runs = pr.sample_runs(19, runs=1, episodes=3, seed=int(setting(settings, "seed", 0)))
    board_fn, lib_fn, param, kw = {
        "n_step": (n_step_td, pr.n_step_td, n, {"ns": [n]}),
        "td_lambda": (td_lambda, pr.td_lambda, lam, {"lams": [lam]}),
        "true_online": (true_online_td_lambda, pr.true_online_td_lambda, lam, {"lams": [lam]}),
        "offline_lambda_return": (offline_lambda_return, pr.offline_lambda_return, lam,
                                  {"lams": [lam]}),
    }[method]
    lib = lib_fn(runs, alphas=[alpha], **kw).values[0, 0, 0, -1]
    v = np.zeros(21)  # the 19 states and the two terminals
    for e in range(runs.n_episodes):
        sl = runs.episode(0, e)
        states = np.append(runs.states[0, sl], runs.next_states[0, sl.stop - 1])
        board_fn(v, states, runs.rewards[0, sl], param, alpha)
    what = f"n = {n}" if method == "n_step" else f"λ = {lam:g}"
    return LiveCheck(f"{pr.METHODS[method]} ({what}, α = {alpha:g}): V after three episodes of "
                     "the 19-state walk", v[1:-1], lib, tol=1e-12)
