"""The estimators: importance ratios, ordinary and weighted IS, per-decision IS, doubly robust."""

from __future__ import annotations

import numpy as np

__all__ = [
    "ESTIMATORS",
    "doubly_robust",
    "importance_ratio",
    "kish_ess",
    "ordinary_is",
    "ordinary_is_running",
    "per_decision_is",
    "weighted_is",
    "weighted_is_running",
]


ESTIMATORS = ("ordinary", "weighted", "per_decision", "doubly_robust")
"""The estimators compared on the chain, in the order they are drawn."""


# =========================================================================== the estimators
def importance_ratio(pi_taken: np.ndarray, b_taken: np.ndarray) -> np.ndarray:
    r"""The importance-sampling ratio of whole episodes.

    ``rho_{0:T-1} = prod_t pi(A_t | S_t) / b(A_t | S_t)`` (Sutton & Barto 2018, eq. 5.3).

    Args:
        pi_taken: ``[..., T]`` the target's probability of each action taken, steps ``[0, T-1]``.
        b_taken: ``[..., T]`` the behaviour's probability of the same actions (positive: ``b``
            took them).

    Returns:
        ``[...]`` one ratio per episode.
    """
    return np.prod(pi_taken / b_taken, axis=-1)


def ordinary_is(weights: np.ndarray, returns: np.ndarray) -> np.ndarray:
    r"""Ordinary importance sampling: the plain average of the reweighted returns.

    ``V = (1/n) sum_i rho_i G_i`` (Sutton & Barto 2018, eq. 5.5). Unbiased.

    Args:
        weights: ``[..., n]`` importance ratios of the ``n`` episodes.
        returns: ``[..., n]`` their returns ``G_i``.

    Returns:
        ``[...]`` the estimate of each data set.
    """
    return np.mean(weights * returns, axis=-1)


def weighted_is(weights: np.ndarray, returns: np.ndarray) -> np.ndarray:
    r"""Weighted importance sampling: the ratio-weighted average of the returns.

    ``V = sum_i rho_i G_i / sum_i rho_i``, and 0 while every ratio is 0 (Sutton & Barto 2018,
    eq. 5.6). Biased for finite ``n``; always inside the range of the returns.

    Args:
        weights: ``[..., n]`` importance ratios.
        returns: ``[..., n]`` returns.

    Returns:
        ``[...]`` the estimate of each data set.
    """
    total = np.sum(weights, axis=-1)
    weighted = np.sum(weights * returns, axis=-1)
    return np.divide(weighted, total, out=np.zeros_like(weighted), where=total > 0)


def ordinary_is_running(weights: np.ndarray, returns: np.ndarray) -> np.ndarray:
    r"""Ordinary IS after each episode: ``V_n = (1/n) sum_{i<=n} rho_i G_i``.

    Args:
        weights: ``[..., N]`` importance ratios, in the order the episodes arrive.
        returns: ``[..., N]`` returns.

    Returns:
        ``[..., N]`` the estimate after episodes ``1..N``.
    """
    n = np.arange(1, weights.shape[-1] + 1)
    return np.cumsum(weights * returns, axis=-1) / n


def weighted_is_running(weights: np.ndarray, returns: np.ndarray) -> np.ndarray:
    r"""Weighted IS after each episode: ``V_n = sum_{i<=n} rho_i G_i / sum_{i<=n} rho_i``.

    The book's incremental form ``C <- C + W``, ``V <- V + (W / C)(G - V)`` (§5.6) gives the
    same numbers; before the first episode with a non-zero ratio the estimate is 0.

    Args:
        weights: ``[..., N]`` importance ratios, in the order the episodes arrive.
        returns: ``[..., N]`` returns.

    Returns:
        ``[..., N]`` the estimate after episodes ``1..N``.
    """
    weighted = np.cumsum(weights * returns, axis=-1)
    total = np.cumsum(weights, axis=-1)
    return np.divide(weighted, total, out=np.zeros_like(weighted), where=total > 0)


def per_decision_is(ratios: np.ndarray, rewards: np.ndarray, gamma: float) -> np.ndarray:
    r"""Per-decision importance sampling.

    ``V = (1/n) sum_i sum_t gamma^t rho_{0:t} R_{t+1}``: the reward of step ``t`` is weighted by
    the ratios of the steps up to ``t`` only (Precup, Sutton & Singh 2000; Sutton & Barto 2018,
    eq. 5.15). Unbiased, like ordinary IS, and never noisier term by term.

    Args:
        ratios: ``[..., n, T]`` per-step ratios ``pi(A_t | S_t) / b(A_t | S_t)``.
        rewards: ``[..., n, T]`` the reward after each step (``R_{t+1}`` in the book).
        gamma: Discount factor.

    Returns:
        ``[...]`` the estimate of each data set.
    """
    discount = gamma ** np.arange(ratios.shape[-1])
    rho_upto_t = np.cumprod(ratios, axis=-1)  # rho_{0:t}
    return np.mean(np.sum(discount * rho_upto_t * rewards, axis=-1), axis=-1)


def doubly_robust(ratios: np.ndarray, rewards: np.ndarray, q_taken: np.ndarray,
                  v_state: np.ndarray, gamma: float) -> np.ndarray:
    r"""Doubly robust off-policy evaluation with a critic ``Q^``.

    ``V = (1/n) sum_i sum_t gamma^t [rho_{0:t} (R_{t+1} - Q^(S_t, A_t)) + rho_{0:t-1} V^(S_t)]``
    with ``V^(s) = sum_a pi(a | s) Q^(s, a)`` and ``rho_{0:-1} = 1`` (Jiang & Li 2016, eq. 4
    unrolled; Thomas & Brunskill 2016). The critic is a control variate of mean zero: with
    ``Q^ = 0`` this is per-decision IS, with the true ``Q^pi`` its variance is that of the
    environment's randomness alone.

    Args:
        ratios: ``[..., n, T]`` per-step ratios.
        rewards: ``[..., n, T]`` rewards.
        q_taken: ``[..., n, T]`` the critic's ``Q^(S_t, A_t)`` of each step.
        v_state: ``[..., n, T]`` the critic's ``V^(S_t)`` under the target policy.
        gamma: Discount factor.

    Returns:
        ``[...]`` the estimate of each data set.
    """
    discount = gamma ** np.arange(ratios.shape[-1])
    rho_upto_t = np.cumprod(ratios, axis=-1)  # rho_{0:t}
    rho_before_t = _shift_right(rho_upto_t)  # rho_{0:t-1}
    terms = rho_upto_t * (rewards - q_taken) + rho_before_t * v_state
    return np.mean(np.sum(discount * terms, axis=-1), axis=-1)


def _shift_right(x: np.ndarray) -> np.ndarray:
    """``[..., T]`` the previous step's value, 1 before the first step."""
    out = np.ones_like(x)
    out[..., 1:] = x[..., :-1]
    return out


def kish_ess(weights: np.ndarray) -> np.ndarray:
    r"""Kish's effective sample size of importance weights: ``(sum w)^2 / sum w^2``.

    ``n`` for equal weights, 1 when one episode carries all the weight, 0 when all are 0.

    Args:
        weights: ``[..., n]`` importance ratios.

    Returns:
        ``[...]`` the effective number of episodes of each data set.
    """
    total = np.sum(weights, axis=-1)
    squares = np.sum(weights**2, axis=-1)
    return np.divide(total**2, squares, out=np.zeros_like(total), where=squares > 0)
