"""Hypothesis strategies derived from a page's declared controls, and the fuzzing checks."""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import strategies as st

from rlviz import ui
from rlviz.ui.chrome import FRIENDLY_ERROR
from tests.conftest import BAD_NUMBER, shown_text, without_code

JUNK = st.one_of(
    st.sampled_from(["", "nan", "inf", "-inf", "1e309", "-1", "0", "999999999999", "1.5",
                     "true", "[]", "{}", "%00", "../../etc/passwd", "<script>", "'; DROP",
                     "𝔁", "a,b,,c", "=;=", "x" * 5000]),
    st.text(max_size=40),
)


def _on_grid(lo: float, hi: float, step: float, value: float):
    n = int(math.floor((hi - lo) / step + 1e-9))
    extremes = st.sampled_from([lo, hi, value])
    grid = st.integers(0, max(n, 0)).map(lambda k: min(hi, lo + k * step))
    return st.one_of(extremes, grid)


def cheap(control: ui.Control) -> ui.Control:
    """The control with its range cut at its default, when it scales the page's work (its
    ``scales_work`` flag).

    Widget fuzzing looks for crashes, bugs and broken numbers across combinations of settings;
    none of those needs a page's largest workloads, which cost seconds per run. Those extremes
    are tested by name (``tests/test_worst_cases.py``) and timed in the benchmarks.
    """
    if not control.scales_work:
        return control
    if isinstance(control, ui.SelectSlider):
        # The slider's options run from cheap to dear ("auto" may come first): cut by position.
        options = list(control.options)
        return replace(control, options=options[: options.index(control.default) + 1])
    return replace(control, max=control.default)


def cheapest(control: ui.Control):
    """Where widget fuzzing starts a control: its default, or its cheapest value if it is a
    count that scales the page's work (an integer slider's minimum, a select slider's first
    option other than "auto").

    Each example sets a few controls and leaves the rest where they start; starting the counts
    low keeps every example cheap without narrowing what the drawn controls explore.
    """
    if not control.scales_work:
        return control.default
    if isinstance(control, ui.IntSlider):
        return control.min
    if isinstance(control, ui.SelectSlider):
        return next(o for o in control.options if o != "auto")
    return control.default


def strategy(control: ui.Control):
    """Valid values of one control, extremes weighted in."""
    if isinstance(control, ui.Seed):
        return st.one_of(st.sampled_from([0, 1, int(control.max)]),
                         st.integers(0, int(control.max)))
    if isinstance(control, ui.FloatSlider):
        return _on_grid(control.min, control.max, control.step, control.value).map(float)
    if isinstance(control, ui.IntSlider):
        return _on_grid(control.min, control.max, control.step, control.value).map(int)
    if isinstance(control, ui.Number):
        if control.integer:
            return st.one_of(st.sampled_from([int(control.min), int(control.max)]),
                             st.integers(int(control.min), int(control.max)))
        return st.one_of(st.sampled_from([control.min, control.max, control.value]),
                         st.floats(control.min, control.max, allow_nan=False))
    if isinstance(control, ui.Choice | ui.SelectSlider):
        return st.sampled_from(list(control.options))
    if isinstance(control, ui.MultiChoice):
        return st.lists(st.sampled_from(list(control.options)), unique=True,
                        max_size=control.max_selections or len(control.options))
    if isinstance(control, ui.Toggle):
        return st.booleans()
    if isinstance(control, ui.Table):
        return _table(control)
    if isinstance(control, ui.Text):
        default = control.value
        alphabet = st.sampled_from(sorted(set(default + "\n .#0123456789-,x")))
        mutated = st.lists(alphabet, max_size=min(control.max_chars, 400)).map("".join)
        return st.one_of(st.just(default), mutated, st.text(max_size=60))
    raise TypeError(f"no strategy for {type(control).__name__}")


def _table(control: ui.Table):
    cell = st.one_of(st.floats(-1e3, 1e3), st.sampled_from([0.0, 1.0, -1.0, math.nan, 1e12]))

    def build(n: int):
        cols = {
            c.name: st.lists(st.booleans() if c.kind == "bool" else cell, min_size=n, max_size=n)
            for c in control.columns
        }
        return st.fixed_dictionaries(cols)

    return st.integers(0, min(control.max_rows, 40)).flatmap(build)


def check_run(at) -> None:
    """A fuzzed run may show clear messages, but never a crash, a bug, or a broken number."""
    assert not at.exception, [e.message for e in at.exception]
    bugs = [e.value for e in at.error if FRIENDLY_ERROR[:30] in e.value]
    assert not bugs, "an unexpected exception reached the error boundary (see the log)"
    bad = [t for t in shown_text(at) if BAD_NUMBER.search(without_code(t))]
    assert not bad, bad[:3]
