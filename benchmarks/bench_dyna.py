"""Dyna-Q: Figure 8.2's protocol against a plain loop, the changing mazes, prioritized sweeping
(Example 8.4), the page's first views, its worst combinations of controls and its warm rerun."""

from __future__ import annotations

from benchmarks import ROOT, case, page_rerun
from rlviz import planning as pl
from tests.oracle_planning import dyna_loop
from tests.oracle_sweeping import sweep_loop

SLUG = "dyna"
BOOK = pl.maze(pl.DYNA_MAZE)
# The page's heaviest settings: every count at its maximum (the defaults), the three largest
# planning budgets, and the settings that make episodes longest.
WORST = {"ns": "10,20,50", "episodes": "50", "runs": "30", "alpha": "0.05",
         "epsilon": "0.3", "gamma": "0.5"}
# Example 8.4 at its dearest: every size, the most runs, and no exploration (ε = 0), where most
# runs never find a shortest path and spend their whole budget.
WORST_SWEEP = {"exp": "sweeping", "sizes": "0,1,2", "w_runs": "5", "w_n": "10", "epsilon": "0"}
WORST_CHANGE = {"exp": "shortcut", "n": "10", "c_runs": "10", "kappa": "0.01", "c_alpha": "0.05",
                "epsilon": "0.3", "gamma": "0.5"}


def _figure_8_2_loop():
    return [dyna_loop(BOOK, n=n, runs=1, episodes=50) for n in pl.BOOK_NS]


@case("Figure 8.2: 30 runs x 50 episodes, n = 0, 5, 50", group=SLUG, budget=1.5,
      reference=_figure_8_2_loop, reference_scale=30, min_ratio=5, repeat=3,
      note="the reference trains 1 of the 30 runs of each n step by step (x30)")
def figure_8_2():
    # As the page trains them: n = 0 alone, the budgets that plan in one call.
    return (pl.run_dyna(BOOK, n=0, runs=30, episodes=50),
            pl.run_dyna(BOOK, planners=("dyna_q", "dyna_q"), n=(5, 50), runs=30, episodes=50))


def _changing(which: str, **kw):
    (before, after), change_at, steps = pl.CHANGES[which]
    return pl.changing_study(before, after, change_at=change_at, steps=steps, **kw)


def _shortcut_loop():
    m = pl.maze(*pl.SHORTCUT_MAZE)
    return [dyna_loop(m, planner=p, n=10, runs=1, steps=6000, change_at=3000, alpha=1.0)
            for p in pl.PLANNERS]


@case("Figure 8.4: blocking maze, 10 runs x 3000 steps, both planners", group=SLUG,
      budget=2.0, repeat=3)
def blocking():
    return _changing("blocking")


@case("Figure 8.5: shortcut maze, 10 runs x 6000 steps, both planners", group=SLUG,
      budget=2.0, reference=_shortcut_loop, reference_scale=10, min_ratio=3, repeat=3,
      note="the reference trains 1 of the 10 runs of each planner step by step (x10)")
def shortcut():
    return _changing("shortcut")


def _example_8_4_loop():
    return [sweep_loop(pl.scaled_maze(k), p, key=(k, 0)) for k in pl.LEVELS
            for p in pl.SWEEPERS]


@case("Example 8.4: 4 runs at 47, 94, 188 states, both planners", group=SLUG, budget=1.2,
      reference=_example_8_4_loop, reference_scale=4, min_ratio=1, repeat=3,
      note="the reference (the book's boxes on numpy arrays) trains 1 of the 4 runs (x4)")
def example_8_4():
    return pl.sweeping_study(pl.LEVELS, runs=4)


def _cold_page(query: dict[str, str]):
    """The page's whole script from empty caches (compute and figures), as a first visit."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    state: dict = {}

    def run() -> None:
        if "at" not in state:
            at = AppTest.from_file(str(ROOT / "pages" / f"{SLUG}.py"), default_timeout=120)
            for key, value in query.items():
                at.query_params[key] = value
            at.run()
            if at.exception or at.error:
                raise RuntimeError(f"page {SLUG} failed at {query}")
            state["at"] = at
        st.cache_data.clear()
        st.cache_resource.clear()
        state["at"].run()

    return run


case(f"first view at defaults (empty caches): {SLUG}", group="pages", budget=1.5, repeat=3)(
    _cold_page({}))
case(f"first view, shortcut maze (empty caches): {SLUG}", group="pages", budget=2.0,
     repeat=3)(_cold_page({"exp": "shortcut"}))
case(f"first view, prioritized sweeping (empty caches): {SLUG}", group="pages", budget=1.5,
     repeat=3)(_cold_page({"exp": "sweeping"}))
case(f"worst controls, prioritized sweeping (empty caches): {SLUG}", group="pages", budget=2.0,
     repeat=3)(_cold_page(WORST_SWEEP))
case(f"worst controls, Dyna maze (empty caches): {SLUG}", group="pages", budget=2.0,
     repeat=3)(_cold_page(WORST))
case(f"worst controls, shortcut maze (empty caches): {SLUG}", group="pages", budget=2.0,
     repeat=3)(_cold_page(WORST_CHANGE))
page_rerun(SLUG)
