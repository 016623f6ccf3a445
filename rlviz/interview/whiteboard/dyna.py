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


def live_check(settings):
    """One Dyna-Q step on a fixed-seed table at the page's α, γ and n, and Dyna-Q+'s bonus."""
    from rlviz import planning as pl
    from rlviz.interview.whiteboard import LiveCheck, setting

    alpha, gamma = float(setting(settings, "alpha", 0.1)), float(setting(settings, "gamma", 0.95))
    replays = max(1, int(setting(settings, "n", 10)))
    kappa = float(setting(settings, "kappa", 1e-3))
    rng = np.random.default_rng(0)
    n_states, n_actions = 12, 4
    q0 = rng.normal(size=(n_states, n_actions))
    model = {(int(s), int(a)): (float(rng.normal()), int(rng.integers(n_states)))
             for s, a in rng.integers([n_states, n_actions], size=(20, 2))}
    s, a, r, s2 = 3, 1, float(rng.normal()), 5
    pairs = [*model, (s, a)]
    chosen = [pairs[i] for i in rng.integers(len(pairs), size=replays)]
    board = dyna_q_step(q0.copy(), dict(model), s, a, r, s2, chosen, alpha, gamma)
    lib = q0.copy()
    lib[s, a] = pl.q_update(lib[s, a], r, lib[s2], alpha=alpha, gamma=gamma)
    model[(s, a)] = (r, s2)
    cols = [np.array([[x[k] for x in chosen]]) for k in (0, 1)]
    rows = [np.array([[model[x][k] for x in chosen]]) for k in (0, 1)]
    lib = pl.plan(lib[None], *cols, *rows, alpha=alpha, gamma=gamma)[0]
    tau = np.arange(0, 5000, 250)
    return LiveCheck(f"Q after one real step and {replays} replays (α = {alpha:g}, "
                     f"γ = {gamma:g}), and the bonus at κ = {kappa:g}",
                     np.concatenate([board.ravel(), dyna_q_plus_reward(0.0, tau, kappa)]),
                     np.concatenate([lib.ravel(), pl.exploration_bonus(np.zeros(len(tau)), tau,
                                                                       kappa)]), tol=1e-12)
