"""The clipped value loss, and a slice of it along the new value."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from rlviz.ppo.objectives import _readonly, _same_shape, _tensor

__all__ = [
    "ValueLossSlice",
    "clipped_value_loss",
    "value_loss_slice",
]


def clipped_value_loss(value, value_old, returns, *, epsilon: float) -> torch.Tensor:
    r"""The clipped value loss of common PPO implementations (to be minimised).

    ``loss = 1/2 mean_t max((V_t - R_t)^2, (V_old,t + clip(V_t - V_old,t, -eps, eps) - R_t)^2)``.
    Like the policy clip it is pessimistic: once the value has moved more than ``eps`` from
    ``V_old`` toward the target, the clipped branch is the larger and its gradient is zero.
    From OpenAI Baselines' ``ppo2``; studied by Engstrom et al. (2020), "Implementation Matters
    in Deep Policy Gradients", and Andrychowicz et al. (2021), "What Matters in On-Policy RL".

    Args:
        value: ``[T]`` current value predictions ``V(s_t)`` (gradients flow through these).
        value_old: ``[T]`` predictions of the critic that collected the batch (detached).
        returns: ``[T]`` value targets ``R_t``.
        epsilon: Clip range for the value change, positive.

    Returns:
        A scalar tensor.

    Raises:
        ValueError: if ``epsilon`` is not positive, the shapes differ or the batch is empty.
    """
    eps = _check_value_epsilon(epsilon)
    v, v_old, ret = (_tensor(x, n) for x, n in ((value, "value"), (value_old, "value_old"),
                                               (returns, "returns")))
    _same_shape(value=v, value_old=v_old, returns=ret)
    if v.numel() == 0:
        raise ValueError("the batch is empty")
    return _value_loss_terms(v, v_old, ret, eps)[2].mean()


def _check_value_epsilon(epsilon: float) -> float:
    try:
        eps = float(epsilon)
    except (TypeError, ValueError):
        raise ValueError(f"the value clip range must be a number; got {epsilon!r}") from None
    if not (math.isfinite(eps) and eps > 0):
        raise ValueError(f"the value clip range must be positive; got {eps:g}")
    return eps


def _value_loss_terms(v, v_old, ret, eps):
    """Per-sample ``(V - R)^2 / 2``, its clipped counterpart, and their maximum."""
    v_old = v_old.detach()
    unclipped = 0.5 * (v - ret) ** 2
    clipped = 0.5 * (v_old + torch.clamp(v - v_old, -eps, eps) - ret) ** 2
    return unclipped, clipped, torch.maximum(unclipped, clipped)


@dataclass(frozen=True, eq=False)
class ValueLossSlice:
    """The clipped value loss of one sample as a function of the new prediction ``V``.

    Attributes:
        value_old, target, epsilon: ``V_old``, ``R`` and the clip range.
        value: ``[G]`` predictions ``V`` on the grid.
        unclipped: ``[G]`` ``(V - R)^2 / 2``.
        clipped: ``[G]`` ``(V_old + clip(V - V_old, -eps, eps) - R)^2 / 2``.
        loss: ``[G]`` the maximum of the two.
        grad: ``[G]`` ``d loss / dV`` by autograd.
    """

    value_old: float
    target: float
    epsilon: float
    value: np.ndarray  # [G]
    unclipped: np.ndarray  # [G]
    clipped: np.ndarray  # [G]
    loss: np.ndarray  # [G]
    grad: np.ndarray  # [G]


def value_loss_slice(value=None, *, value_old: float, target: float,
                     epsilon: float) -> ValueLossSlice:
    r"""The per-sample clipped value loss over a grid of predictions, with its gradient.

    ``l(V) = 1/2 max((V - R)^2, (V_old + clip(V - V_old, -eps, eps) - R)^2)`` (the summand of
    ``clipped_value_loss``), each grid point treated as its own sample.

    Args:
        value: ``[G]`` predictions ``V``; by default 401 points spanning ``V_old`` and ``R``
            with a margin of ``max(|R - V_old|, 1)`` on each side.
        value_old: The old prediction ``V_old``.
        target: The value target ``R``.
        epsilon: Clip range for the value change, positive.

    Returns:
        A ``ValueLossSlice``.

    Raises:
        ValueError: if ``epsilon`` is not positive or an input is not finite.
    """
    if not (math.isfinite(value_old) and math.isfinite(target)):
        raise ValueError("the old value and the target must be finite numbers")
    if value is None:
        low, high = min(value_old, target), max(value_old, target)
        span = max(high - low, 1.0)
        value = np.linspace(low - span, high + span, 401)
    eps = _check_value_epsilon(epsilon)
    v_np = np.array(value, dtype=np.float64)
    if v_np.ndim != 1 or v_np.size == 0:
        raise ValueError("the value grid must be a non-empty 1-D list of numbers")
    if not np.isfinite(v_np).all():
        raise ValueError("the value predictions must be finite numbers")
    v = torch.tensor(v_np, requires_grad=True)
    v_old = torch.full_like(v, float(value_old)).detach()
    ret = torch.full_like(v, float(target)).detach()
    unclipped, clipped, loss = _value_loss_terms(v, v_old, ret, eps)
    # Each grid point is its own sample: the batch loss times G has the per-sample gradients.
    (grad,) = torch.autograd.grad(clipped_value_loss(v, v_old, ret, epsilon=eps) * v.numel(), v)
    arrays = (v_np, unclipped.detach().numpy(), clipped.detach().numpy(), loss.detach().numpy(),
              grad.numpy())
    _readonly(*arrays)
    return ValueLossSlice(float(value_old), float(target), eps, *arrays)
