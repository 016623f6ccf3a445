r"""The three learners as Chapter 13 writes them: one run, one episode, one step at a time.

Plain loops over plain floats, compiled (``rlviz.compiled.kernel``). With the book's one-hot
features the policy is the same coin in every state, ``π(right) = 1 / (1 + e^{θ_left −
θ_right})``, and ``∇ln π(A)`` has two entries that are each other's negatives:
``∂ln π(A)/∂θ_right = 1 − π(right)`` if A is right and ``−π(right)`` if A is left.

Each call trains one run and writes its episodes' returns and the π(right) after each
episode's update into the rows it is given. It returns how many environment steps the run took,
the episode at which it ran away (an episode reached ``max_steps`` steps) or −1, and the first
episode it did not start because it had taken ``budget`` steps in all, or −1.

Step t of the run goes right when the run's t-th random number is below π(right).
"""

from __future__ import annotations

import numpy as np

from rlviz.compiled import kernel, on_warm_up
from rlviz.policy_gradient.corridor import GOAL, LEFT, NEXT, REWARD, RIGHT, START

__all__ = ["actor_critic_run", "reinforce_run"]


@kernel
def reinforce_run(dice, theta_right, theta_left, alpha_theta, alpha_w, with_baseline,
                  max_steps, budget, returns, p_right):
    """REINFORCE (§13.3), or with ``with_baseline`` REINFORCE with a learned baseline (§13.4).

    After each episode ``θ ← θ + α_θ Σ_t δ_t ∇ln π(A_t)``, at the θ the episode was played with,
    where ``δ_t = G_t`` or ``δ_t = G_t − w`` with the baseline moving toward every return in
    turn, ``w ← w + α_w δ_t``. Every reward is −1 (``REWARD``) and γ = 1, so ``G_t = −(T − t)``.
    """
    actions = np.empty(max_steps, dtype=np.int8)
    w = 0.0  # the baseline v̂(s, w) = w: the features cannot tell the states apart
    steps = 0
    for k in range(returns.size):
        if steps >= budget:  # out of steps: the run starts no more episodes
            return steps, -1, k
        # Generate an episode S0, A0, R1, …, following π(·|θ).
        p = 1.0 / (1.0 + np.exp(theta_left - theta_right))
        s, T = START, 0
        while s != GOAL:
            if T == max_steps:  # it ran away
                return steps + T, k, -1
            a = RIGHT if dice.random() < p else LEFT
            actions[T] = a
            s = NEXT[s, a]
            T += 1
        steps += T
        # Loop for each step of the episode, t = 0, 1, …, T − 1.
        g = 0.0  # Σ_t δ_t ∂ln π(A_t)/∂θ_right
        for t in range(T):
            G = REWARD * (T - t)
            delta = G - w if with_baseline else G
            if with_baseline:
                w += alpha_w * delta
            g += delta * (1.0 - p if actions[t] == RIGHT else -p)
        theta_right += alpha_theta * g
        theta_left -= alpha_theta * g
        returns[k] = -T
        p_right[k] = 1.0 / (1.0 + np.exp(theta_left - theta_right))
    return steps, -1, -1


@kernel
def actor_critic_run(dice, theta_right, theta_left, alpha_theta, alpha_w, cells, max_steps,
                     budget, returns, p_right):
    """One-step actor-critic (§13.5, γ = 1 so I = 1) with a table critic ``v̂(S) = v[cells[S]]``.

    Every step: ``δ = R + v̂(S') − v̂(S)`` (``v̂(G) = 0``), ``v̂(S) ← v̂(S) + α_w δ``,
    ``θ ← θ + α_θ δ ∇ln π(A | θ)``.
    """
    v = np.zeros(cells.max() + 1)  # the goal's cell is never updated: it stays 0
    steps = 0
    for k in range(returns.size):
        if steps >= budget:
            return steps, -1, k
        s, T = START, 0
        while s != GOAL:
            if T == max_steps:
                return steps + T, k, -1
            p = 1.0 / (1.0 + np.exp(theta_left - theta_right))
            a = RIGHT if dice.random() < p else LEFT
            s_next = NEXT[s, a]
            delta = REWARD + v[cells[s_next]] - v[cells[s]]
            v[cells[s]] += alpha_w * delta
            z = 1.0 - p if a == RIGHT else -p  # ∂ln π(A)/∂θ_right; θ_left's is −z
            theta_right += alpha_theta * delta * z
            theta_left -= alpha_theta * delta * z
            s = s_next
            T += 1
        steps += T
        returns[k] = -T
        p_right[k] = 1.0 / (1.0 + np.exp(theta_left - theta_right))
    return steps, -1, -1


@on_warm_up
def _warm_up() -> None:
    """Compile (or load from disk) both loops for the argument types ``train`` passes."""
    rows = np.full((2, 1), np.nan, dtype=np.float32)
    reinforce_run(np.random.default_rng(0), 0.0, 0.0, 0.1, 0.1, True, 10, 10, rows[0], rows[1])
    actor_critic_run(np.random.default_rng(0), 0.0, 0.0, 0.1, 0.1, np.zeros(4, dtype=np.intp),
                     10, 10, rows[0], rows[1])
