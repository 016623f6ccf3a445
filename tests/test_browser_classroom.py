"""The classroom in headless Chromium: presentation mode at a projector's 1280×720, a lesson
played from its page, and nothing fetched from elsewhere on the way."""

import re
from urllib.parse import parse_qsl, urlparse

import pytest

from rlviz import lessons
from rlviz.ui import catalog
from tests.conftest import ARTIFACTS, local_only, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WRITTEN = [p for p in catalog.PAGES if p.exists]
# Pages with several figures, cheap to draw: presentation mode is shown on them.
PRESENTED = [p for p in WRITTEN if p.slug in {"gae", "ppo_clip", "deadly_triad"}] or WRITTEN[:1]
LESSON = next(
    (item for item in lessons.LESSONS
     if all(catalog.page_info(s.slug).exists for s in item.steps[:2])), None)


def shoot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def key_class(key: str) -> str:
    """The CSS class Streamlit gives the element of a widget key."""
    return "st-key-" + re.sub(r"[^a-zA-Z0-9_-]", "-", key)


def query_of(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlparse(url).query))


@pytest.fixture
def projector(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    foreign = local_only(context)
    page = context.new_page()
    page.foreign = foreign
    yield page
    context.close()


def _chart_boxes(page):
    return [c.bounding_box() for c in page.locator('[data-testid="stPlotlyChart"]').all()]


@pytest.mark.parametrize("info", PRESENTED, ids=lambda p: p.slug)
def test_presentation_mode_at_1280x720(server, projector, info):
    """Large type, the sidebar folded, one figure at a time that fits the screen, next and
    previous; nothing fetched from elsewhere."""
    page = projector
    page.goto(f"{server}/{info.url_path}?_present=1")
    settle(page, timeout_ms=120_000)
    assert page.locator('[data-testid="stException"]').count() == 0
    root = page.evaluate("() => parseFloat(getComputedStyle(document.documentElement).fontSize)")
    assert root >= 20, "large type"
    title = page.locator('[data-testid="stMain"] h1').first.bounding_box()
    assert title["x"] < 100, "the sidebar is folded: the page starts at the left edge"
    boxes = _chart_boxes(page)
    assert len(boxes) == 1, "one figure at a time"
    (box,) = boxes
    assert box["y"] >= 0 and box["y"] + box["height"] <= 720, box
    assert box["width"] >= 1000, "the figure spans the screen"
    counter = page.get_by_text("1 of ", exact=False).first.inner_text()
    total = int(counter.split(" of ")[1])
    shoot(page, f"present-{info.slug}-1")
    if total > 1:
        page.get_by_role("button", name="Next").click()
        page.wait_for_url(lambda url: query_of(url).get("_slide") == "2", timeout=60_000)
        settle(page, timeout_ms=120_000)
        assert page.get_by_text(f"2 of {total}").count() == 1
        assert len(_chart_boxes(page)) == 1
        shoot(page, f"present-{info.slug}-2")
        page.get_by_role("button", name="Previous").click()
        page.wait_for_url(lambda url: "_slide" not in query_of(url), timeout=60_000)
        settle(page, timeout_ms=120_000)
    page.get_by_role("button", name="Leave presentation").click()
    page.wait_for_url(lambda url: "_present" not in query_of(url), timeout=60_000)
    settle(page, timeout_ms=120_000)
    assert len(_chart_boxes(page)) == total
    assert not page.foreign, page.foreign


@pytest.mark.skipif(LESSON is None, reason="no ready lesson whose first pages are written")
def test_a_lesson_played_in_the_browser_stays_on_this_machine(server, projector):
    page = projector
    page.goto(f"{server}/{catalog.LESSONS.url_path}?lesson={LESSON.id}")
    settle(page, timeout_ms=120_000)
    assert page.get_by_text(LESSON.steps[0].prompt[:30]).count() >= 1
    shoot(page, "lesson-player")
    page.get_by_role("button", name="Open this view").click()
    first = LESSON.steps[0]
    page.wait_for_url(f"**/{first.slug}?**", timeout=60_000)
    settle(page, timeout_ms=120_000)
    assert query_of(page.url).items() <= first.params.items()
    assert page.get_by_text(f"Step 1 of {len(LESSON.steps)}").count() == 1
    shoot(page, "lesson-step-1")
    page.locator(f".{key_class(first.slug + '._lesson.next')} button").click()
    second = LESSON.steps[1]
    page.wait_for_url(lambda url: query_of(url).items() <= second.params.items()
                      and urlparse(url).path.endswith(second.slug), timeout=60_000)
    settle(page, timeout_ms=120_000)
    assert page.get_by_text(f"Step 2 of {len(LESSON.steps)}").count() == 1
    assert page.locator('[data-testid="stException"]').count() == 0
    page.locator(f".{key_class(second.slug + '._lesson.back')} button").click()
    page.wait_for_url(f"**/{catalog.LESSONS.url_path}?**", timeout=60_000)
    settle(page, timeout_ms=120_000)
    assert query_of(page.url)["step"] == "2"
    # the whole lesson as one link, opened in a new tab
    link = page.locator('[data-testid="stCode"]').filter(has_text="lesson=").first
    assert link.count() == 1
    assert not page.foreign, page.foreign
