"""Bounds on regret: the Lai–Robbins lower bound and UCB1's finite-time upper bound."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from rlviz.errors import InputError


def kl_bernoulli(p: Any, q: Any) -> np.ndarray:
    r"""Kullback–Leibler divergence between Bernoulli distributions, in nats.

    .. math:: \mathrm{KL}(p, q) = p \ln\frac{p}{q} + (1 - p) \ln\frac{1 - p}{1 - q},

    with ``0 ln 0 = 0``; infinite when ``q`` is 0 or 1 and ``p`` differs from it.
    """
    p, q = np.broadcast_arrays(np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64))
    if np.any((p < 0) | (p > 1) | (q < 0) | (q > 1)):
        raise InputError("Bernoulli means must lie in [0, 1]")
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(p > 0, p * np.log(np.where(p > 0, p, 1.0) / q), 0.0)
        b = np.where(p < 1, (1 - p) * np.log(np.where(p < 1, 1 - p, 1.0) / (1 - q)), 0.0)
    return np.where(p == q, 0.0, a + b)


def _bernoulli_means(probs: Any) -> np.ndarray:
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 1 or probs.size < 1:
        raise InputError("give one success probability per arm")
    if not np.all(np.isfinite(probs)) or np.any((probs < 0) | (probs > 1)):
        raise InputError("success probabilities must lie in [0, 1]")
    return probs


def lai_robbins(probs: Any, steps: int) -> np.ndarray:
    r"""The Lai–Robbins asymptotic lower bound on regret for Bernoulli arms, as a curve.

    Any algorithm that is consistent on all Bernoulli bandits satisfies

    .. math:: \liminf_{T\to\infty} \frac{\mathbb E[\mathrm{Regret}_T]}{\ln T} \ge
        \sum_{a:\,\Delta_a > 0} \frac{\Delta_a}{\mathrm{KL}(\mu_a, \mu^*)};

    the curve is that constant times ``ln t``. It is asymptotic: finite-horizon regret may sit
    below it early on. Source: Lai & Robbins (1985), Theorem 2.

    Args:
        probs: ``[A]`` success probabilities.
        steps: Horizon ``T``.

    Returns:
        ``[T]`` the bound at steps ``1..T``.
    """
    probs = _bernoulli_means(probs)
    best = probs.max()
    gaps = best - probs
    kl = kl_bernoulli(probs, best)
    with np.errstate(divide="ignore", invalid="ignore"):
        per_arm = np.where(gaps > 0, gaps / kl, 0.0)
    return float(per_arm.sum()) * np.log(np.arange(1, steps + 1, dtype=np.float64))


def ucb1_bound(probs: Any, steps: int) -> np.ndarray:
    r"""The finite-time upper bound on UCB1's expected regret, as a curve.

    .. math:: \mathbb E[\mathrm{Regret}_n] \le \sum_{a:\,\Delta_a > 0} \frac{8 \ln n}{\Delta_a}
        + \Big(1 + \frac{\pi^2}{3}\Big) \sum_a \Delta_a

    for rewards in [0, 1]. Source: Auer, Cesa-Bianchi & Fischer (2002), Theorem 1.

    Args:
        probs: ``[A]`` arm means in [0, 1].
        steps: Horizon ``T``.

    Returns:
        ``[T]`` the bound at ``n = 1..T``.
    """
    probs = _bernoulli_means(probs)
    gaps = probs.max() - probs
    positive = gaps[gaps > 0]
    log_n = np.log(np.arange(1, steps + 1, dtype=np.float64))
    return 8.0 * log_n * float((1.0 / positive).sum()) + (1.0 + math.pi**2 / 3.0) * gaps.sum()
