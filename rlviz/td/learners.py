r"""The four learners as Chapter 6 writes them: one run, one episode, one step at a time.

Plain loops over plain numbers, compiled (``rlviz.compiled.kernel``). Each call trains one run:
``dice`` is the run's generator, ``q`` its table of zeros (updated in place), ``epsilons [N]``
each episode's ε, then the step size α, the discount γ, the steps after which an episode is cut
short and the steps the run may take in all (``budget``). It writes each episode's return,
length and whether it was cut short into the rows it is given, and the visits of each state,
and returns how many episodes it played.

The model comes as ``(next_state, reward, cum_prob, terminal, start_cum)``: outcome ``o`` of
action ``a`` in state ``s`` leads to ``next_state[s, a, o]`` with reward ``reward[s, a, o]``,
``cum_prob[s, a]`` are the outcomes' cumulative probabilities (the last one exactly 1), and
``start_cum`` those of the start states. The records are ``(returns, lengths, truncated,
visits)``: ``[N]``, ``[N]``, ``[N]`` and ``[S]``.

The dice. Step t of the run reads row t of uniforms, ``TIE_KEYS + A`` numbers drawn in turn from
the run's generator: column ``EXPLORE`` decides whether it explores, ``RANDOM_ACTION`` which
action it then takes, ``TRANSITION`` the outcome, ``TABLE_COIN`` Double Q's table, ``START`` the
start state when the step begins an episode, and ``TIE_KEYS + a`` is action ``a``'s key: among
tied best actions, the greedy choice is the one with the largest key (the first one on equal
keys). SARSA chooses A′ with step t + 1's row. These are the numbers ``run_control_loop``
reads, so the two agree draw for draw.

An episode ends in a terminal state (the target is then just R), or is cut short after
``max_steps`` steps or when the run has taken ``budget`` steps in all; a cut is not a terminal
state, so its last target still bootstraps from S′. Sums run in action order, which is how
numpy sums fewer than eight numbers.
"""

from __future__ import annotations

import numpy as np

from rlviz.compiled import kernel
from rlviz.td.dice import EXPLORE, RANDOM_ACTION, START, TABLE_COIN, TIE_KEYS, TRANSITION

__all__ = ["double_q_run", "expected_sarsa_run", "q_learning_run", "sarsa_run"]


@kernel
def q_learning_run(dice, q, epsilons, alpha, gamma, max_steps, budget, model, records):
    r"""Q-learning, off-policy TD control (Sutton & Barto (2018), §6.5).

    .. math:: Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + \gamma \max_a Q(S', a) - Q(S, A)\big]
    """
    next_state, reward, cum_prob, terminal, start_cum = model
    returns, lengths, truncated, visits = records
    n_states, n_actions, n_outcomes = next_state.shape
    u = np.empty(TIE_KEYS + n_actions)  # this step's dice
    for j in range(u.size):
        u[j] = dice.random()
    t = 0
    for k in range(epsilons.size):  # loop for each episode
        eps, G, n = epsilons[k], 0.0, 0
        # Initialize S: a start state drawn from the start distribution
        s = min(np.searchsorted(start_cum, u[START], side="right"), n_states - 1)
        while True:  # loop for each step of the episode
            # Choose A from S using the ε-greedy policy derived from Q
            if u[EXPLORE] < eps:
                a = int(u[RANDOM_ACTION] * n_actions)
            else:
                a = 0
                for b in range(1, n_actions):  # the best action, a tie to the largest key
                    tied = q[s, b] == q[s, a] and u[TIE_KEYS + b] > u[TIE_KEYS + a]
                    if q[s, b] > q[s, a] or tied:
                        a = b
            # Take action A, observe R, S' (the first outcome whose cumulative probability
            # exceeds the uniform)
            o = 0
            while o < n_outcomes - 1 and cum_prob[s, a, o] <= u[TRANSITION]:
                o += 1
            r, s2 = reward[s, a, o], next_state[s, a, o]
            # Q(S, A) <- Q(S, A) + α [R + γ max_a Q(S', a) - Q(S, A)]
            y = r if terminal[s2] else r + gamma * q[s2].max()
            q[s, a] += alpha * (y - q[s, a])

            visits[s] += 1
            G, n, t = G + r, n + 1, t + 1
            for j in range(u.size):  # the next step's dice
                u[j] = dice.random()
            cut = not terminal[s2] and (n >= max_steps or t >= budget)
            if terminal[s2] or cut:
                break
            s = s2  # S <- S'
        returns[k], lengths[k], truncated[k] = G, n, cut
        if t >= budget:
            return k + 1
    return epsilons.size


