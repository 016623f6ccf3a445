"""Deep exploration page: the default view, the N sweep, the worst settings, the warm rerun.

The default view is everything the page computes and draws at its defaults: the four learners
on RiverSwim (20 runs x 100 episodes, planners re-planning every episode), the deep-sea sweep up
to N = 12 (10 runs per size, cap 150), the random-walker check and the figures.
"""

from benchmarks import case, page_rerun
from rlviz import exploration as ex
from rlviz.figures import exploration as figs
from tests.exploration_reference import simulate_loop

SETTINGS = dict(epsilon=0.1, alpha=0.5, beta=0.5, seed=0)
SWEEP_KINDS = (*ex.LEARNERS, "random")


def _sizes(largest):
    return [n for n in ex.DEEP_SEA_SIZES if n <= largest]


def _view(problem, runs, episodes, largest, cap, sweep_runs):
    res = ex.run_study(problem, ex.LEARNERS, runs=runs, episodes=episodes, **SETTINGS)
    sweep = ex.sweep_first_reach(_sizes(largest), SWEEP_KINDS, runs=sweep_runs, cap=cap,
                                 **SETTINGS)
    ex.random_walk_episodes(problem, 40_000, seed=0)
    figs.regret_figure(res)
    for kind in res.kinds:
        figs.visits_figure(res, kind)
    figs.first_reach_figure(sweep)
    return res, sweep


@case("default view: RiverSwim 4 x 20 x 100 + sweep N <= 12 + figures", group="exploration",
      budget=1.5, repeat=3)
def default_view():
    return _view(ex.riverswim(), 20, 100, 12, 150, 10)


@case("N sweep at defaults: N = 2..12, 5 learners x 10 runs, cap 150", group="exploration",
      budget=2.0, repeat=3)
def sweep_defaults():
    return ex.sweep_first_reach(_sizes(12), SWEEP_KINDS, runs=10, cap=150, **SETTINGS)


@case("N sweep at its largest: N = 2..16, 10 runs, cap 300", group="exploration", budget=2.0,
      repeat=3, note="a spinner in the sweep's section")
def sweep_worst():
    return ex.sweep_first_reach(_sizes(16), SWEEP_KINDS, runs=10, cap=300, **SETTINGS)


@case("worst view: deep sea N = 12, 20 runs x 200 episodes + the largest sweep",
      group="exploration", budget=2.0, repeat=3, note="spinners where each result is drawn")
def worst_view():
    return _view(ex.deep_sea(12), 20, 200, 16, 300, 10)


def _loop():
    return simulate_loop(ex.riverswim(), (*ex.LEARNERS, "optimal"), runs=1, episodes=50,
                         **SETTINGS)


@case("engine: RiverSwim, 5 lanes x 20 runs x 50 episodes vs one lane at a time",
      group="exploration", reference=_loop, reference_scale=20, min_ratio=5, repeat=3,
      note="the reference trains 1 of the 20 runs, step by step; its time is scaled by 20")
def engine():
    return ex.simulate([ex.riverswim()], (*ex.LEARNERS, "optimal"), runs=20, episodes=50,
                       **SETTINGS)


page_rerun("exploration")
