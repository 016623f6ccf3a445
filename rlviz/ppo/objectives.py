"""The policy objectives: the clipped surrogate and its gradient, PPO-clip, plain, KL-penalised."""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = [
    "METHODS",
    "clipped_surrogate",
    "kl_penalty_loss",
    "ppo_clip_loss",
    "surrogate_grad",
    "surrogate_loss",
]


DTYPE = torch.float64
METHODS = ("clipped", "unclipped", "kl_penalty")
"""The three objectives the toy optimises, in the order of ``ToyResult.runs``."""
ADV_NORM_EPS = 1e-8


# --------------------------------------------------------------------------- validation
def _check_epsilon(epsilon: float) -> float:
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"the clip range ε must be a number; got {epsilon!r}") from None
    if not (math.isfinite(eps) and 0.0 < eps < 1.0):
        raise ValueError(
            f"the clip range ε must be strictly between 0 and 1 (so that 1 − ε > 0); got {eps:g}"
        )
    return eps


def _clip_bounds(epsilon: float) -> tuple[float, float]:
    """``(1 - eps, 1 + eps)``: the one place the bounds are computed, so kinks compare equal."""
    return 1.0 - epsilon, 1.0 + epsilon


def _tensor(x, name: str) -> torch.Tensor:
    t = x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x, dtype=np.float64))
    if not t.is_floating_point():
        t = t.to(DTYPE)
    return t


def _same_shape(**tensors: torch.Tensor) -> None:
    shapes = {name: tuple(t.shape) for name, t in tensors.items()}
    if len(set(shapes.values())) > 1:
        listed = ", ".join(f"{n} {list(s)}" for n, s in shapes.items())
        raise ValueError(f"these inputs must have the same shape (no broadcasting): {listed}")


def _check_finite(t: torch.Tensor, name: str) -> None:
    if not bool(torch.isfinite(t).all()):
        raise ValueError(f"{name} must be finite numbers (found NaN or infinity)")


def _check_ratio(ratio: torch.Tensor) -> None:
    _check_finite(ratio, "the probability ratios")
    if ratio.numel() and not bool((ratio > 0).all()):
        worst = float(ratio.detach().min())
        raise ValueError(
            f"a probability ratio π(a|s)/π_old(a|s) must be positive; got {worst:g}"
        )


def _readonly(*arrays: np.ndarray) -> None:
    for a in arrays:
        a.setflags(write=False)


# --------------------------------------------------------------------------- objectives
def _clip_objective(ratio: torch.Tensor, advantage: torch.Tensor, lo: float, hi: float):
    return torch.minimum(ratio * advantage, torch.clamp(ratio, lo, hi) * advantage)


def clipped_surrogate(ratio, advantage, *, epsilon: float) -> torch.Tensor:
    r"""PPO's clipped surrogate objective, elementwise (to be maximised).

    ``L(r, A) = min(r A, clip(r, 1 - eps, 1 + eps) A)``: Schulman et al. (2017), eq. 7.

    Differentiable in ``ratio`` by autograd. At the kinks ``r = 1 +- eps`` the gradient is ``A``
    (see the module docstring); it is exactly zero for ``A > 0, r > 1 + eps`` and for
    ``A < 0, r < 1 - eps``.

    Args:
        ratio: ``[...]`` probability ratios ``pi(a_t|s_t) / pi_old(a_t|s_t)``, positive.
        advantage: ``[...]`` advantage estimates ``A_t``, same shape as ``ratio``.
        epsilon: Clip range, in (0, 1).

    Returns:
        ``[...]`` the objective per sample (a float64 tensor unless tensors were given).

    Raises:
        ValueError: if ``epsilon`` is outside (0, 1), a ratio is not positive, an input is not
            finite, or the shapes differ.
    """
    eps = _check_epsilon(epsilon)
    r = _tensor(ratio, "ratio")
    a = _tensor(advantage, "advantage")
    _same_shape(ratio=r, advantage=a)
    _check_ratio(r)
    _check_finite(a, "the advantages")
    return _clip_objective(r, a, *_clip_bounds(eps))


