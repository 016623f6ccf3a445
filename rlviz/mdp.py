"""Finite Markov decision processes as explicit tables.

One convention everywhere: ``P[s, a, s']`` is the probability of moving to ``s'`` after taking
action ``a`` in state ``s``, ``R[s, a]`` is the expected immediate reward, and ``terminal[s]``
marks absorbing states that yield no further reward.

The model is stored sparsely, as up to ``K`` outcomes per state-action pair, because the
gridworlds here have at most a handful of successors per action: a 30x30 grid has 900 states, and
a dense ``[S, A, S']`` table would make every Bellman sweep ``S`` times more expensive than it
needs to be. The dense ``P`` and ``R`` are available as properties for small models and tests.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from rlviz.errors import InputError

__all__ = ["GridInfo", "TabularMDP", "action_values", "outcomes_from_dense", "policy_value"]

PROB_ATOL = 1e-9


@dataclass(frozen=True, eq=False)
class GridInfo:
    """Where each state of a grid-shaped MDP sits, for drawing and for layout-aware code.

    Attributes:
        layout: The text rows the grid was built from (legend in ``rlviz.envs.LEGEND``).
        cells: ``[S, 2]`` (row, column) of each state. Wall cells have no state.
        action_deltas: ``[A, 2]`` (d_row, d_col) of each action's intended move.
    """

    layout: tuple[str, ...]
    cells: np.ndarray  # [S, 2] int (row, col) of each state
    action_deltas: np.ndarray  # [A, 2] int (d_row, d_col) of each action

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns) of the layout."""
        return len(self.layout), len(self.layout[0])

    def char(self, row: int, col: int) -> str:
        """The layout character at a cell."""
        return self.layout[row][col]

    @cached_property
    def state_of_cell(self) -> np.ndarray:
        """``[rows, cols]`` state index of each cell, ``-1`` on walls."""
        grid = np.full(self.shape, -1, dtype=np.int64)
        grid[self.cells[:, 0], self.cells[:, 1]] = np.arange(len(self.cells))
        return grid

    def to_grid(self, per_state: np.ndarray, fill: float = np.nan) -> np.ndarray:
        """Scatter a per-state array ``[S, ...]`` onto the grid ``[rows, cols, ...]``."""
        per_state = np.asarray(per_state)
        out = np.full(self.shape + per_state.shape[1:], fill, dtype=np.result_type(per_state, fill))
        out[self.cells[:, 0], self.cells[:, 1]] = per_state
        return out


