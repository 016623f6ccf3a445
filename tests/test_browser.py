"""The real app in headless Chromium: home, navigation, a slider that redraws a chart."""

import pytest

from rlviz.ui import catalog
from tests.conftest import ARTIFACTS, settle

pytestmark = pytest.mark.browser
WRITTEN = [p for p in catalog.PAGES if p.exists]


def shoot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_home_page_loads(server, browser_page):
    page = browser_page
    page.goto(server)
    settle(page)
    assert page.locator("h1").first.inner_text().strip() == "rlviz"
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, "home")
    if WRITTEN:  # with a single page there is no navigation to show
        nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
        for info in WRITTEN:
            assert info.title in nav


@pytest.mark.parametrize("info", WRITTEN, ids=lambda p: p.slug)
def test_navigate_move_a_slider_and_redraw(server, browser_page, info):
    page = browser_page
    page.goto(server)
    settle(page)
    page.locator('[data-testid="stSidebarNav"]').get_by_text(info.title, exact=True).click()
    page.wait_for_url(f"**/{info.url_path}**")
    settle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('[data-testid="stPlotlyChart"]').count() >= 1

    # Listen for the next redraw of any chart, then nudge the first sidebar slider. A chart whose
    # figure changed may also be drawn into a new element: mark the old ones to tell them apart.
    page.evaluate("""() => {
        window.__redrawn = false;
        for (const gd of document.querySelectorAll('.js-plotly-plot')) {
            gd.__before = true;
            gd.on('plotly_afterplot', () => { window.__redrawn = true; });
        }
    }""")
    # Streamlit draws a slider as <input type="range">: its role is implicit, so ask by role.
    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider").first
    before = slider.input_value()
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(
        """() => window.__redrawn === true
            || Array.from(document.querySelectorAll('.js-plotly-plot'))
                .some(gd => !gd.__before && gd.querySelector('.main-svg'))""",
        timeout=60_000,
    )
    settle(page)
    after = page.locator('[data-testid="stSidebar"]').get_by_role("slider").first.input_value()
    assert after != before
    assert "?" in page.url  # the link now carries the changed value
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, f"page-{info.slug}")
