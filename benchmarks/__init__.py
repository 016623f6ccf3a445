"""Speed figures for rlviz: ``python -m benchmarks`` runs every case and prints one table.

Each ``benchmarks/bench_*.py`` module registers its cases with ``@case`` (or ``page_rerun``).
A case may name a plain-loop reference; the table then shows both medians and their ratio, so a
speed-up is measured in the same run as the figure it improves.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["REGISTRY", "Case", "Row", "case", "measure", "page_rerun", "run_case"]

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Case:
    """One timed workload, with an optional budget and plain-loop reference."""

    name: str
    group: str
    fn: Callable[[], Any]
    budget: float | None = None
    """Seconds the median must stay within (from the issue), or None."""
    reference: Callable[[], Any] | None = None
    """The plain-loop version of the same work, timed for the ratio."""
    min_ratio: float | None = None
    """How many times faster than the reference the case must be, or None."""
    repeat: int = 5
    reference_repeat: int = 1
    note: str = ""
    reference_scale: float = 1.0
    """The reference does 1/scale of the case's work (say 20 of 2000 independent runs); its
    median is multiplied by this before the ratio is taken. Say so in ``note``."""


REGISTRY: list[Case] = []


def case(
    name: str,
    *,
    group: str,
    budget: float | None = None,
    reference: Callable[[], Any] | None = None,
    min_ratio: float | None = None,
    repeat: int = 5,
    reference_repeat: int = 1,
    note: str = "",
    reference_scale: float = 1.0,
) -> Callable[[Callable[[], Any]], Callable[[], Any]]:
    """Register a zero-argument function as a benchmark case."""

    def register(fn: Callable[[], Any]) -> Callable[[], Any]:
        REGISTRY.append(
            Case(name, group, fn, budget, reference, min_ratio, repeat, reference_repeat, note,
                 reference_scale)
        )
        return fn

    return register


CLOCK: Callable[[], float] = time.perf_counter
"""What ``measure`` reads: wall time, or with ``--cpu`` this process's CPU time (all threads),
which a machine shared with other work inflates far less than the wall clock."""


def measure(fn: Callable[[], Any], repeat: int) -> float:
    """Median time of ``repeat`` calls on ``CLOCK``, after one untimed warm-up call."""
    fn()
    times = []
    for _ in range(max(repeat, 1)):
        gc.collect()
        t0 = CLOCK()
        fn()
        times.append(CLOCK() - t0)
    return statistics.median(times)


def page_rerun(slug: str, *, budget: float = 0.150, repeat: int = 5,
               query: dict[str, str] | None = None, view: str = "defaults") -> None:
    """Register the warm rerun of a page at its defaults (cache hit), timed through AppTest.

    The home page runs through ``app.py`` (its cards link into the navigation declared there).
    A page that fails, or shows the error boundary's message, is reported, not timed. With
    ``query`` the page opens with that link, and ``view`` names it in the table.
    """
    from streamlit.testing.v1 import AppTest

    from rlviz.ui.chrome import FRIENDLY_ERROR

    script = ROOT / "app.py" if slug == "home" else ROOT / "pages" / f"{slug}.py"
    state: dict[str, Any] = {}

    def rerun() -> None:
        if "at" not in state:
            at = AppTest.from_file(str(script), default_timeout=120)
            for key, value in (query or {}).items():
                at.query_params[key] = value
            at.run()
            if at.exception:
                raise RuntimeError(f"page {slug} raised: {at.exception[0].message}")
            if any(FRIENDLY_ERROR in e.value for e in at.error):
                raise RuntimeError(f"page {slug} hit an unexpected error (see the log)")
            state["at"] = at
        state["at"].run()

    REGISTRY.append(
        Case(f"warm rerun at {view}: {slug}", "pages", rerun, budget=budget, repeat=repeat)
    )


def page_first_view(slug: str, *, budget: float = 1.5, repeat: int = 3) -> None:
    """Register a page's first view at its defaults: every cache cleared, then one run.

    What the first visitor of a view waits for once the server is up (computation, figures and
    the chrome; the imports are paid before, by a warm-up run).
    """
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from rlviz.ui.chrome import FRIENDLY_ERROR

    script = ROOT / "pages" / f"{slug}.py"
    state: dict[str, Any] = {}

    def first_view() -> None:
        if "warm" not in state:  # imports and Streamlit's own start-up, not timed
            warm = AppTest.from_file(str(script), default_timeout=120).run()
            state["warm"] = True
            # A server looks for installed components once, when it starts; each new AppTest
            # would look again (0.1 s here): give the timed ones the warm-up's findings.
            state["components"] = getattr(warm, "_bidi_component_manager", None)
        st.cache_data.clear()
        st.cache_resource.clear()
        at = AppTest.from_file(str(script), default_timeout=120)
        if state["components"] is not None and hasattr(at, "_bidi_component_manager"):
            at._bidi_component_manager = state["components"]
        at.run()
        if at.exception or any(FRIENDLY_ERROR in e.value for e in at.error):
            raise RuntimeError(f"page {slug} failed at its defaults")

    REGISTRY.append(Case(f"first view at defaults: {slug}", "pages", first_view, budget=budget,
                         repeat=repeat))


@dataclass(frozen=True)
class Row:
    """One line of the results table."""

    case: Case
    median: float
    reference_median: float | None

    @property
    def ratio(self) -> float | None:
        if self.reference_median is None or self.median <= 0:
            return None
        return self.reference_median / self.median

    @property
    def within_budget(self) -> bool | None:
        return None if self.case.budget is None else self.median <= self.case.budget

    @property
    def ratio_ok(self) -> bool | None:
        if self.case.min_ratio is None or self.ratio is None:
            return None
        return self.ratio >= self.case.min_ratio


def run_case(c: Case, *, quick: bool = False) -> Row:
    """Time a case (and its reference)."""
    repeat = 1 if quick else c.repeat
    median = measure(c.fn, repeat)
    ref = None
    if c.reference is not None:
        ref = measure(c.reference, 1 if quick else c.reference_repeat) * c.reference_scale
    return Row(c, median, ref)
