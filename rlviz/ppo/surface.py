"""The clip surface over (ratio, advantage), its checks, and one point explained."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch

from rlviz.ppo.objectives import (
    DTYPE,
    _check_epsilon,
    _check_finite,
    _check_ratio,
    _clip_bounds,
    _clip_objective,
    _readonly,
    clipped_surrogate,
    ppo_clip_loss,
    surrogate_grad,
)

__all__ = [
    "ClipSurface",
    "PointExplanation",
    "SurfaceChecks",
    "advantage_grid",
    "clip_surface",
    "explain_point",
    "ratio_grid",
    "surface_checks",
]


SERIAL_BLOCK = 16384
"""Elements per block when evaluating a grid (below torch's intra-op parallel grain size)."""


# --------------------------------------------------------------------------- the surface
def ratio_grid(n: int = 200, *, low: float = 0.01, high: float = 2.0) -> np.ndarray:
    """``n`` evenly spaced ratios in ``[low, high]`` (default step 0.01, with r = 1 on the grid).

    Raises:
        ValueError: if ``n < 2`` or the range is not positive and increasing.
    """
    if n < 2:
        raise ValueError(f"a grid needs at least 2 points; got {n}")
    if not 0 < low < high:
        raise ValueError(f"ratios must satisfy 0 < low < high; got [{low:g}, {high:g}]")
    return np.linspace(low, high, n)


def advantage_grid(n: int = 200, *, limit: float = 1.0) -> np.ndarray:
    """``n`` evenly spaced advantages in ``[-limit, limit]``.

    Raises:
        ValueError: if ``n < 2`` or ``limit`` is not positive.
    """
    if n < 2:
        raise ValueError(f"a grid needs at least 2 points; got {n}")
    if not limit > 0:
        raise ValueError(f"the advantage range must be positive; got {limit:g}")
    return np.linspace(-limit, limit, n)


@dataclass(frozen=True, eq=False)
class ClipSurface:
    """The clipped objective and its gradient on a grid of ratios and advantages.

    Attributes:
        epsilon: Clip range.
        ratio: ``[R]`` ratios (columns).
        advantage: ``[N]`` advantages (rows).
        objective: ``[N, R]`` ``L(r, A) = min(r A, clip(r, 1-eps, 1+eps) A)``.
        unclipped: ``[N, R]`` ``r A``, the surrogate without the clip.
        grad: ``[N, R]`` ``dL/dr`` by autograd.
        flat: ``[N, R]`` True in the zero-gradient regions ``A > 0, r > 1+eps`` and
            ``A < 0, r < 1-eps``.
    """

    epsilon: float
    ratio: np.ndarray  # [R]
    advantage: np.ndarray  # [N]
    objective: np.ndarray  # [N, R]
    unclipped: np.ndarray  # [N, R]
    grad: np.ndarray  # [N, R]
    flat: np.ndarray  # [N, R] bool

    @property
    def inside(self) -> np.ndarray:
        """``[R]`` True where the ratio is inside the clip range ``[1 - eps, 1 + eps]``."""
        lo, hi = _clip_bounds(self.epsilon)
        return (self.ratio >= lo) & (self.ratio <= hi)

    def table(self) -> dict[str, np.ndarray]:
        """Long-form columns, one row per grid cell (for export)."""
        shape = self.objective.shape
        return {
            "ratio": np.broadcast_to(self.ratio, shape).ravel(),
            "advantage": np.broadcast_to(self.advantage[:, None], shape).ravel(),
            "objective": self.objective.ravel(),
            "unclipped": self.unclipped.ravel(),
            "grad_autograd": self.grad.ravel(),
            "flat": self.flat.ravel(),
        }


def clip_surface(ratio, advantage, *, epsilon: float) -> ClipSurface:
    r"""Evaluate ``L(r, A)`` and ``dL/dr`` (by autograd) on the grid ``advantage x ratio``.

    ``L(r, A) = min(r A, clip(r, 1 - eps, 1 + eps) A)`` (Schulman et al., 2017, eq. 7). Each
    cell depends only on its own ratio, so one backward pass of ``sum L`` gives every cell's
    derivative.

    Args:
        ratio: ``[R]`` positive ratios.
        advantage: ``[N]`` advantages.
        epsilon: Clip range, in (0, 1).

    Returns:
        A ``ClipSurface`` of ``[N, R]`` arrays.

    Raises:
        ValueError: if ``epsilon`` is outside (0, 1), a ratio is not positive, or a grid is not
            one-dimensional or not finite.
    """
    eps = _check_epsilon(epsilon)
    r_np = np.array(ratio, dtype=np.float64)
    a_np = np.array(advantage, dtype=np.float64)
    if r_np.ndim != 1 or a_np.ndim != 1 or r_np.size == 0 or a_np.size == 0:
        raise ValueError("the ratio and advantage grids must be non-empty 1-D lists of numbers")
    r = torch.as_tensor(r_np)
    a = torch.as_tensor(a_np)
    _check_ratio(r)
    _check_finite(a, "the advantages")
    lo, hi = _clip_bounds(eps)
    # Row-major flattening of the [N, R] grid, evaluated in blocks small enough that torch runs
    # each op on the calling thread: above its parallel grain size (32768 elements) an
    # elementwise op wakes the intra-op thread pool, which on a busy CPU costs milliseconds
    # for microseconds of work.
    shape = (a_np.size, r_np.size)
    r_flat, a_flat = np.tile(r_np, a_np.size), np.repeat(a_np, r_np.size)
    cuts = range(0, r_flat.size, SERIAL_BLOCK)
    leaves = [torch.tensor(r_flat[i : i + SERIAL_BLOCK], requires_grad=True) for i in cuts]
    blocks = [_clip_objective(leaf, torch.from_numpy(a_flat[i : i + SERIAL_BLOCK]), lo, hi)
              for leaf, i in zip(leaves, cuts, strict=True)]
    grads = torch.autograd.grad([block.sum() for block in blocks], leaves)
    out_r, out_a = r_flat.reshape(shape), a_flat.reshape(shape)
    flat = ((out_a > 0) & (out_r > hi)) | ((out_a < 0) & (out_r < lo))
    arrays = (
        r_np, a_np, np.concatenate([b.detach().numpy() for b in blocks]).reshape(shape),
        out_r * out_a, np.concatenate([g.numpy() for g in grads]).reshape(shape), flat,
    )
    _readonly(*arrays)
    return ClipSurface(eps, *arrays)


@dataclass(frozen=True)
class SurfaceChecks:
    """Known answers of the clipped objective, measured on a computed surface.

    Attributes:
        inside_gap: ``max |L - r A|`` over cells with ``r`` in ``[1 - eps, 1 + eps]`` (should be 0).
        flat_grad: ``max |dL/dr|`` over the flat cells (should be exactly 0).
        analytic_gap: ``max |autograd - surrogate_grad|`` over all cells (should be 0).
        cancel_loss: ``ppo_clip_loss`` at ``r = 1`` with advantages ``(1, -1, 0.5, -0.5)``
            (should be 0).
    """

    inside_gap: float
    flat_grad: float
    analytic_gap: float
    cancel_loss: float


def surface_checks(surface: ClipSurface) -> SurfaceChecks:
    """Measure the known answers of Schulman et al. (2017), eq. 7, on a computed surface.

    Inside the clip range the objective is ``r A``; in the flat regions the gradient is zero;
    autograd agrees with the closed form ``surrogate_grad``; and at ``r = 1`` (``logp =
    logp_old``) the loss is ``-mean A``, zero for advantages that cancel.

    Args:
        surface: A ``ClipSurface``.

    Returns:
        ``SurfaceChecks``.
    """
    inside = np.broadcast_to(surface.inside, surface.objective.shape)
    gap = np.abs(surface.objective - surface.unclipped)[inside]
    flat = np.abs(surface.grad[surface.flat])
    shape = surface.objective.shape
    analytic = surrogate_grad(
        np.broadcast_to(surface.ratio, shape), np.broadcast_to(surface.advantage[:, None], shape),
        epsilon=surface.epsilon,
    )
    logp = torch.log(torch.tensor([0.2, 0.3, 0.1, 0.4], dtype=DTYPE))
    cancel = ppo_clip_loss(logp, logp, torch.tensor([1.0, -1.0, 0.5, -0.5], dtype=DTYPE),
                           epsilon=surface.epsilon)
    return SurfaceChecks(
        inside_gap=float(gap.max()) if gap.size else 0.0,
        flat_grad=float(flat.max()) if flat.size else 0.0,
        analytic_gap=float(np.abs(surface.grad - analytic).max()),
        cancel_loss=float(cancel) + 0.0,  # + 0.0 turns -0.0 into 0.0
    )


# --------------------------------------------------------------------------- explain a point
Branch = Literal["unclipped", "clipped", "both"]
Region = Literal["zero", "inside", "edge", "flat", "pessimistic"]


@dataclass(frozen=True)
class PointExplanation:
    """Which branch of the ``min`` is active at one ``(r, A)``, and why the gradient is what it is.

    Attributes:
        ratio, advantage, epsilon: The point and the clip range.
        clipped_ratio: ``clip(r, 1 - eps, 1 + eps)``.
        unclipped_term: ``r A``.
        clipped_term: ``clip(r, 1 - eps, 1 + eps) A``.
        objective: ``min`` of the two.
        grad: ``dL/dr`` by autograd.
        branch: ``"unclipped"`` or ``"clipped"`` when one term is strictly smaller, ``"both"``
            when they are equal (inside the clip range, at its edges, or ``A = 0``).
        region: ``"zero"`` (``A = 0``), ``"inside"``, ``"edge"`` (``r = 1 +- eps`` exactly),
            ``"flat"`` (moved past the range the way ``A`` wants: zero gradient) or
            ``"pessimistic"`` (moved past the range the wrong way: full gradient ``A``).
        reason: One or two plain sentences saying why.
    """

    ratio: float
    advantage: float
    epsilon: float
    clipped_ratio: float
    unclipped_term: float
    clipped_term: float
    objective: float
    grad: float
    branch: Branch
    region: Region
    reason: str


def explain_point(ratio: float, advantage: float, *, epsilon: float) -> PointExplanation:
    r"""Explain ``L(r, A) = min(r A, clip(r, 1 - eps, 1 + eps) A)`` at one point.

    Schulman et al. (2017), eq. 7 and Fig. 1. The gradient is computed by autograd through
    ``clipped_surrogate``; the region and reason follow from comparing ``r`` with the clip
    bounds and the sign of ``A``.

    Args:
        ratio: A positive probability ratio.
        advantage: An advantage.
        epsilon: Clip range, in (0, 1).

    Returns:
        A ``PointExplanation``.

    Raises:
        ValueError: if ``epsilon`` is outside (0, 1), the ratio is not positive, or either
            number is not finite.
    """
    eps = _check_epsilon(epsilon)
    r = torch.tensor(float(ratio), dtype=DTYPE, requires_grad=True)
    a = torch.tensor(float(advantage), dtype=DTYPE)
    objective = clipped_surrogate(r, a, epsilon=eps)
    (grad,) = torch.autograd.grad(objective, r)
    lo, hi = _clip_bounds(eps)
    rv, av = float(ratio), float(advantage)
    clipped_ratio = min(max(rv, lo), hi)
    unclipped_term, clipped_term = rv * av, clipped_ratio * av
    if unclipped_term < clipped_term:
        branch: Branch = "unclipped"
    elif clipped_term < unclipped_term:
        branch = "clipped"
    else:
        branch = "both"
    good = "good (A > 0)" if av > 0 else "bad (A < 0)"
    if av == 0:
        region: Region = "zero"
        reason = ("With A = 0 both terms are 0 whatever the ratio: the sample carries no signal, "
                  "so the gradient is 0.")
    elif lo < rv < hi:
        region = "inside"
        reason = (f"Inside the clip range [{lo:g}, {hi:g}] the clip does nothing: both terms "
                  f"equal r·A, so the gradient is A = {av:g}.")
    elif rv in (lo, hi):
        region = "edge"
        reason = (f"Exactly on the edge r = {rv:g}: both terms are equal. Left and right slopes "
                  f"differ here; autograd returns the slope from inside the range, A = {av:g} "
                  "(torch.clamp passes the gradient at its bounds and torch.minimum splits a "
                  "tie evenly between two equal branches).")
    elif (av > 0 and rv > hi) or (av < 0 and rv < lo):
        region = "flat"
        moved = "more" if av > 0 else "less"
        bound = f"1 + ε = {hi:g}" if av > 0 else f"1 − ε = {lo:g}"
        reason = (f"The policy already made this {good} action {moved} likely than the clip "
                  f"allows (r beyond {bound}). The clipped term clip(r)·A = {clipped_term:.4g} "
                  "is the smaller one and it does not depend on r, so the gradient is exactly 0: "
                  "no incentive to move further.")
    else:
        region = "pessimistic"
        wrong = "less" if av > 0 else "more"
        reason = (f"The ratio moved the wrong way: this {good} action became {wrong} likely "
                  f"than under π_old. The unclipped term r·A = {unclipped_term:.4g} is the "
                  f"smaller one, so the min keeps it and the gradient is the full A = {av:g}, "
                  "pulling the ratio back. The objective stays a pessimistic bound.")
    return PointExplanation(
        ratio=rv, advantage=av, epsilon=eps, clipped_ratio=clipped_ratio,
        unclipped_term=unclipped_term, clipped_term=clipped_term,
        objective=float(objective.detach()), grad=float(grad), branch=branch, region=region,
        reason=reason,
    )
