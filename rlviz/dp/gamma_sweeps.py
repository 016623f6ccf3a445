"""Sweeps to convergence across discount factors: the contraction and its bound."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rlviz.dp.solvers import _policy_cycles, policy_iteration
from rlviz.dp.sweeps import _Backup, _greedy_masks, _iterate, _last_change
from rlviz.dp.traces import DEFAULT_MAX_SWEEPS, _check_common, _check_policy, uniform_policy
from rlviz.mdp import TabularMDP

__all__ = [
    "GammaSweeps",
    "join_sweeps",
    "sweeps_by_gamma",
]


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
