r"""Dyna-Q's readable steps, written on arrays: one call serves one run or every lane at once.

``q_update`` is the update of a real and a replayed transition alike (one-step Q-learning, the
arithmetic of ``rlviz.td``'s target and update); ``exploration_bonus`` is Dyna-Q+'s planning reward;
``sample_model`` picks the pairs to replay; ``plan`` makes ``n`` planning updates of every lane.

Reference: Sutton & Barto (2018), Sections 8.2-8.3 (the tabular Dyna-Q box, and Dyna-Q+).
"""

from __future__ import annotations

import functools

import numpy as np


def q_update(q_sa, r, q_next, *, alpha, gamma, terminal=False):
    r"""Dyna-Q's one update, the same for a real transition and a replayed one.

    .. math:: Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + \gamma \max_a Q(S', a) - Q(S, A)\big]

    It is one-step Q-learning: to the bit, ``rlviz.td``'s ``q_learning_target`` followed by
    ``td_update`` (a test checks it), written out as the book writes it.

    Args:
        q_sa: ``[...]`` the current ``Q(S, A)``.
        r: ``[...]`` the reward ``R`` (real, or the model's plus any bonus).
        q_next: ``[..., A]`` the values ``Q(S', ·)`` of the next state.
        alpha: Step size α.
        gamma: Discount γ.
        terminal: ``[...]`` whether ``S'`` ends the episode (its values are 0 anyway).

    Returns:
        ``[...]`` the new ``Q(S, A)``.
    """
    if terminal is not False:  # nothing follows a terminal state
        gamma = gamma * np.logical_not(terminal)
    target = r + gamma * np.asarray(q_next).max(axis=-1)
    return q_sa + alpha * (target - q_sa)


def exploration_bonus(r, tau, kappa):
    r"""Dyna-Q+'s planning reward: the model's reward plus a bonus for time untried.

    .. math:: \tilde R = R + \kappa \sqrt{\tau}

    where ``τ`` is the number of real steps since the action was last tried in that state
    (Sutton & Barto, 2018, Section 8.3). With ``κ = 0`` it is the model's reward.

    Args:
        r: ``[...]`` the model's reward.
        tau: ``[...]`` steps since the pair was last tried (since the start if never).
        kappa: Bonus scale κ ≥ 0 (scalar or broadcastable).
    """
    return r + kappa * np.sqrt(tau)


def sample_model(u_state, u_action, seen, n_seen, tried, n_tried, *, any_action):
    r"""Pick the pairs to replay: a random previously observed state, then a random action.

    Dyna-Q takes an action previously taken in that state; Dyna-Q+ any action (an untried one
    replays as "back to the same state, reward 0"). Uniforms ``u`` in [0, 1) pick position
    ``⌊u · count⌋`` of each list.

    Args:
        u_state: ``[L, n]`` uniforms that pick the states, one per replayed transition.
        u_action: ``[L, n]`` uniforms that pick the actions.
        seen: ``[L, C]`` each lane's observed states in the order first seen.
        n_seen: ``[L]`` how many of them.
        tried: ``[L, C, A]`` the actions taken in each state, in the order first taken.
        n_tried: ``[L, C]`` how many of them.
        any_action: ``[L]`` bool, lanes that may replay any action (Dyna-Q+).

    Returns:
        ``(states, actions)``, each ``[L, n]``.
    """
    n_lanes, n_cells, n_actions = tried.shape
    lane = _lane_starts(n_lanes, n_cells)  # [L, 1] where each lane's lists start, flat
    states = seen.take(lane + (u_state * n_seen[:, None]).astype(np.int64))
    where = lane + states  # the state's row in each lane
    counts = n_tried.take(where)
    if any_action.any():
        counts = np.where(any_action[:, None], n_actions, counts)
    pick = (u_action * counts).astype(np.int64)
    if not any_action.any():
        return states, tried.take(where * n_actions + pick)
    listed = tried.take(where * n_actions + np.minimum(pick, n_actions - 1))
    actions = np.where(any_action[:, None], pick, listed)
    return states, actions


def plan(q, s, a, r, s_next, *, alpha, gamma):
    r"""``n`` planning updates of every lane, one after another: Dyna-Q's step (f).

    Round ``k`` replays transition ``k`` of every lane at once,
    ``Q(S_k, A_k) += α[R_k + γ max_a Q(S'_k, a) − Q(S_k, A_k)]`` (``q_update``); later rounds
    see the earlier rounds' values, as in the book's loop.

    Args:
        q: ``[L, C, A]`` each lane's action values (not changed: a new table is returned).
        s: ``[L, n]`` the replayed states.
        a: ``[L, n]`` their actions.
        r: ``[L, n]`` their rewards (with any bonus).
        s_next: ``[L, n]`` their next states, as the model says.
        alpha: Step size α (scalar or ``[L]``).
        gamma: Discount γ (scalar or ``[L]``).

    Returns:
        ``[L, C, A]`` the values after the ``n`` updates.
    """
    q = np.array(q, dtype=np.float64)
    lanes, n_cells, n_actions = q.shape
    row = _lane_starts(lanes, n_cells)  # [L, 1] each lane's first row
    q_sa_at = ((row + s) * n_actions + a).T.copy()  # [n, L] where Q(S, A) sits in q.ravel()
    # [n, A, L] where Q(S', ·) sits, action first: the max over actions then runs along the
    # first axis in memory, which numpy reduces fastest.
    next_at = ((row + s_next) * n_actions).T[:, None, :] + np.arange(n_actions)[:, None]
    r = np.asarray(r, dtype=np.float64).T.copy()
    flat = q.reshape(-1)
    for at, r_k, next_k in zip(q_sa_at, r, next_at, strict=True):
        flat[at] = q_update(flat[at], r_k, flat.take(next_k).T, alpha=alpha, gamma=gamma)
    return q


@functools.lru_cache(maxsize=64)
def _lane_starts(lanes: int, n_cells: int) -> np.ndarray:
    """``[L, 1]`` the first row of each lane's table, made once per size."""
    out = (np.arange(lanes) * n_cells)[:, None]
    out.setflags(write=False)
    return out

