"""Every algorithm page's "Interview questions on this page" panel, drawn by the chrome."""

import pytest

from rlviz import interview
from rlviz.ui import catalog
from rlviz.ui.questions import LABEL
from tests.conftest import PAGES, ROOT, assert_healthy, open_panel, panel_labels, run_page

WRITTEN = [p for p in catalog.PAGES if p.exists]
QUICK = {"mcts", "c51"}


def check_panel(slug: str) -> None:
    at = run_page(PAGES / f"{slug}.py", timeout=300)
    assert_healthy(at)
    assert LABEL in panel_labels(at)
    before = len(at.markdown)
    open_panel(at, slug, "questions")  # open it: its contents are drawn then
    at.run()
    assert_healthy(at)
    assert len(at.markdown) > before
    text = " ".join(m.value for m in at.markdown)
    for q in interview.for_page(slug):
        assert q.question in text
        assert all(link.url in text for link in q.links)
    # drawn once (not by the page too)
    assert sum(m.value.endswith(f"**{LABEL}**") for m in at.markdown) == 1


@pytest.mark.parametrize("slug", sorted(QUICK))
def test_the_panel_lists_the_page_questions_with_their_links(slug):
    check_panel(slug)


@pytest.mark.slow
@pytest.mark.parametrize("info", [p for p in WRITTEN if p.slug not in QUICK],
                         ids=lambda p: p.slug)
def test_every_page_has_the_panel(info):
    check_panel(info.slug)


def test_home_and_the_drill_have_no_panel():
    for path in (ROOT / "app.py", ROOT / "pages" / "drill.py"):  # home through app.py (its cards)
        at = run_page(path)
        assert_healthy(at)
        assert LABEL not in [e.label for e in at.expander]