@kernel
def sarsa_run(dice, q, epsilons, alpha, gamma, max_steps, budget, model, records):
    r"""SARSA, on-policy TD control (Sutton & Barto (2018), §6.4).

    .. math:: Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + \gamma Q(S', A') - Q(S, A)\big]

    A′ is chosen in S′ (with the next step's dice) before Q(S, A) is updated, as in the book.
    """
    next_state, reward, cum_prob, terminal, start_cum = model
    returns, lengths, truncated, visits = records
    n_states, n_actions, n_outcomes = next_state.shape
    u = np.empty(TIE_KEYS + n_actions)  # this step's dice
    u2 = np.empty(TIE_KEYS + n_actions)  # the next step's dice
    for j in range(u.size):
        u[j] = dice.random()
    t = 0
    for k in range(epsilons.size):  # loop for each episode
        eps, G, n = epsilons[k], 0.0, 0
        # Initialize S: a start state drawn from the start distribution
        s = min(np.searchsorted(start_cum, u[START], side="right"), n_states - 1)
        # Choose A from S using the ε-greedy policy derived from Q
        if u[EXPLORE] < eps:
            a = int(u[RANDOM_ACTION] * n_actions)
        else:
            a = 0
            for b in range(1, n_actions):  # the best action, a tie to the largest key
                tied = q[s, b] == q[s, a] and u[TIE_KEYS + b] > u[TIE_KEYS + a]
                if q[s, b] > q[s, a] or tied:
                    a = b
        while True:  # loop for each step of the episode
            # Take action A, observe R, S' (the first outcome whose cumulative probability
            # exceeds the uniform)
            o = 0
            while o < n_outcomes - 1 and cum_prob[s, a, o] <= u[TRANSITION]:
                o += 1
            r, s2 = reward[s, a, o], next_state[s, a, o]
            for j in range(u.size):  # the next step's dice
                u2[j] = dice.random()
            # Choose A' from S' using the ε-greedy policy derived from Q
            a2 = 0
            if not terminal[s2]:
                if u2[EXPLORE] < eps:
                    a2 = int(u2[RANDOM_ACTION] * n_actions)
                else:
                    for b in range(1, n_actions):
                        tied = q[s2, b] == q[s2, a2] and u2[TIE_KEYS + b] > u2[TIE_KEYS + a2]
                        if q[s2, b] > q[s2, a2] or tied:
                            a2 = b
            # Q(S, A) <- Q(S, A) + α [R + γ Q(S', A') - Q(S, A)]
            y = r if terminal[s2] else r + gamma * q[s2, a2]
            q[s, a] += alpha * (y - q[s, a])

            visits[s] += 1
            G, n, t = G + r, n + 1, t + 1
            u, u2 = u2, u  # the next step's dice become this step's
            cut = not terminal[s2] and (n >= max_steps or t >= budget)
            if terminal[s2] or cut:
                break
            s, a = s2, a2  # S <- S', A <- A'
        returns[k], lengths[k], truncated[k] = G, n, cut
        if t >= budget:
            return k + 1
    return epsilons.size


