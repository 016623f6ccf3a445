"""Every page at its most expensive: each count that scales its work at its maximum at once.

Counts are the controls declared with ``scales_work=True``.

Widget fuzzing keeps those counts at or below their defaults (``tests.fuzz.cheap``), so the
extremes are tried here by name. A control's range is what the page will do, so the page may
not refuse the combination either: no error message, no crash, no broken number. How long
these take is measured by the benchmarks, never here.
"""

import pytest

from rlviz.ui import catalog
from rlviz.ui.chrome import DECLARED
from tests.conftest import run_page
from tests.fuzz import check_run

pytestmark = pytest.mark.slow
WRITTEN = [p for p in catalog.PAGES if p.exists]


def _largest(control):
    if hasattr(control, "options"):  # an option such as "auto" is not a count
        return max(o for o in control.options if isinstance(o, int | float))
    return control.max


@pytest.mark.parametrize("info", WRITTEN, ids=lambda p: p.slug)
def test_every_count_at_its_maximum(info):
    at = run_page(info.file)
    check_run(at)
    counts = {n: c for n, c in DECLARED[info.slug].items() if c.scales_work}
    if not counts:
        pytest.skip(f"{info.slug} has no control that scales its work")
    for name, control in counts.items():
        at.session_state[f"{info.slug}.{name}"] = _largest(control)
    at.run(timeout=300)
    check_run(at)
    assert not at.error, [e.value for e in at.error]
