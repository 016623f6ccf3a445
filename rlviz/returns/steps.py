"""The readable one-step rules: the TD error and the discounted-return step."""

from __future__ import annotations

import numpy as np

__all__ = [
    "discounted_step",
    "td_error",
]


ArrayLike = np.ndarray | list | tuple | float


# --------------------------------------------------------------------------- the steps
def td_error(r_t, v_t, v_tp1, *, gamma):
    r"""The one-step temporal-difference error of each step.

    .. math:: \delta_t = r_t + \gamma V(s_{t+1}) - V(s_t)

    with ``V(s_{t+1}) = 0`` when ``s_{t+1}`` is terminal (Sutton & Barto 2018, eq. 6.5).
    Element-wise: one call serves one step or every step of a batch of trajectories.

    Args:
        r_t: ``[...]`` rewards.
        v_t: ``[...]`` the critic's ``V(s_t)``.
        v_tp1: ``[...]`` the value each step bootstraps from (0 after a termination).
        gamma: Discount factor in ``[0, 1]``.
    """
    return r_t + gamma * v_tp1 - v_t


def discounted_step(x_t, y_tp1, coef, *, out=None):
    r"""One step back in time of the recursion every return and advantage here is made of.

    .. math:: y_t = x_t + c\, y_{t+1}

    GAE is ``A_t = δ_t + (γλ) A_{t+1}`` (``x = δ``, ``c = γλ``; Schulman et al. 2016, eq. 16),
    the discounted return ``G_t = r_t + γ G_{t+1}`` (``x = r``, ``c = γ``). Inside an episode
    only: at its end nothing flows back. ``_backward_sums`` runs the same step along whole
    streams of trajectories (compiled); this one serves a column of many trajectories at once.

    Args:
        x_t: ``[...]`` this step's term.
        y_tp1: ``[...]`` the sum from the next step on.
        coef: The per-step decay ``c`` in ``[0, 1]``.
        out: Where to write ``y_t`` (it may be ``x_t`` itself), or None for a new array.
    """
    return np.add(x_t, coef * y_tp1, out=out)
