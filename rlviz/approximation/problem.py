"""Baird's counterexample: the problem, its features, and the errors a weight vector makes."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError

__all__ = [
    "BOOK_START",
    "DIVERGED",
    "MAX_RUNS",
    "MAX_STEPS",
    "NULL_WEIGHTS",
    "Problem",
    "baird",
    "baird_features",
    "projected_bellman_error",
    "projection",
    "value_error",
]


DIVERGED = 1e6
"""A run stops, and is reported as diverged, once any weight exceeds this in absolute value."""
MAX_STEPS = 2000
"""Most steps (sampled) or sweeps (expected) a run may take."""
MAX_RUNS = 30
"""Most independent sampled runs."""
BOOK_START = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 10.0, 1.0])
"""The start weights of Sutton & Barto's Figures 11.2, 11.5 and 11.6."""
NULL_WEIGHTS = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 4.0, -2.0])
"""Weights with v̂ = 0 in every state of Baird's problem: the true values, up to scale."""
SOLID, DASHED = 0, 1
LOWER = 6


# --------------------------------------------------------------------------- validation
def _number(name: str, x: float, lo: float, hi: float, *, open_lo: bool = False,
            open_hi: bool = False) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number; got {x!r}") from None
    below = x <= lo if open_lo else x < lo
    above = x >= hi if open_hi else x > hi
    if not math.isfinite(x) or below or above:
        left, right = "(" if open_lo else "[", ")" if open_hi else "]"
        raise InputError(f"{name} must be in {left}{lo:g}, {hi:g}{right}; got {x:g}")
    return x


