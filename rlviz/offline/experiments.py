"""The experiments the page runs: learn for every α, then evaluate the greedy policies."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.mdp import TabularMDP
from rlviz.offline.learners import Training, train_mlp, train_table
from rlviz.offline.oracle import _softmax, exact_fitted_q, one_state_fixed_point
from rlviz.offline.problems import (
    ALPHAS,
    Dataset,
    GridProblem,
    OneStateProblem,
    _policy_values,
    grid_problem,
    one_state_problem,
    sample_grid,
    sample_one_state,
)

__all__ = [
    "GridResult",
    "OneStateResult",
    "error_split",
    "grid_experiment",
    "greedy_path",
    "one_state_experiment",
]


# ---------------------------------------------------------------------------------- evaluation


def _greedy_returns(mdp: TabularMDP, q: np.ndarray, gamma: float) -> np.ndarray:
    """``[...]`` true value at the start of the greedy policy of each table ``q [..., S, A]``.

    Each distinct greedy policy is evaluated once (learners and checkpoints share many).
    """
    greedy = q.reshape(-1, mdp.n_states, mdp.n_actions).argmax(axis=2)
    distinct, which = np.unique(greedy, axis=0, return_inverse=True)
    return _start_values(mdp, distinct, gamma)[which.reshape(-1)].reshape(q.shape[:-2])


def _start_values(mdp: TabularMDP, actions: np.ndarray, gamma: float) -> np.ndarray:
    """``[P]`` value at the start of each deterministic policy ``actions [P, S]``, exactly."""
    return _policy_values(mdp, np.eye(mdp.n_actions)[actions], gamma) @ mdp.start


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
        behaviour_return=float(_policy_values(mdp, problem.behaviour[None], gamma)[0, start]),
        optimal_return=float(problem.q_star[start].max()),
    )
