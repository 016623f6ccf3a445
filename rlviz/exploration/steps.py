"""The learners' readable steps: action choice, the Q-learning step, the bonus model, PSRL."""

from __future__ import annotations

import functools

import numpy as np

from rlviz import td
from rlviz.exploration.exact import backward_induction
from rlviz.exploration.problems import N_SLOTS, STAY

__all__ = [
    "bonus_model",
    "choose_actions",
    "plan_models",
    "posterior_sample",
    "q_learning_step",
]


EXPLORE, RANDOM_ACTION, TIE, TRANSITION = range(4)
"""Columns of a run's row of uniforms at each (episode, step)."""


DIRICHLET_PRIOR = 1.0
"""PSRL's prior: Dirichlet(1, 1, 1) over (back, stay, forward) for every pair."""
REWARD_PRIOR_SD = 1.0
REWARD_NOISE_SD = 0.5
"""PSRL's reward model: each pair's mean reward is N(0, 1) a priori, and an observed reward is
that mean plus Gaussian noise of sd 1/2 (the sub-Gaussian scale of any reward in [0, 1])."""


# --------------------------------------------------------------------------- the learners' steps
def _by_action(x):
    """The ``A`` columns of ``x [L, A]``: loops over a handful of actions beat reductions."""
    return [x[:, a] for a in range(x.shape[-1])]


def choose_actions(scores, epsilon, u):
    r"""ε-greedy on ``scores``, ties between the best actions broken uniformly at random.

    .. math:: a = \begin{cases} \text{uniform over } \mathcal A & \text{if } u_0 < \varepsilon \\
        \text{uniform over } \arg\max_a \text{scores}(a) & \text{otherwise} \end{cases}

    One row of uniforms per lane decides: ``u[:, EXPLORE]`` the coin, ``u[:, RANDOM_ACTION]``
    the random action, ``u[:, TIE]`` which of the tied best actions. Q-learners pass their
    ``Q_h(s, ·)``; planners pass their plan's optimal-action set with ε = 0.

    Args:
        scores: ``[L, A]`` what each lane maximises.
        epsilon: ``[L]`` exploration rates.
        u: ``[L, 4]`` uniforms in [0, 1).

    Returns:
        ``[L]`` actions.
    """
    columns = _by_action(scores)
    top = functools.reduce(np.maximum, columns)
    is_best = [c == top for c in columns]
    pick = (u[:, TIE] * sum(is_best)).astype(np.int64)  # take the pick-th tied best action
    greedy, seen = np.zeros(len(top), dtype=np.int64), np.zeros(len(top), dtype=np.int64)
    for a, best in enumerate(is_best):
        greedy = np.where(best & (seen == pick), a, greedy)
        seen = seen + best
    random = (u[:, RANDOM_ACTION] * len(columns)).astype(np.int64)
    return np.where(u[:, EXPLORE] < epsilon, random, greedy)


def q_learning_step(q_sa, r, q_next, *, alpha, last_step):
    r"""Finite-horizon Q-learning: one update of ``Q_h(s, a)`` per lane.

    .. math:: Q_h(s, a) \leftarrow Q_h(s, a) + \alpha \big[ r + \max_{a'} Q_{h+1}(s', a')
        - Q_h(s, a) \big], \qquad Q_H \equiv 0

    (Watkins, 1989; undiscounted, with one table per step as the horizon is fixed.) The update
    is ``rlviz.td.td_update``.

    Args:
        q_sa: ``[L]`` current ``Q_h(s, a)``.
        r: ``[L]`` rewards.
        q_next: ``[L, A]`` ``Q_{h+1}(s', ·)``.
        alpha: Step size (scalar or ``[L]``).
        last_step: ``[L]`` whether ``h = H − 1`` (nothing follows).

    Returns:
        ``[L]`` new values of ``Q_h(s, a)``.
    """
    best_next = functools.reduce(np.maximum, _by_action(q_next))
    target = r + np.where(last_step, 0.0, best_next)
    return td.td_update(q_sa, target, alpha)


