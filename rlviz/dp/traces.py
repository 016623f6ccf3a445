"""The solvers' traces (the whole history of a run), the book's Figure 4.1 values, input checks."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from rlviz.mdp import TabularMDP

__all__ = [
    "NOT_IMPROVED",
    "EvaluationTrace",
    "FIGURE_4_1",
    "PolicyIterationTrace",
    "SweepTrace",
    "uniform_policy",
]


DEFAULT_MAX_SWEEPS = 10_000
TIE_RTOL = 1e-9
"""Actions whose values are within ``TIE_RTOL * (1 + |max Q|)`` of the best count as tied."""
NOT_IMPROVED = -1
"""``PolicyIterationTrace.policy_changes`` of a cycle whose evaluation was cut off."""


FIGURE_4_1: dict[int | float, np.ndarray] = {
    k: np.array(rows, dtype=np.float64)
    for k, rows in {
        1: [[0, -1, -1, -1], [-1, -1, -1, -1], [-1, -1, -1, -1], [-1, -1, -1, 0]],
        2: [[0, -1.7, -2, -2], [-1.7, -2, -2, -2], [-2, -2, -2, -1.7], [-2, -2, -1.7, 0]],
        3: [[0, -2.4, -2.9, -3], [-2.4, -2.9, -3, -2.9], [-2.9, -3, -2.9, -2.4],
            [-3, -2.9, -2.4, 0]],
        10: [[0, -6.1, -8.4, -9], [-6.1, -7.7, -8.4, -8.4], [-8.4, -8.4, -7.7, -6.1],
             [-9, -8.4, -6.1, 0]],
        math.inf: [[0, -14, -20, -22], [-14, -18, -20, -20], [-20, -20, -18, -14],
                   [-22, -20, -14, 0]],
    }.items()
}
"""Sutton & Barto (2018), Figure 4.1: ``v_k`` of the equiprobable random policy on the 4x4
gridworld (-1 per move, gamma = 1) after k synchronous sweeps, as printed: one decimal for
finite k, whole numbers for k = infinity."""


# --------------------------------------------------------------------------- results


@dataclass(frozen=True, eq=False)
class SweepTrace:
    """The full history of one dynamic-programming run.

    Sweep ``k`` maps ``V_k`` to ``V_{k+1}``; ``V_0 = 0``. The run stops after the first sweep whose
    largest change is below ``theta`` (then ``converged``), or after ``max_sweeps`` sweeps.

    Attributes:
        algorithm: ``"policy_evaluation"``, ``"value_iteration"`` or ``"policy_iteration"``.
        gamma: Discount factor.
        theta: Stopping threshold on the largest change of a sweep.
        in_place: Whether sweeps updated one array in place (else synchronously).
        max_sweeps: The sweep budget.
        values: ``V_k`` for ``k = 0..K``.
        greedy: Actions greedy with respect to ``V_k`` (one-step lookahead), ties included.
        deltas: ``max_s |V_{k+1}(s) - V_k(s)|`` of sweep ``k + 1``.
        q: One-step action values of the final ``V_K``.
        converged: Whether the last change fell below ``theta``.
        policy_last_changed: The last sweep ``k`` whose greedy policy differs from that of
            ``V_{k-1}``; 0 if the greedy policy never changed. From this sweep on the greedy
            policy is the final one.
        message: One sentence on how the run ended, for people.
    """

    algorithm: str
    gamma: float
    theta: float
    in_place: bool
    max_sweeps: int
    values: np.ndarray  # [K+1, S] V_k after sweep k (row 0 is V_0 = 0)
    greedy: np.ndarray  # [K+1, S, A] bool, argmax_a Q_k(s, a) with ties
    deltas: np.ndarray  # [K] largest |V_{k+1} - V_k| of each sweep
    q: np.ndarray  # [S, A] Q of the final values
    converged: bool
    policy_last_changed: int
    message: str

    @property
    def n_sweeps(self) -> int:
        """Number of sweeps K."""
        return len(self.deltas)

    @property
    def final_values(self) -> np.ndarray:
        """``[S]`` the last values ``V_K``."""
        return self.values[-1]

    @property
    def greedy_actions(self) -> np.ndarray:
        """``[S]`` the final greedy action of each state (the lowest-numbered among ties)."""
        return np.argmax(self.greedy[-1], axis=1)

    @property
    def greedy_policy(self) -> np.ndarray:
        """``[S, A]`` the final greedy policy, spreading probability evenly over tied actions."""
        mask = self.greedy[-1].astype(np.float64)
        return mask / mask.sum(axis=1, keepdims=True)


@dataclass(frozen=True, eq=False)
class EvaluationTrace(SweepTrace):
    """Iterative policy evaluation, with the exact answer of a linear solve beside it.

    Attributes:
        policy: The evaluated policy.
        exact: ``v_pi`` from ``rlviz.mdp.policy_value``; None when it is infinite (``gamma = 1``
            and the policy does not terminate from every state).
    """

    policy: np.ndarray = field(default=None)  # [S, A] pi(a|s)
    exact: np.ndarray | None = None  # [S] v_pi by linear solve


@dataclass(frozen=True, eq=False)
class PolicyIterationTrace(SweepTrace):
    """Policy iteration: evaluation sweeps of each policy, then a greedy improvement.

    Cycle ``c`` evaluates ``policies[c]`` in sweeps ``cycle_start[c] + 1 .. cycle_end[c]``
    (starting from the previous cycle's values), then improves it greedily.

    Attributes:
        policies: The policy evaluated in each cycle (the first is the initial policy).
        cycle_start: Sweep index at which each cycle's evaluation began.
        cycle_end: Sweep index at which each cycle's evaluation ended.
        policy_changes: States whose action the improvement after each cycle changed;
            ``NOT_IMPROVED`` when the run stopped before that improvement.
        policy: The final policy (deterministic unless the run stopped in the first cycle).
    """

    policies: np.ndarray = field(default=None)  # [C, S, A] pi_c(a|s)
    cycle_start: np.ndarray = field(default=None)  # [C] int
    cycle_end: np.ndarray = field(default=None)  # [C] int
    policy_changes: np.ndarray = field(default=None)  # [C] int
    policy: np.ndarray = field(default=None)  # [S, A] final policy

    @property
    def n_cycles(self) -> int:
        """Number of evaluation/improvement cycles C."""
        return len(self.cycle_end)


# --------------------------------------------------------------------------- validation


def _check_common(mdp: TabularMDP, gamma: float, theta: float, max_sweeps: int) -> None:
    if not isinstance(mdp, TabularMDP):
        raise ValueError(f"expected a TabularMDP; got {type(mdp).__name__}")
    if not (isinstance(gamma, int | float) and 0.0 <= gamma <= 1.0):
        raise ValueError(f"gamma must be a number in [0, 1]; got {gamma!r}")
    if not (isinstance(theta, int | float) and math.isfinite(theta) and theta > 0):
        raise ValueError(f"theta must be a positive number; got {theta!r}")
    if isinstance(max_sweeps, bool) or not isinstance(max_sweeps, int | np.integer) or (
        max_sweeps < 1
    ):
        raise ValueError(f"max_sweeps must be a whole number of at least 1; got {max_sweeps!r}")


def _check_policy(mdp: TabularMDP, policy: np.ndarray) -> np.ndarray:
    pi = np.array(policy, dtype=np.float64)  # a copy: the trace freezes it
    if pi.shape != (mdp.n_states, mdp.n_actions):
        raise ValueError(
            f"policy must have shape [{mdp.n_states}, {mdp.n_actions}] (states, actions); "
            f"got {pi.shape}"
        )
    if not np.isfinite(pi).all() or (pi < 0).any():
        raise ValueError("policy probabilities must be finite and non-negative")
    sums = pi.sum(axis=1)
    bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-8)
    if bad.size:
        raise ValueError(
            f"the policy's probabilities in state {bad[0]} sum to {sums[bad[0]]:.6g}, not 1"
        )
    return pi


def uniform_policy(mdp: TabularMDP) -> np.ndarray:
    """The equiprobable random policy ``pi(a|s) = 1/A``.

    Args:
        mdp: The model.

    Returns:
        ``[S, A]`` action probabilities.
    """
    return np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
