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
    # figure changed is drawn into a new element, so a chart element drawn since counts too.
    page.evaluate("""() => {
        window.__redrawn = false;
        for (const gd of document.querySelectorAll('.js-plotly-plot')) {
            gd.__before = true;
            gd.on('plotly_afterplot', () => { window.__redrawn = true; });
        }
    }""")
    redrawn = """() => window.__redrawn === true
        || Array.from(document.querySelectorAll('.js-plotly-plot'))
             .some(gd => !gd.__before && gd.querySelector('.main-svg'))"""
    # Streamlit draws a slider's thumb as an <input type="range"> (older versions: role=slider).
    sliders = ('[data-testid="stSidebar"] [role="slider"], '
               '[data-testid="stSidebar"] input[type="range"]')
    value = "el => el.getAttribute('aria-valuenow') ?? el.value"
    slider = page.locator(sliders).first
    before = slider.evaluate(value)
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(redrawn, timeout=60_000)
    settle(page)
    after = page.locator(sliders).first.evaluate(value)
    assert after != before
    assert "?" in page.url  # the link now carries the changed value
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, f"page-{info.slug}")
