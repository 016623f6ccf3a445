"""Greedy rollouts in gymnasium: the policy's value checked by playing it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rlviz.mdp import TabularMDP

__all__ = [
    "RolloutCheck",
    "episodes_within_budget",
    "expected_episode_length",
    "greedy_rollouts",
]


# --------------------------------------------------------------------------- rollouts
ROLLOUT_STEP_BUDGET = 150_000
"""Steps a gymnasium check plays in all (about a second): no new episode starts after them."""

Z_99 = 2.5758293035489004
"""Two-sided 99% quantile of the standard normal distribution."""


@dataclass(frozen=True, eq=False)
class RolloutCheck:
    """Episodes of a fixed policy played in a gymnasium environment.

    Attributes:
        gamma: Discount applied to the returns.
        seed: Seed of the environment's random generator (set once, at the first reset).
        returns: Discounted return of each episode.
        successes: Whether each episode ended in a goal cell.
        lengths: Steps of each episode.
        truncated: Whether each episode hit the step limit.
    """

    gamma: float
    seed: int
    returns: np.ndarray  # [N] discounted return
    successes: np.ndarray  # [N] bool
    lengths: np.ndarray  # [N] int
    truncated: np.ndarray  # [N] bool

    @property
    def episodes(self) -> int:
        """Number of episodes N."""
        return len(self.returns)

    @property
    def mean_return(self) -> float:
        """Average discounted return, the Monte Carlo estimate of ``v_pi(start)``."""
        return float(self.returns.mean())

    @property
    def return_halfwidth(self) -> float:
        """Half-width of a 99% confidence interval of the mean return.

        The normal interval ``2.576 s / sqrt(N)``, but never narrower than the "rule of three"
        allowance ``ln(100) max|G| / N``: when every episode returned the same (all reached the
        goal, say), an outcome not yet seen may still have a probability up to ``ln(100) / N``.
        """
        if self.episodes < 2:
            return math.inf
        normal = Z_99 * self.returns.std(ddof=1) / math.sqrt(self.episodes)
        unseen = math.log(100) * float(np.abs(self.returns).max()) / self.episodes
        return float(max(normal, unseen))

    @property
    def success_rate(self) -> float:
        """Fraction of episodes that reached a goal."""
        return float(self.successes.mean())

    @property
    def success_interval(self) -> tuple[float, float]:
        """99% Wilson score interval of the success probability."""
        n, p, z = self.episodes, self.success_rate, Z_99
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        return max(0.0, centre - half), min(1.0, centre + half)


def expected_episode_length(mdp: TabularMDP, actions: Sequence[int], *,
                            max_steps: int = 1000) -> float:
    """Expected number of steps of an episode of a deterministic policy, cut at ``max_steps``.

    ``E[min(T, H)] = sum_{t < H} P(T > t)``: the start distribution is pushed through the
    policy's transition matrix and the probability still outside the terminal states is added
    up, step by step.

    Args:
        mdp: The model.
        actions: ``[S]`` the action taken in each state.
        max_steps: The cut ``H``.

    Returns:
        The expected length, in [0, max_steps].
    """
    a = np.asarray(actions, dtype=np.int64)
    p_pi = np.zeros((mdp.n_states, mdp.n_states))
    rows = np.arange(mdp.n_states)
    np.add.at(p_pi, (rows[:, None], mdp.next_state[rows, a]), mdp.prob[rows, a])
    live = ~mdp.terminal
    d = np.where(live, mdp.start, 0.0)
    total = 0.0
    for _ in range(int(max_steps)):
        mass = float(d.sum())
        if mass < 1e-12:
            break
        total += mass
        d = np.where(live, d @ p_pi, 0.0)
    return total


def episodes_within_budget(length: float, *, most: int = 4000, least: int = 200,
                           step: int = 100, budget: int = ROLLOUT_STEP_BUDGET) -> int:
    """How many episodes of about ``length`` steps fit in ``budget`` steps, in whole ``step``s.

    Args:
        length: Expected steps of an episode (``expected_episode_length``).
        most: The largest answer.
        least: The smallest answer (the budget's own cut-off stops play early when even this
            many episodes do not fit).
        step: The answer is a multiple of this.
        budget: Steps to spend.

    Returns:
        The number of episodes.
    """
    fits = int(budget / max(length, 1.0)) // step * step
    return max(least, min(most, fits))


def greedy_rollouts(
    env_id: str,
    env_kwargs: dict,
    actions: Sequence[int],
    *,
    gamma: float,
    episodes: int,
    seed: int,
    max_steps: int = 1000,
    step_budget: int = ROLLOUT_STEP_BUDGET,
) -> RolloutCheck:
    r"""Play a deterministic policy in gymnasium's own environment and record the returns.

    The environment is made with ``gymnasium.make(env_id, **env_kwargs)``, each episode is
    cut off after ``max_steps`` steps (as ``max_episode_steps`` would), and it is seeded once,
    at the first ``reset``; each episode's return is
    :math:`G = \sum_t \gamma^t r_{t+1}`, whose average estimates ``v_pi(start)``.

    Args:
        env_id: A gymnasium id with a discrete observation space, e.g. ``"FrozenLake-v1"``.
        env_kwargs: Keyword arguments of ``gymnasium.make``.
        actions: ``[S]`` the action to take in each state.
        gamma: Discount factor in [0, 1].
        episodes: Number of episodes (at least 1).
        seed: Seed of the environment.
        max_steps: Episodes are cut off (truncated) after this many steps.
        step_budget: No new episode starts once this many steps have been played in all, so a
            policy that never finishes cannot take long; fewer episodes are then returned.

    Returns:
        The returns, successes and lengths of every episode played.

    Raises:
        ValueError: if an argument is out of range.
    """
    import gymnasium as gym

    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1]; got {gamma}")
    if episodes < 1 or max_steps < 1 or step_budget < 1:
        raise ValueError("episodes, max_steps and step_budget must be at least 1")
    env = gym.make(env_id, **env_kwargs)
    # Stepped without gymnasium's wrappers (time limit, order and API checks: they draw no
    # randomness); the time limit is counted here, as TimeLimit counts it.
    raw = env.unwrapped
    try:
        n_states = int(env.observation_space.n)
        policy = [int(a) for a in actions]
        if len(policy) != n_states:
            raise ValueError(f"actions must give one action per state ({n_states}); got "
                             f"{len(policy)}")
        desc = getattr(env.unwrapped, "desc", None)
        goals = (
            set(np.flatnonzero(np.asarray(desc).ravel() == b"G").tolist())
            if desc is not None else None
        )
        returns = np.empty(episodes)
        successes = np.empty(episodes, dtype=bool)
        lengths = np.empty(episodes, dtype=np.int64)
        truncated = np.empty(episodes, dtype=bool)
        state, _ = env.reset(seed=int(seed))
        played, total = 0, 0
        for i in range(episodes):
            if total >= step_budget:
                break
            if i:
                state, _ = env.reset()
            ret, discount, steps = 0.0, 1.0, 0
            while True:
                state, reward, done, _, _ = raw.step(policy[state])
                ret += discount * reward
                discount *= gamma
                steps += 1
                cut = steps >= max_steps
                if done or cut:
                    break
            returns[i] = ret
            successes[i] = done and (goals is None or state in goals)
            lengths[i] = steps
            truncated[i] = cut and not done
            played, total = i + 1, total + steps
    finally:
        env.close()
    returns, successes = returns[:played], successes[:played]
    lengths, truncated = lengths[:played], truncated[:played]
    for a in (returns, successes, lengths, truncated):
        a.setflags(write=False)
    return RolloutCheck(gamma=float(gamma), seed=int(seed), returns=returns,
                        successes=successes, lengths=lengths, truncated=truncated)
