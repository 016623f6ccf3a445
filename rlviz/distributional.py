r"""The categorical (C51) projection of a distributional Bellman target onto a fixed support.

C51 keeps a return distribution as probabilities ``p_j`` on ``N`` evenly spaced atoms
``z_j = V_min + j Δz``. The Bellman target ``r + γ z_j`` moves and shrinks those atoms off the
support, so each target atom (clipped to ``[V_min, V_max]``) has its probability split between
the two support points around it, in proportion to how close it is to each:

.. math::

    (\Phi \hat{T} Z)_i = \sum_j \Big[1 - \frac{|[r + \gamma z_j]_{V_{min}}^{V_{max}} - z_i|}
    {\Delta z}\Big]_0^1 \, p_j

(Bellemare, Dabney & Munos 2017, "A Distributional Perspective on Reinforcement Learning",
eq. 7 and Algorithm 1). Mass is always preserved; the mean is preserved unless atoms were clipped.

``categorical_projection`` is the batched torch implementation (one ``scatter_add`` per
neighbour, no loop over atoms). ``projection_reference`` is a plain per-atom loop in numpy that
follows Algorithm 1 literally and serves as the test oracle; ``naive_projection`` reproduces a
common bug on purpose, for comparison. ``walkthrough`` gathers everything the C51 page draws for
one distribution.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from rlviz.errors import InputError

__all__ = [
    "SHAPES",
    "Projection",
    "Walkthrough",
    "categorical_projection",
    "cross_entropy",
    "make_support",
    "moments",
    "naive_projection",
    "normalise_weights",
    "projection_reference",
    "source_distribution",
    "walkthrough",
]

SHAPES = ("gaussian", "bimodal", "uniform", "point", "custom")
"""The source distributions ``source_distribution`` can build."""

_SPACING_RTOL = 1e-3  # how far an atom may sit from the even grid, as a fraction of Δz


# ------------------------------------------------------------------------------ validation
def make_support(v_min: float, v_max: float, n_atoms: int) -> np.ndarray:
    r"""The C51 support: ``N`` evenly spaced atoms from ``V_min`` to ``V_max``.

    .. math:: z_j = V_{min} + j \Delta z, \quad \Delta z = \frac{V_{max} - V_{min}}{N - 1}

    Source: Bellemare, Dabney & Munos (2017), Section 4.

    Args:
        v_min: Smallest representable return ``V_min``.
        v_max: Largest representable return ``V_max``; must exceed ``v_min``.
        n_atoms: Number of atoms ``N``, at least 2.

    Returns:
        ``[N]`` float64 atoms ``z_0 < … < z_{N-1}``.

    Raises:
        InputError: If a bound is not finite, ``V_min ≥ V_max`` or ``N < 2``.
    """
    if not (math.isfinite(v_min) and math.isfinite(v_max)):
        raise InputError("V_min and V_max must be finite numbers.")
    if v_min >= v_max:
        raise InputError(
            f"V_min ({v_min:g}) must be below V_max ({v_max:g}): the support needs room for "
            "its atoms."
        )
    if int(n_atoms) != n_atoms or n_atoms < 2:
        raise InputError(
            f"The support needs at least two atoms (got {n_atoms}): one atom cannot split "
            "mass between neighbours."
        )
    return np.linspace(float(v_min), float(v_max), int(n_atoms))


def _check_support(support: np.ndarray) -> tuple[float, float, float]:
    """V_min, V_max and Δz of a valid support; ValueError otherwise."""
    if support.ndim != 1:
        raise ValueError(f"The support must be one-dimensional, got shape {support.shape}.")
    if support.shape[0] < 2:
        raise ValueError(
            f"The support needs at least two atoms (got {support.shape[0]}): one atom cannot "
            "split mass between neighbours."
        )
    if not np.all(np.isfinite(support)):
        raise ValueError("The support must contain finite numbers only.")
    v_min, v_max = float(support[0]), float(support[-1])
    if v_min >= v_max:
        raise ValueError(
            f"V_min ({v_min:g}) must be below V_max ({v_max:g}): the support must increase."
        )
    dz = (v_max - v_min) / (support.shape[0] - 1)
    if np.max(np.abs(np.diff(support) - dz)) > _SPACING_RTOL * dz:
        raise ValueError("The support's atoms must be evenly spaced (C51 uses a fixed grid).")
    return v_min, v_max, dz


def _check_gamma(gamma: float) -> float:
    gamma = float(gamma)
    if not (math.isfinite(gamma) and 0.0 <= gamma <= 1.0):
        raise ValueError(f"The discount γ must lie in [0, 1], got {gamma:g}.")
    return gamma


def _sum_tolerance(dtype: torch.dtype) -> float:
    return 1e-4 if dtype in (torch.float16, torch.bfloat16, torch.float32) else 1e-6


def _check_distributions(probs: torch.Tensor, what: str) -> None:
    """Rows of ``probs`` must be probability vectors (finite, non-negative, summing to one)."""
    totals = probs.sum(dim=-1)  # a NaN or infinity anywhere in a row shows up in its sum
    if not bool(torch.isfinite(totals).all()):
        raise ValueError(f"The {what} contain NaN or infinite values.")
    if probs.numel() and float(probs.min()) < 0:
        raise ValueError(f"The {what} must be non-negative; some are below zero.")
    error = (totals - 1.0).abs()
    if error.numel() and float(error.max()) > _sum_tolerance(probs.dtype):
        row = int(error.argmax())
        raise ValueError(
            f"The {what} must sum to one over the atoms; row {row} sums to "
            f"{float(totals[row]):.6g}."
        )


def _as_float_tensor(x) -> torch.Tensor:
    """A floating tensor: tensors and float arrays keep their dtype, anything else is float64."""
    if not isinstance(x, torch.Tensor):
        x = np.asarray(x)
        x = torch.as_tensor(x if np.issubdtype(x.dtype, np.floating) else x.astype(np.float64))
    return x if x.is_floating_point() else x.to(torch.float64)


def _prepare(probs, rewards, dones, gamma, support):
    """Tensors of one float dtype and device, validated; Δz and the bounds as floats."""
    p = _as_float_tensor(probs)
    if p.ndim != 2:
        raise ValueError(
            f"probs must have shape [batch, atoms], got {tuple(p.shape)}; wrap a single "
            "distribution as probs[None]."
        )
    z_np = np.asarray(
        support.detach().cpu().numpy() if isinstance(support, torch.Tensor) else support,
        dtype=np.float64,
    )
    v_min, v_max, dz = _check_support(z_np)
    batch, n = p.shape
    if z_np.shape[0] != n:
        raise ValueError(f"probs has {n} atoms per row but the support has {z_np.shape[0]}.")
    r = torch.as_tensor(rewards, dtype=p.dtype, device=p.device)  # never through float32
    d = torch.as_tensor(dones, device=p.device)
    if r.shape != (batch,) or d.shape != (batch,):
        raise ValueError(
            f"rewards and dones must have shape [{batch}] (one per distribution), got "
            f"{tuple(r.shape)} and {tuple(d.shape)}."
        )
    if not bool(torch.isfinite(r).all()):
        raise ValueError("The rewards must be finite numbers.")
    if d.dtype != torch.bool:
        if not bool(((d == 0) | (d == 1)).all()):
            raise ValueError("dones must be booleans or 0/1 flags.")
        d = d != 0
    _check_distributions(p, "probabilities")
    z = torch.as_tensor(z_np, dtype=p.dtype, device=p.device)
    return p, r, d, _check_gamma(gamma), z, v_min, v_max, dz


# ------------------------------------------------------------------------------ projection
@dataclass(frozen=True, eq=False)
class Projection:
    """A batch of categorical projections and the intermediate quantities behind them.

    Every array is a torch tensor on the input's device. Atom ``j`` of row ``k`` moves to
    ``clipped_atoms[k, j]``, which sits at fractional grid position ``position[k, j]`` between
    support points ``lower[k, j]`` and ``upper[k, j] = lower[k, j] + 1``; it sends
    ``weight_lower`` of its probability to the lower point and ``weight_upper`` to the upper.
    The fields are what the projection computes; the properties derive the rest on demand.
    """

    support: torch.Tensor  # [N] atoms z_0 < … < z_{N-1}
    target_atoms: torch.Tensor  # [B, N] r + γ(1 − done) z_j, before clipping
    position: torch.Tensor  # [B, N] b = (clipped atom − V_min) / Δz, in [0, N − 1]
    lower: torch.Tensor  # [B, N] int64 index l of the lower neighbour, in [0, N − 2]
    weight_upper: torch.Tensor  # [B, N] b − l, the share of p_j sent to z_u
    probs: torch.Tensor  # [B, N] the projected distribution m on the support

    @property
    def clipped_atoms(self) -> torch.Tensor:
        """``[B, N]`` target atoms clipped to ``[V_min, V_max]``."""
        return self.target_atoms.clamp(float(self.support[0]), float(self.support[-1]))

    @property
    def clipped(self) -> torch.Tensor:
        """``[B, N]`` bool: the target atom lay outside ``[V_min, V_max]``."""
        v_min, v_max = float(self.support[0]), float(self.support[-1])
        return (self.target_atoms < v_min) | (self.target_atoms > v_max)

    @property
    def upper(self) -> torch.Tensor:
        """``[B, N]`` int64 index ``u = l + 1`` of the upper neighbour."""
        return self.lower + 1

    @property
    def weight_lower(self) -> torch.Tensor:
        """``[B, N]`` ``u − b``, the share of ``p_j`` sent to ``z_l``."""
        return 1.0 - self.weight_upper


def _shift(p, r, d, gamma, z, v_min, dz) -> tuple[torch.Tensor, torch.Tensor]:
    """Target atoms ``r + γ(1 − d)z`` and their grid positions, clipped to ``[0, N − 1]``."""
    discount = gamma * (~d).to(p.dtype)  # [B] γ, or 0 where the episode ended
    target = torch.addcmul(r[:, None], discount[:, None], z[None, :])
    # Clipping the value to [V_min, V_max] is clipping the position to [0, N − 1].
    position = (target - v_min).div_(dz).clamp_(0.0, z.shape[0] - 1.0)
    return target, position


def categorical_projection(
    probs, rewards, dones, *, gamma: float, support
) -> Projection:
    r"""Project the distributional Bellman target ``r + γ Z`` onto the fixed C51 support.

    For each atom ``j`` of each distribution:

    .. math::

        \hat{z}_j = [r + \gamma (1 - d) z_j]_{V_{min}}^{V_{max}}, \quad
        b_j = (\hat{z}_j - V_{min}) / \Delta z, \quad l_j = \min(\lfloor b_j \rfloor, N - 2),
        \quad u_j = l_j + 1

    .. math:: m_{l_j} \mathrel{+}= p_j (u_j - b_j), \qquad m_{u_j} \mathrel{+}= p_j (b_j - l_j)

    Source: Bellemare, Dabney & Munos (2017), Algorithm 1. Taking ``l = ⌊b⌋`` and ``u = l + 1``
    (rather than ``u = ⌈b⌉``) keeps the two neighbours distinct, so an atom that lands exactly
    on a support point sends all its mass there instead of losing it (see
    ``naive_projection``). The work is two ``scatter_add`` calls over the whole batch.

    Args:
        probs: ``[B, N]`` next-state distributions ``p_j``, each row summing to one.
        rewards: ``[B]`` rewards ``r`` of the transitions.
        dones: ``[B]`` booleans (or 0/1): the episode ended, so the target is ``r`` alone.
        gamma: Discount ``γ`` in ``[0, 1]``.
        support: ``[N]`` evenly spaced atoms ``z`` (see ``make_support``).

    Returns:
        A ``Projection``: the projected ``probs`` ``[B, N]`` and every intermediate quantity,
        in the dtype of ``probs`` (float64 unless it is a float32 tensor or array).

    Raises:
        ValueError: For mismatched shapes, fewer than two atoms, a support that does not
            increase evenly (``V_min ≥ V_max``), rows that are not probability vectors,
            non-finite rewards, or ``γ`` outside ``[0, 1]``.
    """
    p, r, d, gamma, z, v_min, _, dz = _prepare(probs, rewards, dones, gamma, support)
    target, position = _shift(p, r, d, gamma, z, v_min, dz)
    # Cap l at N − 2 so that u = l + 1 always exists; an atom at V_max then has weight 1 on u.
    lower = position.floor().clamp_(max=z.shape[0] - 2.0)
    weight_upper = position - lower
    lower = lower.to(torch.int64)
    to_upper = p * weight_upper
    projected = torch.zeros_like(p)
    projected.scatter_add_(1, lower, p - to_upper)
    projected.scatter_add_(1, lower + 1, to_upper)
    return Projection(
        support=z, target_atoms=target, position=position, lower=lower,
        weight_upper=weight_upper, probs=projected,
    )


def naive_projection(probs, rewards, dones, *, gamma: float, support) -> torch.Tensor:
    r"""A deliberately WRONG projection: floor/ceil neighbours that lose mass on exact hits.

    It uses ``l = ⌊b⌋`` and ``u = ⌈b⌉`` with the split weights ``u − b`` and ``b − l``. When a
    target atom lands exactly on a support point (``b`` is a whole number, as happens for
    ``r = 0, γ = 1`` and for every clipped atom), ``l = u`` and both weights are zero, so that
    atom's probability disappears and the result no longer sums to one. It exists only so the
    C51 page can show that bug beside ``categorical_projection``; do not train with it.

    Args:
        probs: ``[B, N]`` next-state distributions, rows summing to one.
        rewards: ``[B]`` rewards.
        dones: ``[B]`` booleans (or 0/1).
        gamma: Discount in ``[0, 1]``.
        support: ``[N]`` evenly spaced atoms.

    Returns:
        ``[B, N]`` the naive "projection", whose rows may sum to less than one.

    Raises:
        ValueError: For the same inputs ``categorical_projection`` rejects.
    """
    p, r, d, gamma, z, v_min, _, dz = _prepare(probs, rewards, dones, gamma, support)
    _, b = _shift(p, r, d, gamma, z, v_min, dz)
    lower, upper = b.floor(), b.ceil()
    out = torch.zeros_like(p)
    out.scatter_add_(1, lower.to(torch.int64), p * (upper - b))
    out.scatter_add_(1, upper.to(torch.int64), p * (b - lower))
    return out


def projection_reference(
    probs, rewards, dones, *, gamma: float, support
) -> np.ndarray:
    r"""Plain per-atom loop over Algorithm 1 in numpy: the oracle the torch version must equal.

    For each distribution and atom: ``T z = [r + γ (1 − d) z_j]`` clipped to
    ``[V_min, V_max]``, ``b = (T z − V_min) / Δz``, ``l = ⌊b⌋``, ``u = ⌈b⌉``; when ``l = u``
    the whole ``p_j`` goes to ``z_l``, otherwise ``m_l += p_j (u − b)`` and
    ``m_u += p_j (b − l)``.

    Source: Bellemare, Dabney & Munos (2017), Algorithm 1.

    Args:
        probs: ``[B, N]`` distributions, rows summing to one.
        rewards: ``[B]`` rewards.
        dones: ``[B]`` booleans (or 0/1).
        gamma: Discount in ``[0, 1]``.
        support: ``[N]`` evenly spaced atoms.

    Returns:
        ``[B, N]`` float64 projected distributions.

    Raises:
        ValueError: For the same inputs ``categorical_projection`` rejects.
    """
    _prepare(probs, rewards, dones, gamma, support)
    p = np.asarray(probs, dtype=np.float64)
    z = np.asarray(support, dtype=np.float64)
    r = np.asarray(rewards, dtype=np.float64)
    d = np.asarray(dones).astype(bool)
    batch, n = p.shape
    v_min, v_max = float(z[0]), float(z[-1])
    dz = (v_max - v_min) / (n - 1)
    m = np.zeros((batch, n))
    for k in range(batch):
        discount = 0.0 if d[k] else float(gamma)
        for j in range(n):
            tz = min(max(float(r[k]) + discount * float(z[j]), v_min), v_max)
            b = min((tz - v_min) / dz, n - 1.0)
            lo, up = math.floor(b), math.ceil(b)
            if lo == up:
                m[k, lo] += p[k, j]
            else:
                m[k, lo] += p[k, j] * (up - b)
                m[k, up] += p[k, j] * (b - lo)
    return m


def cross_entropy(logits, target) -> torch.Tensor:
    r"""The C51 loss: cross-entropy of predicted logits against a projected target.

    .. math:: \mathcal{L} = -\sum_i m_i \log \operatorname{softmax}(\theta)_i

    computed with ``log_softmax`` (max-subtracted), so large logits never overflow. Its gradient
    with respect to the logits is ``softmax(θ) − m``.

    Source: Bellemare, Dabney & Munos (2017), Algorithm 1 (output line).

    Args:
        logits: ``[B, N]`` unnormalised predicted log-probabilities ``θ``.
        target: ``[B, N]`` projected target distributions ``m`` (rows summing to one).

    Returns:
        ``[B]`` the loss of each row (average it for a minibatch loss).

    Raises:
        ValueError: If the shapes differ, a logit is not finite, or ``target`` rows are not
            probability vectors.
    """
    logits = _as_float_tensor(logits)
    target = torch.as_tensor(target, dtype=logits.dtype, device=logits.device)
    if logits.ndim != 2 or logits.shape != target.shape:
        raise ValueError(
            f"logits and target must both have shape [batch, atoms], got {tuple(logits.shape)} "
            f"and {tuple(target.shape)}."
        )
    if not bool(torch.isfinite(logits).all()):
        raise ValueError("The logits contain NaN or infinite values.")
    _check_distributions(target.detach(), "target probabilities")
    return -(target * torch.log_softmax(logits, dim=-1)).sum(dim=-1)


# ------------------------------------------------------------------------------ sources
def normalise_weights(weights: Sequence[float]) -> np.ndarray:
    """Turn non-negative weights into probabilities by dividing by their sum.

    Args:
        weights: ``[N]`` non-negative finite weights, not all zero.

    Returns:
        ``[N]`` float64 probabilities summing to one.

    Raises:
        InputError: Naming the first empty/non-numeric cell, the first negative weight, or
            saying that all weights are zero.
    """
    w = np.asarray(weights, dtype=np.float64).reshape(-1)
    bad = np.flatnonzero(~np.isfinite(w))
    if bad.size:
        raise InputError(
            f"Weight {bad[0]} is empty or not a finite number; fill in every row with a "
            "number ≥ 0."
        )
    negative = np.flatnonzero(w < 0)
    if negative.size:
        raise InputError(
            f"Weights cannot be negative: weight {negative[0]} is {w[negative[0]]:g}. "
            "Probabilities are never below zero."
        )
    total = float(w.sum())
    if total <= 0.0:
        raise InputError("All weights are zero, so they cannot be normalised to sum to one.")
    return w / total


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max())
    return shifted / shifted.sum()


def source_distribution(
    shape: str,
    support: np.ndarray,
    *,
    mean: float = 0.0,
    width: float = 1.0,
    separation: float = 0.0,
    weights: Sequence[float] | None = None,
) -> np.ndarray:
    r"""A source distribution ``p`` on the support, from a named shape or custom weights.

    * ``gaussian``: ``p_j ∝ exp(−(z_j − μ)² / 2σ²)`` (a discretised normal).
    * ``bimodal``: an equal mixture of two such normals centred at ``μ ± separation / 2``.
    * ``uniform``: ``p_j = 1 / N``.
    * ``point``: all mass on the atom nearest ``μ``.
    * ``custom``: ``weights`` (one per atom) divided by their sum.

    Densities are normalised in log space (max-subtracted), so a narrow σ never underflows to
    an all-zero vector.

    Args:
        shape: One of ``SHAPES``.
        support: ``[N]`` atoms.
        mean: Centre ``μ`` (gaussian, bimodal, point).
        width: Standard deviation ``σ > 0`` of each normal (gaussian, bimodal).
        separation: Distance between the two modes (bimodal).
        weights: ``[N]`` non-negative weights (custom).

    Returns:
        ``[N]`` float64 probabilities summing to one.

    Raises:
        ValueError: For an unknown shape, ``σ ≤ 0``, or custom weights that are missing, of
            the wrong length, or cannot be normalised.
    """
    z = np.asarray(support, dtype=np.float64)
    if shape not in SHAPES:
        raise ValueError(f"Unknown shape {shape!r}; choose one of {', '.join(SHAPES)}.")
    if shape == "custom":
        if weights is None:
            raise ValueError("The custom shape needs one weight per atom.")
        if len(weights) != z.shape[0]:
            raise ValueError(
                f"There are {len(weights)} custom weights but {z.shape[0]} atoms; give one "
                "weight per atom."
            )
        return normalise_weights(weights)
    if shape == "uniform":
        return np.full(z.shape[0], 1.0 / z.shape[0])
    if shape == "point":
        out = np.zeros(z.shape[0])
        out[int(np.argmin(np.abs(z - mean)))] = 1.0
        return out
    if not (math.isfinite(width) and width > 0):
        raise ValueError(f"The width σ must be positive, got {width:g}.")
    if shape == "gaussian":
        return _softmax(-0.5 * ((z - mean) / width) ** 2)
    left = -0.5 * ((z - (mean - separation / 2)) / width) ** 2
    right = -0.5 * ((z - (mean + separation / 2)) / width) ** 2
    return _softmax(np.logaddexp(left, right))


def moments(probs: np.ndarray, support: np.ndarray) -> tuple[float, float]:
    r"""Mean and variance of a categorical distribution: ``Σ p z`` and ``Σ p (z − mean)²``.

    Args:
        probs: ``[N]`` probabilities (need not sum to one: a lossy projection's mass is used
            as is).
        support: ``[N]`` atoms.

    Returns:
        ``(mean, variance)``; the variance is about that mean.
    """
    p = np.asarray(probs, dtype=np.float64)
    z = np.asarray(support, dtype=np.float64)
    mean = float(p @ z)
    return mean, float(p @ (z - mean) ** 2)


# ------------------------------------------------------------------------------ walkthrough
@dataclass(frozen=True, eq=False)
class Walkthrough:
    """One distribution's projection, step by step, as numpy arrays (what the C51 page draws).

    Derived numbers (means, variances, the mass the naive version loses) are properties.
    """

    support: np.ndarray  # [N] atoms z
    source: np.ndarray  # [N] source distribution p
    reward: float  # r
    gamma: float  # γ
    done: bool  # the episode ended: target is r alone
    target_atoms: np.ndarray  # [N] r + γ(1 − done) z_j, before clipping
    clipped_atoms: np.ndarray  # [N] target atoms clipped to [V_min, V_max]
    clipped: np.ndarray  # [N] bool, atom j was clipped
    position: np.ndarray  # [N] b_j = (clipped atom − V_min) / Δz
    lower: np.ndarray  # [N] int lower neighbour l_j
    upper: np.ndarray  # [N] int upper neighbour u_j = l_j + 1
    weight_lower: np.ndarray  # [N] share of p_j sent to z_l
    weight_upper: np.ndarray  # [N] share of p_j sent to z_u
    projected: np.ndarray  # [N] projected distribution m
    naive: np.ndarray  # [N] the naive floor/ceil result (may sum below one)

    @property
    def n_atoms(self) -> int:
        """Number of atoms N."""
        return int(self.support.shape[0])

    @property
    def delta_z(self) -> float:
        """Spacing Δz of the support."""
        return float(self.support[-1] - self.support[0]) / (self.n_atoms - 1)

    @property
    def discount(self) -> float:
        """γ(1 − done): the factor the atoms are scaled by."""
        return 0.0 if self.done else self.gamma

    @property
    def exact_hits(self) -> np.ndarray:
        """``[N]`` bool: the target atom lands exactly on a support point (b is whole)."""
        return self.position == np.floor(self.position)

    @property
    def n_clipped(self) -> int:
        """How many target atoms lay outside ``[V_min, V_max]``."""
        return int(self.clipped.sum())

    @property
    def mass_before(self) -> float:
        """``Σ p``."""
        return float(self.source.sum())

    @property
    def mass_after(self) -> float:
        """``Σ m``."""
        return float(self.projected.sum())

    @property
    def naive_mass(self) -> float:
        """What is left of the mass after the naive floor/ceil version."""
        return float(self.naive.sum())

    @property
    def before(self) -> tuple[float, float]:
        """Mean and variance of the source ``p``."""
        return moments(self.source, self.support)

    @property
    def after(self) -> tuple[float, float]:
        """Mean and variance of the projected ``m``."""
        return moments(self.projected, self.support)

    @property
    def target(self) -> tuple[float, float]:
        """Mean and variance of the unclipped target ``r + γ Z``: ``r + γE[p]``, ``γ²Var[p]``."""
        mean, var = self.before
        return self.reward + self.discount * mean, self.discount**2 * var

    @property
    def clipped_target(self) -> tuple[float, float]:
        """Mean and variance of the clipped target atoms (what projection preserves)."""
        return moments(self.source, self.clipped_atoms)

    def columns(self) -> dict[str, np.ndarray]:
        """Every per-atom quantity by name, for a table or a CSV export."""
        return {
            "j": np.arange(self.n_atoms), "z": self.support, "p": self.source,
            "target": self.target_atoms, "clipped": self.clipped,
            "target_clipped": self.clipped_atoms, "b": self.position, "l": self.lower,
            "u": self.upper, "share_l": self.weight_lower, "share_u": self.weight_upper,
            "m": self.projected, "naive": self.naive,
        }

    @property
    def split_variance(self) -> float:
        r"""Variance the split adds: ``Δz² Σ p_j w_l w_u`` (zero when every atom hits a point)."""
        return self.delta_z**2 * float(
            np.sum(self.source * self.weight_lower * self.weight_upper)
        )


def walkthrough(
    source, *, reward: float, gamma: float, done: bool, support
) -> Walkthrough:
    """Project one distribution with ``categorical_projection`` (float64) and keep every step.

    Args:
        source: ``[N]`` source distribution ``p`` on the support.
        reward: Reward ``r``.
        gamma: Discount ``γ`` in ``[0, 1]``.
        done: The episode ended (the target is ``r`` alone).
        support: ``[N]`` evenly spaced atoms.

    Returns:
        A ``Walkthrough`` with the intermediate quantities, the projection and, for comparison,
        the naive floor/ceil result.

    Raises:
        ValueError: For inputs ``categorical_projection`` rejects.
    """
    p = np.asarray(source, dtype=np.float64).reshape(1, -1)
    args = dict(gamma=gamma, support=np.asarray(support, dtype=np.float64))
    proj = categorical_projection(p, [float(reward)], [bool(done)], **args)
    naive = naive_projection(p, [float(reward)], [bool(done)], **args)

    def row(t: torch.Tensor) -> np.ndarray:
        return t[0].cpu().numpy()

    return Walkthrough(
        support=proj.support.cpu().numpy(),
        source=p[0].copy(),
        reward=float(reward),
        gamma=float(gamma),
        done=bool(done),
        target_atoms=row(proj.target_atoms),
        clipped_atoms=row(proj.clipped_atoms),
        clipped=row(proj.clipped),
        position=row(proj.position),
        lower=row(proj.lower),
        upper=row(proj.upper),
        weight_lower=row(proj.weight_lower),
        weight_upper=row(proj.weight_upper),
        projected=row(proj.probs),
        naive=row(naive),
    )
