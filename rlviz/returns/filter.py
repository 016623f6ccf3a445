"""The backward sums every return and advantage is made of, as one compiled loop."""

from __future__ import annotations

import numpy as np

from rlviz.compiled import kernel, on_warm_up

__all__: list[str] = []


@kernel
def _backward_sums(x, coef, cuts):
    r"""``y_t = x_t + coef * y_{t+1}`` from the last step back to the first, in place.

    The discounted return is ``G_t = r_t + γ G_{t+1}`` (``x = r``, ``coef = γ``) and GAE is
    ``A_t = δ_t + γλ A_{t+1}`` (``x = δ``, ``coef = γλ``; Schulman et al. 2016, eq. 16). A
    segment's last step (each index in ``cuts``, sorted) takes nothing from the step after it:
    the next entry belongs to the next episode or the next trajectory.
    """
    y = 0.0
    c = cuts.size - 1  # the last cut not yet passed
    for t in range(x.size - 1, -1, -1):
        if c >= 0 and cuts[c] == t:  # t ends a segment: nothing flows back into it
            y = 0.0
            c -= 1
        y = x[t] + coef * y
        x[t] = y
    return x


_NO_CUTS = np.zeros(0, dtype=np.int64)


def _discounted_sum(
    x_t: np.ndarray, coef: float, cuts: np.ndarray | None, *, overwrite: bool = False
) -> np.ndarray:
    r"""``y_t = x_t + coef * y_{t+1}`` inside each segment, restarting after every end.

    The trajectories are read as one stream, row after row (``_Steps``), and summed backward by
    ``_backward_sums``, one step at a time in plain floating point: each ``y_t`` is exactly
    what the step-by-step loop of the book computes.

    Args:
        x_t: ``[..., T]`` the per-step terms, times ``[0, T-1]``.
        coef: The per-step decay in ``[0, 1]`` (``gamma``, or ``gamma * lam`` for GAE).
        cuts: ``[E]`` sorted stream indices of the segments' last steps (``_Steps.cuts``; the
            stream's own last step needs none), or None.
        overwrite: Whether ``x_t`` (a fresh array of the caller's) may be used as scratch.

    Returns:
        ``[..., T]`` the sums ``y_t``.
    """
    flat = x_t.reshape(-1) if overwrite else x_t.astype(np.float64).reshape(-1)
    ends = _NO_CUTS if cuts is None else cuts.astype(np.int64, copy=False)
    return _backward_sums(flat, float(coef), ends).reshape(x_t.shape)


@on_warm_up
def _warm_up() -> None:
    """Compile (or load) the loop for the argument types ``_discounted_sum`` passes."""
    _discounted_sum(np.ones(3), 0.5, np.array([0]))
