"""The readable single updates: each TD target and the update, written once on arrays.

One call serves one transition or a whole batch along a leading axis; ``worked_update`` spells
out one update with its numbers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.td.results import _check_settings

__all__ = [
    "WorkedUpdate",
    "double_q_target",
    "epsilon_greedy_probs",
    "expected_sarsa_target",
    "q_learning_target",
    "sarsa_target",
    "td_update",
    "worked_update",
]


# --------------------------------------------------------------------------- single updates
def _discount(gamma, terminal):
    """γ, or 0 where the next state is terminal (nothing follows it)."""
    return gamma if terminal is False else gamma * np.logical_not(terminal)


def _chosen(q_t, a_t):
    """``Q(s_t, a_t)`` in every row: ``q_t [..., A]`` read at the actions ``a_t [...]``."""
    if q_t.ndim == 1:
        return q_t[a_t]
    if q_t.ndim == 2:  # one row per run: the engine's case, kept quick
        return q_t[_rows(len(q_t)), a_t]
    return np.take_along_axis(q_t, np.asarray(a_t)[..., None], axis=-1)[..., 0]


@functools.lru_cache(maxsize=64)
def _rows(n: int) -> np.ndarray:
    """``0, 1, …, n - 1``, made once per size."""
    rows = np.arange(n)
    rows.setflags(write=False)
    return rows


def _expected_value(q_t, epsilon):
    """``sum_a pi(a|s) Q(s, a)`` under ε-greedy, from values ``q_t [..., A]``.

    Tied greedy actions share one value, so the greedy share is ``(1 - ε) max Q`` however the
    ties are split. One row of ``q_t`` or many, each row is summed the same way, so a single
    run and a batch of runs get the same bits.
    """
    total = np.add.reduce(q_t, axis=-1)
    best = _chosen(q_t, q_t.argmax(axis=-1))
    return epsilon * (total / q_t.shape[-1]) + (1.0 - epsilon) * best


def q_learning_target(r_t, q_t, *, gamma, terminal=False):
    r"""Q-learning's target: the reward plus the discounted best next action value.

    .. math:: y = r_t + \gamma \max_{a'} Q(s_t, a'), \qquad y = r_t \text{ if } s_t
        \text{ is terminal.}

    Source: Watkins (1989); Sutton & Barto (2018), eq. 6.8.

    Args:
        r_t: ``[...]`` reward received on arriving in ``s_t``.
        q_t: ``[..., A]`` action values of the next state ``s_t``.
        gamma: Discount factor in [0, 1] (scalar or ``[...]``).
        terminal: ``[...]`` whether ``s_t`` ends the episode.

    Returns:
        ``[...]`` the target.
    """
    q_t = np.asarray(q_t, dtype=np.float64)
    best = _chosen(q_t, q_t.argmax(axis=-1))  # max_a' Q(s_t, a'): the greedy action's value
    return r_t + _discount(gamma, terminal) * best


def sarsa_target(r_t, q_t, a_t, *, gamma, terminal=False):
    r"""SARSA's target: the reward plus the discounted value of the next action actually taken.

    .. math:: y = r_t + \gamma Q(s_t, a_t), \qquad y = r_t \text{ if } s_t \text{ is terminal.}

    Source: Rummery & Niranjan (1994); Sutton & Barto (2018), eq. 6.7.

    Args:
        r_t: ``[...]`` reward received on arriving in ``s_t``.
        q_t: ``[..., A]`` action values of the next state ``s_t``.
        a_t: ``[...]`` the next action ``a'``, chosen by the behaviour policy in ``s_t``.
        gamma: Discount factor in [0, 1].
        terminal: ``[...]`` whether ``s_t`` ends the episode (then ``a_t`` is ignored).

    Returns:
        ``[...]`` the target.
    """
    q_t = np.asarray(q_t, dtype=np.float64)
    return r_t + _discount(gamma, terminal) * _chosen(q_t, a_t)


def epsilon_greedy_probs(q, epsilon) -> np.ndarray:
    r"""The ε-greedy policy, with the greedy share split equally between tied best actions.

    .. math:: \pi(a \mid s) = \frac{\varepsilon}{|A|} + (1 - \varepsilon)
        \frac{[a \in \arg\max Q(s, \cdot)]}{|\arg\max Q(s, \cdot)|}

    Source: Sutton & Barto (2018), Section 5.4.

    Args:
        q: ``[..., A]`` action values.
        epsilon: Exploration rate in [0, 1] (scalar or ``[...]``).

    Returns:
        ``[..., A]`` action probabilities.
    """
    q = np.asarray(q, dtype=np.float64)
    eps = np.asarray(epsilon, dtype=np.float64)[..., None]
    best = q == q.max(axis=-1, keepdims=True)
    greedy = best / best.sum(axis=-1, keepdims=True)
    return eps / q.shape[-1] + (1.0 - eps) * greedy


def expected_sarsa_target(r_t, q_t, *, gamma, epsilon, terminal=False):
    r"""Expected SARSA's target: the reward plus the discounted ε-greedy expectation of Q.

    .. math:: y = r_t + \gamma \sum_{a'} \pi(a' \mid s_t) Q(s_t, a')
        = r_t + \gamma \Big[\varepsilon \tfrac{1}{|A|} \sum_{a'} Q(s_t, a')
        + (1 - \varepsilon) \max_{a'} Q(s_t, a')\Big]

    (the second form holds because tied greedy actions share one value). With ``epsilon = 0`` it
    is Q-learning's target. Source: van Seijen et al. (2009); Sutton & Barto (2018), eq. 6.9.

    Args:
        r_t: ``[...]`` reward received on arriving in ``s_t``.
        q_t: ``[..., A]`` action values of the next state ``s_t``.
        gamma: Discount factor in [0, 1].
        epsilon: Exploration rate of the ε-greedy target policy (scalar or ``[...]``).
        terminal: ``[...]`` whether ``s_t`` ends the episode.

    Returns:
        ``[...]`` the target.
    """
    expected = _expected_value(np.asarray(q_t, dtype=np.float64), epsilon)
    return r_t + _discount(gamma, terminal) * expected


def double_q_target(r_t, q_select_t, q_evaluate_t, *, gamma, terminal=False):
    r"""Double Q-learning's target: one table picks the next action, the other values it.

    .. math:: y = r_t + \gamma Q_2\big(s_t, \arg\max_{a'} Q_1(s_t, a')\big)

    Decoupling the choice from the evaluation removes the maximisation bias of
    ``max_a Q``. Ties in the argmax go to the first action. Source: van Hasselt (2010);
    Sutton & Barto (2018), Section 6.7.

    Args:
        r_t: ``[...]`` reward received on arriving in ``s_t``.
        q_select_t: ``[..., A]`` values of ``s_t`` in the table being updated (``Q_1``).
        q_evaluate_t: ``[..., A]`` values of ``s_t`` in the other table (``Q_2``).
        gamma: Discount factor in [0, 1].
        terminal: ``[...]`` whether ``s_t`` ends the episode.

    Returns:
        ``[...]`` the target.
    """
    best = np.asarray(q_select_t, dtype=np.float64).argmax(axis=-1)
    chosen = _chosen(np.asarray(q_evaluate_t, dtype=np.float64), best)
    return r_t + _discount(gamma, terminal) * chosen


def td_update(q_tm1, target, alpha):
    r"""Move an action value a fraction α of the way to its target.

    .. math:: Q(s, a) \leftarrow Q(s, a) + \alpha \big[y - Q(s, a)\big]

    Args:
        q_tm1: ``[...]`` the current value ``Q(s, a)``.
        target: ``[...]`` the target ``y``.
        alpha: Step size in (0, 1] (scalar or ``[...]``).

    Returns:
        ``[...]`` the new value.
    """
    return q_tm1 + alpha * (target - q_tm1)


@dataclass(frozen=True)
class WorkedUpdate:
    """One TD update worked three ways, every intermediate number kept for display."""

    q_sa: float
    reward: float
    q_next: np.ndarray  # [A] Q(s', ·)
    a_next: int
    gamma: float
    alpha: float
    epsilon: float
    terminal: bool
    greedy_next: int  # first action with the largest Q(s', ·)
    max_next: float  # max_a Q(s', a)
    policy_next: np.ndarray  # [A] ε-greedy probabilities in s'
    expected_next: float  # sum_a π(a|s') Q(s', a)
    targets: dict[str, float]  # algorithm -> target y
    td_errors: dict[str, float]  # algorithm -> y - Q(s, a)
    new_values: dict[str, float]  # algorithm -> Q(s, a) after the update


def worked_update(
    q_sa: float,
    reward: float,
    q_next,
    a_next: int,
    *,
    gamma: float,
    alpha: float,
    epsilon: float,
    terminal: bool = False,
) -> WorkedUpdate:
    r"""One update of Q(s, a) by Q-learning, SARSA and Expected SARSA, step by step.

    For each algorithm: target ``y``, TD error ``δ = y − Q(s, a)`` and new value
    ``Q(s, a) + α δ`` (Sutton & Barto (2018), eqs. 6.7-6.9). When ``s'`` is terminal every
    target is just ``r``.

    Args:
        q_sa: The current ``Q(s, a)``.
        reward: The reward ``r`` of the transition.
        q_next: ``[A]`` action values ``Q(s', ·)`` of the next state.
        a_next: Index of the next action ``a'`` (used by SARSA).
        gamma: Discount factor in [0, 1].
        alpha: Step size in (0, 1].
        epsilon: Exploration rate of the ε-greedy policy (used by Expected SARSA).
        terminal: Whether ``s'`` is terminal.

    Returns:
        The worked update.

    Raises:
        InputError: if a number is missing or out of range, or ``a'`` is not an action.
    """
    q_next = np.asarray(q_next, dtype=np.float64)
    if q_next.ndim != 1 or q_next.size == 0:
        raise InputError("Q(s', ·) needs one value per action (at least one)")
    for name, value in (("Q(s, a)", q_sa), ("r", reward)):
        if not np.isfinite(value):
            raise InputError(f"{name} must be a finite number; got {value}")
    if not np.isfinite(q_next).all():
        raise InputError("every Q(s', ·) must be a finite number")
    _check_settings(gamma=gamma, alpha=alpha, epsilon=epsilon)
    if not 0 <= int(a_next) < q_next.size:
        raise InputError(f"a' must be one of the {q_next.size} actions; got {a_next}")
    a_next = int(a_next)
    targets = {
        "q_learning": float(q_learning_target(reward, q_next, gamma=gamma, terminal=terminal)),
        "sarsa": float(sarsa_target(reward, q_next, a_next, gamma=gamma, terminal=terminal)),
        "expected_sarsa": float(
            expected_sarsa_target(reward, q_next, gamma=gamma, epsilon=epsilon, terminal=terminal)
        ),
    }
    policy = epsilon_greedy_probs(q_next, epsilon)
    return WorkedUpdate(
        q_sa=float(q_sa),
        reward=float(reward),
        q_next=q_next,
        a_next=a_next,
        gamma=float(gamma),
        alpha=float(alpha),
        epsilon=float(epsilon),
        terminal=bool(terminal),
        greedy_next=int(q_next.argmax()),
        max_next=float(q_next.max()),
        policy_next=policy,
        expected_next=float(policy @ q_next),
        targets=targets,
        td_errors={k: y - float(q_sa) for k, y in targets.items()},
        new_values={k: float(td_update(q_sa, y, alpha)) for k, y in targets.items()},
    )
