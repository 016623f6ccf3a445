"""Plain-loop references for ``rlviz.exploration``: one lane at a time, one step at a time.

``simulate_loop`` is the engine written as the boxed pseudocode: for each episode, each learner
plans (alone, with its own value iteration) and then every lane walks its episode step by step
with Python scalars. It uses the same random streams in the same order as ``simulate``, so the
two must agree draw for draw. ``backward_induction_loop`` is finite-horizon DP with explicit
loops over states, actions and successors.
"""

from __future__ import annotations

import numpy as np

from rlviz import exploration as ex
from rlviz.mdp import TabularMDP


def backward_induction_loop(problem: ex.Problem) -> tuple[np.ndarray, np.ndarray]:
    """``(V [H+1, S] with k steps to go, Q [H, S, A] at step h)`` by explicit loops."""
    mdp, horizon = problem.mdp, problem.horizon
    n_states, n_actions, n_out = mdp.next_state.shape
    values = np.zeros((horizon + 1, n_states))
    q = np.zeros((horizon, n_states, n_actions))
    for k in range(1, horizon + 1):
        for s in range(n_states):
            best = -np.inf
            for a in range(n_actions):
                total = 0.0
                for o in range(n_out):
                    p = mdp.prob[s, a, o]
                    total += p * (mdp.reward[s, a, o] + values[k - 1, mdp.next_state[s, a, o]])
                q[horizon - k, s, a] = total
                best = max(best, total)
            values[k, s] = best
    return values, q


def _plan_one(problem: ex.Problem, prob: np.ndarray, reward: np.ndarray) -> np.ndarray:
    """One lane's model solved on its own: ``[H, S, A]`` optimal actions at each step."""
    mdp = problem.mdp
    model = TabularMDP(next_state=mdp.next_state, prob=prob,
                       reward=np.broadcast_to(reward[..., None], prob.shape),
                       terminal=mdp.terminal, start=mdp.start, action_names=mdp.action_names)
    return ex.finite_horizon_plan(model, problem.horizon).greedy


def simulate_loop(problem: ex.Problem, kinds, *, runs, episodes, seed, epsilon=0.1, alpha=0.1,
                  beta=0.5):
    """``simulate([problem], kinds, ...)`` one lane and one step at a time.

    Returns:
        ``(returns [K, R, E], first_reach [K, R], visits [K, H, S])``.
    """
    mdp, horizon = problem.mdp, problem.horizon
    n_states, n_actions = mdp.n_states, mdp.n_actions
    n_kinds = len(kinds)
    dice_seed, posterior_seed = np.random.SeedSequence(seed).spawn(2)
    gens = [np.random.default_rng(s) for s in dice_seed.spawn(runs)]
    blocks = -(-episodes // ex.BLOCK)
    dice = [np.concatenate([g.random((ex.BLOCK, horizon, 4)) for _ in range(blocks)])
            for g in gens]
    posterior_rng = np.random.default_rng(posterior_seed)

    q = np.zeros((n_kinds, runs, horizon + 1, n_states, n_actions))
    for i, kind in enumerate(kinds):
        if kind == "optimistic":
            for h in range(horizon):
                q[i, :, h] = (horizon - h) * problem.r_max
    counts = np.zeros((n_kinds, runs, n_states, n_actions, 3))
    reward_sum = np.zeros((n_kinds, runs, n_states, n_actions))
    returns = np.zeros((n_kinds, runs, episodes))
    first = np.zeros((n_kinds, runs), dtype=np.int64)
    visits = np.zeros((n_kinds, horizon, n_states))
    best_plan = ex.finite_horizon_plan(mdp, horizon).greedy
    eps = {"epsilon_greedy": epsilon, "random": 1.0}

    for e in range(episodes):
        plans = {}
        for i, kind in enumerate(kinds):
            if kind == "optimal":
                plans.update({(i, r): best_plan for r in range(runs)})
            elif kind == "bonus":
                for r in range(runs):
                    prob, reward = ex.bonus_model(counts[i, r][None], reward_sum[i, r][None],
                                                  beta=beta, r_max=np.array([problem.r_max]))
                    plans[i, r] = _plan_one(problem, prob[0], reward[0])
            elif kind == "psrl":  # one posterior draw for all runs, in run order, as simulate
                prob, reward = ex.posterior_sample(counts[i], reward_sum[i], posterior_rng)
                for r in range(runs):
                    plans[i, r] = _plan_one(problem, prob[r], reward[r])
        for i, kind in enumerate(kinds):
            for r in range(runs):
                s, ret = 0, 0.0
                for h in range(horizon):
                    u = dice[r][e, h]
                    if (i, r) in plans:
                        scores = plans[i, r][h, s].astype(np.float64)
                    else:
                        scores = q[i, r, h, s]
                    a = int(ex.choose_actions(scores[None], np.array([eps.get(kind, 0.0)]),
                                              u[None])[0])
                    s2, rew = mdp.step(np.array([s]), np.array([a]), np.array([u[ex.TRANSITION]]))
                    s2, rew = int(s2[0]), float(rew[0])
                    if (i, r) not in plans:
                        target = rew if h == horizon - 1 else rew + q[i, r, h + 1, s2].max()
                        q[i, r, h, s, a] += alpha * (target - q[i, r, h, s, a])
                    counts[i, r, s, a, s2 - s + 1] += 1
                    reward_sum[i, r, s, a] += rew
                    visits[i, h, s] += 1
                    ret += rew
                    if s == problem.far_state and a == problem.far_action and first[i, r] == 0:
                        first[i, r] = e + 1
                    s = s2
                returns[i, r, e] = ret
    return returns, first, visits