def surrogate_grad(ratio, advantage, *, epsilon: float) -> np.ndarray:
    r"""The analytic derivative ``dL/dr`` of the clipped surrogate, elementwise.

    ``dL/dr = 0`` where ``A > 0, r > 1 + eps`` or ``A < 0, r < 1 - eps`` (the clipped branch is
    the smaller and it is constant in ``r``), and ``dL/dr = A`` everywhere else, including the
    kinks ``r = 1 +- eps`` themselves (the convention autograd follows through ``torch.clamp``
    and ``torch.minimum``). Schulman et al. (2017), eq. 7 and Fig. 1.

    Args:
        ratio: ``[...]`` positive probability ratios.
        advantage: ``[...]`` advantages, same shape.
        epsilon: Clip range, in (0, 1).

    Returns:
        ``[...]`` float64 array of derivatives.

    Raises:
        ValueError: on the same inputs as ``clipped_surrogate``.
    """
    eps = _check_epsilon(epsilon)
    r = np.asarray(ratio, dtype=np.float64)
    a = np.asarray(advantage, dtype=np.float64)
    if r.shape != a.shape:
        raise ValueError(
            "these inputs must have the same shape (no broadcasting): "
            f"ratio {list(r.shape)}, advantage {list(a.shape)}"
        )
    if not (np.isfinite(r).all() and np.isfinite(a).all()):
        raise ValueError("the ratios and advantages must be finite numbers (found NaN or infinity)")
    if r.size and not (r > 0).all():
        raise ValueError(
            f"a probability ratio π(a|s)/π_old(a|s) must be positive; got {r.min():g}"
        )
    lo, hi = _clip_bounds(eps)
    return np.where(((a > 0) & (r > hi)) | ((a < 0) & (r < lo)), 0.0, a)


def _ratio(logp: torch.Tensor, logp_old: torch.Tensor) -> torch.Tensor:
    return torch.exp(logp - logp_old.detach())


def _check_logp(logp, logp_old, advantage) -> tuple[torch.Tensor, ...]:
    lp, lo, a = (_tensor(x, n) for x, n in ((logp, "logp"), (logp_old, "logp_old"),
                                           (advantage, "advantage")))
    _same_shape(logp=lp, logp_old=lo, advantage=a)
    if lp.numel() == 0:
        raise ValueError("the batch is empty")
    return lp, lo, a


def ppo_clip_loss(logp, logp_old, advantage, *, epsilon: float) -> torch.Tensor:
    r"""PPO's clipped policy loss from log-probabilities (to be minimised).

    ``loss = -mean_t min(r_t A_t, clip(r_t, 1 - eps, 1 + eps) A_t)`` with
    ``r_t = exp(log pi(a_t|s_t) - log pi_old(a_t|s_t))``: Schulman et al. (2017), eqs. 6-7.
    ``logp_old`` is treated as a constant (detached).

    Args:
        logp: ``[T]`` log-probabilities of the taken actions under the current policy.
        logp_old: ``[T]`` the same under the policy that collected the batch.
        advantage: ``[T]`` advantage estimates.
        epsilon: Clip range, in (0, 1).

    Returns:
        A scalar tensor.

    Raises:
        ValueError: if ``epsilon`` is outside (0, 1), the shapes differ or the batch is empty.
    """
    eps = _check_epsilon(epsilon)
    lp, lo, a = _check_logp(logp, logp_old, advantage)
    return -_clip_objective(_ratio(lp, lo), a, *_clip_bounds(eps)).mean()


def surrogate_loss(logp, logp_old, advantage) -> torch.Tensor:
    r"""The unclipped importance-sampled surrogate loss (to be minimised).

    ``loss = -mean_t r_t A_t``, the conservative policy iteration objective L^CPI of
    Schulman et al. (2017), eq. 6 (Kakade & Langford, 2002).

    Args:
        logp: ``[T]`` log-probabilities of the taken actions under the current policy.
        logp_old: ``[T]`` the same under the policy that collected the batch (detached).
        advantage: ``[T]`` advantage estimates.

    Returns:
        A scalar tensor.

    Raises:
        ValueError: if the shapes differ or the batch is empty.
    """
    lp, lo, a = _check_logp(logp, logp_old, advantage)
    return -(_ratio(lp, lo) * a).mean()


def kl_penalty_loss(logp, logp_old, advantage, kl, *, beta: float) -> torch.Tensor:
    r"""PPO's KL-penalised surrogate loss (to be minimised).

    ``loss = -mean_t [r_t A_t - beta KL[pi_old(.|s_t), pi(.|s_t)]]``: Schulman et al. (2017),
    eq. 8.

    Args:
        logp: ``[T]`` log-probabilities of the taken actions under the current policy.
        logp_old: ``[T]`` the same under the policy that collected the batch (detached).
        advantage: ``[T]`` advantage estimates.
        kl: ``[T]`` the divergence ``KL[pi_old(.|s_t), pi(.|s_t)]`` at each sample's state,
            differentiable in the current policy (e.g. from ``categorical_kl``).
        beta: Penalty coefficient, non-negative.

    Returns:
        A scalar tensor.

    Raises:
        ValueError: if ``beta`` is negative or not finite, the shapes differ or the batch is
            empty.
    """
    if not (math.isfinite(beta) and beta >= 0):
        raise ValueError(f"the KL penalty β must be a non-negative number; got {beta:g}")
    lp, lo, a = _check_logp(logp, logp_old, advantage)
    k = _tensor(kl, "kl")
    _same_shape(logp=lp, kl=k)
    return -(_ratio(lp, lo) * a - beta * k).mean()
