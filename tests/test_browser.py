"""The real app in headless Chromium: navigation, links, settings, layout, offline, phone."""

import re
from urllib.parse import parse_qsl, urlparse

import pytest

from rlviz.ui import catalog
from tests.conftest import ARTIFACTS, local_only, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]
WRITTEN = [p for p in catalog.PAGES if p.exists]
TITLES = {catalog.HOME.title, catalog.DRILL.title, catalog.LESSONS.title,
          *(p.title for p in WRITTEN)}

# Installed before the app's own code: every navigation label that is ever on screen, from the
# first paint on (Streamlit's automatic navigation would list file names such as "app").
NAV_WATCH = """
window.__navSeen = new Set();
setInterval(() => {
  for (const a of document.querySelectorAll('[data-testid="stSidebarNav"] a, '
      + '[data-testid="stTopNavLink"], [data-testid="stTopNavDropdownLink"]'))
    window.__navSeen.add(a.innerText.trim().split('\\n').pop().trim());
}, 10);
"""


# Every drawn chart's problems, as sentences: a text (tick label, axis or chart title, legend
# entry, note) reaching past the chart's edge, an axis title running into its tick labels, or
# the chart's title into its legend.
# Charts size their margins themselves (no automargin, see rlviz.figures.theme), so this is
# what tells when a label outgrew them. With ``panels`` false, a chart of panels side by side
# is passed over (on a phone each panel is a few dozen pixels wide).
CHART_PROBLEMS = """(panels) => {
  const problems = [];
  document.querySelectorAll('[data-testid="stPlotlyChart"] .js-plotly-plot').forEach((gd, n) => {
    const svg = gd.querySelector('.main-svg'), fl = gd._fullLayout;
    if (!svg || !fl || !gd.offsetParent || gd.closest('details:not([open])')) return;
    const axes = Object.keys(fl).filter(k => /^[xy]axis\\d*$/.test(k)).map(k => fl[k]);
    const xs = axes.filter(a => a._id[0] === 'x' && a.visible);
    const sideBySide = xs.some(a => xs.some(b => a.domain[1] <= b.domain[0] + 1e-6));
    if (!panels && sideBySide) return;
    const named = (a) => a && a.title && a.title.text && !/^Click to enter/.test(a.title.text)
      ? a.title.text : '';
    const name = `chart ${n + 1} (${[fl.xaxis, fl.yaxis].map(named).join(' / ')})`;
    const box = svg.getBoundingClientRect();
    for (const t of gd.querySelectorAll('[class$="tick"] text, .g-gtitle text, '
        + '[class^="g-"][class$="title"] text, .legendtext, .annotation-text, .cbaxis text')) {
      const r = t.getBoundingClientRect();
      if (!r.width || !t.textContent.trim()) continue;
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1
          || r.bottom > box.bottom + 1)
        problems.push(`${name}: "${t.textContent}" is cut off`);
    }
    const overlap = (a, b) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1
      && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1;
    const entries = Array.from(gd.querySelectorAll('.legend .traces'))
      .map(e => e.getBoundingClientRect());
    const titled = Array.from(gd.querySelectorAll('[class*="gtitle"] text'))
      .filter(t => t.textContent.trim()).map(t => t.getBoundingClientRect());
    if (titled.some(a => entries.some(b => overlap(a, b))))
      problems.push(`${name}: its title runs into its legend`);
    for (const ax of axes) {
      const title = gd.querySelector(`.g-${ax._id}title text`);
      if (!ax.visible || !title || !title.textContent.trim()) continue;
      const a = title.getBoundingClientRect();
      const hit = Array.from(gd.querySelectorAll(`.${ax._id}tick text`)).find(
        t => overlap(a, t.getBoundingClientRect()));
      if (hit) problems.push(`${name}: the ${ax._id} title runs into "${hit.textContent}"`);
    }
  });
  return problems;
}"""


def shoot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def go_to(page, info) -> None:
    """Open a page through the navigation bar: its section's menu, or the overflow menu."""
    nav = page.locator('[data-testid="stTopNav"]')
    if info.slug == catalog.HOME.slug:
        nav.locator('[data-testid="stTopNavLink"]').filter(has_text=info.title).first.click()
    else:
        sections = nav.locator('[data-testid="stTopNavSection"]')
        own = sections.filter(has_text=re.compile(rf"^\s*{re.escape(info.section)}\s*$"))
        # Sections that do not fit stay in the page, inert, and list under "N more".
        if own.count() and own.first.evaluate("e => !e.closest('[inert]')"):
            own.first.click()
        else:
            sections.filter(has_text=re.compile(r"^\s*\d+ more\s*$")).first.click()
        page.locator('[data-testid="stTopNavDropdownLink"]').filter(
            has_text=info.title).first.click()
    home = info.slug == catalog.HOME.slug
    page.wait_for_url(re.compile(rf"/{'' if home else re.escape(info.url_path)}(\?.*)?$"))
    page.get_by_role("heading", name="rlviz" if home else info.title,
                     exact=True).wait_for(timeout=120_000)
    settle(page, timeout_ms=120_000)


