"""n-step TD and TD(λ): the book's grids against plain loops, the page's first view, its worst
combinations of controls and its warm rerun.

The plain loops are the whiteboard versions (``rlviz.interview.whiteboard.multistep_td``): one
run, one setting, one step at a time. Each plays 1 of the 100 runs (x100 in the ratio).
"""

from __future__ import annotations

from benchmarks import ROOT, case, page_rerun
from rlviz import prediction as pr
from rlviz.interview.whiteboard import multistep_td as wb

SLUG = "multistep_td"
RUNS = pr.sample_runs(19, runs=100, episodes=10, seed=0)
ONE = RUNS.head(1)


def _loop(board, params, alphas, *, integer=False):
    """Every (setting, α) on run 1's ten episodes with a whiteboard function."""

    def run():
        out = []
        for param in params:
            for alpha in alphas:
                v = pr._start_values(ONE.walk, ())
                for e in range(ONE.n_episodes):
                    ep = ONE.episode(0, e)
                    states = list(ONE.states[0, ep]) + [int(ONE.next_states[0, ep.stop - 1])]
                    board(v, states, list(ONE.rewards[0, ep]), int(param) if integer else param,
                          alpha)
                out.append(v)
        return out

    return run


NOTE = "the reference plays 1 of the 100 runs, every setting (x100)"


@case("Figure 7.2: 10 n x 11 α x 100 runs x 10 episodes", group=SLUG, budget=1.0,
      reference=_loop(wb.n_step_td, pr.NS, pr.ALPHAS_7_2, integer=True), reference_scale=100,
      min_ratio=20, repeat=5, note=NOTE)
def figure_7_2():
    return pr.n_step_td(RUNS, ns=pr.NS, alphas=pr.ALPHAS_7_2)


@case("page's n-step sweep: 10 n x 15 α x 100 runs x 10 episodes", group=SLUG, budget=1.0,
      repeat=3)
def n_step_page():
    return pr.n_step_td(RUNS, ns=pr.NS, alphas=pr.ALPHAS).summary()


@case("Figure 12.3: offline λ-return, 8 λ x 15 α x 100 runs x 10 episodes", group=SLUG,
      budget=1.5, reference=_loop(wb.offline_lambda_return, pr.LAMBDAS, pr.ALPHAS),
      reference_scale=100, min_ratio=20, repeat=3, note=NOTE)
def figure_12_3():
    return pr.offline_lambda_return(RUNS, lams=pr.LAMBDAS, alphas=pr.ALPHAS)


@case("Figure 12.6: TD(λ), 8 λ x 15 α x 100 runs x 10 episodes", group=SLUG, budget=1.5,
      reference=_loop(wb.td_lambda, pr.LAMBDAS, pr.ALPHAS), reference_scale=100,
      min_ratio=20, repeat=3, note=NOTE)
def figure_12_6():
    return pr.td_lambda(RUNS, lams=pr.LAMBDAS, alphas=pr.ALPHAS)


@case("Figure 12.8: true online TD(λ), 8 λ x 15 α x 100 runs x 10 episodes", group=SLUG,
      budget=1.5, reference=_loop(wb.true_online_td_lambda, pr.LAMBDAS, pr.ALPHAS),
      reference_scale=100, min_ratio=20, repeat=3, note=NOTE)
def figure_12_8():
    return pr.true_online_td_lambda(RUNS, lams=pr.LAMBDAS, alphas=pr.ALPHAS)


@case("Example 6.2: 7 α x 100 runs x 100 episodes (5 states)", group=SLUG, budget=0.5)
def example_6_2():
    return pr.td_vs_mc(runs=100, seed=0)


@case("the identities (5 runs x 3 episodes, every λ and α; 150 steps forward view)",
      group=SLUG, budget=0.5)
def identities():
    return pr.identities(RUNS, lam=0.8, alpha=0.4)


def _cold_page(query: dict[str, str]):
    """The page's whole script from empty caches (compute and figures), as a first visit."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    state: dict = {}

    def run() -> None:
        if "at" not in state:
            at = AppTest.from_file(str(ROOT / "pages" / f"{SLUG}.py"), default_timeout=300)
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
# The page's heaviest views: the λ sweeps train at most 100 runs x 10 episodes (runs x episodes,
# pages/multistep_td.py: LAMBDA_WORK), so 100 x 10 and 50 x 20; n-step TD goes to 100 x 20.
_WORST = [(m, r, e) for m in ("offline_lambda_return", "td_lambda", "true_online")
          for r, e in ((100, 10), (50, 20))] + [("n_step", 100, 20)]
for _method, _runs, _episodes in _WORST:
    case(f"worst controls (empty caches): {SLUG}, {_method}, {_runs} runs x {_episodes} episodes",
         group="pages", budget=2.0, repeat=3)(
        _cold_page({"method": _method, "runs": str(_runs), "episodes": str(_episodes),
                    "lam": "0.975"}))
page_rerun(SLUG)
