"""The offline problems and their datasets: one state with many actions, and gridworlds.

A behaviour policy covers only part of the actions (a stretch of the line, a safe path on the
grid), so the data corrects only the actions it tried.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse
import scipy.sparse.linalg

from rlviz.envs import LAYOUTS, cliff_walking, gridworld
from rlviz.mdp import TabularMDP, action_values

__all__ = [
    "ALPHAS",
    "CURVES",
    "GRIDS",
    "MAX_ACTIONS",
    "MAX_DATASET",
    "MAX_STEPS",
    "Dataset",
    "GridProblem",
    "OneStateProblem",
    "grid_problem",
    "one_state_problem",
    "sample_grid",
    "sample_one_state",
]


ALPHAS: tuple[float, ...] = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0)
"""The α values every experiment trains at once (0 is the naive learner)."""
MAX_ACTIONS = 201
MAX_DATASET = 20_000
MAX_STEPS = 10_000
MAX_EPISODE = 100
"""Behaviour episodes on a grid are cut after this many steps (a time limit, not a terminal)."""

# ---------------------------------------------------------------------------------- data


@dataclass(frozen=True, eq=False)
class Dataset:
    """Transitions ``(s, a, r, s', done)`` logged by a behaviour policy.

    Attributes:
        states: ``[N]`` state of each transition.
        actions: ``[N]`` action taken.
        rewards: ``[N]`` reward received.
        next_states: ``[N]`` state reached.
        dones: ``[N]`` True where ``s'`` is terminal (no bootstrap).
        n_states: Number of states S of the problem.
        n_actions: Number of actions A.
    """

    states: np.ndarray  # [N] int
    actions: np.ndarray  # [N] int
    rewards: np.ndarray  # [N] float
    next_states: np.ndarray  # [N] int
    dones: np.ndarray  # [N] bool
    n_states: int
    n_actions: int

    def __post_init__(self) -> None:
        cols = {
            "states": np.array(self.states, dtype=np.int64),
            "actions": np.array(self.actions, dtype=np.int64),
            "rewards": np.array(self.rewards, dtype=np.float64),
            "next_states": np.array(self.next_states, dtype=np.int64),
            "dones": np.array(self.dones, dtype=bool),
        }
        n = cols["states"].shape
        if len(n) != 1 or n[0] == 0:
            raise ValueError("a dataset needs at least one transition, as 1-D arrays")
        for name, arr in cols.items():
            if arr.shape != n:
                raise ValueError(f"{name} has shape {arr.shape}; every column must be {n}")
        if self.n_states < 1 or self.n_actions < 1:
            raise ValueError("a dataset needs at least one state and one action")
        for name, top in (("states", self.n_states), ("next_states", self.n_states),
                          ("actions", self.n_actions)):
            if ((cols[name] < 0) | (cols[name] >= top)).any():
                raise ValueError(f"{name} holds indices outside [0, {top})")
        if not np.isfinite(cols["rewards"]).all():
            raise ValueError("rewards must be finite numbers")
        for name, arr in cols.items():
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @property
    def size(self) -> int:
        """Number of transitions N."""
        return int(self.states.shape[0])

    @property
    def counts(self) -> np.ndarray:
        """``[S, A]`` number of transitions of each (state, action) pair."""
        c = np.zeros((self.n_states, self.n_actions), dtype=np.int64)
        np.add.at(c, (self.states, self.actions), 1)
        return c

    @property
    def mean_rewards(self) -> np.ndarray:
        """``[S, A]`` mean reward of each pair in the data (0 where unseen)."""
        total = np.zeros((self.n_states, self.n_actions))
        np.add.at(total, (self.states, self.actions), self.rewards)
        return total / np.maximum(self.counts, 1)


def _reward_hill(x: np.ndarray) -> np.ndarray:
    width = np.where(x < -0.05, 0.45, 0.15)  # a slow rise, a steep fall
    return 1.2 * np.exp(-0.5 * ((x + 0.05) / width) ** 2) - 0.3


def _reward_two_peaks(x: np.ndarray) -> np.ndarray:
    return (
        0.55 * np.exp(-((x + 0.5) ** 2) / 0.03)
        + 1.0 * np.exp(-((x - 0.6) ** 2) / 0.015)
        - 0.3
    )


def _reward_wave(x: np.ndarray) -> np.ndarray:
    return 0.6 * np.sin(2.2 * x + 0.5) - 0.25 * x**2


CURVES: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray]]] = {
    "hill": ("one hill, falling away from the data's right edge", _reward_hill),
    "two_peaks": ("a small peak in the data, a taller one outside it", _reward_two_peaks),
    "wave": ("a slow wave, best at the right of the data", _reward_wave),
}
"""True mean reward curves of the one-state problem over action positions x in [-1, 1]."""


@dataclass(frozen=True, eq=False)
class OneStateProblem:
    """One state, ``K`` actions at positions on a line, and a behaviour policy over a window.

    Attributes:
        curve: Name of the reward curve (a key of ``CURVES``).
        positions: ``[K]`` action positions in [-1, 1].
        true_reward: ``[K]`` expected reward of each action.
        behaviour: ``[K]`` behaviour probabilities, uniform on a window, zero outside it.
        noise: Standard deviation of the Gaussian reward noise.
    """

    curve: str
    positions: np.ndarray  # [K]
    true_reward: np.ndarray  # [K]
    behaviour: np.ndarray  # [K]
    noise: float

    @property
    def n_actions(self) -> int:
        """Number of actions K."""
        return int(self.positions.shape[0])

    @property
    def supported(self) -> np.ndarray:
        """``[K]`` True where the behaviour policy can take the action."""
        return self.behaviour > 0


def one_state_problem(
    curve: str = "hill",
    *,
    n_actions: int = 41,
    coverage: float = 0.4,
    centre: float = -0.5,
    noise: float = 0.3,
) -> OneStateProblem:
    """A single-state offline problem: actions on a line, data on a window of them.

    The behaviour policy is uniform over the ``round(coverage * K)`` consecutive actions whose
    middle is nearest to ``centre`` (moved inwards where the window would leave the line).

    Args:
        curve: Reward curve, a key of ``CURVES``.
        n_actions: Number of actions K, in [2, MAX_ACTIONS].
        coverage: Fraction of the actions the behaviour policy tries, in (0, 1].
        centre: Middle of the behaviour's window, in [-1, 1].
        noise: Reward noise standard deviation, >= 0.

    Returns:
        The problem.

    Raises:
        ValueError: if a setting is out of range.
    """
    if curve not in CURVES:
        raise ValueError(f"unknown reward curve {curve!r}; choose one of {', '.join(CURVES)}")
    n_actions = int(n_actions)
    if not 2 <= n_actions <= MAX_ACTIONS:
        raise ValueError(f"the number of actions must be in [2, {MAX_ACTIONS}]; got {n_actions}")
    if not 0.0 < coverage <= 1.0:
        raise ValueError(f"coverage is a fraction of the actions in (0, 1]; got {coverage}")
    if not -1.0 <= centre <= 1.0:
        raise ValueError(f"the data's centre must be on the action line [-1, 1]; got {centre}")
    if not (math.isfinite(noise) and noise >= 0):
        raise ValueError(f"the reward noise must be a non-negative number; got {noise}")
    x = np.linspace(-1.0, 1.0, n_actions)
    width = max(1, round(coverage * n_actions))
    middle = int(np.argmin(np.abs(x - centre)))
    first = int(np.clip(round(middle - (width - 1) / 2), 0, n_actions - width))
    behaviour = np.zeros(n_actions)
    behaviour[first:first + width] = 1.0 / width
    return OneStateProblem(
        curve=curve, positions=x, true_reward=CURVES[curve][1](x), behaviour=behaviour,
        noise=float(noise),
    )


def _check_size(size: int) -> int:
    size = int(size)
    if not 1 <= size <= MAX_DATASET:
        raise ValueError(f"the dataset size must be in [1, {MAX_DATASET}]; got {size}")
    return size


def sample_one_state(problem: OneStateProblem, size: int, rng: np.random.Generator) -> Dataset:
    """Draw ``size`` one-step episodes: ``a ~ behaviour``, ``r = reward(a) + noise * ε``.

    Args:
        problem: The one-state problem.
        size: Number of samples N.
        rng: Random generator.

    Returns:
        A dataset with every transition in state 0 and terminal.
    """
    size = _check_size(size)
    actions = rng.choice(problem.n_actions, size=size, p=problem.behaviour)
    rewards = problem.true_reward[actions] + problem.noise * rng.standard_normal(size)
    zeros = np.zeros(size, dtype=np.int64)
    return Dataset(zeros, actions, rewards, zeros, np.ones(size, bool), 1, problem.n_actions)


GRIDS: dict[str, str] = {
    "cliff": "Cliff walking 4×12 (Sutton & Barto, Example 6.6)",
    "four_rooms": "Four rooms",
    "maze": "Maze",
}
"""Grid problems, by name."""


def _grid_mdp(name: str, slip: float) -> TabularMDP:
    if name not in GRIDS:
        raise ValueError(f"unknown grid {name!r}; choose one of {', '.join(GRIDS)}")
    if name == "cliff":
        return cliff_walking(slip=slip)
    return gridworld(LAYOUTS[name], slip=slip, name=name)


def _policy_values(mdp: TabularMDP, policies: np.ndarray, gamma: float) -> np.ndarray:
    """``[P, S]`` exact state values of each stochastic policy ``policies [P, S, A]``.

    The systems ``(I - γ P_π) v = r_π`` that ``rlviz.mdp.policy_value`` solves densely for one
    policy (terminal states get the row ``v = 0``), here for all the policies as one sparse
    block-diagonal system. A state reaches only a few others, so the sparse solve is quick,
    and unlike dense solves of a hundred states it starts no BLAS threads, which on a busy
    machine cost far more than the arithmetic.
    """
    n_pol, n_states, _ = policies.shape
    live = ~mdp.terminal
    weight = policies[..., None] * mdp.prob * live[:, None, None]  # [P, S, A, K]
    p, s, a, k = np.nonzero(weight > 0)
    first = p * n_states  # where each policy's block starts
    diagonal = np.arange(n_pol * n_states)
    system = scipy.sparse.csc_matrix(  # repeated (row, column) entries are summed
        (np.concatenate([np.ones(diagonal.size), -gamma * weight[p, s, a, k]]),
         (np.concatenate([diagonal, first + s]),
          np.concatenate([diagonal, first + mdp.next_state[s, a, k]]))),
        shape=(diagonal.size, diagonal.size),
    )
    reward = np.where(live, (policies * mdp.R).sum(axis=2), 0.0)  # [P, S]
    return scipy.sparse.linalg.spsolve(system, reward.ravel()).reshape(n_pol, n_states)


def _optimal_q(mdp: TabularMDP, gamma: float) -> np.ndarray:
    """``[S, A]`` optimal action values Q* by policy iteration (exact evaluation each round)."""
    policy = np.zeros(mdp.n_states, dtype=np.int64)
    eye = np.eye(mdp.n_actions)
    for _ in range(10 * mdp.n_states + 10):
        q = action_values(mdp, _policy_values(mdp, eye[policy][None], gamma)[0], gamma)
        best = q.max(axis=1, keepdims=True)
        # Keep the current action unless another is strictly better: no cycling between ties.
        keep = q[np.arange(mdp.n_states), policy] >= best[:, 0] - 1e-12
        new = np.where(keep, policy, q.argmax(axis=1))
        if (new == policy).all():
            return q
        policy = new
    raise RuntimeError("policy iteration did not converge")


def _near_hazard(mdp: TabularMDP) -> np.ndarray:
    """``[S]`` True for states whose cell touches a cliff or hole cell (4-neighbourhood)."""
    grid = mdp.grid
    chars = np.array([list(row) for row in grid.layout])
    hazard = np.isin(chars, ["C", "H"])
    padded = np.pad(hazard, 1)
    r, c = grid.cells[:, 0] + 1, grid.cells[:, 1] + 1
    return padded[r - 1, c] | padded[r + 1, c] | padded[r, c - 1] | padded[r, c + 1]


@dataclass(frozen=True, eq=False)
class GridProblem:
    """A gridworld, its optimal values, and a behaviour policy that keeps to a safe path.

    Attributes:
        name: Key of ``GRIDS``.
        mdp: The true model.
        gamma: Discount factor.
        q_star: ``[S, A]`` optimal action values.
        safe_actions: ``[S]`` the safe path's action in each state.
        behaviour: ``[S, A]`` behaviour policy: the safe action with probability ``1 - ε``,
            otherwise a uniformly random action.
        epsilon: The behaviour's exploration rate ε (its coverage).
    """

    name: str
    mdp: TabularMDP
    gamma: float
    q_star: np.ndarray  # [S, A]
    safe_actions: np.ndarray  # [S]
    behaviour: np.ndarray  # [S, A]
    epsilon: float


def grid_problem(
    name: str = "cliff",
    *,
    epsilon: float = 0.2,
    gamma: float = 0.95,
    slip: float = 0.0,
    caution: float = 5.0,
) -> GridProblem:
    """A grid with a behaviour policy around a safe path.

    The safe path is optimal for a cautious copy of the grid in which entering a cell next to a
    cliff or hole costs ``caution`` more, so it keeps one cell away from the edge. The behaviour
    takes it with probability ``1 - ε`` and a uniformly random action otherwise:
    ``μ(a|s) = (1 - ε) 1[a = safe(s)] + ε / A``.

    Args:
        name: A key of ``GRIDS``.
        epsilon: Exploration rate ε of the behaviour policy, in [0, 1].
        gamma: Discount factor, in [0, 1).
        slip: Probability of slipping sideways in the true grid, in [0, 0.5].
        caution: Extra cost of a cell next to a hazard when choosing the safe path, >= 0.

    Returns:
        The problem.

    Raises:
        ValueError: if a setting is out of range.
    """
    if not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"the behaviour's ε must be a probability in [0, 1]; got {epsilon}")
    if not 0.0 <= gamma < 1.0:
        raise ValueError(f"the discount γ must be in [0, 1); got {gamma}")
    if not 0.0 <= slip <= 0.5:
        raise ValueError(f"slip must be in [0, 0.5]; got {slip}")
    if not (math.isfinite(caution) and caution >= 0):
        raise ValueError(f"caution must be a non-negative number; got {caution}")
    mdp = _grid_mdp(name, slip)
    near = _near_hazard(mdp)
    cautious = TabularMDP(
        next_state=mdp.next_state, prob=mdp.prob,
        reward=np.where(near[mdp.next_state] & ~mdp.terminal[:, None, None],
                        mdp.reward - caution, mdp.reward),
        terminal=mdp.terminal, start=mdp.start, action_names=mdp.action_names, grid=mdp.grid,
    )
    safe = _optimal_q(cautious, gamma).argmax(axis=1)
    behaviour = np.full((mdp.n_states, mdp.n_actions), epsilon / mdp.n_actions)
    behaviour[np.arange(mdp.n_states), safe] += 1.0 - epsilon
    return GridProblem(
        name=name, mdp=mdp, gamma=float(gamma), q_star=_optimal_q(mdp, gamma),
        safe_actions=safe, behaviour=behaviour, epsilon=float(epsilon),
    )


def sample_grid(
    mdp: TabularMDP,
    behaviour: np.ndarray,
    size: int,
    rng: np.random.Generator,
    *,
    walkers: int = 16,
    max_episode: int = MAX_EPISODE,
) -> Dataset:
    """Log ``size`` transitions of a behaviour policy, running ``walkers`` episodes side by side.

    Episodes start from the start distribution and restart when they reach a terminal state or
    after ``max_episode`` steps (a time limit: that last transition is not marked done).

    Args:
        mdp: The true model.
        behaviour: ``[S, A]`` behaviour policy.
        size: Number of transitions N.
        rng: Random generator.
        walkers: Number of episodes run in parallel.
        max_episode: Time limit of an episode.

    Returns:
        The dataset, transitions in the order (time step, walker).
    """
    size = _check_size(size)
    mu = np.asarray(behaviour, dtype=np.float64)
    if mu.shape != (mdp.n_states, mdp.n_actions):
        raise ValueError(
            f"the behaviour policy must have shape [{mdp.n_states}, {mdp.n_actions}]"
        )
    if (mu < 0).any() or not np.allclose(mu.sum(axis=1), 1.0):
        raise ValueError("each row of the behaviour policy must be a probability distribution")
    cum = np.cumsum(mu, axis=1)
    cum[:, -1] = 1.0
    rounds = -(-size // walkers)
    s = rng.choice(mdp.n_states, size=walkers, p=mdp.start)
    age = np.zeros(walkers, dtype=np.int64)
    out = np.empty((5, rounds, walkers))
    for t in range(rounds):
        a = (cum[s] <= rng.random(walkers)[:, None]).sum(axis=1)
        s2, r = mdp.step(s, a, rng.random(walkers))
        done = mdp.terminal[s2]
        out[:, t] = s, a, r, s2, done
        age += 1
        restart = done | (age >= max_episode)
        s = np.where(restart, rng.choice(mdp.n_states, size=walkers, p=mdp.start), s2)
        age[restart] = 0
    s_, a_, r_, s2_, d_ = (col.reshape(-1)[:size] for col in out)
    return Dataset(
        s_.astype(np.int64), a_.astype(np.int64), r_, s2_.astype(np.int64), d_.astype(bool),
        mdp.n_states, mdp.n_actions,
    )
