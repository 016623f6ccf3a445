"""Maximization bias at a whiteboard: Double Q-learning on Example 6.7, and the two estimators.

A table is ``{"A": [2 values: left, right], "B": [m values]}``. ``u`` is an episode's six
uniforms (explore and pick in A, explore and pick in B, the coins for A and B) and ``z`` its
standard normal, so that a run can be replayed with the library's dice.
"""

import numpy as np


def choose(q, eps, u_explore, u_pick):
    """ε-greedy: any action with probability ε, else a greedy one; ties broken at random."""
    options = np.arange(len(q)) if u_explore < eps else np.flatnonzero(q == q.max())
    return options[int(u_pick * len(options))]


def double_q_episode(q1, q2, u, z, eps, alpha, gamma, mu, sigma):
    """One episode from A, updating q1 or q2 (a fair coin) in place. Left = 0, right = 1."""
    a = choose(q1["A"] + q2["A"], eps, u[0], u[1])
    one, other = (q1, q2) if u[4] < 0.5 else (q2, q1)  # `one` learns, `other` evaluates
    if a == 1:  # right: reward 0 and the episode ends
        one["A"][1] += alpha * (0.0 - one["A"][1])
        return
    best = np.argmax(one["B"])  # left: reward 0, then B, valued by the other table
    one["A"][0] += alpha * (gamma * other["B"][best] - one["A"][0])
    b = choose(q1["B"] + q2["B"], eps, u[2], u[3])
    one = q1 if u[5] < 0.5 else q2
    one["B"][b] += alpha * (mu + sigma * z - one["B"][b])  # B's actions end the episode


def max_estimators(samples):
    """``samples[i, j]``: the j-th reward of action i (n even). Estimates of max_i E[reward]."""
    single = samples.mean(axis=1).max()  # biased up: E[max] >= max E
    a, b = np.split(samples, 2, axis=1)
    double = b.mean(axis=1)[np.argmax(a.mean(axis=1))]  # half A picks, half B values
    return single, double


def live_check(settings):
    """A short Double Q run at the page's settings replayed here, and the two estimators."""
    from rlviz import max_bias as mb
    from rlviz.interview.whiteboard import LiveCheck, setting

    m, sigma = int(setting(settings, "actions", 10)), float(setting(settings, "sigma", 1.0))
    eps, alpha = float(setting(settings, "epsilon", 0.1)), float(setting(settings, "alpha", 0.1))
    seed, episodes = int(setting(settings, "seed", 0)), 30
    res = mb.run(mb.MaxBiasMDP(n_actions=m, sigma=sigma), algorithms=("double_q",), runs=2,
                 episodes=episodes, epsilon=eps, alpha=alpha, gamma=1.0, seed=seed)
    u, z = mb.first_run_dice(res.seed, res.episodes)
    q1 = {"A": np.zeros(2), "B": np.zeros(m)}
    q2 = {"A": np.zeros(2), "B": np.zeros(m)}
    for e in range(episodes):
        double_q_episode(q1, q2, u[e], z[e], eps, alpha, res.gamma, res.mdp.mean, sigma)
    kept = res.methods["double_q"]
    samples = np.random.default_rng(seed).normal(0.0, max(sigma, 1e-3), size=(m, 20))
    halves = samples.reshape(m, 2, 10).mean(axis=-1)
    board = np.concatenate([q1["A"], q2["A"], q1["B"], q2["B"], max_estimators(samples)])
    lib = np.concatenate([kept.kept_q_a[0, episodes].ravel(), kept.kept_q_b[0, episodes].ravel(),
                          np.array(mb.max_estimators(halves[:, 0], halves[:, 1]), float)])
    return LiveCheck(f"both Q tables after {episodes} Double Q episodes (ε = {eps:g}, "
                     f"α = {alpha:g}), and the single and double estimators of {m} actions",
                     board, lib, tol=1e-12)
