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
