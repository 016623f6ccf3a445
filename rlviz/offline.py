r"""Offline RL: datasets from a behaviour policy, fitted Q-learning, and conservative Q-learning.

Learning Q from a fixed dataset, the ``max`` in the Bellman target looks at every action, but
the data corrects only the actions the behaviour policy tried. Whatever the learner holds on the
others (its initial values, or what a network extrapolates) goes unchecked, and the greedy policy
chases it. Conservative Q-learning (CQL(H), Kumar et al. 2020, eq. 4) adds

.. math::  \alpha \, \mathbb{E}_{s \sim D}\Big[\log \textstyle\sum_a e^{Q(s, a)}
           - \mathbb{E}_{a \sim D(\cdot|s)} Q(s, a)\Big]

to the squared TD loss: it pushes Q down where the softmax of Q puts mass and up on the actions
in the data, so unsupported actions sink and α trades optimism for pessimism.

Two problems are built here: a single state with many actions on a line (a true reward curve,
data covering only part of the line) and a gridworld with a behaviour policy that keeps to a safe
path. Both learners (a table and a small MLP) are trained for many values of α at once, as a
batch dimension, so a sweep over α costs one training run.

The one-state fixed point. With ``n_a`` samples of action ``a`` out of ``N``, mean reward
``r̄_a`` and ``p̂_a = n_a / N``, the loss ``L(Q) = (1/N) Σ_i [½ (Q_{a_i} - r_i)² + α (lse(Q) -
Q_{a_i})]`` has gradient ``∂L/∂Q_a = p̂_a (Q_a - r̄_a) + α (π_a - p̂_a)`` with ``π = softmax(Q)``.
On seen actions the stationary point is ``Q_a = r̄_a + α (1 - π_a / p̂_a)``; on unseen ones the
gradient ``α π_a`` is positive for every finite ``Q_a``, so the loss keeps decreasing as they go
to ``-∞``: the fixed point gives them no softmax mass at all. ``one_state_fixed_point`` solves the
seen-action equations exactly (Wright omega function plus a one-dimensional root), independently
of the torch learner.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from scipy.special import wrightomega

from rlviz import optim
from rlviz.envs import LAYOUTS, cliff_walking, gridworld
from rlviz.mdp import TabularMDP, action_values, policy_value

__all__ = [
    "ALPHAS",
    "CURVES",
    "GRIDS",
    "MAX_ACTIONS",
    "MAX_DATASET",
    "MAX_STEPS",
    "Dataset",
    "FixedPoint",
    "GridProblem",
    "GridResult",
    "OneStateProblem",
    "OneStateResult",
    "Training",
    "bellman_targets",
    "cql_fixed_point",
    "cql_gap",
    "error_split",
    "exact_fitted_q",
    "grid_experiment",
    "grid_problem",
    "greedy_path",
    "one_state_experiment",
    "one_state_fixed_point",
    "one_state_problem",
    "offline_loss",
    "sample_grid",
    "sample_one_state",
    "train_mlp",
    "train_table",
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


def _optimal_q(mdp: TabularMDP, gamma: float) -> np.ndarray:
    """``[S, A]`` optimal action values Q* by policy iteration (exact evaluation each round)."""
    policy = np.zeros(mdp.n_states, dtype=np.int64)
    eye = np.eye(mdp.n_actions)
    for _ in range(10 * mdp.n_states + 10):
        q = action_values(mdp, policy_value(mdp, eye[policy], gamma), gamma)
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


# ---------------------------------------------------------------------------------- losses


def cql_gap(q: torch.Tensor, states: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
    r"""The CQL(H) gap ``log Σ_a' exp Q(s, a') - Q(s, a)`` of logged pairs; always >= 0.

    Kumar et al. (2020), eq. 4, with the maximising distribution chosen by entropy
    regularisation: ``max_μ E_μ[Q] + H(μ) = log Σ_a exp Q``, which is at least ``max_a Q``.

    Args:
        q: ``[..., S, A]`` action values.
        states: ``[N]`` logged states.
        actions: ``[N]`` logged actions.

    Returns:
        ``[..., N]`` the gap (a max-subtracted log-sum-exp, so large values do not overflow).
    """
    return torch.logsumexp(q, dim=-1)[..., states] - q[..., states, actions]


def bellman_targets(
    q_target: torch.Tensor,
    rewards: torch.Tensor,
    next_states: torch.Tensor,
    dones: torch.Tensor,
    gamma: float,
) -> torch.Tensor:
    """Fitted-Q targets ``y = r + γ (1 - done) max_a' Q(s', a')``.

    Args:
        q_target: ``[..., S, A]`` action values to bootstrap from.
        rewards: ``[N]`` rewards.
        next_states: ``[N]`` next states.
        dones: ``[N]`` True where the next state is terminal.
        gamma: Discount factor.

    Returns:
        ``[..., N]`` targets.
    """
    return rewards + gamma * (~dones) * q_target.amax(dim=-1)[..., next_states]


def offline_loss(
    q: torch.Tensor,
    states: torch.Tensor,
    actions: torch.Tensor,
    targets: torch.Tensor,
    alphas: torch.Tensor,
    weights: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    r"""Weighted squared TD error plus the CQL(H) regulariser, per learner.

    ``L = Σ_i w_i [½ (Q(s_i, a_i) - y_i)² + α (log Σ_a exp Q(s_i, a) - Q(s_i, a_i))]``.

    Args:
        q: ``[B, S, A]`` action values, one table per learner.
        states: ``[N]`` logged states.
        actions: ``[N]`` logged actions.
        targets: ``[B, N]`` Bellman targets (held fixed: no gradient flows through them).
        alphas: ``[B]`` CQL weight α of each learner (0: the naive learner).
        weights: ``[N]`` weight of each transition (``1/N`` for the plain mean).

    Returns:
        ``(loss [B], td [B], gap [B])``: the total, the weighted ½ TD², and the weighted gap.
    """
    q_sa = q[:, states, actions]
    td = 0.5 * (weights * (q_sa - targets) ** 2).sum(dim=-1)
    gap = (weights * cql_gap(q, states, actions)).sum(dim=-1)
    return td + alphas * gap, td, gap


@dataclass(frozen=True)
class _Rows:
    """Transitions grouped by (s, a, s', done).

    The loss's gradient needs only each group's weight and mean reward, so training costs the
    same for 100 or 20,000 transitions.
    """

    states: torch.Tensor  # [M]
    actions: torch.Tensor  # [M]
    next_states: torch.Tensor  # [M]
    dones: torch.Tensor  # [M]
    rewards: torch.Tensor  # [M] mean reward of the group
    weights: torch.Tensor  # [M] total weight of the group's transitions
    spread: float  # ½ Σ_i w_i (r_i - r̄_group)², the TD loss's constant part


def _rows(data: Dataset, per_state: bool, dtype: torch.dtype = torch.float64) -> _Rows:
    """Group the transitions; each weighs ``1/n(s)`` (``per_state``) or ``1/N``."""
    keys = np.stack([data.states, data.actions, data.next_states, data.dones.astype(np.int64)])
    uniq, inverse, counts = np.unique(keys, axis=1, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if per_state:
        w_each = 1.0 / np.bincount(data.states, minlength=data.n_states)[data.states]
    else:
        w_each = np.full(data.size, 1.0 / data.size)
    mean_r = np.bincount(inverse, data.rewards) / counts
    spread = 0.5 * float((w_each * (data.rewards - mean_r[inverse]) ** 2).sum())
    t = torch.tensor
    return _Rows(
        states=t(uniq[0]), actions=t(uniq[1]), next_states=t(uniq[2]), dones=t(uniq[3] == 1),
        rewards=t(mean_r, dtype=dtype), weights=t(np.bincount(inverse, w_each), dtype=dtype),
        spread=spread,
    )


# ---------------------------------------------------------------------------------- learners


@dataclass(frozen=True, eq=False)
class Training:
    """What a batch of learners (one per α) ended with, and how they got there.

    Attributes:
        alphas: ``[B]`` CQL weight of each learner.
        q: ``[B, S, A]`` final action values.
        steps: ``[R]`` gradient steps at which the curves were recorded (0 to the last).
        q_history: ``[R, B, S, A]`` action values at those steps.
        loss: ``[B, R]`` total loss.
        td: ``[B, R]`` weighted mean ½ TD error².
        gap: ``[B, R]`` weighted mean CQL gap (monitored for α = 0 too).
        model: "table" or "mlp".
    """

    alphas: np.ndarray  # [B]
    q: np.ndarray  # [B, S, A]
    steps: np.ndarray  # [R]
    q_history: np.ndarray  # [R, B, S, A]
    loss: np.ndarray  # [B, R]
    td: np.ndarray  # [B, R]
    gap: np.ndarray  # [B, R]
    model: str


def _check_training(alphas: Sequence[float], gamma: float, steps: int) -> np.ndarray:
    alphas = np.asarray(alphas, dtype=np.float64).reshape(-1)
    if alphas.size == 0:
        raise ValueError("give at least one value of α")
    if not np.isfinite(alphas).all() or (alphas < 0).any():
        raise ValueError("α must be a non-negative number")
    if not 0.0 <= gamma < 1.0:
        raise ValueError(f"the discount γ must be in [0, 1); got {gamma}")
    if not 1 <= int(steps) <= MAX_STEPS:
        raise ValueError(f"the number of training steps must be in [1, {MAX_STEPS}]; got {steps}")
    return alphas


def _record_at(steps: int, records: int) -> np.ndarray:
    return np.unique(np.linspace(0, steps, min(records, steps) + 1).round().astype(np.int64))


class _Recorder:
    def __init__(self, at: np.ndarray):
        self.at = set(at.tolist())
        self.steps: list[int] = []
        self.q: list[np.ndarray] = []
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def __call__(self, step: int, q, loss, td, gap) -> None:
        if step in self.at:
            self.steps.append(step)
            self.q.append(q.detach().numpy().copy())
            self.parts.append(tuple(x.detach().numpy().copy() for x in (loss, td, gap)))

    def result(self, alphas: np.ndarray, q, model: str) -> Training:
        loss, td, gap = (np.stack([p[i] for p in self.parts], axis=1) for i in range(3))
        final = q.detach().numpy().copy()
        if not np.isfinite(final).all():
            raise ValueError(
                "training diverged (values became infinite); lower the learning rate or α"
            )
        return Training(
            alphas=alphas, q=final, steps=np.array(self.steps), q_history=np.stack(self.q),
            loss=loss, td=td, gap=gap, model=model,
        )


def train_table(
    data: Dataset,
    alphas: Sequence[float],
    *,
    gamma: float = 0.0,
    steps: int = 1500,
    lr: float = 0.4,
    momentum: float = 0.5,
    init_std: float = 1.0,
    seed: int = 0,
    records: int = 30,
) -> Training:
    r"""Tabular offline Q-learning with the CQL(H) regulariser, one table per α, trained together.

    Full-batch gradient descent with heavy-ball momentum on the loss of ``offline_loss`` with
    targets from the current table, ``y_i = r_i + γ (1 - done_i) max_a' Q(s'_i, a')`` (no
    gradient through y). Each transition is weighted ``w_i = 1 / n(s_i)``, the inverse count of
    its state: states decouple in a table, so this diagonal preconditioner leaves the minimiser
    unchanged and lets rarely visited states learn as fast as common ones. With one state it is
    the plain mean, the loss of ``one_state_fixed_point``. Pairs the data never shows keep their
    initial values for α = 0 and are pushed down by ``α softmax(Q)`` otherwise.

    Source: Kumar, Zhou, Tucker & Levine (2020), "Conservative Q-Learning for Offline
    Reinforcement Learning", eq. 4 (CQL(H)); Ernst, Geurts & Wehenkel (2005), fitted Q-iteration.

    Args:
        data: The logged transitions.
        alphas: ``[B]`` CQL weights, one learner each (0: naive offline Q-learning).
        gamma: Discount factor in [0, 1) (0 for a one-step problem).
        steps: Number of gradient steps.
        lr: Learning rate. Without bootstrapping (``γ = 0``) the loss is a fixed convex
            function, and gradient descent is stable while ``lr (1 + max α / 2) < 2 (1 +
            momentum)`` (the TD term's curvature is at most 1 per state, the log-sum-exp's at
            most 1/2); the bound is enforced. With ``γ > 0`` the targets move too; the defaults
            (0.4, momentum 0.5) converge on every grid of ``GRIDS`` for α <= 10, while heavier
            momentum can oscillate.
        momentum: Heavy-ball momentum in [0, 1).
        init_std: Standard deviation of the initial values (the same table for every α).
        seed: Seed of the ``torch.Generator`` drawing the initial table.
        records: Roughly how many points the training curves get.

    Returns:
        The training.

    Raises:
        ValueError: for settings out of range or a step size that would diverge.
    """
    alphas = _check_training(alphas, gamma, steps)
    if not 0.0 <= momentum < 1.0:
        raise ValueError(f"momentum must be in [0, 1); got {momentum}")
    if not (lr > 0 and lr * (1.0 + alphas.max() / 2) < 2.0 * (1.0 + momentum)):
        raise ValueError(
            f"learning rate {lr} with α up to {alphas.max():g} makes gradient descent on the "
            f"table diverge; keep lr·(1 + α/2) below {2 * (1 + momentum):g}"
        )
    if not (math.isfinite(init_std) and init_std >= 0):
        raise ValueError(f"the initial spread must be a non-negative number; got {init_std}")
    rows = _rows(data, per_state=True)
    gen = torch.Generator().manual_seed(int(seed))
    q0 = init_std * torch.randn(data.n_states, data.n_actions, generator=gen, dtype=torch.float64)
    q = q0.expand(len(alphas), -1, -1).clone().requires_grad_(True)
    alpha = torch.tensor(alphas)
    opt = optim.SGD([q], lr=lr, momentum=momentum)
    rec = _Recorder(_record_at(steps, records))
    y = None
    for step in range(int(steps) + 1):
        if y is None or gamma > 0:  # without bootstrapping the targets are the rewards
            with torch.no_grad():
                y = bellman_targets(q, rows.rewards, rows.next_states, rows.dones, gamma)
        loss, td, gap = offline_loss(q, rows.states, rows.actions, y, alpha, rows.weights)
        rec(step, q, loss + rows.spread, td + rows.spread, gap)
        if step == steps:
            break
        opt.step(torch.autograd.grad(loss.sum(), [q]))
    return rec.result(alphas, q, "table")


def _mlp_init(sizes: Sequence[int], batch: int, gen: torch.Generator) -> list[torch.Tensor]:
    """Layers ``[B, in, out]`` and biases ``[B, out]``, the same for every learner.

    Uniform in ±1/sqrt(in), PyTorch's default for ``nn.Linear``.
    """
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        bound = 1.0 / math.sqrt(fan_in)
        w = (torch.rand(fan_in, fan_out, generator=gen, dtype=torch.float32) * 2 - 1) * bound
        b = (torch.rand(fan_out, generator=gen, dtype=torch.float32) * 2 - 1) * bound
        params += [w.expand(batch, -1, -1).clone(), b.expand(batch, -1).clone()]
    return [p.requires_grad_(True) for p in params]


def _mlp(params: Sequence[torch.Tensor], x: torch.Tensor) -> torch.Tensor:
    """``[B, M, in] -> [B, M, out]``, ReLU between layers."""
    n = len(params) // 2
    for i in range(n):
        w, b = params[2 * i], params[2 * i + 1]
        if w.shape[1] == 1:  # one input: a broadcast product, no matrix multiply needed
            x = x * w + b.unsqueeze(1)
        elif w.shape[2] == 1:  # one output
            x = (x * w.transpose(1, 2)).sum(dim=-1, keepdim=True) + b.unsqueeze(1)
        else:
            x = torch.baddbmm(b.unsqueeze(1), x, w)
        if i < n - 1:
            x = torch.relu(x)
    return x


def train_mlp(
    data: Dataset,
    alphas: Sequence[float],
    features: np.ndarray,
    *,
    per_action: bool = False,
    gamma: float = 0.0,
    steps: int = 1500,
    lr: float = 3e-3,
    hidden: int = 64,
    target_every: int = 10,
    seed: int = 0,
    records: int = 30,
) -> Training:
    r"""Offline Q-learning with a small MLP and the CQL(H) regulariser, one network per α.

    Adam on the mean loss of ``offline_loss`` (weights ``1/N``), targets
    ``y = r + γ (1 - done) max_a' Q_target(s', a')`` from a target network, a copy of the
    weights refreshed every ``target_every`` steps (so the targets are recomputed only then).
    The networks of all α start from the same weights; they are
    stored with a leading batch dimension and evaluated with batched matrix products.

    Source: Kumar et al. (2020), eq. 4; Riedmiller (2005), neural fitted Q-iteration.

    Args:
        data: The logged transitions.
        alphas: ``[B]`` CQL weights (0: naive).
        features: ``[S, F]`` input of each state (the network outputs A values), or with
            ``per_action`` and one state, ``[A, F]`` input of each action (the network outputs
            one value per action: how a network generalises along the action line).
        per_action: Whether ``features`` describe actions rather than states.
        gamma: Discount factor in [0, 1).
        steps: Number of Adam steps.
        lr: Adam's learning rate.
        hidden: Width of the two hidden layers.
        target_every: Steps between refreshes of the target network.
        seed: Seed of the ``torch.Generator`` drawing the initial weights.
        records: Roughly how many points the training curves get.

    Returns:
        The training.

    Raises:
        ValueError: for settings out of range, or if training diverged.
    """
    alphas = _check_training(alphas, gamma, steps)
    feats = torch.tensor(np.asarray(features, dtype=np.float32))
    n_rows = data.n_actions if per_action else data.n_states
    if feats.ndim != 2 or feats.shape[0] != n_rows:
        raise ValueError(f"features must have shape [{n_rows}, F]; got {tuple(feats.shape)}")
    if per_action and data.n_states != 1:
        raise ValueError("per-action features need a one-state problem")
    if not (lr > 0 and target_every >= 1 and 1 <= hidden <= 512):
        raise ValueError("need lr > 0, target_every >= 1 and a hidden width in [1, 512]")
    batch = len(alphas)
    gen = torch.Generator().manual_seed(int(seed))
    out = 1 if per_action else data.n_actions
    params = _mlp_init([feats.shape[1], hidden, hidden, out], batch, gen)
    x = feats.expand(batch, -1, -1)

    def values(ps):
        q = _mlp(ps, x)  # [B, rows, out]
        return q.transpose(1, 2) if per_action else q  # [B, S, A]

    rows = _rows(data, per_state=False, dtype=torch.float32)
    alpha = torch.tensor(alphas, dtype=torch.float32)
    opt = optim.Adam(params, lr=lr)
    rec = _Recorder(_record_at(steps, records))
    for step in range(int(steps) + 1):
        q = values(params)
        if step % target_every == 0:
            with torch.no_grad():
                y = bellman_targets(q, rows.rewards, rows.next_states, rows.dones, gamma)
        loss, td, gap = offline_loss(q, rows.states, rows.actions, y, alpha, rows.weights)
        rec(step, q, loss + rows.spread, td + rows.spread, gap)
        if step == steps:
            break
        opt.step(torch.autograd.grad(loss.sum(), params))
    return rec.result(alphas, values(params), "mlp")


# ---------------------------------------------------------------------------------- oracle


def cql_fixed_point(counts: np.ndarray, targets: np.ndarray, alpha: float) -> np.ndarray:
    r"""Minimise the tabular CQL(H) loss with fixed targets, state by state, exactly.

    For state ``s`` with ``n(s, a)`` samples of action ``a``, ``p̂_a = n(s, a) / n(s)`` and mean
    target ``ȳ_a``, the loss ``Σ_i [½ (Q(s, a_i) - y_i)² + α (log Σ_a e^{Q(s, a)} - Q(s, a_i))]``
    has gradient ``n(s) [p̂_a (Q_a - ȳ_a) + α (π_a - p̂_a)]``, ``π = softmax(Q(s, ·))``. Set to
    zero: on unseen actions ``π_a = 0``, which no finite value reaches (the loss falls without
    bound as they go to ``-∞``); on seen ones, with ``c = log Σ_seen e^{Q_a}`` held fixed, each
    ``Q_a + (α/p̂_a) e^{Q_a - c} = ȳ_a + α`` has the unique root
    ``Q_a(c) = c + b_a - ω(log(α/p̂_a) + b_a)``, ``b_a = ȳ_a + α - c``, where ``ω`` is the
    Wright omega function (``ω(z) = W(e^z)``, Lambert W). ``Σ_a e^{Q_a(c) - c}`` falls strictly
    in ``c``; its root at 1 lies in ``[Σ p̂ ȳ, max ȳ + α + log #seen]`` and is found by Newton's
    method kept inside that bracket. The loss is strictly convex on the seen actions, so this is
    its unique minimiser there. Compare Kumar et al. (2020), Theorem 3.1: ``Q = ȳ - α (π/μ - 1)``.

    Args:
        counts: ``[S, A]`` samples of each pair.
        targets: ``[S, A]`` mean target (mean reward with one step) of each pair; ignored where
            unseen.
        alpha: CQL weight α >= 0.

    Returns:
        ``[S, A]`` the minimiser: ``-inf`` on unseen pairs of states with data when α > 0,
        ``nan`` where the loss does not depend on the value (unseen pairs for α = 0, and
        states without data).

    Raises:
        ValueError: for mismatched shapes, negative counts or a negative α.
    """
    n = np.asarray(counts, dtype=np.float64)
    ybar = np.asarray(targets, dtype=np.float64)
    if n.ndim != 2 or ybar.shape != n.shape:
        raise ValueError("counts and targets must be [S, A] arrays of the same shape")
    if (n < 0).any():
        raise ValueError("counts must be non-negative")
    if not (math.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"α must be a non-negative number; got {alpha}")
    seen = n > 0
    has_data = seen.any(axis=1)
    q = np.full(n.shape, np.nan)
    q[has_data] = -np.inf if alpha > 0 else np.nan
    if alpha == 0:
        q[seen] = ybar[seen]
        return q
    rows = np.flatnonzero(has_data)
    m = seen[rows]
    p = np.where(m, n[rows] / n[rows].sum(axis=1, keepdims=True), 1.0)
    y = np.where(m, ybar[rows], 0.0)
    log_k = np.log(alpha / p)

    def parts(c: np.ndarray):
        b = y + alpha - c[:, None]
        w = wrightomega(log_k + b)
        share = np.where(m, np.exp(b - w), 0.0)  # e^{Q_a(c) - c}
        return b - w, share.sum(axis=1) - 1.0, -(share / (1.0 + w)).sum(axis=1)

    lo = (p * y * m).sum(axis=1) - 1.0
    hi = np.where(m, y, -np.inf).max(axis=1) + alpha + np.log(m.sum(axis=1)) + 1.0
    c = 0.5 * (lo + hi)
    for _ in range(200):
        _, h, dh = parts(c)
        lo = np.where(h > 0, c, lo)
        hi = np.where(h > 0, hi, c)
        step = c - h / dh
        inside = (step > lo) & (step < hi)
        new = np.where(inside, step, 0.5 * (lo + hi))
        if np.all(np.abs(new - c) <= 4 * np.finfo(float).eps * np.maximum(1.0, np.abs(c))):
            c = new
            break
        c = new
    u, _, _ = parts(c)
    q[rows] = np.where(m, u + c[:, None], -np.inf)
    return q


@dataclass(frozen=True, eq=False)
class FixedPoint:
    """The minimiser of the one-state CQL loss.

    Attributes:
        alpha: The CQL weight α.
        q: ``[K]`` fixed-point values; ``-inf`` on actions the data never shows (α > 0), ``nan``
            there for α = 0, where the loss does not depend on them.
        seen: ``[K]`` True where the data has the action.
    """

    alpha: float
    q: np.ndarray  # [K]
    seen: np.ndarray  # [K] bool

    @property
    def policy(self) -> np.ndarray:
        """``[K]`` softmax of the fixed point (zero on unseen actions for α > 0)."""
        finite = np.where(self.seen, self.q, -np.inf)
        return _softmax(finite[None])[0]


def one_state_fixed_point(
    counts: np.ndarray, mean_rewards: np.ndarray, alpha: float
) -> FixedPoint:
    r"""The oracle for the one-state learner: the minimiser of its CQL loss.

    The loss ``(1/N) Σ_i [½ (Q_{a_i} - r_i)² + α (log Σ_a e^{Q_a} - Q_{a_i})]`` has gradient
    ``p̂_a (Q_a - r̄_a) + α (softmax(Q)_a - p̂_a)``; ``cql_fixed_point`` (one state) sets it to
    zero and solves exactly.

    Args:
        counts: ``[K]`` samples of each action.
        mean_rewards: ``[K]`` mean reward of each action in the data (ignored where unseen).
        alpha: CQL weight α >= 0.

    Returns:
        The fixed point.

    Raises:
        ValueError: if there is no data, the shapes differ, or α is negative.
    """
    n = np.asarray(counts, dtype=np.float64)
    rbar = np.asarray(mean_rewards, dtype=np.float64)
    if n.ndim != 1 or rbar.shape != n.shape:
        raise ValueError("counts and mean rewards must be 1-D arrays of the same length")
    if (n < 0).any() or n.sum() <= 0:
        raise ValueError("the data must hold at least one sample")
    q = cql_fixed_point(n[None], rbar[None], alpha)[0]
    return FixedPoint(float(alpha), q, n > 0)


def exact_fitted_q(
    data: Dataset, alpha: float, gamma: float, q_init: np.ndarray, *, tol: float = 1e-10,
    max_iter: int = 20_000,
) -> np.ndarray:
    r"""Fitted Q-iteration with each regression solved exactly: the table's learning target.

    ``Q_{k+1}(s, ·) = cql_fixed_point(n(s, ·), ȳ_k(s, ·), α)`` with
    ``ȳ_k(s, a) = mean over the data of r + γ (1 - done) max_a' Q_k(s', a')``, until the
    largest change is below ``tol``. Pairs the data never shows keep ``q_init`` when α = 0 (the
    naive learner cannot move them) and sit at ``-inf`` otherwise; states without data keep
    ``q_init``. For α = 0 this is value iteration on the data's empirical MDP.

    Args:
        data: The logged transitions.
        alpha: CQL weight α >= 0.
        gamma: Discount factor in [0, 1).
        q_init: ``[S, A]`` initial values (the learner's initial table).
        tol: Stopping tolerance on the largest change.
        max_iter: Most iterations.

    Returns:
        ``[S, A]`` the fixed point.
    """
    if not 0.0 <= gamma < 1.0:
        raise ValueError(f"the discount γ must be in [0, 1); got {gamma}")
    q0 = np.asarray(q_init, dtype=np.float64)
    if q0.shape != (data.n_states, data.n_actions):
        raise ValueError(f"q_init must have shape [{data.n_states}, {data.n_actions}]")
    counts = data.counts
    free = np.isnan(cql_fixed_point(counts, np.zeros(counts.shape), alpha))
    q = q0.copy()
    for _ in range(max_iter):
        y = data.rewards + gamma * (~data.dones) * q.max(axis=1)[data.next_states]
        total = np.zeros(counts.shape)
        np.add.at(total, (data.states, data.actions), y)
        new = cql_fixed_point(counts, total / np.maximum(counts, 1), alpha)
        new = np.where(free, q0, new)
        finite = np.isfinite(new)
        if np.abs(new[finite] - q[finite]).max(initial=0.0) <= tol:
            return new
        q = new
    raise RuntimeError("fitted Q-iteration did not converge")


# ---------------------------------------------------------------------------------- evaluation


def _softmax(q: np.ndarray) -> np.ndarray:
    z = q - q.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _greedy_returns(mdp: TabularMDP, q: np.ndarray, gamma: float) -> np.ndarray:
    """``[...]`` true value at the start of the greedy policy of each table ``q [..., S, A]``.

    Each distinct greedy policy is evaluated once (learners and checkpoints share many).
    """
    greedy = q.reshape(-1, mdp.n_states, mdp.n_actions).argmax(axis=2)
    distinct, which = np.unique(greedy, axis=0, return_inverse=True)
    values = np.concatenate([_start_values(mdp, distinct[i : i + 64], gamma)
                             for i in range(0, len(distinct), 64)])
    return values[which.reshape(-1)].reshape(q.shape[:-2])


def _start_values(mdp: TabularMDP, actions: np.ndarray, gamma: float) -> np.ndarray:
    """``[P]`` value at the start of each deterministic policy ``actions [P, S]``, exactly.

    The linear systems ``(I - γ P_π) v = r_π`` of all the policies in one batched solve
    (``rlviz.mdp.policy_value`` solves one; terminal states get the row ``v = 0``).
    """
    n_pol, n_states = actions.shape
    rows = np.arange(n_states)
    nxt, prob = mdp.next_state[rows, actions], mdp.prob[rows, actions]  # [P, S, K]
    live = ~mdp.terminal
    system = np.zeros((n_pol, n_states, n_states))
    system[:, rows, rows] = 1.0
    weight = np.where(live[None, :, None], -gamma * prob, 0.0)
    np.add.at(system, (np.arange(n_pol)[:, None, None], rows[None, :, None], nxt), weight)
    reward = np.where(live, mdp.R[rows, actions], 0.0)  # [P, S]
    return np.linalg.solve(system, reward[..., None])[..., 0] @ mdp.start


def error_split(q: np.ndarray, truth: np.ndarray, counts: np.ndarray):
    """Mean error ``Q - Q_true`` on the pairs the data covers and on the ones it does not.

    Only states with data count (elsewhere no learner gets a signal).

    Args:
        q: ``[B, S, A]`` learned values.
        truth: ``[S, A]`` true values (``Q*``, or the reward curve with one state).
        counts: ``[S, A]`` samples of each pair.

    Returns:
        ``(inside [B], outside [B])``; ``outside`` is NaN when the data covers every pair.
    """
    seen = counts > 0
    unseen = ~seen & seen.any(axis=1, keepdims=True)
    err = q - truth
    inside = err[:, seen].mean(axis=1)
    outside = err[:, unseen].mean(axis=1) if unseen.any() else np.full(len(q), np.nan)
    return inside, outside


def greedy_path(mdp: TabularMDP, actions: np.ndarray, *, limit: int | None = None):
    """The route of a deterministic policy from the start.

    Follows each action's likeliest outcome until a terminal state, a repeated state or
    ``limit`` steps.

    Args:
        mdp: The model.
        actions: ``[S]`` the action taken in each state.
        limit: Most steps (default ``2 S``).

    Returns:
        ``(states, reaches_goal)``.
    """
    limit = limit or 2 * mdp.n_states
    s = mdp.start_state
    states, seen = [s], {s}
    for _ in range(limit):
        a = int(actions[s])
        s = int(mdp.next_state[s, a, int(np.argmax(mdp.prob[s, a]))])
        states.append(s)
        if mdp.terminal[s]:
            return np.array(states), True
        if s in seen:
            return np.array(states), False
        seen.add(s)
    return np.array(states), False


# ---------------------------------------------------------------------------------- experiments


@dataclass(frozen=True, eq=False)
class OneStateResult:
    """Everything the one-state view shows: data, learners for every α, the oracle.

    Attributes:
        problem: The problem.
        data: The dataset.
        training: The chosen model's training, one learner per α in ``ALPHAS``.
        table: The tabular training (the oracle's learner; the same as ``training`` when the
            model is the table).
        fixed_points: ``[B, K]`` the oracle's values for each α (``-inf`` on unseen actions,
            ``nan`` there for α = 0).
        true_return: ``[B]`` true expected reward of each learner's greedy action.
        return_history: ``[B, R]`` the same during training.
        behaviour_return: Expected reward of the behaviour policy.
        optimal_return: The best action's expected reward.
    """

    problem: OneStateProblem
    data: Dataset
    training: Training
    table: Training
    fixed_points: np.ndarray  # [B, K]
    true_return: np.ndarray  # [B]
    return_history: np.ndarray  # [B, R]
    behaviour_return: float
    optimal_return: float

    @property
    def counts(self) -> np.ndarray:
        """``[K]`` samples of each action."""
        return self.data.counts[0]

    def error_split(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean ``Q - r`` of each learner on actions in the data and outside it: ``[B]`` each."""
        return error_split(self.training.q, self.problem.true_reward[None], self.data.counts)

    def fit_error(self, i: int) -> float:
        """Largest ``|Q - Q_fixed|`` of the tabular learner ``i`` over the seen actions."""
        seen = self.counts > 0
        return float(np.abs(self.table.q[i, 0, seen] - self.fixed_points[i, seen]).max())

    def unseen_mass(self, i: int) -> float:
        """Softmax mass the tabular learner ``i`` leaves on unseen actions.

        It is 0 at the fixed point for α > 0, and shrinks like ``1/(α · steps)`` in training.
        """
        return float(_softmax(self.table.q[i, 0])[self.counts == 0].sum())


def one_state_experiment(
    curve: str = "hill",
    *,
    n_actions: int = 41,
    coverage: float = 0.4,
    centre: float = -0.5,
    noise: float = 0.3,
    size: int = 500,
    model: str = "mlp",
    steps: int | None = None,
    init_std: float = 1.0,
    seed: int = 0,
) -> OneStateResult:
    """Build the one-state problem, log a dataset, and train naive and CQL learners for every α.

    The table always trains (it is cheap and it is what the oracle checks); the MLP trains
    when ``model == "mlp"``. Its input is the action's position, so it generalises along the
    line, and beyond the data it extrapolates.

    Args:
        curve: Reward curve (a key of ``CURVES``).
        n_actions: Number of actions K.
        coverage: Fraction of the actions in the data.
        centre: Middle of the data's window on [-1, 1].
        noise: Reward noise standard deviation.
        size: Dataset size N.
        model: "table" or "mlp".
        steps: Gradient steps of the chosen model (defaults: 2000 for the table, 1000 for the
            MLP); with the MLP the table keeps its default.
        init_std: Spread of the table's initial values.
        seed: Seeds the dataset (numpy) and the initial values (torch).

    Returns:
        The result.
    """
    if model not in ("table", "mlp"):
        raise ValueError(f"the model must be 'table' or 'mlp'; got {model!r}")
    problem = one_state_problem(
        curve, n_actions=n_actions, coverage=coverage, centre=centre, noise=noise
    )
    data_seed, init_seed = np.random.SeedSequence(seed).spawn(2)
    data = sample_one_state(problem, size, np.random.default_rng(data_seed))
    torch_seed = int(init_seed.generate_state(1)[0])
    # No bootstrapping here: the loss is a fixed convex function, so heavy momentum is safe, and
    # it speeds the slow, logarithmic descent of the unseen actions.
    table = train_table(
        data, ALPHAS, steps=(steps if model == "table" else None) or 2000, lr=0.5,
        momentum=0.9, init_std=init_std, seed=torch_seed,
    )
    training = table
    if model == "mlp":
        training = train_mlp(
            data, ALPHAS, problem.positions[:, None], per_action=True, steps=steps or 1000,
            lr=1e-2, hidden=32, seed=torch_seed,
        )
    counts, means = data.counts[0], data.mean_rewards[0]
    fixed = np.stack([one_state_fixed_point(counts, means, al).q for al in ALPHAS])
    r = problem.true_reward
    return OneStateResult(
        problem=problem, data=data, training=training, table=table, fixed_points=fixed,
        true_return=r[training.q[:, 0].argmax(axis=-1)],
        return_history=r[training.q_history[:, :, 0].argmax(axis=-1)].T,
        behaviour_return=float(problem.behaviour @ r), optimal_return=float(r.max()),
    )


@dataclass(frozen=True, eq=False)
class GridResult:
    """Everything the grid view shows.

    Attributes:
        problem: The grid problem.
        data: The dataset.
        training: One learner per α in ``ALPHAS``.
        true_return: ``[B]`` true value at the start of each learner's greedy policy.
        return_history: ``[B, R]`` the same during training.
        behaviour_return: True value at the start of the behaviour policy.
        optimal_return: ``V*`` at the start.
    """

    problem: GridProblem
    data: Dataset
    training: Training
    true_return: np.ndarray  # [B]
    return_history: np.ndarray  # [B, R]
    behaviour_return: float
    optimal_return: float

    def error_split(self) -> tuple[np.ndarray, np.ndarray]:
        """Mean ``Q - Q*`` of each learner on pairs in the data and outside it: ``[B]`` each."""
        return error_split(self.training.q, self.problem.q_star, self.data.counts)

    def fixed_point_gap(self, i: int) -> float:
        """Largest ``|Q - Q_exact|`` of tabular learner ``i`` over the pairs in the data.

        ``Q_exact`` is ``exact_fitted_q`` from the learner's own initial table: what the table
        is trained towards.
        """
        if self.training.model != "table":
            raise ValueError("the exact fixed point is the table's; this result holds an MLP")
        exact = exact_fitted_q(self.data, float(self.training.alphas[i]), self.problem.gamma,
                               self.training.q_history[0, i], tol=1e-9)
        seen = self.data.counts > 0
        return float(np.abs(self.training.q[i][seen] - exact[seen]).max())

    def greedy_error(self, i: int) -> np.ndarray:
        """``[S]`` ``Q_i(s, â) - Q*(s, â)`` at learner ``i``'s greedy action ``â``.

        How far the learner misjudges the action it would take (0 on terminal states).
        """
        q = self.training.q[i]
        rows = np.arange(q.shape[0])
        greedy = q.argmax(axis=1)
        err = q[rows, greedy] - self.problem.q_star[rows, greedy]
        return np.where(self.problem.mdp.terminal, 0.0, err)


def grid_experiment(
    name: str = "cliff",
    *,
    epsilon: float = 0.2,
    size: int = 500,
    gamma: float = 0.95,
    slip: float = 0.0,
    model: str = "mlp",
    steps: int | None = None,
    init_std: float = 1.0,
    seed: int = 0,
) -> GridResult:
    """Log a dataset on a grid and train naive and CQL learners for every α in ``ALPHAS``.

    The MLP's input is the one-hot state concatenated with its (row, column) scaled to [0, 1].

    Args:
        name: A key of ``GRIDS``.
        epsilon: Behaviour exploration rate (coverage).
        size: Number of transitions N.
        gamma: Discount factor in [0, 1).
        slip: Probability of slipping sideways.
        model: "table" or "mlp".
        steps: Gradient steps (defaults: 1500 for the table, 1000 for the MLP).
        init_std: Spread of the table's initial values.
        seed: Seeds the dataset (numpy) and the initial values (torch).

    Returns:
        The result.
    """
    if model not in ("table", "mlp"):
        raise ValueError(f"the model must be 'table' or 'mlp'; got {model!r}")
    problem = grid_problem(name, epsilon=epsilon, gamma=gamma, slip=slip)
    mdp = problem.mdp
    data_seed, init_seed = np.random.SeedSequence(seed).spawn(2)
    data = sample_grid(mdp, problem.behaviour, size, np.random.default_rng(data_seed))
    torch_seed = int(init_seed.generate_state(1)[0])
    if model == "table":
        training = train_table(
            data, ALPHAS, gamma=gamma, steps=steps or 1500, init_std=init_std, seed=torch_seed
        )
    else:
        cells = mdp.grid.cells / np.maximum(np.array(mdp.grid.shape) - 1, 1)
        feats = np.hstack([np.eye(mdp.n_states), cells])
        training = train_mlp(
            data, ALPHAS, feats, gamma=gamma, steps=steps or 1000, hidden=32, seed=torch_seed
        )
    start = mdp.start_state
    return GridResult(
        problem=problem, data=data, training=training,
        true_return=_greedy_returns(mdp, training.q, gamma),
        return_history=_greedy_returns(mdp, training.q_history, gamma).T,
        behaviour_return=float(policy_value(mdp, problem.behaviour, gamma)[start]),
        optimal_return=float(problem.q_star[start].max()),
    )
