"""Exact answers: finite-horizon planning, exact policy values, and first-reach probabilities."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.dp.traces import TIE_RTOL
from rlviz.errors import InputError
from rlviz.exploration.problems import Problem
from rlviz.mdp import TabularMDP, policy_value

__all__ = [
    "Plan",
    "backward_induction",
    "finite_horizon_plan",
    "first_reach_probability",
    "policy_value_exact",
    "random_walk_episodes",
]


# --------------------------------------------------------------------------- exact answers
@dataclass(frozen=True, eq=False)
class Plan:
    """The finite-horizon solution of a model by value iteration.

    Attributes:
        values: ``V_k``, the optimal value with ``k`` steps to go, for ``k = 0..H``.
        greedy: The optimal actions at step ``h`` of the episode (ties included).
        q: ``Q_h(s, a)``, the optimal action values at step ``h``.
    """

    values: np.ndarray  # [H+1, S] V_k with k steps to go
    greedy: np.ndarray  # [H, S, A] bool, optimal actions at step h
    q: np.ndarray | None  # [H, S, A] Q_h(s, a) at step h (None if not asked for)

    @property
    def horizon(self) -> int:
        """Steps per episode H."""
        return len(self.greedy)

    @property
    def start_values(self) -> np.ndarray:
        """``[S]`` the optimal value of each position at the start of an episode."""
        return self.values[-1]


def backward_induction(next_state, prob, reward, horizon: int):
    r"""Optimal values and actions with ``k`` steps to go, of one model or of many at once.

    .. math:: V_0 = 0, \qquad Q_k(s, a) = r(s, a) + \sum_j p_j(s, a)\, V_{k-1}(s'_j(s, a)),
        \qquad V_k(s) = \max_a Q_k(s, a)

    This is value iteration with γ = 1 from ``V_0 = 0``, sweep by sweep (``rlviz.dp``'s
    synchronous backup, to the bit: a test checks it), so sweep ``k`` is the optimal value with
    ``k`` steps to go (Puterman, 1994, section 4.5). Actions within ``TIE_RTOL`` of the best
    count as tied, as in ``rlviz.dp``.

    Args:
        next_state: ``[..., S, A, K]`` successor of each outcome (positions of the same model).
        prob: ``[..., S, A, K]`` outcome probabilities.
        reward: ``[..., S, A]`` expected reward of each move.
        horizon: Sweeps ``H >= 1``.

    Returns:
        ``(values [H + 1, ..., S], greedy [H, ..., S, A])``: ``V_k`` for ``k = 0..H``, and the
        actions optimal with ``k + 1`` steps to go (greedy on ``V_k``).
    """
    next_state = np.asarray(next_state)
    *batch, n_states, n_actions, n_out = next_state.shape
    models = int(np.prod(batch, dtype=np.int64))
    # Where each successor's value sits in V.ravel() (model m's values start at m * S).
    where = next_state + (np.arange(models) * n_states).reshape(*batch, 1, 1, 1)
    v = np.zeros((*batch, n_states))
    values, greedy = [v], []
    for _ in range(int(horizon)):
        q = reward + np.add.reduce(prob * v.take(where), axis=-1)
        best = np.maximum.reduce(q, axis=-1)[..., None]
        greedy.append(q >= best - TIE_RTOL * (1.0 + np.abs(best)))
        v = best[..., 0]
        values.append(v)
    return np.stack(values), np.stack(greedy)


def finite_horizon_plan(mdp: TabularMDP, horizon: int, *, with_q: bool = True) -> Plan:
    r"""The optimal non-stationary policy of an episode of ``horizon`` steps.

    .. math:: \pi_h(s) \in \arg\max_a \Big[ r(s, a) + \sum_{s'} p(s' \mid s, a)\,
        V_{H-h-1}(s') \Big]

    Step ``h`` of an episode has ``H − h`` steps to go, so it acts greedily on ``V_{H−h−1}``
    of ``backward_induction`` (Sutton & Barto, 2018, section 4.4; Puterman, 1994, section 4.5).

    Args:
        mdp: The model (no terminal states needed: the horizon ends the episode).
        horizon: Steps per episode ``H >= 1``.
        with_q: Also return the optimal action values (planners only need the actions).

    Returns:
        The plan: values with ``k`` steps to go, optimal actions and values at each step.
    """
    values, greedy = backward_induction(mdp.next_state, mdp.prob, mdp.R, horizon)
    q = None
    if with_q:
        to_go = values[:horizon]  # V_0 .. V_{H-1}
        q = (mdp.R[None] + (mdp.prob[None] * to_go[:, mdp.next_state]).sum(axis=-1))[::-1]
    for a in (values, greedy):
        a.setflags(write=False)
    return Plan(values=values, greedy=greedy[::-1], q=q)


def time_expanded(problem: Problem) -> TabularMDP:
    """The problem as one MDP over (step, position) pairs, ending in a terminal state.

    State ``h * S + s`` is position ``s`` at step ``h``; the last state is terminal and follows
    every move of the last step. Its values at step 0 are the episode's values.
    """
    mdp, horizon = problem.mdp, problem.horizon
    n_states, n_actions, n_out = mdp.next_state.shape
    end = horizon * n_states
    h = np.arange(horizon)[:, None, None, None]
    following = np.where(h + 1 < horizon, (h + 1) * n_states + mdp.next_state[None], end)
    next_state = np.concatenate([following.reshape(end, n_actions, n_out),
                                 np.full((1, n_actions, n_out), end)])
    prob = np.concatenate([np.broadcast_to(mdp.prob, (horizon, *mdp.prob.shape))
                           .reshape(end, n_actions, n_out), np.eye(n_out)[[0] * n_actions][None]])
    reward = np.concatenate([np.broadcast_to(mdp.reward, (horizon, *mdp.reward.shape))
                             .reshape(end, n_actions, n_out), np.zeros((1, n_actions, n_out))])
    terminal = np.zeros(end + 1, dtype=bool)
    terminal[end] = True
    return TabularMDP(next_state=next_state, prob=prob, reward=reward, terminal=terminal,
                      start=np.concatenate([mdp.start, np.zeros(end + 1 - n_states)]),
                      action_names=mdp.action_names, name=f"{mdp.name} over (step, position)")


def policy_value_exact(problem: Problem, policy: np.ndarray) -> np.ndarray:
    r"""Exact values of a step-dependent policy by one linear solve on the (step, position) MDP.

    Solves :math:`(I - P_\pi) V = R_\pi` (``rlviz.mdp.policy_value`` with γ = 1), independently
    of value iteration.

    Args:
        problem: The problem.
        policy: ``[H, S, A]`` action probabilities at each step, or a boolean set of actions
            (spread evenly over the set).

    Returns:
        ``[H, S]`` the value of each position at each step.
    """
    pi = np.asarray(policy, dtype=np.float64)
    pi = pi / pi.sum(axis=-1, keepdims=True)
    horizon, n_states, n_actions = pi.shape
    flat = np.concatenate([pi.reshape(horizon * n_states, n_actions),
                           np.full((1, n_actions), 1.0 / n_actions)])
    values = policy_value(time_expanded(problem), flat, 1.0)
    return values[:-1].reshape(horizon, n_states)


def first_reach_probability(problem: Problem, epsilon: float = 1.0) -> float:
    r"""Chance that a uniformly random walker collects the far reward in one episode.

    The walker takes each action with probability 1/A. With ``m_h(s)`` the chance of being at
    ``s`` at step ``h`` without having collected it yet,

    .. math:: p = \sum_{h < H} m_h(s_{far}) / A, \qquad
        m_{h+1}(s') = \sum_{s, a} m_h(s)\, \tfrac1A\, P(s' \mid s, a)\,
        [(s, a) \ne (s_{far}, a_{far})]

    On the deep sea of size N the far reward needs N rights in a row, so ``p = 2^{-N}``.
    Episodes of an ε = 1 learner are independent, so its first success is geometric with mean
    ``1 / p`` episodes.

    Args:
        problem: The problem.
        epsilon: Must be 1 (the walker); kept for the formula's name.

    Returns:
        The probability ``p`` per episode.
    """
    if epsilon != 1.0:
        raise InputError("The closed form is for the uniformly random walker (ε = 1) only.")
    mdp = problem.mdp
    n_actions = mdp.n_actions
    mass = mdp.start.copy()
    found = 0.0
    for _ in range(problem.horizon):
        found += mass[problem.far_state] / n_actions
        weight = np.broadcast_to(mass[:, None, None] / n_actions * mdp.prob, mdp.prob.shape).copy()
        weight[problem.far_state, problem.far_action] = 0.0
        mass = np.bincount(mdp.next_state.ravel(), weights=weight.ravel(),
                           minlength=mdp.n_states)
    return float(found)


def random_walk_episodes(problem: Problem, episodes: int, *, seed: int) -> float:
    """Monte-Carlo estimate of ``first_reach_probability``.

    The share of ``episodes`` uniformly random episodes that collect the far reward, all walked
    at once, one step at a time.
    """
    rng = np.random.default_rng(seed)
    mdp = problem.mdp
    state = np.full(episodes, mdp.start_state)
    found = np.zeros(episodes, dtype=bool)
    for _ in range(problem.horizon):
        action = rng.integers(mdp.n_actions, size=episodes)
        found |= (state == problem.far_state) & (action == problem.far_action)
        state, _ = mdp.step(state, action, rng.random(episodes))
    return float(found.mean())