def bonus_model(counts, reward_sum, *, beta, r_max):
    r"""The optimistic model a count-based learner plans in (MBIE-EB).

    .. math:: \tilde r(s, a) = \hat r(s, a) + \frac{\beta}{\sqrt{N(s, a)}}, \qquad
        \tilde P(\cdot \mid s, a) = \hat P(\cdot \mid s, a) = \frac{N(s, a, \cdot)}{N(s, a)}

    An untried pair (``N = 0``) is taken to stay put and pay ``r_max + β`` every step, the most
    it could be worth. Source: Strehl & Littman (2008), section 5 (there with discounting).

    Args:
        counts: ``[L, S, A, 3]`` observed (back, stay, forward) outcomes.
        reward_sum: ``[L, S, A]`` total reward observed.
        beta: Bonus scale β ≥ 0.
        r_max: ``[L]`` largest one-step reward of each lane's problem.

    Returns:
        ``(prob [L, S, A, 3], reward [L, S, A])``.
    """
    n = counts.sum(axis=-1)
    seen = n > 0
    safe = np.maximum(n, 1)
    stay = np.eye(N_SLOTS)[STAY]
    prob = np.where(seen[..., None], counts / safe[..., None], stay)
    optimistic = np.broadcast_to(np.asarray(r_max, dtype=np.float64)[:, None, None] + beta,
                                 n.shape)
    reward = np.where(seen, reward_sum / safe + beta / np.sqrt(safe), optimistic)
    return prob, reward


def posterior_sample(counts, reward_sum, rng):
    r"""One MDP drawn from PSRL's posterior, for every lane given.

    .. math:: \tilde P(\cdot \mid s, a) \sim \mathrm{Dirichlet}\big(1 + N(s, a, \cdot)\big),
        \qquad \tilde r(s, a) \sim \mathcal N\Big(\frac{\sum r / \sigma^2}{1 + N/\sigma^2},
        \frac{1}{1 + N/\sigma^2}\Big)

    The first is the posterior of the (back, stay, forward) probabilities under a uniform
    prior; the second that of a mean reward with prior N(0, 1) after ``N`` observations with
    noise of sd σ = 1/2. A Dirichlet sample is a normalised vector of Gamma draws.
    Source: Osband, Russo & Van Roy (2013), Algorithm 1; Strens (2000).

    Args:
        counts: ``[L, S, A, 3]`` observed (back, stay, forward) outcomes.
        reward_sum: ``[L, S, A]`` total reward observed.
        rng: The posterior stream.

    Returns:
        ``(prob [L, S, A, 3], reward [L, S, A])``.
    """
    g = rng.standard_gamma(DIRICHLET_PRIOR + counts)
    prob = g / g.sum(axis=-1, keepdims=True)
    n = counts.sum(axis=-1)
    precision = 1.0 / REWARD_PRIOR_SD**2 + n / REWARD_NOISE_SD**2
    mean = reward_sum / REWARD_NOISE_SD**2 / precision
    reward = mean + rng.standard_normal(n.shape) / np.sqrt(precision)
    return prob, reward


def plan_models(next_state, prob, reward, horizons, *, steps=None):
    """Plan every lane's model at once: ``backward_induction`` over the lanes.

    Args:
        next_state: ``[L, S, A, 3]`` each lane's chain layout (positions ``0..S-1``).
        prob: ``[L, S, A, 3]`` outcome probabilities.
        reward: ``[L, S, A]`` rewards.
        horizons: ``[L]`` episode lengths; a lane with a shorter episode uses the last steps of
            the longest plan (the same number of steps to go).
        steps: Steps to return (at least the longest horizon; by default exactly that).

    Returns:
        ``[L, steps, S, A]`` bool, each lane's optimal actions at its step ``h`` (steps beyond
        its horizon are False).
    """
    horizons = np.asarray(horizons)
    longest = int(horizons.max())
    expected = (prob * reward[..., None]).sum(axis=-1)  # r(s, a), as TabularMDP.R sums it
    _, to_go = backward_induction(next_state, prob, expected, longest)  # [H, L, S, A]
    greedy = to_go[::-1].swapaxes(0, 1)  # [L, H_max, S, A]: step h has H_max - h steps to go
    steps = longest if steps is None else int(steps)
    if steps == longest and (horizons == longest).all():
        return greedy
    step = np.arange(steps)[None, :] + (longest - horizons)[:, None]  # row of lane's step h
    inside = step < longest
    out = np.take_along_axis(greedy, np.minimum(step, longest - 1)[..., None, None], axis=1)
    return out & inside[..., None, None]
