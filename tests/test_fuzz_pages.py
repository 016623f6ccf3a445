"""Fuzzing every page: random control values (extremes included) and malformed links.

For each page, hypothesis draws values from the page's own declared controls (their domains are
the contract) and sets them the way a user would, one run after another in one session; then it
opens the page with malformed query strings. Counts that scale the work (runs, episodes, steps)
start each example at their cheapest and are drawn up to their defaults only (``tests.fuzz``):
the defaults are tested by ``test_page_*.py`` and the browser suite, the largest workloads by
name in ``tests/test_worst_cases.py``. Nothing may crash, reach the error boundary as an
unexpected exception, or show NaN/infinity. Examples are derandomised so CI is repeatable.
"""

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from rlviz.ui import catalog
from rlviz.ui.chrome import DECLARED
from tests.conftest import DEMO, open_panels
from tests.fuzz import JUNK, cheap, cheapest, check_run, strategy

pytestmark = pytest.mark.slow
WRITTEN = [p for p in catalog.PAGES if p.exists]
WIDGET_EXAMPLES = int(os.environ.get("RLVIZ_FUZZ_WIDGETS", "30"))
LINK_EXAMPLES = int(os.environ.get("RLVIZ_FUZZ_LINKS", "12"))


def fuzz_settings(examples: int) -> settings:
    return settings(
        max_examples=examples, deadline=None, derandomize=True, database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


def fuzz_widgets(path, slug, examples, skip=(), query=None):
    at = AppTest.from_file(str(path), default_timeout=120)
    for key, value in (query or {}).items():  # a view other than the default, kept throughout
        at.query_params[key] = value
    at.run()
    check_run(at)
    open_panels(at, slug)  # fuzz the equations, code and export panels too
    check_run(at)
    controls = {n: c for n, c in DECLARED[slug].items() if n not in skip}

    @fuzz_settings(examples)
    @given(data=st.data())
    def one_set(data):
        names = data.draw(st.lists(st.sampled_from(sorted(controls)), min_size=1, max_size=4,
                                   unique=True))
        # Every example starts from the same place (the defaults, counts that scale the work
        # at their cheapest), so it can be replayed on its own.
        for name, control in controls.items():
            at.session_state[f"{slug}.{name}"] = cheapest(control)
        for name in names:
            at.session_state[f"{slug}.{name}"] = data.draw(strategy(cheap(controls[name])),
                                                           label=name)
        try:
            at.run()
        except ValueError:
            # AppTest reads every widget of the last run back before running, and fails when a
            # value set here is not among that widget's last options (a choice whose options
            # depend on another control). A browser cannot send that; a fresh tree can.
            fresh = AppTest.from_file(str(path), default_timeout=120)
            for key, value in (query or {}).items():
                fresh.query_params[key] = value
            for name in controls:
                key = f"{slug}.{name}"
                fresh.session_state[key] = at.session_state[key]
            fresh.run()
            check_run(fresh)
            return
        check_run(at)

    one_set()


def fuzz_links(path, slug, examples, skip=()):
    names = sorted(n for n in DECLARED[slug] if n not in skip)

    @fuzz_settings(examples)
    @given(query=st.dictionaries(st.sampled_from(names + ["zzz", ""]), JUNK, max_size=4))
    def one_link(query):
        at = AppTest.from_file(str(path), default_timeout=120)
        for key, value in query.items():
            at.query_params[key] = value
        at.run()
        check_run(at)

    one_link()


@pytest.mark.parametrize("info", WRITTEN, ids=lambda p: p.slug)
def test_fuzz_widget_values(info):
    fuzz_widgets(info.file, info.slug, WIDGET_EXAMPLES)


@pytest.mark.parametrize("info", WRITTEN, ids=lambda p: p.slug)
def test_fuzz_malformed_links(info):
    AppTest.from_file(str(info.file), default_timeout=120).run()  # declares the controls
    fuzz_links(info.file, info.slug, LINK_EXAMPLES)


@pytest.mark.parametrize("exp", ["blocking", "shortcut", "sweeping"])
def test_fuzz_each_dyna_experiment(exp):
    # The Dyna page declares each experiment's controls only when it is shown: fuzz them there.
    info = next(p for p in WRITTEN if p.slug == "dyna")
    fuzz_widgets(info.file, info.slug, WIDGET_EXAMPLES // 2, skip={"exp"}, query={"exp": exp})


def test_the_fuzzer_exercises_the_chrome_demo():
    fuzz_widgets(DEMO, "demo", 30, skip={"fail"})
    fuzz_links(DEMO, "demo", 20, skip={"fail"})


def test_the_fuzzer_catches_an_unexpected_exception():
    at = AppTest.from_file(str(DEMO), default_timeout=60)
    at.query_params["fail"] = "bug"
    at.run()
    with pytest.raises(AssertionError, match="unexpected exception"):
        check_run(at)
