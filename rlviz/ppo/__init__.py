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

The package is split by concern: ``objectives`` (the policy losses), ``kl`` (KL, its estimators
and the adaptive coefficient), ``value_loss``, ``surface`` (the clip surface and one point
explained) and ``toy`` (the live toy).
"""

from __future__ import annotations

from rlviz.ppo.kl import (
    KLEstimates,
    adapt_beta,
    approx_kl,
    categorical_kl,
    clip_fraction,
)
from rlviz.ppo.objectives import (
    METHODS,
    clipped_surrogate,
    kl_penalty_loss,
    ppo_clip_loss,
    surrogate_grad,
    surrogate_loss,
)
from rlviz.ppo.surface import (
    ClipSurface,
    PointExplanation,
    SurfaceChecks,
    advantage_grid,
    clip_surface,
    explain_point,
    ratio_grid,
    surface_checks,
)
from rlviz.ppo.toy import (
    ToyResult,
    ToyRun,
    run_toy,
)
from rlviz.ppo.toy import (
    _losses as _losses,
)
from rlviz.ppo.toy import (
    _measure as _measure,
)
from rlviz.ppo.value_loss import (
    ValueLossSlice,
    clipped_value_loss,
    value_loss_slice,
)
from rlviz.ppo.value_loss import (
    _value_loss_terms as _value_loss_terms,
)

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
