""""The code that ran" is code that ran: every object a page's code panel shows is entered by
the computation that drew its default view."""

import pytest

from rlviz.ui import catalog
from tests.code_ran import unrun_shown_code

WRITTEN = [p for p in catalog.PAGES if p.exists]


@pytest.mark.slow  # every page at its defaults: seconds each
@pytest.mark.parametrize("info", WRITTEN, ids=lambda p: p.slug)
def test_every_shown_function_ran(info):
    assert unrun_shown_code(info.file, info.slug) == []


def test_a_compiled_loop_counts_as_run_only_when_called():
    from rlviz import policy_gradient as pg
    from tests.code_ran import _note_kernel_calls

    called = set()
    restore = _note_kernel_calls(called)
    try:
        pg.train([pg.Method("reinforce", 2.0**-13)], runs=2, episodes=3, p0=0.5, seed=0)
    finally:
        restore()
    assert pg.reinforce_run.py_func.__code__ in called
    assert pg.actor_critic_run.py_func.__code__ not in called
    assert type(pg.reinforce_run).__name__ == "CPUDispatcher"  # put back


@pytest.mark.slow
def test_the_bandit_panel_shows_only_what_a_bernoulli_race_ran():
    """On Bernoulli arms Thompson sampling is the Beta agent, with its own sampler and loops."""
    info = next(p for p in WRITTEN if p.slug == "bandits")
    query = {"testbed": "bernoulli", "racers": "thompson,ucb", "runs": "200", "steps": "200"}
    assert unrun_shown_code(info.file, info.slug, query=query) == []
