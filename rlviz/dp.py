r"""Dynamic programming on tabular MDPs: policy evaluation, value iteration, policy iteration.

Every solver returns a frozen trace holding the **whole history**: the values after every sweep,
the greedy policy after every sweep, the largest change per sweep, and when the greedy policy
last changed. A page scrubs that history; nothing here animates.

Backups work on the sparse outcome table of ``rlviz.mdp.TabularMDP`` (``next_state``, ``prob``,
``reward``, each ``[S, A, K]``): one sweep gathers ``V`` at every successor and contracts over
outcomes and actions at once, so its cost is ``S * A * K`` rather than the ``S * A * S`` of a
dense table.

Two ways to sweep (Sutton & Barto, 2018, section 4.1):

* **synchronous** ("two arrays"): every state is backed up from the previous sweep's values;
* **in place** ("one array"): states are backed up in index order (row by row on a grid), each
  using the values already updated earlier in the same sweep.

In-place sweeps are sequential by nature. They are vectorised exactly by grouping the states into
*levels*: a state's level is one more than the highest level among its lower-numbered
successors, so the states of one level never need each other's new values and can be backed up
together, while each still reads the old value of every higher-numbered successor. The result
equals the state-by-state loop element for element (on an open grid the levels are the
anti-diagonals).

With ``gamma = 1`` the sweeps converge only when every state reaches a terminal state; otherwise
they stop at ``max_sweeps`` and the trace says so (``converged`` is False and ``message``
explains why). Values stay finite: they grow at most ``max_sweeps`` times the largest reward.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from rlviz.errors import InputError
from rlviz.mdp import TabularMDP, action_values, policy_value, reaches_terminal

__all__ = [
    "NOT_IMPROVED",
    "PROBLEMS",
    "ErrorBound",
    "EvaluationTrace",
    "ExactComparison",
    "FIGURE_4_1",
    "GammaSweeps",
    "PolicyIterationTrace",
    "Problem",
    "RolloutCheck",
    "SweepTrace",
    "compare_with_exact",
    "evaluation_error_bound",
    "episodes_within_budget",
    "expected_episode_length",
    "greedy_rollouts",
    "join_sweeps",
    "make_problem",
    "policy_evaluation",
    "policy_iteration",
    "sweeps_by_gamma",
    "trace_tables",
    "uniform_policy",
    "value_iteration",
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


# --------------------------------------------------------------------------- sweeps


# The reductions of ndarray.sum / ndarray.max without their Python wrappers (same results);
# an in-place sweep makes a few of these calls per level.
_sum = np.add.reduce
_max = np.maximum.reduce


@dataclass(frozen=True, eq=False)
class _Level:
    """The states of one in-place level and their outcome tables, outcomes and actions first."""

    states: np.ndarray  # [n] int
    source: np.ndarray  # [K, A, n] int index into [V_k | V_{k+1}] (length 2S) of each successor
    gamma_prob: np.ndarray  # [K, A, n]
    reward: np.ndarray  # [A, n] expected reward
    weights: np.ndarray | None  # [A, n] policy, or None for a max backup


def _levels(next_state: np.ndarray, prob: np.ndarray) -> np.ndarray:
    """``[S]`` in-place level of each state: 1 + the highest level of a lower-numbered successor."""
    n_states = next_state.shape[0]
    own = np.arange(n_states)[:, None, None]
    depends = (next_state < own) & (prob > 0)  # [S, A, K]
    level = np.zeros(n_states, dtype=np.int64)
    # Longest-path relaxation on a DAG (edges always point to lower indices): it settles after
    # at most (depth + 1) rounds.
    for _ in range(n_states + 1):
        reached = np.where(depends, level[next_state] + 1, 0).max(axis=(1, 2))
        if np.array_equal(reached, level):
            break
        level = reached
    return level


@dataclass(frozen=True, eq=False)
class _Backup:
    """Everything one sweep needs, prepared once per run."""

    next_state: np.ndarray  # [S, A, K]
    gamma_prob: np.ndarray  # [S, A, K] gamma * p(s'|s, a)
    reward: np.ndarray  # [S, A] r(s, a)
    weights: np.ndarray | None  # [S, A] pi(a|s), or None for max_a
    levels: tuple[_Level, ...] = ()

    @classmethod
    def build(
        cls, mdp: TabularMDP, gamma: float, weights: np.ndarray | None, in_place: bool
    ) -> _Backup:
        gamma_prob = gamma * mdp.prob
        reward = np.asarray(mdp.R)
        levels: tuple[_Level, ...] = ()
        if in_place:
            level = _levels(mdp.next_state, mdp.prob)
            order = np.argsort(level, kind="stable")
            bounds = np.flatnonzero(np.diff(level[order])) + 1
            groups = np.split(order, bounds)
            n_states = mdp.n_states
            def outcomes_first(table: np.ndarray) -> np.ndarray:  # [n, A, K] -> [K, A, n]
                return np.ascontiguousarray(table.transpose(2, 1, 0))

            levels = tuple(
                _Level(
                    states=idx,
                    # A successor numbered below the state was updated earlier in this sweep:
                    # read it from the second half of the buffer, which holds V_{k+1}.
                    source=outcomes_first(mdp.next_state[idx]
                                          + n_states * (mdp.next_state[idx] < idx[:, None, None])),
                    gamma_prob=outcomes_first(gamma_prob[idx]),
                    reward=np.ascontiguousarray(reward[idx].T),
                    weights=None if weights is None else np.ascontiguousarray(weights[idx].T),
                )
                for idx in groups
            )
        return cls(mdp.next_state, gamma_prob, reward, weights, levels)

    def q(self, values: np.ndarray) -> np.ndarray:
        """``Q(s, a) = r(s, a) + gamma * sum_k p_k V(s'_k)`` for ``values [..., S]``."""
        return self.reward + _sum(self.gamma_prob * values[..., self.next_state], axis=-1)

    def synchronous(self, values: np.ndarray) -> np.ndarray:
        q = self.q(values)
        if self.weights is None:
            return _max(q, axis=1)
        return _sum(self.weights * q, axis=1)

    def in_place(self, values: np.ndarray) -> np.ndarray:
        n_states = len(values)
        buffer = np.concatenate([values, values])  # [V_k | V_{k+1}, filled level by level]
        for lv in self.levels:
            # Reductions over the first axis add whole rows: faster than over a short last
            # axis, and the same numbers (both add x[0] + x[1] + ... in order).
            q = lv.reward + _sum(lv.gamma_prob * buffer.take(lv.source), axis=0)  # [A, n]
            buffer[n_states + lv.states] = (
                _max(q, axis=0) if lv.weights is None else _sum(lv.weights * q, axis=0)
            )
        return buffer[n_states:]


def _iterate(
    backup: _Backup,
    start: np.ndarray,
    *,
    theta: float,
    max_sweeps: int,
    in_place: bool,
    record: bool = True,
) -> tuple[list[np.ndarray], list[float], bool]:
    """Sweep until the largest change is below ``theta`` or ``max_sweeps`` sweeps are done.

    Returns:
        ``(values, deltas, converged)``: the values after each sweep (just the last one when
        ``record`` is False), the largest change of each sweep, and whether it converged.
    """
    sweep = backup.in_place if in_place else backup.synchronous
    v = start
    history: list[np.ndarray] = []
    deltas: list[float] = []
    for _ in range(max_sweeps):
        new = sweep(v)
        delta = float(np.max(np.abs(new - v)))
        deltas.append(delta)
        v = new
        if record:
            history.append(v)
        if delta < theta:
            return (history if record else [v]), deltas, True
    return (history if record else [v]), deltas, False


def _greedy_masks(values: np.ndarray, backup: _Backup) -> np.ndarray:
    """``[K+1, S, A]`` greedy action sets of every row of ``values [K+1, S]``, in chunks."""
    n_rows, n_states = values.shape
    n_actions, n_outcomes = backup.next_state.shape[1:]
    chunk = max(1, 2_000_000 // max(n_states * n_actions * n_outcomes, 1))
    out = np.empty((n_rows, n_states, n_actions), dtype=bool)
    for lo in range(0, n_rows, chunk):
        q = backup.q(values[lo : lo + chunk])  # [c, S, A]
        best = q.max(axis=-1, keepdims=True)
        out[lo : lo + chunk] = q >= best - TIE_RTOL * (1.0 + np.abs(best))
    return out


def _last_change(greedy: np.ndarray) -> int:
    changed = np.flatnonzero((greedy[1:] != greedy[:-1]).any(axis=(1, 2)))
    return int(changed[-1] + 1) if changed.size else 0


def _message(converged: bool, deltas: Sequence[float], gamma: float, theta: float,
             max_sweeps: int, what: str, mdp: TabularMDP | None = None,
             policy: np.ndarray | None = None) -> str:
    """One sentence on how a run ended, and, when it stopped at the limit, the true reason.

    With ``gamma = 1`` the reason is one of three: some state can never reach a terminal state
    (under ``policy``, or under any action when it is None); every state can, but the values
    still grow, because some loop collects reward forever; or the values are settling, only too
    slowly for the budget.
    """
    k = len(deltas)
    last = deltas[-1]
    if converged:
        return (
            f"{what} converged after {k} sweep{'s' if k != 1 else ''}: the last change, "
            f"{last:.3g}, is below θ = {theta:.3g}."
        )
    text = (
        f"{what} stopped at the limit of {max_sweeps} sweeps without converging: the last "
        f"sweep still changed a value by {last:.3g} (θ = {theta:.3g})."
    )
    if gamma < 1.0:
        more = (math.ceil(math.log(theta / last) / math.log(gamma)) if gamma > 0 and last > 0
                else 1)
        return text + f" Each sweep shrinks the error by γ = {gamma:g} at least; about {more} " \
            "more sweeps would do, so raise the sweep limit or θ."
    stuck = None if mdp is None else ~reaches_terminal(mdp, policy)
    if stuck is not None and stuck.any():
        where = ("this policy" if policy is not None else "any sequence of moves")
        return text + (
            f" With γ = 1 the values settle only if every state reaches a terminal state; "
            f"under {where}, {int(stuck.sum())} state(s) never do, so their values keep "
            "drifting. Lower γ, or add a goal they can reach."
        )
    window = deltas[-min(k, 50):]
    rate = (window[-1] / window[0]) ** (1 / (len(window) - 1)) if (
        len(window) > 1 and window[0] > 0 and window[-1] > 0) else 1.0
    if mdp is not None and rate < 1.0:
        more = math.ceil(math.log(theta / last) / math.log(rate))
        return text + (
            " Every state does reach a terminal state, so the values are settling, only "
            f"slowly: each sweep now shrinks the change by a factor of about {rate:.6g}, so "
            f"about {more:,} more sweeps would do. A larger θ, a smaller γ or a higher sweep "
            "limit ends it sooner."
        )
    if mdp is not None:
        return text + (
            " Every state can reach a terminal state, yet the values keep growing: with γ = 1 "
            "a loop that collects reward can be followed forever. Lower γ, or make such "
            "loops cost something."
        )
    return text


def _trace_fields(
    mdp: TabularMDP,
    backup: _Backup,
    history: list[np.ndarray],
    deltas: list[float],
    *,
    gamma: float,
) -> dict:
    values = np.stack(history)
    greedy = _greedy_masks(values, backup)
    return dict(
        values=values,
        greedy=greedy,
        deltas=np.asarray(deltas, dtype=np.float64),
        q=action_values(mdp, values[-1], gamma),
        policy_last_changed=_last_change(greedy),
    )


def _freeze(*arrays: np.ndarray | None) -> None:
    for a in arrays:
        if a is not None:
            a.setflags(write=False)


def policy_evaluation(
    mdp: TabularMDP,
    policy: np.ndarray,
    *,
    gamma: float,
    theta: float,
    in_place: bool = False,
    max_sweeps: int = DEFAULT_MAX_SWEEPS,
) -> EvaluationTrace:
    r"""Iterative policy evaluation, recording every sweep.

    Each sweep applies the Bellman expectation backup

    .. math:: V_{k+1}(s) = \sum_a \pi(a|s) \Big[ r(s, a) + \gamma \sum_{s'} p(s'|s, a) V_k(s') \Big]

    from ``V_0 = 0`` until ``max_s |V_{k+1}(s) - V_k(s)| < theta`` (Sutton & Barto, 2018,
    section 4.1, "Iterative Policy Evaluation"). The exact ``v_pi`` of the linear system
    ``(I - gamma P_pi) v = r_pi`` is returned beside it for comparison.

    Args:
        mdp: The model; terminal states are absorbing with reward 0.
        policy: ``[S, A]`` action probabilities ``pi(a|s)``.
        gamma: Discount factor in [0, 1].
        theta: Stop after the first sweep whose largest change is below this (> 0).
        in_place: Update one array state by state (True) or sweep synchronously (False).
        max_sweeps: Stop after this many sweeps even if not converged.

    Returns:
        The trace, with ``exact`` the linear-solve answer (None if it is infinite).

    Raises:
        ValueError: if an argument is out of range or the policy is malformed.
    """
    _check_common(mdp, gamma, theta, max_sweeps)
    pi = _check_policy(mdp, policy)
    backup = _Backup.build(mdp, gamma, pi, in_place)
    history, deltas, converged = _iterate(
        backup, np.zeros(mdp.n_states), theta=theta, max_sweeps=max_sweeps, in_place=in_place
    )
    history.insert(0, np.zeros(mdp.n_states))
    try:
        exact = policy_value(mdp, pi, gamma)
    except InputError:  # gamma = 1 and the policy does not always end: no finite values
        exact = None
    fields = _trace_fields(mdp, backup, history, deltas, gamma=gamma)
    _freeze(fields["values"], fields["greedy"], fields["deltas"], fields["q"], pi, exact)
    return EvaluationTrace(
        algorithm="policy_evaluation", gamma=float(gamma), theta=float(theta),
        in_place=bool(in_place), max_sweeps=int(max_sweeps), converged=converged,
        message=_message(converged, deltas, gamma, theta, max_sweeps, "Policy evaluation",
                         mdp, pi),
        policy=pi, exact=exact, **fields,
    )


def value_iteration(
    mdp: TabularMDP,
    *,
    gamma: float,
    theta: float,
    in_place: bool = False,
    max_sweeps: int = DEFAULT_MAX_SWEEPS,
) -> SweepTrace:
    r"""Value iteration, recording every sweep.

    Each sweep applies the Bellman optimality backup

    .. math:: V_{k+1}(s) = \max_a \Big[ r(s, a) + \gamma \sum_{s'} p(s'|s, a) V_k(s') \Big]

    from ``V_0 = 0`` until ``max_s |V_{k+1}(s) - V_k(s)| < theta`` (Sutton & Barto, 2018,
    section 4.4). For ``gamma < 1`` the backup is a ``gamma``-contraction in the max norm, so
    the change shrinks at least by ``gamma`` per sweep and, once it is below ``theta``,
    ``||V_K - V*|| <= gamma theta / (1 - gamma)``; ``trace.q`` is ``Q*`` up to that error.

    Args:
        mdp: The model; terminal states are absorbing with reward 0.
        gamma: Discount factor in [0, 1].
        theta: Stop after the first sweep whose largest change is below this (> 0).
        in_place: Update one array state by state (True) or sweep synchronously (False).
        max_sweeps: Stop after this many sweeps even if not converged.

    Returns:
        The trace.

    Raises:
        ValueError: if an argument is out of range.
    """
    _check_common(mdp, gamma, theta, max_sweeps)
    backup = _Backup.build(mdp, gamma, None, in_place)
    history, deltas, converged = _iterate(
        backup, np.zeros(mdp.n_states), theta=theta, max_sweeps=max_sweeps, in_place=in_place
    )
    history.insert(0, np.zeros(mdp.n_states))
    fields = _trace_fields(mdp, backup, history, deltas, gamma=gamma)
    _freeze(fields["values"], fields["greedy"], fields["deltas"], fields["q"])
    return SweepTrace(
        algorithm="value_iteration", gamma=float(gamma), theta=float(theta),
        in_place=bool(in_place), max_sweeps=int(max_sweeps), converged=converged,
        message=_message(converged, deltas, gamma, theta, max_sweeps, "Value iteration", mdp),
        **fields,
    )


def _improve(q: np.ndarray, current: np.ndarray, terminal: np.ndarray) -> np.ndarray:
    """Greedy deterministic policy ``[S, A]``, keeping each current action that is tied best."""
    best = q.max(axis=1, keepdims=True)
    is_best = q >= best - TIE_RTOL * (1.0 + np.abs(best))
    deterministic = np.isclose(current.max(axis=1), 1.0)
    kept = current.argmax(axis=1)
    keep = deterministic & is_best[np.arange(len(q)), kept]
    action = np.where(keep, kept, is_best.argmax(axis=1))
    out = np.zeros_like(q)
    out[np.arange(len(q)), action] = 1.0
    out[terminal] = current[terminal]  # nothing to choose where the episode has ended
    return out


def _policy_cycles(mdp: TabularMDP, pi: np.ndarray, *, gamma: float, theta: float,
                   in_place: bool, max_sweeps: int, record: bool = True):
    """The evaluate-improve loop of ``policy_iteration`` (see there).

    Returns:
        ``(history, deltas, policies, starts, ends, changes, converged, policy)``; without
        ``record`` the history holds only the final values.
    """
    v = np.zeros(mdp.n_states)
    history = [v]
    deltas: list[float] = []
    policies, starts, ends, changes = [], [], [], []
    converged = False
    while len(deltas) < max_sweeps:
        backup = _Backup.build(mdp, gamma, pi, in_place)
        policies.append(pi)
        starts.append(len(deltas))
        sweeps, cycle_deltas, evaluated = _iterate(
            backup, v, theta=theta, max_sweeps=max_sweeps - len(deltas), in_place=in_place,
            record=record,
        )
        history = history + sweeps if record else sweeps
        deltas += cycle_deltas
        ends.append(len(deltas))
        v = history[-1]
        if not evaluated:
            changes.append(NOT_IMPROVED)
            break
        new = _improve(action_values(mdp, v, gamma), pi, mdp.terminal)
        changed = int((np.abs(new - pi).max(axis=1) > 0)[~mdp.terminal].sum())
        changes.append(changed)
        pi = new
        if changed == 0:
            converged = True
            break
    return history, deltas, policies, starts, ends, changes, converged, pi


def policy_iteration(
    mdp: TabularMDP,
    *,
    gamma: float,
    theta: float,
    in_place: bool = False,
    max_sweeps: int = DEFAULT_MAX_SWEEPS,
    initial_policy: np.ndarray | None = None,
) -> PolicyIterationTrace:
    r"""Policy iteration with iterative evaluation, recording every evaluation sweep.

    Cycle ``c`` evaluates ``pi_c`` by sweeps of the expectation backup (starting from the previous
    cycle's values) until the change is below ``theta``, then improves greedily:

    .. math:: \pi_{c+1}(s) = \arg\max_a \Big[ r(s, a) + \gamma \sum_{s'} p(s'|s, a) V(s') \Big]

    keeping the current action wherever it is tied best, so the loop cannot cycle between equally
    good policies. It stops when an improvement changes no state (Sutton & Barto, 2018,
    section 4.3).

    Args:
        mdp: The model; terminal states are absorbing with reward 0.
        gamma: Discount factor in [0, 1].
        theta: Each evaluation stops after a sweep whose largest change is below this (> 0).
        in_place: Evaluate with in-place sweeps (True) or synchronous ones (False).
        max_sweeps: Stop after this many evaluation sweeps in total, converged or not.
        initial_policy: ``[S, A]`` the first policy; the equiprobable random policy by default.

    Returns:
        The trace, with the cycles and how many states each improvement changed.

    Raises:
        ValueError: if an argument is out of range or the initial policy is malformed.
    """
    _check_common(mdp, gamma, theta, max_sweeps)
    pi = uniform_policy(mdp) if initial_policy is None else _check_policy(mdp, initial_policy)
    history, deltas, policies, starts, ends, changes, converged, pi = _policy_cycles(
        mdp, pi, gamma=gamma, theta=theta, in_place=in_place, max_sweeps=max_sweeps)
    fields = _trace_fields(mdp, _Backup.build(mdp, gamma, None, False), history, deltas,
                           gamma=gamma)
    cycles = len(ends)
    if converged:
        message = (
            f"Policy iteration converged after {cycles} cycle{'s' if cycles != 1 else ''} "
            f"({len(deltas)} evaluation sweeps): the last improvement changed no action."
        )
    else:
        message = _message(False, deltas, gamma, theta, max_sweeps, "Policy iteration", mdp,
                           policies[-1])
    arrays = dict(
        policies=np.stack(policies),
        cycle_start=np.asarray(starts, dtype=np.int64),
        cycle_end=np.asarray(ends, dtype=np.int64),
        policy_changes=np.asarray(changes, dtype=np.int64),
        policy=pi,
    )
    _freeze(fields["values"], fields["greedy"], fields["deltas"], fields["q"], *arrays.values())
    return PolicyIterationTrace(
        algorithm="policy_iteration", gamma=float(gamma), theta=float(theta),
        in_place=bool(in_place), max_sweeps=int(max_sweeps), converged=converged,
        message=message, **fields, **arrays,
    )


def trace_tables(mdp: TabularMDP, trace: SweepTrace) -> dict[str, dict[str, np.ndarray]]:
    """A trace as plain tables (column name -> column) for export.

    States are named ``r<row>c<col>`` on grids and ``s<index>`` otherwise.

    Args:
        mdp: The model.
        trace: The run.

    Returns:
        ``values_by_sweep`` (one row per sweep, one column per state), ``max_change`` (one row
        per sweep, with whether the greedy policy changed) and ``final_q`` (one row per state).
    """
    names = (
        [f"r{r}c{c}" for r, c in mdp.grid.cells] if mdp.grid is not None
        else [f"s{i}" for i in range(mdp.n_states)]
    )
    changed = (trace.greedy[1:] != trace.greedy[:-1]).any(axis=(1, 2))
    return {
        "values_by_sweep": {"sweep": np.arange(trace.n_sweeps + 1),
                            **dict(zip(names, trace.values.T, strict=True))},
        "max_change": {"sweep": np.arange(1, trace.n_sweeps + 1), "max_change": trace.deltas,
                       "greedy_policy_changed": changed},
        "final_q": {"state": np.array(names),
                    **dict(zip(mdp.action_names, trace.q.T, strict=True))},
    }


# --------------------------------------------------------------------------- checks


@dataclass(frozen=True)
class ErrorBound:
    """How far some values can be from the exact values of a policy, from one more backup.

    Attributes:
        residual: ``max_s |T_pi V(s) - V(s)|``, the change one more backup would make.
        horizon: ``max_s E_pi[sum_t gamma^t]`` until termination (the expected discounted number
            of steps); ``inf`` when the policy can run forever with ``gamma = 1``.
        bound: ``horizon * residual``, which bounds ``max_s |V(s) - v_pi(s)|``.
    """

    residual: float
    horizon: float
    bound: float


def evaluation_error_bound(
    mdp: TabularMDP, policy: np.ndarray, values: np.ndarray, gamma: float
) -> ErrorBound:
    r"""An a-posteriori bound on ``max_s |V(s) - v_pi(s)|`` that also holds for ``gamma = 1``.

    From ``(I - gamma P_pi)(V - v_pi) = V - T_pi V`` on the non-terminal states,

    .. math:: \|V - v_\pi\|_\infty \le \|(I - \gamma P_\pi)^{-1}\|_\infty \|T_\pi V - V\|_\infty ,

    and the norm of the non-negative inverse is its largest row sum: the expected discounted
    number of steps before termination, ``max_s E_pi[sum_t gamma^t]`` (at most
    ``1 / (1 - gamma)``). That row sum is itself a policy value, for a reward of 1 per step.
    For a policy greedy with respect to ``V``, ``T_pi V`` is the optimality backup ``T V``.

    Args:
        mdp: The model.
        policy: ``[S, A]`` action probabilities.
        values: ``[S]`` the values to check (terminal states are taken as 0).
        gamma: Discount factor in [0, 1].

    Returns:
        The residual, the horizon and their product.

    Raises:
        ValueError: if the policy or the values are malformed.
    """
    pi = _check_policy(mdp, policy)
    v = np.asarray(values, dtype=np.float64)
    if v.shape != (mdp.n_states,) or not np.isfinite(v).all():
        raise ValueError(f"values must be {mdp.n_states} finite numbers; got shape {v.shape}")
    v = np.where(mdp.terminal, 0.0, v)
    backed = (pi * action_values(mdp, v, gamma)).sum(axis=1)
    residual = float(np.max(np.abs(backed - v)))
    unit = TabularMDP(
        next_state=mdp.next_state, prob=mdp.prob,
        reward=np.where(mdp.terminal[:, None, None], 0.0, np.ones_like(mdp.reward)),
        terminal=mdp.terminal, start=mdp.start, action_names=mdp.action_names,
    )
    try:
        horizon = float(np.max(policy_value(unit, pi, gamma)))
    except InputError:
        horizon = math.inf
    bound = horizon * residual if residual > 0 else 0.0
    return ErrorBound(residual=residual, horizon=horizon, bound=bound)


@dataclass(frozen=True, eq=False)
class ExactComparison:
    """A run's final values beside the exact values of a policy, and how far apart they may be.

    For policy evaluation the policy is the evaluated one; for value and policy iteration it is
    the final greedy policy (lowest-numbered action among ties), whose exact values are what
    rolling it out would measure.

    Attributes:
        policy: The policy whose exact values are compared.
        exact: Its values by linear solve; None when they are infinite.
        error: ``max_s |V_K(s) - exact(s)|`` (NaN when ``exact`` is None).
        bound: The a-posteriori bound on that error.
    """

    policy: np.ndarray  # [S, A]
    exact: np.ndarray | None  # [S]
    error: float
    bound: ErrorBound

    @property
    def within_bound(self) -> bool:
        """Whether the error respects the bound (with room for rounding)."""
        return self.exact is not None and self.error <= self.bound.bound + 1e-9 * (
            1 + float(np.abs(self.exact).max(initial=0.0))
        )


def compare_with_exact(mdp: TabularMDP, trace: SweepTrace) -> ExactComparison:
    """Compare a run's ``V_K`` with the exact values of its policy (see ``ExactComparison``).

    Args:
        mdp: The model the trace was computed on.
        trace: A policy-evaluation, value-iteration or policy-iteration trace.

    Returns:
        The comparison.
    """
    if isinstance(trace, EvaluationTrace):
        pi, exact = trace.policy, trace.exact
    else:
        pi = np.zeros((mdp.n_states, mdp.n_actions))
        pi[np.arange(mdp.n_states), trace.greedy_actions] = 1.0
        try:
            exact = policy_value(mdp, pi, trace.gamma)
        except InputError:
            exact = None
    v = trace.final_values
    error = math.nan if exact is None else float(np.max(np.abs(v - exact)))
    return ExactComparison(policy=pi, exact=exact, error=error,
                           bound=evaluation_error_bound(mdp, pi, v, trace.gamma))


# --------------------------------------------------------------------------- gamma sweep


@dataclass(frozen=True, eq=False)
class GammaSweeps:
    """Sweeps needed to converge as a function of the discount factor.

    Attributes:
        algorithm: Which solver ran.
        theta: The stopping threshold.
        max_sweeps: The sweep budget; counts equal to it did not converge.
        gammas: The discount factors.
        synchronous: Sweeps to converge with synchronous sweeps.
        in_place: Sweeps to converge with in-place sweeps.
        policy_final: Synchronous sweep from which the greedy policy no longer changed.
        bound: Sweeps the contraction guarantees for synchronous sweeps, from the first change:
            the smallest ``k`` with ``gamma^(k-1) * delta_1 < theta``; NaN where there is no
            such guarantee (``gamma = 1``, or policy iteration).
        converged: ``[G, 2]`` whether the synchronous and the in-place runs converged.
    """

    algorithm: str
    theta: float
    max_sweeps: int
    gammas: np.ndarray  # [G]
    synchronous: np.ndarray  # [G] int
    in_place: np.ndarray  # [G] int
    policy_final: np.ndarray  # [G] int
    bound: np.ndarray  # [G] float, NaN where no guarantee
    converged: np.ndarray  # [G, 2] bool (synchronous, in place)


ALGORITHMS = ("policy_evaluation", "value_iteration", "policy_iteration")


def join_sweeps(parts: Sequence[GammaSweeps]) -> GammaSweeps:
    """Counts made separately for some discount factors each, as one ``GammaSweeps``.

    Args:
        parts: Counts of the same solver, threshold and budget, in the order to show them.

    Returns:
        The counts side by side.
    """
    first = parts[0]
    if any((p.algorithm, p.theta, p.max_sweeps) != (first.algorithm, first.theta,
                                                       first.max_sweeps) for p in parts):
        raise ValueError("the parts must come from the same solver, θ and sweep budget")
    columns = ("gammas", "synchronous", "in_place", "policy_final", "bound", "converged")
    return GammaSweeps(algorithm=first.algorithm, theta=first.theta,
                       max_sweeps=first.max_sweeps,
                       **{c: np.concatenate([getattr(p, c) for p in parts]) for c in columns})


def _contraction_sweeps(gamma: float, first_delta: float, theta: float) -> float:
    if first_delta < theta:
        return 1.0
    if gamma >= 1.0:
        return math.nan
    if gamma == 0.0:
        return 2.0
    return float(math.floor(math.log(theta / first_delta) / math.log(gamma)) + 2)


def sweeps_by_gamma(
    mdp: TabularMDP,
    gammas: Sequence[float],
    *,
    algorithm: str,
    theta: float,
    max_sweeps: int = DEFAULT_MAX_SWEEPS,
    policy: np.ndarray | None = None,
) -> GammaSweeps:
    """Run a solver at several discount factors, synchronously and in place, and count sweeps.

    Args:
        mdp: The model.
        gammas: ``[G]`` discount factors in [0, 1].
        algorithm: One of ``"policy_evaluation"``, ``"value_iteration"``, ``"policy_iteration"``.
        theta: Stopping threshold (> 0).
        max_sweeps: Sweep budget of each run.
        policy: ``[S, A]`` the policy to evaluate (policy evaluation only; uniform by default).

    Returns:
        The counts.

    Raises:
        ValueError: if an argument is out of range.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {', '.join(ALGORITHMS)}; got {algorithm!r}")
    gs = np.asarray(gammas, dtype=np.float64)
    if gs.ndim != 1 or gs.size == 0:
        raise ValueError("gammas must be a non-empty list of numbers")
    for g in gs:
        _check_common(mdp, float(g), theta, max_sweeps)
    pi = None
    if algorithm == "policy_evaluation":
        pi = uniform_policy(mdp) if policy is None else _check_policy(mdp, policy)
    sync, inplace, final, bound, conv = [], [], [], [], []
    for g in map(float, gs):
        if algorithm == "policy_iteration":
            a = policy_iteration(mdp, gamma=g, theta=theta, max_sweeps=max_sweeps)
            _, deltas_ip, *_, ok_ip, _ = _policy_cycles(
                mdp, uniform_policy(mdp), gamma=g, theta=theta, in_place=True,
                max_sweeps=max_sweeps, record=False)
            sync.append(a.n_sweeps)
            inplace.append(len(deltas_ip))
            final.append(a.policy_last_changed)
            bound.append(math.nan)
            conv.append((a.converged, ok_ip))
            continue
        backup = _Backup.build(mdp, g, pi, False)
        history, deltas, ok_sync = _iterate(
            backup, np.zeros(mdp.n_states), theta=theta, max_sweeps=max_sweeps, in_place=False
        )
        history.insert(0, np.zeros(mdp.n_states))
        greedy_backup = backup if pi is None else _Backup.build(mdp, g, None, False)
        final.append(_last_change(_greedy_masks(np.stack(history), greedy_backup)))
        _, deltas_ip, ok_ip = _iterate(
            _Backup.build(mdp, g, pi, True), np.zeros(mdp.n_states), theta=theta,
            max_sweeps=max_sweeps, in_place=True, record=False,
        )
        sync.append(len(deltas))
        inplace.append(len(deltas_ip))
        bound.append(_contraction_sweeps(g, deltas[0], theta))
        conv.append((ok_sync, ok_ip))
    return GammaSweeps(
        algorithm=algorithm, theta=float(theta), max_sweeps=int(max_sweeps), gammas=gs.copy(),
        synchronous=np.asarray(sync, dtype=np.int64), in_place=np.asarray(inplace, dtype=np.int64),
        policy_final=np.asarray(final, dtype=np.int64), bound=np.asarray(bound),
        converged=np.asarray(conv, dtype=bool).reshape(len(gs), 2),
    )


# --------------------------------------------------------------------------- problems


MAX_CUSTOM_CELLS = 400
"""Largest custom layout (rows x columns) the page solves, to keep every sweep interactive."""


@dataclass(frozen=True)
class Problem:
    """A named environment with its customary settings.

    Attributes:
        label: Name shown to people.
        about: One sentence on what to look for.
        layout: Gridworld layout text (see ``rlviz.envs.LEGEND``); None for FrozenLake.
        frozen_lake: Gymnasium's FrozenLake map (``"4x4"``, ``"8x8"``), else None.
        slip: Probability of slipping sideways.
        step_reward: Reward of an ordinary move.
        goal_reward: Reward for entering a goal.
        gamma: Discount factor usually paired with it.
    """

    label: str
    about: str
    layout: str | None = None
    frozen_lake: str | None = None
    slip: float = 0.0
    step_reward: float = -1.0
    goal_reward: float = 0.0
    gamma: float = 1.0

    @property
    def custom(self) -> bool:
        """Whether the layout comes from the user."""
        return self.layout is None and self.frozen_lake is None

    def gym_kwargs(self, *, slip: float, step_reward: float, goal_reward: float) -> dict:
        """Keyword arguments of ``gymnasium.make("FrozenLake-v1", ...)`` for these settings."""
        if self.frozen_lake is None:
            raise ValueError(f"{self.label} is not a gymnasium environment")
        return dict(
            map_name=self.frozen_lake,
            is_slippery=slip > 0,
            success_rate=1.0 - slip,
            reward_schedule=(float(goal_reward), 0.0, float(step_reward)),
        )


def _layout(name: str) -> str:
    from rlviz.envs import LAYOUTS

    return LAYOUTS[name]


PROBLEMS: dict[str, Problem] = {
    "sutton_barto_4x4": Problem(
        "4×4 gridworld (Sutton & Barto, Fig. 4.1)",
        "Two terminal corners and −1 on every move, undiscounted: Example 4.1 of the book.",
        layout=_layout("sutton_barto_4x4"), step_reward=-1.0, goal_reward=-1.0, gamma=1.0,
    ),
    "frozen_lake_4x4": Problem(
        "FrozenLake 4×4 (gymnasium)",
        "Gymnasium's slippery lake: the intended move succeeds one time in three.",
        frozen_lake="4x4", slip=2 / 3, step_reward=0.0, goal_reward=1.0, gamma=0.99,
    ),
    "frozen_lake_8x8": Problem(
        "FrozenLake 8×8 (gymnasium)",
        "The larger lake: the safe route is long, and γ decides whether it is worth it.",
        frozen_lake="8x8", slip=2 / 3, step_reward=0.0, goal_reward=1.0, gamma=0.99,
    ),
    "cliff": Problem(
        "Cliff walking (Example 6.6)",
        "−1 per move and −100 for the cliff: with slip the best path moves away from the edge.",
        layout=_layout("cliff"), step_reward=-1.0, goal_reward=-1.0, gamma=1.0,
    ),
    "four_rooms": Problem(
        "Four rooms",
        "Value seeps through the doorways one room at a time.",
        layout=_layout("four_rooms"), step_reward=0.0, goal_reward=1.0, gamma=0.95,
    ),
    "bridge": Problem(
        "Bridge over holes",
        "The short way crosses a narrow bridge; with enough slip the long way round wins.",
        layout=_layout("bridge"), slip=0.1, step_reward=0.0, goal_reward=1.0, gamma=0.99,
    ),
    "maze": Problem(
        "Maze",
        "Values flow around corners one cell per synchronous sweep.",
        layout=_layout("maze"), step_reward=0.0, goal_reward=1.0, gamma=0.95,
    ),
    "corridor": Problem(
        "Corridor",
        "A goal at the end of a corridor: γ sets how far its value reaches.",
        layout=_layout("corridor"), step_reward=0.0, goal_reward=1.0, gamma=0.9,
    ),
    "custom": Problem(
        "Custom layout",
        "Your own grid, written as text.",
        step_reward=0.0, goal_reward=1.0, gamma=0.95,
    ),
}


def make_problem(
    name: str,
    *,
    slip: float,
    step_reward: float,
    goal_reward: float,
    layout: str | None = None,
) -> TabularMDP:
    """Build one of ``PROBLEMS`` with the given dynamics and rewards.

    Args:
        name: A key of ``PROBLEMS``.
        slip: Probability of slipping to one of the two perpendicular moves, in [0, 1].
        step_reward: Reward of an ordinary move.
        goal_reward: Reward for entering a goal.
        layout: The layout text of ``"custom"`` (ignored otherwise); at most
            ``MAX_CUSTOM_CELLS`` cells.

    Returns:
        The model (FrozenLake is read from gymnasium's own environment).

    Raises:
        ValueError: if the name is unknown or a setting is out of range.
        InputError: if the custom layout is malformed or too large.
    """
    from rlviz.envs import from_gymnasium, gridworld, parse_layout

    if name not in PROBLEMS:
        raise ValueError(f"unknown environment {name!r}; choose one of {', '.join(PROBLEMS)}")
    problem = PROBLEMS[name]
    if not 0.0 <= slip <= 1.0:
        raise ValueError(f"slip must be a probability in [0, 1]; got {slip}")
    for what, r in (("step reward", step_reward), ("goal reward", goal_reward)):
        if not math.isfinite(r):
            raise ValueError(f"the {what} must be a finite number; got {r}")
    if problem.frozen_lake is not None:
        import gymnasium as gym

        env = gym.make("FrozenLake-v1", **problem.gym_kwargs(
            slip=slip, step_reward=step_reward, goal_reward=goal_reward))
        try:
            return from_gymnasium(env, name=problem.label)
        finally:
            env.close()
    text = problem.layout
    if problem.custom:
        rows = parse_layout(layout if layout is not None else "")
        cells = len(rows) * len(rows[0])
        if cells > MAX_CUSTOM_CELLS:
            raise InputError(
                f"the layout has {len(rows)} × {len(rows[0])} = {cells} cells; this page solves "
                f"layouts of at most {MAX_CUSTOM_CELLS} cells (for example 20 × 20)"
            )
        text = "\n".join(rows)
    return gridworld(text, slip=slip, step_reward=step_reward, goal_reward=goal_reward,
                     name=problem.label)


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
