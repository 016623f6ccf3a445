"""KL between policies, its estimators, the clip fraction, and the adaptive KL coefficient."""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from rlviz.ppo.objectives import DTYPE, _check_epsilon, _clip_bounds, _same_shape, _tensor

__all__ = [
    "KLEstimates",
    "adapt_beta",
    "approx_kl",
    "categorical_kl",
    "clip_fraction",
]


def categorical_kl(logp_old_all, logp_all) -> torch.Tensor:
    r"""Exact ``KL[pi_old, pi] = sum_a pi_old(a) (log pi_old(a) - log pi(a))`` over the last axis.

    Args:
        logp_old_all: ``[..., K]`` log-probabilities of every action under the old policy.
        logp_all: ``[..., K]`` the same under the current policy (gradients flow through it).

    Returns:
        ``[...]`` the divergence per state.

    Raises:
        ValueError: if the shapes differ.
    """
    lo, lp = _tensor(logp_old_all, "logp_old_all"), _tensor(logp_all, "logp_all")
    _same_shape(logp_old_all=lo, logp_all=lp)
    lo = lo.detach()
    return (torch.exp(lo) * (lo - lp)).sum(dim=-1)


class KLEstimates(NamedTuple):
    """Per-sample estimators of ``KL[pi_old, pi]`` from samples of ``pi_old``; average them."""

    k1: torch.Tensor
    """``-log r``: unbiased, high variance, can be negative."""
    k2: torch.Tensor
    """``(log r)^2 / 2``: biased, low variance, non-negative."""
    k3: torch.Tensor
    """``(r - 1) - log r``: unbiased, low variance, non-negative."""


def approx_kl(logp, logp_old) -> KLEstimates:
    r"""Sample estimators of ``KL[pi_old, pi]`` from actions drawn by ``pi_old``.

    With ``r = pi(a)/pi_old(a)`` and ``a ~ pi_old``: ``k1 = -log r``, ``k2 = (log r)^2 / 2``,
    ``k3 = (r - 1) - log r``. Since ``E[r] = 1``, ``k3`` adds a zero-mean control variate to
    ``k1``; it is unbiased and never negative. J. Schulman (2020), "Approximating KL
    divergence", http://joschu.net/blog/kl-approx.html.

    Args:
        logp: ``[T]`` log-probabilities of the sampled actions under the current policy.
        logp_old: ``[T]`` the same under the sampling policy.

    Returns:
        ``KLEstimates`` of ``[T]`` tensors (the estimate is their mean).

    Raises:
        ValueError: if the shapes differ.
    """
    lp, lo = _tensor(logp, "logp"), _tensor(logp_old, "logp_old")
    _same_shape(logp=lp, logp_old=lo)
    log_r = lp - lo
    return KLEstimates(k1=-log_r, k2=0.5 * log_r**2, k3=torch.expm1(log_r) - log_r)


def clip_fraction(ratio, *, epsilon: float) -> float:
    """The fraction of samples whose ratio is outside ``[1 - eps, 1 + eps]``.

    Args:
        ratio: ``[T]`` probability ratios.
        epsilon: Clip range, in (0, 1).

    Returns:
        A number in [0, 1].

    Raises:
        ValueError: if ``epsilon`` is outside (0, 1) or the batch is empty.
    """
    lo, hi = _clip_bounds(_check_epsilon(epsilon))
    r = _tensor(ratio, "ratio")
    if r.numel() == 0:
        raise ValueError("the batch is empty")
    return float(((r < lo) | (r > hi)).to(DTYPE).mean())


def adapt_beta(beta: float, kl: float, *, target: float) -> float:
    r"""The adaptive KL coefficient rule of Schulman et al. (2017), section 4.

    With ``d`` the measured divergence: if ``d < d_targ / 1.5`` then ``beta <- beta / 2``; if
    ``d > 1.5 d_targ`` then ``beta <- 2 beta``; otherwise ``beta`` is unchanged.

    Args:
        beta: Current coefficient, positive.
        kl: Measured ``KL[pi_old, pi]`` after the update, non-negative.
        target: Target divergence ``d_targ``, positive.

    Returns:
        The next coefficient.

    Raises:
        ValueError: if an argument is out of its range.
    """
    if not (math.isfinite(beta) and beta > 0):
        raise ValueError(f"the KL penalty β must be positive; got {beta:g}")
    if not (math.isfinite(target) and target > 0):
        raise ValueError(f"the KL target must be positive; got {target:g}")
    if not (math.isfinite(kl) and kl >= 0):
        raise ValueError(f"a KL divergence must be a non-negative number; got {kl:g}")
    if kl < target / 1.5:
        return beta / 2.0
    if kl > target * 1.5:
        return beta * 2.0
    return beta