@dataclass(frozen=True, eq=False)
class TabularMDP:
    """A finite MDP with at most ``K`` outcomes per (state, action).

    Outcome ``k`` of taking ``a`` in ``s`` leads to ``next_state[s, a, k]`` with probability
    ``prob[s, a, k]`` and reward ``reward[s, a, k]``. Unused outcome slots have probability 0.
    Terminal states are absorbing (every action loops back with probability 1) and give reward 0,
    so values and returns need no special case for them.

    Attributes:
        next_state: ``[S, A, K]`` successor state of each outcome.
        prob: ``[S, A, K]`` probability of each outcome; sums to 1 over ``K``.
        reward: ``[S, A, K]`` reward received on each outcome.
        terminal: ``[S]`` True where the episode ends on arrival.
        start: ``[S]`` initial-state distribution.
        action_names: One short name per action.
        grid: Cell positions when the MDP comes from a grid layout, else None.
        name: A human-readable label.
    """

    next_state: np.ndarray  # [S, A, K] int
    prob: np.ndarray  # [S, A, K] float
    reward: np.ndarray  # [S, A, K] float
    terminal: np.ndarray  # [S] bool
    start: np.ndarray  # [S] float, sums to 1
    action_names: tuple[str, ...]
    grid: GridInfo | None = None
    name: str = "MDP"

    def __post_init__(self) -> None:
        ns = np.array(self.next_state, dtype=np.int64)
        pr = np.array(self.prob, dtype=np.float64)
        rw = np.array(self.reward, dtype=np.float64)
        term = np.array(self.terminal, dtype=bool)
        d0 = np.array(self.start, dtype=np.float64)
        if ns.ndim != 3:
            raise ValueError(f"next_state must have shape [S, A, K]; got {ns.shape}")
        if pr.shape != ns.shape or rw.shape != ns.shape:
            raise ValueError(
                f"next_state, prob and reward must share one shape [S, A, K]; got "
                f"{ns.shape}, {pr.shape} and {rw.shape}"
            )
        n_states, n_actions, _ = ns.shape
        if n_states == 0 or n_actions == 0 or ns.shape[2] == 0:
            raise ValueError(f"an MDP needs at least one state, action and outcome; got {ns.shape}")
        if term.shape != (n_states,):
            raise ValueError(f"terminal must have shape [{n_states}]; got {term.shape}")
        if d0.shape != (n_states,):
            raise ValueError(f"start must have shape [{n_states}]; got {d0.shape}")
        if len(self.action_names) != n_actions:
            raise ValueError(
                f"action_names has {len(self.action_names)} names for {n_actions} actions"
            )
        if ((ns < 0) | (ns >= n_states)).any():
            raise ValueError(f"next_state holds indices outside [0, {n_states})")
        if not (np.isfinite(pr).all() and np.isfinite(rw).all() and np.isfinite(d0).all()):
            raise ValueError("probabilities and rewards must be finite numbers")
        if (pr < 0).any():
            raise ValueError("transition probabilities must be non-negative")
        sums = pr.sum(axis=2)
        bad = np.argwhere(np.abs(sums - 1.0) > PROB_ATOL)
        if len(bad):
            s, a = bad[0]
            raise ValueError(
                f"transition probabilities of state {s}, action {a} sum to {sums[s, a]:.6g}, not 1"
            )
        if (d0 < 0).any() or abs(d0.sum() - 1.0) > PROB_ATOL:
            raise ValueError("the start distribution must be non-negative and sum to 1")
        for s in np.flatnonzero(term):
            live = pr[s] > 0
            if (ns[s][live] != s).any() or (rw[s][live] != 0).any():
                raise ValueError(f"terminal state {s} must loop to itself with reward 0")
        if self.grid is not None and len(self.grid.cells) != n_states:
            raise ValueError(
                f"grid has {len(self.grid.cells)} cells for {n_states} states"
            )
        for name, arr in (
            ("next_state", ns), ("prob", pr), ("reward", rw), ("terminal", term), ("start", d0)
        ):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)
        object.__setattr__(self, "action_names", tuple(self.action_names))

    @property
    def n_states(self) -> int:
        """Number of states S."""
        return self.next_state.shape[0]

    @property
    def n_actions(self) -> int:
        """Number of actions A."""
        return self.next_state.shape[1]

    @cached_property
    def P(self) -> np.ndarray:  # noqa: N802 - the textbook name
        """``[S, A, S']`` dense transition probabilities (built on first use)."""
        n_states, n_actions, _ = self.next_state.shape
        dense = np.zeros((n_states, n_actions, n_states))
        s_idx, a_idx, _ = np.indices(self.next_state.shape)
        np.add.at(dense, (s_idx, a_idx, self.next_state), self.prob)
        dense.setflags(write=False)
        return dense

    @cached_property
    def R(self) -> np.ndarray:  # noqa: N802 - the textbook name
        """``[S, A]`` expected immediate reward."""
        r = (self.prob * self.reward).sum(axis=2)
        r.setflags(write=False)
        return r

    @cached_property
    def cumulative_prob(self) -> np.ndarray:
        """``[S, A, K]`` cumulative outcome probabilities, the last one exactly 1, for sampling."""
        c = np.cumsum(self.prob, axis=2)
        c[..., -1] = 1.0
        c.setflags(write=False)
        return c

    @property
    def start_state(self) -> int:
        """The most likely start state (the only one for gridworlds)."""
        return int(np.argmax(self.start))

    def expected_next(self, values: np.ndarray) -> np.ndarray:
        """``E[v(s') | s, a]`` for every (s, a): ``[S, A]`` from ``values [S]``."""
        values = np.asarray(values, dtype=np.float64)
        return (self.prob * values[..., self.next_state]).sum(axis=-1)

    def step(self, states: np.ndarray, actions: np.ndarray, u: np.ndarray):
        """Sample successors for a batch using uniform draws ``u`` in [0, 1).

        Args:
            states: ``[B]`` current states.
            actions: ``[B]`` actions taken.
            u: ``[B]`` uniform random numbers, one per transition.

        Returns:
            ``(next_states [B], rewards [B])``.
        """
        cum = self.cumulative_prob[states, actions]  # [B, K]
        k = (cum <= np.asarray(u)[:, None]).sum(axis=1)
        k = np.minimum(k, cum.shape[1] - 1)
        return self.next_state[states, actions, k], self.reward[states, actions, k]


