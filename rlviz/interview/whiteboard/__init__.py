"""Whiteboard versions: each family's answer in about ten lines of plain numpy.

One module per family (``rlviz.interview.whiteboard.<page slug>``). Each function is what a
candidate would write at a whiteboard (the update, the loss, the projection), with no
validation or batching; tests and a live check on the page show it gives the same numbers as
the library on random inputs and on the current view.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["LiveCheck", "live_check", "setting"]


@dataclass(frozen=True)
class LiveCheck:
    """The whiteboard version and the library, run on one small instance of the page's view."""

    label: str  # what was computed, in a few words
    whiteboard: Any  # float or array: the whiteboard version's numbers
    library: Any  # the same numbers from rlviz
    tol: float = 1e-9  # the largest |difference| accepted

    @property
    def max_abs_diff(self) -> float:
        """The largest |whiteboard − library| (inf when the shapes differ or a value is NaN)."""
        board = np.asarray(self.whiteboard, dtype=float)
        lib = np.asarray(self.library, dtype=float)
        if board.shape != lib.shape:
            return float("inf")
        if board.size == 0:
            return 0.0
        same = (board == lib) | (np.isnan(board) & np.isnan(lib))  # ±inf equal to itself
        with np.errstate(invalid="ignore"):  # inf − inf where they differ in sign
            diff = np.where(same, 0.0, np.abs(board - lib))
        return float(np.nan_to_num(diff, nan=np.inf).max())

    @property
    def ok(self) -> bool:
        """The two agree to within ``tol``."""
        return self.max_abs_diff <= self.tol


def setting(settings: Mapping[str, Any] | None, name: str, default: Any) -> Any:
    """The page's current value of a control, or its default when the page has not set it."""
    if settings is None:
        return default
    value = settings.get(name, default)
    return default if value is None else value


def live_check(slug: str, settings: Mapping[str, Any] | None = None) -> LiveCheck | None:
    """The live check of a page's family, or None for a page without a whiteboard version."""
    try:
        module = importlib.import_module(f"{__name__}.{slug}")
    except ModuleNotFoundError as error:
        if error.name != f"{__name__}.{slug}":
            raise
        return None
    check = getattr(module, "live_check", None)
    return None if check is None else check(settings or {})
