"""Input checks and summary statistics shared by the studies."""

from __future__ import annotations

import numpy as np

from rlviz.errors import InputError

__all__: list[str] = []


# =========================================================================== validation
def _whole(name: str, value: object, lo: int, hi: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a whole number from {lo} to {hi}") from None
    if number != value or not lo <= number <= hi:
        raise InputError(f"{name} must be a whole number from {lo} to {hi}; got {value}")
    return number


def _unit(name: str, value: object) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number from 0 to 1") from None
    if not 0.0 <= number <= 1.0:
        raise InputError(f"{name} must be from 0 to 1; got {number:g}")
    return number


def _rng(seed: int, stream: int) -> np.random.Generator:
    """The Generator of one study: its own stream of the page's seed."""
    seed = _whole("The seed", seed, 0, 2**32 - 1)
    return np.random.default_rng(np.random.SeedSequence([seed, stream]))


def _t975(dof: int) -> float:
    """Two-sided 95% quantile of Student's t with ``dof`` degrees of freedom."""
    from scipy.special import stdtrit

    return float(stdtrit(max(dof, 1), 0.975))


def _mean_band(x: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean over ``axis`` and the half-width of its 95% t-interval."""
    n = x.shape[axis]
    mean = x.mean(axis=axis)
    if n < 2:
        return mean, np.zeros_like(mean)
    return mean, _t975(n - 1) * x.std(axis=axis, ddof=1) / np.sqrt(n)