def _count(name: str, n: int, lo: int, hi: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or not lo <= n <= hi:
        raise InputError(f"{name} must be a whole number in [{lo}, {hi}]; got {n!r}")
    return int(n)


# --------------------------------------------------------------------------- the problem
def baird_features() -> np.ndarray:
    """Baird's feature matrix ``X`` ``[7, 8]``: rows ``2e_i + e_8`` (upper) and ``e_7 + 2e_8``."""
    x = np.zeros((7, 8))
    x[np.arange(6), np.arange(6)] = 2.0
    x[:6, 7] = 1.0
    x[LOWER, 6], x[LOWER, 7] = 1.0, 2.0
    return x


def _stationary(p: np.ndarray) -> np.ndarray:
    """The distribution ``d`` with ``dᵀ P = dᵀ`` (unique for the chains used here)."""
    s = p.shape[0]
    a = np.vstack([p.T - np.eye(s), np.ones(s)])
    d = np.linalg.lstsq(a, np.r_[np.zeros(s), 1.0], rcond=None)[0]
    d = np.clip(d, 0.0, None)
    return d / d.sum()


@dataclass(frozen=True)
class Problem:
    """An off-policy prediction problem: an MDP, behaviour and target policies, features, γ."""

    features: np.ndarray  # [S, F] x(s) as rows
    transitions: np.ndarray  # [S, A, S] p(s' | s, a)
    rewards: np.ndarray  # [S, A] expected reward of acting
    behaviour: np.ndarray  # [S, A] b(a | s), positive wherever π is
    target: np.ndarray  # [S, A] π(a | s)
    start_weights: np.ndarray  # [F]
    gamma: float

    @functools.cached_property
    def rho(self) -> np.ndarray:
        """Importance ratios ``π(a | s) / b(a | s)`` ``[S, A]``."""
        return self.target / self.behaviour

    @functools.cached_property
    def target_matrix(self) -> np.ndarray:
        """``P_π[s, s']`` ``[S, S]``: the next-state distribution under π."""
        return np.einsum("sa,sat->st", self.target, self.transitions)

    @functools.cached_property
    def target_rewards(self) -> np.ndarray:
        """``r_π(s)`` ``[S]``: the expected reward under π."""
        return np.einsum("sa,sa->s", self.target, self.rewards)

    @functools.cached_property
    def behaviour_distribution(self) -> np.ndarray:
        """``d_b`` ``[S]``: the behaviour's stationary state distribution (uniform on Baird's)."""
        return _stationary(np.einsum("sa,sat->st", self.behaviour, self.transitions))

    @functools.cached_property
    def target_distribution(self) -> np.ndarray:
        """``d_π`` ``[S]``: π's own (on-policy) stationary distribution."""
        return _stationary(self.target_matrix)

    @functools.cached_property
    def true_values(self) -> np.ndarray:
        """``v_π = (I − γ P_π)⁻¹ r_π`` ``[S]``."""
        s = self.target_rewards.size
        return np.linalg.solve(np.eye(s) - self.gamma * self.target_matrix, self.target_rewards)

    def distribution(self, on_policy: bool) -> np.ndarray:
        """The state distribution of the updates: π's own when on-policy, else the behaviour's."""
        return self.target_distribution if on_policy else self.behaviour_distribution


def baird(*, gamma: float = 0.99, target_solid: float = 1.0, tabular: bool = False) -> Problem:
    """Baird's counterexample (Sutton & Barto 2018, Example 11.1, Figure 11.1).

    Args:
        gamma: Discount γ in [0, 1).
        target_solid: π(solid | s), the same in every state; 1 is the book's target policy and
            1/7 makes π equal to the behaviour (on-policy).
        tabular: One-hot features (7 weights, one per state) instead of Baird's 8, starting
            from the same values ``X w₀`` as Baird's start weights.
    """
    gamma = _number("The discount γ", gamma, 0.0, 1.0, open_hi=True)
    p = _number("π(solid)", target_solid, 0.0, 1.0)
    trans = np.zeros((7, 2, 7))
    trans[:, SOLID, LOWER] = 1.0
    trans[:, DASHED, :6] = 1.0 / 6.0
    behaviour = np.tile([1.0 / 7.0, 6.0 / 7.0], (7, 1))
    target = np.tile([p, 1.0 - p], (7, 1))
    x = baird_features()
    start = BOOK_START.copy()
    if tabular:
        start, x = x @ start, np.eye(7)
    return Problem(features=x, transitions=trans, rewards=np.zeros((7, 2)), behaviour=behaviour,
                   target=target, start_weights=start, gamma=gamma)


# --------------------------------------------------------------------------- errors
def projection(features: np.ndarray, d: np.ndarray) -> np.ndarray:
    r"""The projection ``Π = X (Xᵀ D X)⁺ Xᵀ D`` onto the representable values, in the d-norm.

    ``Π v`` is the representable value function closest to ``v`` in ``‖·‖_d`` (Sutton & Barto
    2018, eq. 11.14). The pseudo-inverse covers features that are linearly dependent, as
    Baird's 8 features of 7 states are.

    Args:
        features: ``X`` ``[S, F]``.
        d: State weights ``[S]``, non-negative.

    Returns:
        ``Π`` ``[S, S]``.
    """
    xd = features.T * d
    return features @ np.linalg.pinv(xd @ features) @ xd


def value_error(problem: Problem, weights: np.ndarray) -> np.ndarray:
    r"""√VE: the RMS value error ``√(Σ_s d_b(s) (x(s)ᵀw − v_π(s))²)`` (book eq. 9.1).

    Weighted by the behaviour's distribution, as in the book's Figures 11.5 and 11.6.

    Args:
        problem: The features, the true values and the behaviour's distribution.
        weights: ``[..., F]``.

    Returns:
        ``[...]``.
    """
    err = weights @ problem.features.T - problem.true_values
    return np.sqrt(err**2 @ problem.behaviour_distribution)


def projected_bellman_error(problem: Problem, weights: np.ndarray) -> np.ndarray:
    r"""√PBE: ``‖Π δ̄_w‖_d``, the RMS projected Bellman error (book eq. 11.22).

    ``δ̄_w = r_π + γ P_π X w − X w`` is the expected TD error of each state under π, and ``Π``
    projects in the behaviour's distribution ``d_b``.

    Args:
        problem: The features, π's model and the behaviour's distribution.
        weights: ``[..., F]``.

    Returns:
        ``[...]``.
    """
    d = problem.behaviour_distribution
    v = weights @ problem.features.T
    bellman = problem.target_rewards + problem.gamma * v @ problem.target_matrix.T - v
    projected = bellman @ projection(problem.features, d).T
    return np.sqrt(projected**2 @ d)
