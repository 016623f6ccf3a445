"""Known answers without torch: CQL's fixed points, and exact fitted Q on the data."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import wrightomega

from rlviz.offline.problems import Dataset

__all__ = [
    "FixedPoint",
    "cql_fixed_point",
    "exact_fitted_q",
    "one_state_fixed_point",
]


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


def _softmax(q: np.ndarray) -> np.ndarray:
    z = q - q.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)
