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


def live_check(settings):
    """The page's problem planned by backward induction, and MBIE-EB's reward at its β."""
    from rlviz import exploration as ex
    from rlviz.interview.whiteboard import LiveCheck, setting

    n, beta = int(setting(settings, "n", 10)), float(setting(settings, "beta", 0.5))
    problem = ex.deep_sea(n) if setting(settings, "problem", "riverswim") == "deep_sea" \
        else ex.riverswim()
    mdp, horizon = problem.mdp, problem.horizon
    plan = ex.finite_horizon_plan(mdp, horizon).q
    rng = np.random.default_rng(0)
    counts = rng.integers(0, 3, size=(1, mdp.n_states, mdp.n_actions, 3))
    r_sum = rng.normal(size=(1, mdp.n_states, mdp.n_actions))
    _, lib_r = ex.bonus_model(counts, r_sum, beta=beta, r_max=[problem.r_max])
    board_r = bonus_reward(r_sum[0], counts[0].sum(axis=-1), beta, problem.r_max)
    walker = ex.first_reach_probability(ex.deep_sea(n))
    return LiveCheck(f"Q_h of {problem.label} (H = {horizon}), the bonus reward at β = {beta:g} "
                     f"and the random walker's episodes for N = {n}",
                     np.concatenate([backward_induction(mdp.P, mdp.R, horizon).ravel(),
                                     board_r.ravel(), [random_walker_episodes(n)]]),
                     np.concatenate([plan.ravel(), lib_r[0].ravel(), [1 / walker]]), tol=1e-9)
