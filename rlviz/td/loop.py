"""The plain loop reference: one run, one step at a time, in Python, on the same dice."""

from __future__ import annotations

import numpy as np

from rlviz.mdp import TabularMDP
from rlviz.td.dice import (
    EXPLORE,
    RANDOM_ACTION,
    START,
    TABLE_COIN,
    TIE_KEYS,
    TRANSITION,
    _generators,
    _RunDice,
    _start_sampler,
)
from rlviz.td.engine import _result
from rlviz.td.results import DEFAULT_MAX_STEPS, ControlResult, _check_run, epsilon_schedule
from rlviz.td.updates import (
    double_q_target,
    expected_sarsa_target,
    q_learning_target,
    sarsa_target,
    td_update,
)

__all__ = [
    "run_control_loop",
]


def run_control_loop(
    mdp: TabularMDP,
    *,
    algorithm: str,
    episodes: int,
    runs: int = 1,
    epsilon: float = 0.1,
    alpha: float = 0.5,
    gamma: float = 1.0,
    seed: int = 0,
    max_steps: int = DEFAULT_MAX_STEPS,
    epsilon_decay: bool = False,
    max_total_steps: int | None = None,
) -> ControlResult:
    """``run_control`` in plain Python: one run at a time, step by step, in the book's order.

    The reference the compiled loops (``rlviz.td.learners``) must equal draw for draw: the same
    algorithms and the same uniforms (row ``t`` of run ``r``, drawn here ``BLOCK`` rows at a
    time), but written independently, on numpy arrays, with the readable target functions of
    ``rlviz.td.updates``. SARSA here chooses ``a'`` in ``s'`` before updating ``Q(s, a)``, as in
    Sutton & Barto (2018), Section 6.4. Arguments and result as in ``run_control``.
    """
    _check_run(
        mdp, algorithm, episodes, runs, epsilon, alpha, gamma, max_steps, max_total_steps
    )
    n_states, n_actions = mdp.n_states, mdp.n_actions
    epsilons = epsilon_schedule(epsilon, episodes, decay=epsilon_decay)
    sample_start = _start_sampler(mdp)
    cum_prob = mdp.cumulative_prob
    n_outcomes = cum_prob.shape[2]

    def choose(q_row, eps, u) -> int:
        if u[EXPLORE] < eps:
            return int(u[RANDOM_ACTION] * n_actions)
        best = np.flatnonzero(q_row == q_row.max())
        keys = u[TIE_KEYS:]
        return int(best[keys[best].argmax()])

    def step(s, a, u):
        k = min(int((cum_prob[s, a] <= u[TRANSITION]).sum()), n_outcomes - 1)
        return int(mdp.next_state[s, a, k]), float(mdp.reward[s, a, k])

    shape = (runs, episodes)
    returns, lengths = np.full(shape, np.nan), np.zeros(shape, dtype=np.int64)
    truncated = np.zeros(shape, dtype=bool)
    played = np.zeros(runs, dtype=np.int64)
    budget = np.inf if max_total_steps is None else max_total_steps
    visits = np.zeros((runs, n_states), dtype=np.int64)
    final_q = np.zeros((runs, n_states, n_actions))
    for i, gen in enumerate(_generators(seed, runs)):
        dice = _RunDice(gen, n_actions)
        q1, q2 = np.zeros((n_states, n_actions)), np.zeros((n_states, n_actions))
        t = 0
        for k in range(episodes):
            eps = epsilons[k]
            u = dice.row(t)
            s = mdp.start_state if sample_start is None else int(sample_start(u[START]))
            a = choose(q1[s] + q2[s] if algorithm == "double_q" else q1[s], eps, u)
            total, n = 0.0, 0
            while True:
                visits[i, s] += 1
                s2, r = step(s, a, u)
                total += r
                n += 1
                term = bool(mdp.terminal[s2])
                cut = (n >= max_steps or t + 1 >= budget) and not term
                u_next = dice.row(t + 1)
                if algorithm == "q_learning":
                    y = q_learning_target(r, q1[s2], gamma=gamma, terminal=term)
                    q1[s, a] = td_update(q1[s, a], y, alpha)
                elif algorithm == "sarsa":
                    a2 = choose(q1[s2], eps, u_next) if not term else 0
                    y = sarsa_target(r, q1[s2], a2, gamma=gamma, terminal=term)
                    q1[s, a] = td_update(q1[s, a], y, alpha)
                elif algorithm == "expected_sarsa":
                    y = expected_sarsa_target(r, q1[s2], gamma=gamma, epsilon=eps, terminal=term)
                    q1[s, a] = td_update(q1[s, a], y, alpha)
                else:
                    qa, qb = (q1, q2) if u[TABLE_COIN] < 0.5 else (q2, q1)
                    y = double_q_target(r, qa[s2], qb[s2], gamma=gamma, terminal=term)
                    qa[s, a] = td_update(qa[s, a], y, alpha)
                t += 1
                u = u_next
                if term or cut:
                    break
                if algorithm != "sarsa":
                    a2 = choose(q1[s2] + q2[s2] if algorithm == "double_q" else q1[s2], eps, u)
                s, a = s2, a2
            returns[i, k], lengths[i, k], truncated[i, k] = total, n, cut
            played[i] = k + 1
            if t >= budget:
                break
        final_q[i] = (q1 + q2) / 2 if algorithm == "double_q" else q1
    return _result(
        mdp, algorithm, returns, lengths, truncated, final_q, visits, epsilons, played,
        alpha=alpha, gamma=gamma, seed=seed, max_steps=max_steps,
        max_total_steps=max_total_steps,
    )