def first_slider(page):
    # Streamlit's sliders are <input type="range">: their slider role is implicit.
    return page.locator('[data-testid="stSidebar"]').get_by_role("slider").first


def query_of(url: str) -> dict[str, str]:
    return dict(parse_qsl(urlparse(url).query))


def test_home_page_loads(server, browser_page):
    page = browser_page
    page.goto(server)
    settle(page)
    assert page.locator('[data-testid="stMain"] h1').first.inner_text().strip() == "rlviz"
    assert page.locator('[data-testid="stException"]').count() == 0
    shoot(page, "home")
    nav = page.locator('[data-testid="stTopNav"]').text_content()  # overflowed too
    assert "Home" in nav
    for section in {p.section for p in WRITTEN}:
        assert section in nav
    # Each card's image is a link to its page, like its title.
    hrefs = [a.get_attribute("href") for a in page.locator('[data-testid="stImageLink"]').all()]
    assert [h.rstrip("/").rsplit("/", 1)[-1] for h in hrefs] == [p.url_path for p in WRITTEN]


@pytest.mark.parametrize("info", WRITTEN, ids=lambda p: p.slug)
def test_navigate_move_a_slider_and_redraw(server, browser, info):
    """On a projector's 1280×720, from home to the page: the title sits under the navigation
    bar, the first control and the share box show without scrolling; a slider moved redraws
    its charts and changes its link; then the equations render. No request leaves the
    machine."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    foreign = local_only(context)
    try:
        page = context.new_page()
        page.goto(server)
        settle(page)
        go_to(page, info)
        # The status widget does not show while a script runs, so settle() alone can pass
        # before a page's first run has drawn anything: wait for its chart.
        page.wait_for_selector('[data-testid="stPlotlyChart"] .main-svg', timeout=120_000)
        settle(page)
        assert page.locator('[data-testid="stException"]').count() == 0
        assert page.locator('[data-testid="stPlotlyChart"]').count() >= 1
        in_view_at_1280x720(page)
        assert not page.evaluate(CHART_PROBLEMS, True)

        # Listen for the next redraw of any chart, then nudge the first sidebar slider.
        # Streamlit may replace a chart's element instead of redrawing it, so a new element
        # counts too.
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
        slider = first_slider(page)
        before = slider.input_value()
        slider.focus()
        page.keyboard.press("ArrowRight")
        page.wait_for_function(redrawn, timeout=60_000)
        settle(page)
        assert first_slider(page).input_value() != before
        assert "?" in page.url  # the link now carries the changed value
        assert page.locator('[data-testid="stException"]').count() == 0
        shoot(page, f"page-{info.slug}")
        equations_render(page)
        on_a_phone_the_charts_fit(page)
        shoot(page, f"phone-{info.slug}")
        assert not foreign, f"requests that left the machine: {foreign}"
    finally:
        context.close()


def in_view_at_1280x720(page) -> None:
    """The title right under the navigation bar; the first control and the share box in view
    without scrolling."""
    title = page.locator('[data-testid="stMain"] h1').first.bounding_box()
    assert title["y"] < 100
    control = page.locator('[data-testid="stSidebarUserContent"] [data-testid="stWidgetLabel"]')
    box = control.first.bounding_box()
    assert box is not None and box["y"] + box["height"] <= 720
    share = page.get_by_role("button", name="Share this view").bounding_box()
    assert share is not None and share["y"] + share["height"] <= 720
    assert share["x"] + share["width"] <= 1280


def on_a_phone_the_charts_fit(page) -> None:
    """Narrowed to a phone's width, every chart redraws to it and keeps its texts inside it,
    clear of each other (a chart of panels side by side is passed over)."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_function("""() => Array.from(document.querySelectorAll(
        '[data-testid="stPlotlyChart"] .js-plotly-plot')).every(gd => !gd.offsetParent
        || gd.closest('details:not([open])') || (gd._fullLayout && gd._fullLayout.width <= 390))
        """, timeout=60_000)
    settle(page)
    assert not page.evaluate(CHART_PROBLEMS, False)


def equations_render(page) -> None:
    """KaTeX marks what it cannot parse with .katex-error, and draws an unknown command (two
    string pieces joined without a space, say) in its error colour."""
    page.get_by_role("button", name="The equations").click()
    page.wait_for_selector('[data-testid="stMain"] .katex', timeout=60_000)
    settle(page)
    assert page.locator(".katex").count() >= 1
    assert page.locator(".katex-error").count() == 0
    unknown = page.locator('.katex mstyle[mathcolor="#cc0000"]').all_text_contents()
    assert not unknown, f"KaTeX could not read: {unknown}"


@pytest.mark.skipif(len(WRITTEN) < 2, reason="needs two pages")
def test_settings_survive_leaving_the_page_and_coming_back(server, browser_page):
    info, other = WRITTEN[-1], WRITTEN[0]
    page = browser_page
    page.goto(f"{server}/{info.url_path}")
    settle(page, timeout_ms=120_000)
    slider = first_slider(page)
    slider.focus()
    page.keyboard.press("ArrowRight")
    page.wait_for_url(re.compile(r"\?"))
    settle(page)
    value, query = first_slider(page).input_value(), query_of(page.url)
    assert query

    go_to(page, other)
    assert not query_of(page.url).keys() & query.keys()
    go_to(page, info)
    assert first_slider(page).input_value() == value
    assert query_of(page.url) == query  # the URL shows the kept values again
    go_to(page, catalog.HOME)
    go_to(page, info)
    assert first_slider(page).input_value() == value


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
@pytest.mark.parametrize("info", [WRITTEN[0], WRITTEN[-1]] if WRITTEN else [],
                         ids=lambda p: p.slug)
def test_a_deep_link_opened_first_on_a_fresh_server(fresh_server, browser, info):
    """The first visitor of a new server arrives through a shared link: from the first paint
    on, only the app's own navigation shows (never Streamlit's list of file names), and the
    page opens with the link's values. The first paint is the splash with the page's title,
    gone once the live page has drawn its own."""
    query = _a_link_worth_sharing(info)
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.add_init_script(NAV_WATCH)
        page.add_init_script("document.addEventListener('DOMContentLoaded', () => { "
                             "const h = document.querySelector('#rlviz-splash h1'); "
                             "window.__splash = h ? h.innerText : null; });")
        page.goto(f"{fresh_server}/{info.url_path}?{query}")
        page.get_by_role("heading", name=info.title, exact=True).wait_for(timeout=120_000)
        settle(page, timeout_ms=120_000)
        seen = set(page.evaluate("() => Array.from(window.__navSeen)"))
        assert page.evaluate("() => window.__splash") == info.title
        page.locator("#rlviz-splash").wait_for(state="detached", timeout=5_000)
        assert "Home" in seen
        assert seen <= TITLES, f"navigation labels that are not page titles: {seen - TITLES}"
        assert page.get_by_text("Page not found").count() == 0
        assert query_of(page.url) == dict([query.split("=")])
        page.get_by_role("button", name="Share this view").click()
        share = page.locator('[data-testid="stPopoverBody"] [data-testid="stCode"]').inner_text()
        assert query in share.replace("\n", "")
        assert page.locator('[data-testid="stException"]').count() == 0
    finally:
        context.close()


def test_no_request_leaves_the_machine(server, browser):
    """Every page, its icon and its fonts come from the app itself: it works in a classroom
    without internet. The algorithm pages are checked by every test that opens them (their
    contexts abort and record foreign requests); here the pages beside home, and the icon."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    foreign = local_only(context)
    try:
        page = context.new_page()
        for info in [catalog.HOME, catalog.DRILL, catalog.LESSONS]:
            page.goto(f"{server}/{'' if info.slug == 'home' else info.url_path}")
            settle(page, timeout_ms=120_000)
            icon = page.locator('link[rel~="icon"]').first.get_attribute("href")
            assert urlparse(page.url).hostname == (urlparse(icon).hostname or "127.0.0.1")
        assert not foreign, foreign
    finally:
        context.close()


