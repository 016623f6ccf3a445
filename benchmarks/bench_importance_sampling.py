"""Importance sampling: Figure 5.3's protocol against a plain loop, the page's other studies,
its first view, its worst combination of controls and its warm rerun."""

from __future__ import annotations

from benchmarks import ROOT, case, page_rerun
from rlviz import off_policy as op
from tests.oracle_off_policy import blackjack_study_loop

SLUG = "importance_sampling"
# The page's heaviest settings: every cap at its maximum and a δ off the swept grid.
WORST = {"delta": "0.55", "horizon": "10", "n": "200", "runs": "200", "critic": "cross_fitted",
         "bj_runs": "100", "bj_episodes": "10000", "iv_runs": "10", "iv_episodes": "100000"}


def _loop():
    return blackjack_study_loop(1, 10_000)


@case("Figure 5.3: 100 runs x 10,000 episodes, both estimators", group=SLUG, budget=1.5,
      reference=_loop, reference_scale=100, min_ratio=20, repeat=5,
      note="the reference plays 1 of the 100 runs episode by episode (x100)")
def figure_5_3():
    return op.blackjack_study(runs=100, episodes=10_000, seed=0)


@case("Figure 5.4: 10 runs x 100,000 episodes", group=SLUG, budget=0.5)
def figure_5_4():
    return op.infinite_variance_study(runs=10, episodes=100_000, seed=0)


@case("chain at defaults: 200 runs x 100 episodes x 5 steps, 11 δ", group=SLUG, budget=0.5)
def chain_defaults():
    return op.estimator_study(delta=0.5, horizon=5, episodes=100, runs=200, seed=0)


@case("chain worst: 200 runs x 200 episodes x 10 steps, 12 δ", group=SLUG, budget=2.0,
      repeat=3)
def chain_worst():
    return op.estimator_study(delta=0.55, horizon=10, episodes=200, runs=200, seed=0)


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
case(f"worst controls (empty caches): {SLUG}", group="pages", budget=2.0, repeat=3)(
    _cold_page(WORST))
page_rerun(SLUG)
