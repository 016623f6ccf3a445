r"""Proximal policy optimisation: the clipped surrogate, its surface and gradient, a live toy.

PPO (Schulman et al., 2017, "Proximal Policy Optimization Algorithms", arXiv:1707.06347)
maximises, per sample t with probability ratio ``r_t = pi(a_t|s_t) / pi_old(a_t|s_t)`` and
advantage ``A_t``,

    L^CLIP_t = min(r_t A_t, clip(r_t, 1 - eps, 1 + eps) A_t)                      (eq. 7)

The ``min`` makes the objective a pessimistic (lower) bound on the unclipped surrogate
``r_t A_t`` (eq. 6), and it is flat in ``r`` once the ratio has moved past the trust region in the
direction the advantage wants: for ``A > 0`` and ``r > 1 + eps``, and for ``A < 0`` and
``r < 1 - eps``. There the gradient is exactly zero, so more epochs on the same batch stop
pushing the policy.

The gradient at the kinks ``r = 1 +- eps``: the objective is built from ``torch.minimum`` and
``torch.clamp``. ``clamp`` passes the gradient at its bounds (they count as inside), and
``minimum`` splits the gradient of a tie evenly between its arguments; inside the clip range the
two branches are equal, so the halves add up to ``A``. The result is that at ``r = 1 +- eps``
exactly the gradient is ``A`` (the slope from inside the trust region), and it is zero only in
the open flat regions ``r > 1 + eps`` (``A > 0``) and ``r < 1 - eps`` (``A < 0``).
``surrogate_grad`` states this convention in closed form and the tests hold autograd to it.

Every tensor here is float64 on the CPU. Nothing changes torch's global state: no global seed
(randomness comes from one ``torch.Generator``), and no ``torch.set_num_threads``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
import torch

from rlviz import optim
from rlviz.errors import InputError

__all__ = [
    "METHODS",
    "ClipSurface",
    "KLEstimates",
    "PointExplanation",
    "ToyResult",
    "SurfaceChecks",
    "ToyRun",
    "ValueLossSlice",
    "adapt_beta",
    "advantage_grid",
    "approx_kl",
    "categorical_kl",
    "clip_fraction",
    "clip_surface",
    "clipped_surrogate",
    "clipped_value_loss",
    "explain_point",
    "kl_penalty_loss",
    "ppo_clip_loss",
    "ratio_grid",
    "run_toy",
    "surrogate_grad",
    "surface_checks",
    "surrogate_loss",
    "value_loss_slice",
]

DTYPE = torch.float64
METHODS = ("clipped", "unclipped", "kl_penalty")
"""The three objectives the toy optimises, in the order of ``ToyResult.runs``."""
ADV_NORM_EPS = 1e-8
SERIAL_BLOCK = 16384
"""Elements per block when evaluating a grid (below torch's intra-op parallel grain size)."""


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


# --------------------------------------------------------------------------- the live toy
@dataclass(frozen=True, eq=False)
class ToyRun:
    """One objective's trajectory over ``E`` epochs on the toy's batch.

    Row ``e`` of every per-epoch array is measured on the whole batch after epoch ``e``; row 0 is
    before any update (ratios 1, divergence 0).

    Attributes:
        method: ``"clipped"``, ``"unclipped"`` or ``"kl_penalty"``.
        ratios: ``[E+1, N]`` every sample's ratio ``pi(a_i)/pi_old(a_i)``.
        probs: ``[E+1, K]`` action probabilities.
        flat: ``[E+1, N]`` True where a sample sits in the clipped objective's flat region
            (``A > 0, r > 1 + eps`` or ``A < 0, r < 1 - eps``): zero gradient under the clip.
        clip_fraction: ``[E+1]`` fraction of samples with ``|r - 1| > eps``.
        flat_fraction: ``[E+1]`` fraction of samples in the flat region.
        kl_k1: ``[E+1]`` mean of ``-log r`` over the batch.
        kl_k3: ``[E+1]`` mean of ``(r - 1) - log r`` over the batch.
        kl_exact: ``[E+1]`` exact ``KL[pi_old, pi]``.
        expected_return: ``[E+1]`` true ``J(pi) = sum_a pi(a) mu(a)``.
        objective: ``[E+1]`` the method's own surrogate on the whole batch (maximised).
        beta: ``[E+1]`` the KL coefficient after each epoch's adaptation (row 0: the initial
            value; epoch ``e`` used ``beta[e - 1]``); zeros for the methods without a penalty.
    """

    method: str
    ratios: np.ndarray  # [E+1, N]
    probs: np.ndarray  # [E+1, K]
    flat: np.ndarray  # [E+1, N] bool
    clip_fraction: np.ndarray  # [E+1]
    flat_fraction: np.ndarray  # [E+1]
    kl_k1: np.ndarray  # [E+1]
    kl_k3: np.ndarray  # [E+1]
    kl_exact: np.ndarray  # [E+1]
    expected_return: np.ndarray  # [E+1]
    objective: np.ndarray  # [E+1]
    beta: np.ndarray  # [E+1]


@dataclass(frozen=True, eq=False)
class ToyResult:
    """A softmax bandit policy trained for ``E`` epochs on one batch, under three objectives.

    Attributes:
        true_rewards: ``[K]`` mean reward ``mu(a)`` of each action.
        old_probs: ``[K]`` the policy that collected the batch (uniform).
        actions: ``[N]`` sampled actions.
        rewards: ``[N]`` sampled rewards ``mu(a_i) + noise``.
        advantages: ``[N]`` advantages used by every objective (normalised if asked).
        runs: The ``ToyRun`` of each method in ``METHODS`` order.
        epsilon, lr, epochs, minibatch_size: Settings that ran.
        steps_per_epoch: Minibatch updates per epoch.
    """

    true_rewards: np.ndarray  # [K]
    old_probs: np.ndarray  # [K]
    actions: np.ndarray  # [N] int
    rewards: np.ndarray  # [N]
    advantages: np.ndarray  # [N]
    runs: tuple[ToyRun, ...]
    epsilon: float
    lr: float
    epochs: int
    minibatch_size: int
    steps_per_epoch: int

    def run(self, method: str) -> ToyRun:
        """The trajectory of one method."""
        for r in self.runs:
            if r.method == method:
                return r
        raise KeyError(f"no run of {method!r}; have {[r.method for r in self.runs]}")

    @property
    def action_advantage(self) -> np.ndarray:
        """``[K]`` the summed advantage of each action's samples (its push on the logits)."""
        return np.bincount(self.actions, weights=self.advantages, minlength=self.true_rewards.size)

    @property
    def action_counts(self) -> np.ndarray:
        """``[K]`` how many samples of each action the batch holds."""
        return np.bincount(self.actions, minlength=self.true_rewards.size)

    def action_ratios(self, method: str) -> np.ndarray:
        """``[E+1, K]`` each action's ratio ``pi(a)/pi_old(a)`` (shared by all its samples)."""
        return self.run(method).probs / self.old_probs

    @property
    def best_return(self) -> float:
        """``max_a mu(a)``: the expected return of the best deterministic policy."""
        return float(self.true_rewards.max())

    def epoch_table(self) -> dict[str, np.ndarray]:
        """Long-form per-epoch diagnostics of every method (for export)."""
        epochs = np.arange(self.epochs + 1)
        cols: dict[str, list] = {"method": [], "epoch": []}
        names = ("clip_fraction", "flat_fraction", "kl_exact", "kl_k1", "kl_k3",
                 "expected_return", "objective", "beta")
        for name in names:
            cols[name] = []
        for k in range(self.true_rewards.size):
            cols[f"prob_a{k}"] = []
        for run in self.runs:
            cols["method"].append(np.full(epochs.size, run.method))
            cols["epoch"].append(epochs)
            for name in names:
                cols[name].append(getattr(run, name))
            for k in range(self.true_rewards.size):
                cols[f"prob_a{k}"].append(run.probs[:, k])
        return {name: np.concatenate(parts) for name, parts in cols.items()}

    def sample_table(self) -> dict[str, np.ndarray]:
        """Long-form ratio of every sample after every epoch, per method (for export)."""
        n, e1 = self.actions.size, self.epochs + 1
        parts = [
            {
                "method": np.full(e1 * n, run.method),
                "epoch": np.repeat(np.arange(e1), n),
                "sample": np.tile(np.arange(n), e1),
                "action": np.tile(self.actions, e1),
                "reward": np.tile(self.rewards, e1),
                "advantage": np.tile(self.advantages, e1),
                "ratio": run.ratios.ravel(),
                "flat": run.flat.ravel(),
            }
            for run in self.runs
        ]
        return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def _log_softmax(logits: torch.Tensor) -> torch.Tensor:
    """``log softmax`` over the last axis, as ``logits - logsumexp(logits)``.

    Same values as ``torch.log_softmax`` to rounding, but made of reductions and elementwise ops
    that stay on the calling thread for small tensors; ``torch.log_softmax`` hands even a
    ``[3, 5]`` tensor to the intra-op thread pool, which on a busy CPU costs milliseconds a call.
    """
    return logits - torch.logsumexp(logits, dim=-1, keepdim=True)


def _losses(theta, a_mb, adv_mb, logp_old_all, *, eps, beta):
    """The three methods' losses on one minibatch; row m of ``theta`` is method m's logits."""
    logp_all = _log_softmax(theta)  # [M, K]
    logp = logp_all[:, a_mb]  # [M, B]
    logp_old = logp_old_all[a_mb]  # [B]
    kl = categorical_kl(logp_old_all, logp_all[2]).expand(a_mb.numel())
    return (
        ppo_clip_loss(logp[0], logp_old, adv_mb, epsilon=eps)
        + surrogate_loss(logp[1], logp_old, adv_mb)
        + kl_penalty_loss(logp[2], logp_old, adv_mb, kl, beta=beta)
    )


@torch.no_grad()
def _measure(theta, actions, adv, logp_old_all, true_rewards, *, eps, beta):
    """Whole-batch diagnostics of every method: ratios, probabilities, KL, return, objective."""
    lo, hi = _clip_bounds(eps)
    logp_all = _log_softmax(theta)  # [M, K]
    log_r = logp_all[:, actions] - logp_old_all[actions]  # [M, N]
    ratio = torch.exp(log_r)
    probs = torch.exp(logp_all)
    kl_exact = categorical_kl(logp_old_all.expand_as(logp_all), logp_all)  # [M]
    surrogate = (ratio * adv).mean(dim=1)
    objective = torch.stack([
        _clip_objective(ratio[0], adv, lo, hi).mean(),
        surrogate[1],
        surrogate[2] - beta * kl_exact[2],
    ])
    flat = ((adv > 0) & (ratio > hi)) | ((adv < 0) & (ratio < lo))
    return dict(
        ratios=ratio,
        probs=probs,
        flat=flat,
        clip_fraction=((ratio < lo) | (ratio > hi)).to(DTYPE).mean(dim=1),
        flat_fraction=flat.to(DTYPE).mean(dim=1),
        kl_k1=(-log_r).mean(dim=1),
        kl_k3=(torch.expm1(log_r) - log_r).mean(dim=1),
        kl_exact=kl_exact,
        expected_return=probs @ true_rewards,
        objective=objective,
    )


def run_toy(
    true_rewards,
    *,
    batch_size: int = 64,
    epochs: int = 10,
    minibatch_size: int = 16,
    lr: float = 0.05,
    epsilon: float = 0.2,
    beta: float = 1.0,
    adaptive_beta: bool = True,
    kl_target: float = 0.01,
    normalize_advantages: bool = True,
    reward_noise: float = 1.0,
    optimizer: Literal["adam", "sgd"] = "adam",
    seed: int = 0,
) -> ToyResult:
    r"""Train a softmax bandit policy for E epochs on one batch with three PPO objectives.

    The policy ``pi(a) = softmax(theta)_a`` over ``K`` actions starts uniform and collects one
    batch of ``N`` actions with rewards ``mu(a_i) + sigma z_i``, ``z_i ~ N(0, 1)``. Advantages are
    ``A_i = R_i - J(pi_old)`` (a perfect critic), optionally normalised to zero mean and unit
    (unbiased) standard deviation over the batch. Three copies of ``theta`` then run ``E`` epochs;
    each epoch shuffles the batch (one permutation shared by all three, so they see the same
    minibatches) and takes one optimiser step per minibatch on

    * ``clipped``: ``-mean min(r A, clip(r, 1-eps, 1+eps) A)`` (Schulman et al., 2017, eq. 7);
    * ``unclipped``: ``-mean r A`` (eq. 6);
    * ``kl_penalty``: ``-mean [r A - beta KL[pi_old, pi]]`` (eq. 8) with the exact categorical
      KL; with ``adaptive_beta`` the section 4 rule halves or doubles ``beta`` after every epoch
      (the paper adapts once per batch; with a single batch, per epoch shows the rule at work).

    The three parameter rows are updated together (their losses are summed; the rows share no
    parameters, and Adam and SGD act elementwise, so each row follows its own objective exactly).
    All randomness comes from one ``torch.Generator`` seeded with ``seed``.

    Args:
        true_rewards: ``[K]`` mean reward of each action, ``2 <= K <= 16``.
        batch_size: Samples ``N`` in the batch, at least 2.
        epochs: Passes ``E`` over the batch, at least 1.
        minibatch_size: Samples per update, in ``[1, N]``; the last minibatch of an epoch holds
            the remainder when it does not divide ``N``.
        lr: Optimiser step size, positive.
        epsilon: Clip range, in (0, 1).
        beta: Initial KL coefficient, positive.
        adaptive_beta: Adapt ``beta`` toward ``kl_target`` after every epoch.
        kl_target: ``d_targ`` of the adaptive rule, positive.
        normalize_advantages: Standardise the advantages over the batch.
        reward_noise: Standard deviation ``sigma`` of the reward noise, non-negative.
        optimizer: ``"adam"`` (as in the paper) or ``"sgd"``.
        seed: Seed of the generator that draws the batch and the shuffles.

    Returns:
        A ``ToyResult``.

    Raises:
        InputError: if the rewards are not 2 to 16 finite numbers, or training diverged to
            non-finite parameters (settings a person chose).
        ValueError: if another setting is out of its range.
    """
    mu_np = np.array(true_rewards, dtype=np.float64)
    if mu_np.ndim != 1 or not 2 <= mu_np.size <= 16:
        raise InputError(f"give between 2 and 16 actions' rewards; got {mu_np.size}")
    if not np.isfinite(mu_np).all():
        raise InputError("every action needs a finite true reward (is a cell empty?)")
    eps = _check_epsilon(epsilon)
    if not (isinstance(batch_size, int | np.integer) and batch_size >= 2):
        raise ValueError(f"the batch needs at least 2 samples; got {batch_size}")
    if not (isinstance(epochs, int | np.integer) and epochs >= 1):
        raise ValueError(f"run at least 1 epoch; got {epochs}")
    if not (isinstance(minibatch_size, int | np.integer) and 1 <= minibatch_size <= batch_size):
        raise ValueError(
            f"the minibatch size must be between 1 and the batch size {batch_size}; "
            f"got {minibatch_size}"
        )
    if not (math.isfinite(lr) and lr > 0):
        raise ValueError(f"the learning rate must be positive; got {lr:g}")
    if not (math.isfinite(beta) and beta > 0):
        raise ValueError(f"the KL penalty β must be positive; got {beta:g}")
    if not (math.isfinite(kl_target) and kl_target > 0):
        raise ValueError(f"the KL target must be positive; got {kl_target:g}")
    if not (math.isfinite(reward_noise) and reward_noise >= 0):
        raise ValueError(f"the reward noise must be non-negative; got {reward_noise:g}")
    if optimizer not in ("adam", "sgd"):
        raise ValueError(f"the optimiser must be 'adam' or 'sgd'; got {optimizer!r}")

    gen = torch.Generator().manual_seed(int(seed))
    mu = torch.as_tensor(mu_np)
    k = mu.numel()
    logp_old_all = torch.full((k,), -math.log(k), dtype=DTYPE)
    old_probs = torch.exp(logp_old_all)
    actions = torch.multinomial(old_probs, batch_size, replacement=True, generator=gen)
    rewards = mu[actions] + reward_noise * torch.randn(batch_size, generator=gen, dtype=DTYPE)
    adv = rewards - old_probs @ mu
    if normalize_advantages:
        adv = (adv - adv.mean()) / (adv.std() + ADV_NORM_EPS)

    theta = torch.zeros(len(METHODS), k, dtype=DTYPE, requires_grad=True)
    opt = (optim.Adam if optimizer == "adam" else optim.SGD)([theta], lr=lr)
    betas = [float(beta)]
    records = [_measure(theta, actions, adv, logp_old_all, mu, eps=eps, beta=betas[-1])]
    starts = range(0, batch_size, minibatch_size)
    for _ in range(epochs):
        order = torch.randperm(batch_size, generator=gen)
        for start in starts:
            idx = order[start : start + minibatch_size]
            loss = _losses(theta, actions[idx], adv[idx], logp_old_all, eps=eps, beta=betas[-1])
            opt.step(torch.autograd.grad(loss, [theta]))
        if not bool(torch.isfinite(theta).all()):
            raise InputError(
                "training diverged (the policy's parameters overflowed): lower the learning "
                "rate, or use smaller rewards"
            )
        record = _measure(theta, actions, adv, logp_old_all, mu, eps=eps, beta=betas[-1])
        records.append(record)
        if adaptive_beta:
            betas.append(adapt_beta(betas[-1], float(record["kl_exact"][2]), target=kl_target))
        else:
            betas.append(betas[-1])

    stacked = {name: torch.stack([r[name] for r in records], dim=1).numpy()
               for name in records[0]}  # each [M, E+1, ...]
    beta_arr = np.array(betas)
    runs = []
    for m, method in enumerate(METHODS):
        fields = {name: np.ascontiguousarray(v[m]) for name, v in stacked.items()}
        b = beta_arr.copy() if method == "kl_penalty" else np.zeros_like(beta_arr)
        _readonly(b, *fields.values())
        runs.append(ToyRun(method=method, beta=b, **fields))
    out = (mu_np, old_probs.numpy().copy(), actions.numpy().copy(), rewards.numpy().copy(),
           adv.numpy().copy())
    _readonly(*out)
    return ToyResult(*out, runs=tuple(runs), epsilon=eps, lr=float(lr), epochs=int(epochs),
                     minibatch_size=int(minibatch_size), steps_per_epoch=len(starts))
