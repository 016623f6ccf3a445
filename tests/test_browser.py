"""The real app in headless Chromium: home, navigation, a slider that redraws a chart."""

import pytest

from rlviz.ui import catalog
from tests.conftest import ARTIFACTS, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]
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
    # The status widget does not show while a script runs, so settle() alone can pass before
    # a page's first run (which may import torch) has drawn anything: wait for its chart.
    page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=120_000)
    settle(page)
    assert page.locator('[data-testid="stException"]').count() == 0
    assert page.locator('[data-testid="stPlotlyChart"]').count() >= 1

    # Listen for the next redraw of any chart, then nudge the first sidebar slider. Streamlit
    # may replace a chart's element instead of redrawing it, so a new element counts too.
    page.evaluate("""() => {
        window.__redrawn = false;
        for (const gd of document.querySelectorAll('.js-plotly-plot')) {
            gd.__before = true;
            gd.on('plotly_afterplot', () => { window.__redrawn = true; });
        }
    }""")
    redrawn = """() => window.__redrawn === true || Array.from(
        document.querySelectorAll('.js-plotly-plot')).some(
            gd => !gd.__before && gd.querySelector('.main-svg'))"""
    # Streamlit's sliders are <input type="range">: their slider role is implicit.
    slider = page.locator('[data-testid="stSidebar"]').get_by_role("slider").first
    before = slider.input_value()
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_function(redrawn, timeout=60_000)
    settle(page)
    after = page.locator('[data-testid="stSidebar"]').get_by_role("slider").first.input_value()
    assert after != before
    assert "?" in page.url  # the link now carries the changed value
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, f"page-{info.slug}")


def _a_link_worth_sharing(info):
    """A link to ``info``'s page with its first slider moved off the default."""
    from rlviz import ui
    from rlviz.ui.chrome import DECLARED
    from tests.conftest import run_page

    run_page(info.file)
    for name, control in DECLARED[info.slug].items():
        if isinstance(control, ui.FloatSlider | ui.IntSlider):
            value = control.max if control.default != control.max else control.min
            return f"{name}={control.encode(value)}"
    raise AssertionError(f"{info.slug} has no slider")


@pytest.fixture
def fresh_server():
    from tests.conftest import free_port, start_server

    port = free_port()
    proc = start_server(port)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


@pytest.mark.skipif(not WRITTEN, reason="no page written yet")
def test_a_shared_link_opened_first_on_a_fresh_server(fresh_server, browser_page):
    """The first visitor of a new server arrives through a link: the page, its values and the
    app's own navigation must all be there (not Streamlit's automatic list of files, nor a
    "page not found" dialog)."""
    info = WRITTEN[0]
    assert info.url_path == info.slug  # Streamlit's automatic mode maps /<stem> to the file
    query = _a_link_worth_sharing(info)
    page = browser_page
    page.goto(f"{fresh_server}/{info.url_path}?{query}")
    page.get_by_role("heading", name=info.title, exact=True).wait_for(timeout=120_000)
    settle(page)
    nav = page.locator('[data-testid="stSidebarNav"]').inner_text()
    assert "Home" in nav and info.title in nav
    assert "app" not in nav.split() and info.slug not in nav.split()
    assert page.get_by_text("Page not found").count() == 0
    share = page.locator('[data-testid="stSidebar"] [data-testid="stCode"]').last.inner_text()
    assert query in share.replace("\n", "")
    assert page.locator('[data-testid="stException"]').count() == 0
