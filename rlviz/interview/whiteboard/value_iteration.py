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


def live_check(settings):
    """V* of the page's current MDP and γ, here and by ``rlviz.dp.value_iteration``."""
    from rlviz import dp
    from rlviz.interview.whiteboard import LiveCheck, setting

    env = setting(settings, "env", "sutton_barto_4x4")
    mdp = dp.make_problem(env, slip=setting(settings, "slip", 0.0),
                          step_reward=setting(settings, "step_reward", -1.0),
                          goal_reward=setting(settings, "goal_reward", -1.0),
                          layout=setting(settings, "layout", None))
    gamma = float(setting(settings, "gamma", 1.0))
    board, _ = value_iteration(mdp.P, mdp.R, mdp.terminal, gamma, theta=1e-10, max_sweeps=5000)
    lib = dp.value_iteration(mdp, gamma=gamma, theta=1e-10, max_sweeps=5000).final_values
    return LiveCheck(f"V* of this MDP at γ = {gamma:g}", board, lib, tol=1e-8)