def test_the_guard_against_foreign_requests_catches_one(server, browser):
    context = browser.new_context()
    foreign = local_only(context)
    try:
        page = context.new_page()
        page.goto(f"{server}/_stcore/health")
        page.evaluate("() => fetch('http://example.com/font.woff2').catch(() => null)")
        assert foreign == ["http://example.com/font.woff2"]
    finally:
        context.close()


def test_on_a_phone_charts_have_no_floating_toolbar(server, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True,
                                  has_touch=True)
    try:
        page = context.new_page()
        page.goto(f"{server}/{WRITTEN[0].url_path}")
        settle(page, timeout_ms=120_000)
        chart = page.locator('[data-testid="stPlotlyChart"]').first
        chart.scroll_into_view_if_needed()
        chart.tap()
        page.wait_for_timeout(300)
        assert page.locator(".modebar-container .modebar").count() == 0
        shoot(page, "phone")
    finally:
        context.close()


@pytest.fixture
def demo_server():
    from tests.conftest import DEMO, free_port, start_server

    port = free_port()
    proc = start_server(port, script=DEMO)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=10)


def test_progress_shows_under_the_control_that_started_it(demo_server, browser_page):
    page = browser_page
    page.goto(demo_server)
    settle(page)
    toggle = page.locator('[data-testid="stSidebar"]').get_by_text("Take two seconds")
    toggle.click()
    spinner = page.locator('[data-testid="stSidebar"] [data-testid="stSpinner"]')
    spinner.wait_for(timeout=30_000)
    assert "Computing" in spinner.inner_text()
    below = spinner.bounding_box()["y"] - toggle.bounding_box()["y"]
    assert 0 < below < 120  # right under the toggle, where the user is looking
    # ...and the computation's own spinner where its result will show
    main = page.locator('[data-testid="stMain"] [data-testid="stSpinner"]')
    assert "Taking two seconds" in main.inner_text()
    settle(page)
    assert spinner.count() == 0
