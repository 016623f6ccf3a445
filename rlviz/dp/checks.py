"""Checks on a trace: the stopping rule's error bound, and the comparison with the exact values."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlviz.dp.traces import EvaluationTrace, SweepTrace, _check_policy
from rlviz.errors import InputError
from rlviz.mdp import TabularMDP, action_values, policy_value

__all__ = [
    "ErrorBound",
    "ExactComparison",
    "compare_with_exact",
    "evaluation_error_bound",
]


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
