"""Policy evaluation, value iteration and policy iteration (Sutton & Barto, 2018, chapter 4)."""

from __future__ import annotations

import numpy as np

from rlviz.dp.sweeps import _Backup, _freeze, _iterate, _message, _trace_fields
from rlviz.dp.traces import (
    DEFAULT_MAX_SWEEPS,
    NOT_IMPROVED,
    TIE_RTOL,
    EvaluationTrace,
    PolicyIterationTrace,
    SweepTrace,
    _check_common,
    _check_policy,
    uniform_policy,
)
from rlviz.errors import InputError
from rlviz.mdp import TabularMDP, action_values, policy_value

__all__ = [
    "policy_evaluation",
    "policy_iteration",
    "trace_tables",
    "value_iteration",
]


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