@kernel
def expected_sarsa_run(dice, q, epsilons, alpha, gamma, max_steps, budget, model, records):
    r"""Expected SARSA (Sutton & Barto (2018), §6.6): the expectation of Q(S′, ·) under ε-greedy.

    .. math:: Q(S, A) \leftarrow Q(S, A) + \alpha\Big[R + \gamma \sum_a \pi(a \mid S') Q(S', a)
        - Q(S, A)\Big], \quad \sum_a \pi(a \mid S') Q(S', a) = \varepsilon \tfrac{1}{|A|}
        \sum_a Q(S', a) + (1 - \varepsilon) \max_a Q(S', a)

    (tied greedy actions share one value, so it does not matter how ties split the greedy part).
    """
    next_state, reward, cum_prob, terminal, start_cum = model
    returns, lengths, truncated, visits = records
    n_states, n_actions, n_outcomes = next_state.shape
    u = np.empty(TIE_KEYS + n_actions)  # this step's dice
    for j in range(u.size):
        u[j] = dice.random()
    t = 0
    for k in range(epsilons.size):  # loop for each episode
        eps, G, n = epsilons[k], 0.0, 0
        # Initialize S: a start state drawn from the start distribution
        s = min(np.searchsorted(start_cum, u[START], side="right"), n_states - 1)
        while True:  # loop for each step of the episode
            # Choose A from S using the ε-greedy policy derived from Q
            if u[EXPLORE] < eps:
                a = int(u[RANDOM_ACTION] * n_actions)
            else:
                a = 0
                for b in range(1, n_actions):  # the best action, a tie to the largest key
                    tied = q[s, b] == q[s, a] and u[TIE_KEYS + b] > u[TIE_KEYS + a]
                    if q[s, b] > q[s, a] or tied:
                        a = b
            # Take action A, observe R, S' (the first outcome whose cumulative probability
            # exceeds the uniform)
            o = 0
            while o < n_outcomes - 1 and cum_prob[s, a, o] <= u[TRANSITION]:
                o += 1
            r, s2 = reward[s, a, o], next_state[s, a, o]
            # Q(S, A) <- Q(S, A) + α [R + γ Σ_a π(a|S') Q(S', a) - Q(S, A)]
            total = 0.0
            for b in range(n_actions):
                total += q[s2, b]
            expected = eps * (total / n_actions) + (1.0 - eps) * q[s2].max()
            y = r if terminal[s2] else r + gamma * expected
            q[s, a] += alpha * (y - q[s, a])

            visits[s] += 1
            G, n, t = G + r, n + 1, t + 1
            for j in range(u.size):  # the next step's dice
                u[j] = dice.random()
            cut = not terminal[s2] and (n >= max_steps or t >= budget)
            if terminal[s2] or cut:
                break
            s = s2  # S <- S'
        returns[k], lengths[k], truncated[k] = G, n, cut
        if t >= budget:
            return k + 1
    return epsilons.size


@kernel
def double_q_run(dice, q, epsilons, alpha, gamma, max_steps, budget, model, records):
    r"""Double Q-learning (Sutton & Barto (2018), §6.7): two tables, ``q [2, S, A]``.

    It acts ε-greedily on Q₁ + Q₂; a fair coin picks the table to update, which chooses the next
    action and the other one values it (ties in that choice go to the first action):

    .. math:: Q_1(S, A) \leftarrow Q_1(S, A) + \alpha\big[R + \gamma\,
        Q_2\big(S', \arg\max_a Q_1(S', a)\big) - Q_1(S, A)\big]
    """
    next_state, reward, cum_prob, terminal, start_cum = model
    returns, lengths, truncated, visits = records
    n_states, n_actions, n_outcomes = next_state.shape
    q1, q2 = q[0], q[1]
    u = np.empty(TIE_KEYS + n_actions)  # this step's dice
    for j in range(u.size):
        u[j] = dice.random()
    t = 0
    for k in range(epsilons.size):  # loop for each episode
        eps, G, n = epsilons[k], 0.0, 0
        # Initialize S: a start state drawn from the start distribution
        s = min(np.searchsorted(start_cum, u[START], side="right"), n_states - 1)
        while True:  # loop for each step of the episode
            # Choose A from S using the ε-greedy policy in Q1 + Q2
            if u[EXPLORE] < eps:
                a = int(u[RANDOM_ACTION] * n_actions)
            else:
                a = 0
                for b in range(1, n_actions):  # the best action, a tie to the largest key
                    q_b, q_a = q1[s, b] + q2[s, b], q1[s, a] + q2[s, a]
                    if q_b > q_a or (q_b == q_a and u[TIE_KEYS + b] > u[TIE_KEYS + a]):
                        a = b
            # Take action A, observe R, S' (the first outcome whose cumulative probability
            # exceeds the uniform)
            o = 0
            while o < n_outcomes - 1 and cum_prob[s, a, o] <= u[TRANSITION]:
                o += 1
            r, s2 = reward[s, a, o], next_state[s, a, o]
            # With probability 0.5: Q1(S, A) <- Q1(S, A) + α [R + γ Q2(S', argmax_a Q1(S', a))
            # - Q1(S, A)]; else the same with Q1 and Q2 swapped
            update, other = (q1, q2) if u[TABLE_COIN] < 0.5 else (q2, q1)
            y = r if terminal[s2] else r + gamma * other[s2, np.argmax(update[s2])]
            update[s, a] += alpha * (y - update[s, a])

            visits[s] += 1
            G, n, t = G + r, n + 1, t + 1
            for j in range(u.size):  # the next step's dice
                u[j] = dice.random()
            cut = not terminal[s2] and (n >= max_steps or t >= budget)
            if terminal[s2] or cut:
                break
            s = s2  # S <- S'
        returns[k], lengths[k], truncated[k] = G, n, cut
        if t >= budget:
            return k + 1
    return epsilons.size