def outcomes_from_dense(
    P: np.ndarray,  # noqa: N803 - the textbook name
    R: np.ndarray,  # noqa: N803
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Turn dense ``P[s, a, s']`` and ``R[s, a]`` into the sparse outcome table.

    The reward of every outcome of (s, a) is ``R[s, a]``, so expected rewards are preserved.

    Args:
        P: ``[S, A, S']`` transition probabilities.
        R: ``[S, A]`` expected rewards.

    Returns:
        ``(next_state, prob, reward)``, each ``[S, A, K]`` with ``K`` the largest support size.
    """
    P = np.asarray(P, dtype=np.float64)  # noqa: N806
    R = np.asarray(R, dtype=np.float64)  # noqa: N806
    if P.ndim != 3 or P.shape[0] != P.shape[2]:
        raise ValueError(f"P must have shape [S, A, S]; got {P.shape}")
    if R.shape != P.shape[:2]:
        raise ValueError(f"R must have shape {P.shape[:2]}; got {R.shape}")
    support = P > 0
    k_max = max(int(support.sum(axis=2).max()), 1)
    order = np.argsort(~support, axis=2, kind="stable")[..., :k_max]
    prob = np.take_along_axis(P, order, axis=2)
    next_state = np.where(prob > 0, order, order[..., :1])
    reward = np.broadcast_to(R[..., None], prob.shape).copy()
    return next_state, prob, reward


def action_values(mdp: TabularMDP, values: np.ndarray, gamma: float) -> np.ndarray:
    """One-step lookahead ``Q(s, a) = R(s, a) + gamma * sum_s' P(s' | s, a) V(s')``.

    Terminal states get ``Q = 0`` for every action, whatever ``values`` holds there.

    Args:
        mdp: The model.
        values: ``[S]`` state values V.
        gamma: Discount factor in [0, 1].

    Returns:
        ``[S, A]`` action values.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.shape != (mdp.n_states,):
        raise ValueError(f"values must have shape [{mdp.n_states}]; got {values.shape}")
    v = np.where(mdp.terminal, 0.0, values)
    q = (mdp.prob * (mdp.reward + gamma * v[mdp.next_state])).sum(axis=2)
    q[mdp.terminal] = 0.0
    return q


def policy_value(mdp: TabularMDP, policy: np.ndarray, gamma: float) -> np.ndarray:
    """Exact state values of a stochastic policy by one linear solve.

    Solves ``(I - gamma * P_pi) V = R_pi`` over the non-terminal states, where
    ``P_pi[s, s'] = sum_a pi(a|s) P(s'|s, a)`` and ``R_pi[s] = sum_a pi(a|s) R(s, a)``;
    terminal states have ``V = 0`` (Sutton & Barto, eq. 4.4 written as a linear system).

    Args:
        mdp: The model.
        policy: ``[S, A]`` action probabilities (rows sum to 1).
        gamma: Discount factor in [0, 1]. With ``gamma = 1`` the policy must reach a terminal
            state with probability 1 from every state.

    Returns:
        ``[S]`` values V_pi.

    Raises:
        ValueError: if the policy is malformed.
        InputError: if ``gamma = 1`` and the policy can loop forever (no finite values).
    """
    pi = np.asarray(policy, dtype=np.float64)
    if pi.shape != (mdp.n_states, mdp.n_actions):
        raise ValueError(
            f"policy must have shape [{mdp.n_states}, {mdp.n_actions}]; got {pi.shape}"
        )
    if (pi < 0).any() or not np.allclose(pi.sum(axis=1), 1.0, atol=1e-8):
        raise ValueError("each row of the policy must be a probability distribution")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1]; got {gamma}")
    live = np.flatnonzero(~mdp.terminal)
    values = np.zeros(mdp.n_states)
    if live.size == 0:
        return values
    # Transition matrix and reward of the policy, built from the sparse outcomes.
    p_pi = np.zeros((mdp.n_states, mdp.n_states))
    weights = pi[:, :, None] * mdp.prob  # [S, A, K]
    rows = np.broadcast_to(np.arange(mdp.n_states)[:, None, None], weights.shape)
    np.add.at(p_pi, (rows, mdp.next_state), weights)
    r_pi = (pi * mdp.R).sum(axis=1)
    if gamma == 1.0:
        stuck = ~_reaches_terminal(p_pi, mdp.terminal)
        if stuck.any():
            raise InputError(
                f"this policy never reaches a terminal state from {int(stuck.sum())} state(s) "
                f"(state {int(np.argmax(stuck))} first), so with gamma = 1 their values are "
                "not defined; use gamma < 1"
            )
    system = np.eye(live.size) - gamma * p_pi[np.ix_(live, live)]
    values[live] = np.linalg.solve(system, r_pi[live])
    return values


def reaches_terminal(mdp: TabularMDP, policy: np.ndarray | None = None) -> np.ndarray:
    """``[S]`` True where a terminal state is reached with positive probability.

    Under ``policy`` (``[S, A]``), or, when it is None, under some sequence of actions: a
    state for which this is False can never end its episode.

    Args:
        mdp: The model.
        policy: ``[S, A]`` action probabilities, or None for "any action".

    Returns:
        ``[S]`` bool (True on the terminal states themselves).
    """
    weights = np.ones(mdp.prob.shape[:2]) if policy is None else np.asarray(policy, float)
    edges = np.zeros((mdp.n_states, mdp.n_states))
    w = weights[:, :, None] * mdp.prob
    rows = np.broadcast_to(np.arange(mdp.n_states)[:, None, None], w.shape)
    np.add.at(edges, (rows, mdp.next_state), w)
    return _reaches_terminal(edges, mdp.terminal)


def _reaches_terminal(p_pi: np.ndarray, terminal: np.ndarray) -> np.ndarray:
    """``[S]`` True where the chain ``p_pi`` reaches a terminal state with positive probability.

    A breadth-first search backwards from the terminal states over the edges ``s -> s'`` with
    ``p_pi[s, s'] > 0``; where it holds for every state, ``I - P_pi`` restricted to the live
    states is invertible.
    """
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order

    n = len(terminal)
    src, dst = np.nonzero(p_pi > 0)
    # Reversed edges (s' -> s), plus a source node n pointing at every terminal state.
    rows = np.concatenate([dst, np.full(int(terminal.sum()), n)])
    cols = np.concatenate([src, np.flatnonzero(terminal)])
    graph = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(n + 1, n + 1))
    order = breadth_first_order(graph, n, directed=True, return_predecessors=False)
    reached = np.zeros(n + 1, dtype=bool)
    reached[order] = True
    return reached[:n]
