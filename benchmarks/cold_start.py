"""Cold start: what the first visitor of a freshly started server waits for, in a real browser.

For the home page and for every written page of ``rlviz/ui/catalog.py``, this starts a new
rlviz server (``streamlit run app.py`` on loopback), waits until it answers its health check,
and opens that one path in headless Chromium (a new browser context each time: empty cache,
no cookies), as the first visitor would. It prints, per path:

- server start: from launching the process to its first healthy answer;
- first byte: from the browser's navigation to the first byte of the page;
- title: from the first byte to the page's own title on screen (target 0.5 s): the splash the
  server writes into the HTML (``rlviz.ui.splash``) or the live page's, whichever is first;
- live title: from the first byte to the live page's own title (drawn by its script run);
- loading: from the first byte to the first visible sign of work in progress (a spinner, a
  skeleton, the running indicator, a status box) or the finished view, whichever is first;
- drawn: from the navigation to the fully drawn default view (title, every chart drawn, no
  run in progress) beside its budget (home 3 s, any page 5 s);
- file names: whether Streamlit's automatic navigation of file names was ever on screen.

    python -m benchmarks.cold_start                 # every page once
    python -m benchmarks.cold_start --repeat 3      # best of three fresh servers per page
    python -m benchmarks.cold_start -k cql -k home  # some paths only

Each path needs its own fresh server, so a full run takes a minute or two; it is therefore not
part of ``python -m benchmarks``. Needs Debian's chromium and the playwright package.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import time
from dataclasses import dataclass

from benchmarks.load import ROOT, free_port, start_server, stop_server

HOME_BUDGET = 3.0
PAGE_BUDGET = 5.0
TITLE_TARGET = 0.5

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]

# Installed before any of the app's code runs: every 10 ms it notes, in milliseconds since the
# navigation started, when the page's title first showed, when something first said "working",
# and when the view last became fully drawn; and it keeps every navigation label it saw.
PROBE = """
(() => {
  const seen = window.__coldStart = {title: null, liveTitle: null, loading: null, drawnAt: null,
                                     drawn: false, navLabels: []};
  const labels = new Set();
  const drawn = () => {
    const h1 = document.querySelector('[data-testid="stMain"] h1');
    if (!h1 || h1.innerText.trim() !== window.__expectedTitle) return false;
    if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
    const app = document.querySelector('[data-testid="stApp"]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (document.querySelector('[data-testid="stSkeleton"], [data-testid="stSpinner"]'))
      return false;
    return Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'))
      .every(c => c.querySelector('.main-svg'));
  };
  const tick = () => {
    const now = performance.now();
    const shows = (el) => el && el.innerText.trim() === window.__expectedTitle;
    const h1 = document.querySelector('[data-testid="stMain"] h1');
    if (seen.liveTitle === null && shows(h1)) seen.liveTitle = now;
    if (seen.title === null && (shows(h1) || shows(document.querySelector('#rlviz-splash h1'))))
      seen.title = now;
    const busy = document.querySelector('[data-testid="stSpinner"], [data-testid="stSkeleton"], '
      + '[data-testid="stAppSkeleton"], [data-testid="stStatusWidget"], '
      + '[data-testid="stExpanderIconSpinner"], #rlviz-splash [role="status"]');
    const isDrawn = drawn();
    if (seen.loading === null && (busy || isDrawn)) seen.loading = now;
    if (isDrawn && !seen.drawn) seen.drawnAt = now;
    seen.drawn = isDrawn;
    for (const a of document.querySelectorAll('[data-testid="stSidebarNav"] a, '
        + '[data-testid="stTopNavLink"], [data-testid="stTopNavDropdownLink"]'))
      labels.add(a.innerText.trim().split('\\n').pop().trim());
    seen.navLabels = Array.from(labels);
  };
  setInterval(tick, 10);
})();
"""


@dataclass(frozen=True)
class Visit:
    """One first visit to a fresh server."""

    path: str
    server_start: float  # s, launch to healthy
    first_byte: float  # s, navigation to first byte
    title: float | None  # s, first byte to the page's title (the splash's or the live page's)
    live_title: float | None  # s, first byte to the live page's title
    loading: float | None  # s, first byte to the first sign of progress (or the drawn view)
    drawn: float | None  # s, navigation to the fully drawn view
    file_names: bool  # Streamlit's automatic file-name navigation was on screen
    error: str = ""


def _expected(slug: str) -> tuple[str, str]:
    """(url path, title) of a page of the catalog ("home" is the root)."""
    from rlviz.ui.catalog import page_info

    if slug == "home":
        return "", "rlviz"
    info = page_info(slug)
    return info.url_path, info.title


def visit(browser, slug: str, timeout: float = 120.0) -> Visit:
    """Start a fresh server, open ``slug`` in a new browser context, measure, stop the server."""
    from rlviz.ui.catalog import DRILL, HOME, LESSONS, available_pages

    path, title = _expected(slug)
    titles = {HOME.title, DRILL.title, LESSONS.title, *(p.title for p in available_pages())}
    port = free_port()
    t0 = time.perf_counter()
    proc = start_server(port)
    server_start = time.perf_counter() - t0
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.add_init_script(f"window.__expectedTitle = {title!r};" + PROBE)
        page.goto(f"http://127.0.0.1:{port}/{path}", wait_until="commit")
        deadline = time.monotonic() + timeout
        error = ""
        # Drawn, and still drawn 1.5 s later: a rerun may start right after a first settle.
        stable_since = None
        while time.monotonic() < deadline:
            state = page.evaluate("() => window.__coldStart")
            if state and state["drawn"]:
                stable_since = stable_since or time.monotonic()
                if time.monotonic() - stable_since >= 1.5:
                    break
            else:
                stable_since = None
            time.sleep(0.05)
        else:
            error = "not drawn within the timeout"
        state = page.evaluate("() => window.__coldStart")
        if page.locator('[data-testid="stException"]').count():
            error = error or "an exception box is on the page"
        nav = page.evaluate(
            "() => performance.getEntriesByType('navigation')[0].responseStart") / 1000
        ms = lambda key: None if state[key] is None else state[key] / 1000  # noqa: E731
        file_names = any(label and label not in titles for label in state["navLabels"])
        return Visit(
            path=f"/{path}",
            server_start=server_start,
            first_byte=nav,
            title=None if ms("title") is None else ms("title") - nav,
            live_title=None if ms("liveTitle") is None else ms("liveTitle") - nav,
            loading=None if ms("loading") is None else ms("loading") - nav,
            drawn=None if error else ms("drawnAt"),
            file_names=file_names,
            error=error,
        )
    finally:
        context.close()
        stop_server(proc)


def _best(visits: list[Visit]) -> Visit:
    done = [v for v in visits if v.drawn is not None]
    return min(done, key=lambda v: v.drawn) if done else visits[-1]


def _s(x: float | None) -> str:
    return "—" if x is None else f"{x:.2f} s"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("-k", dest="patterns", action="append", default=[],
                    help="only paths whose slug contains this (repeatable)")
    ap.add_argument("--repeat", type=int, default=1,
                    help="fresh servers per path; the best is shown (default 1)")
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    from playwright.sync_api import sync_playwright

    from rlviz.ui.catalog import available_pages

    slugs = ["home", *(p.slug for p in available_pages())]
    if args.patterns:
        slugs = [s for s in slugs if any(k in s for k in args.patterns)]
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(chromium):
        print("chromium is not installed (apt-get install -y chromium)", file=sys.stderr)
        return 2
    load = os.getloadavg()[0]
    print(f"rlviz cold start · Python {platform.python_version()} · {os.cpu_count()} CPUs · "
          f"load {load:.1f} · {len(slugs)} paths · best of {args.repeat} fresh server(s)\n")
    header = (f"{'path':<22} {'server start':>12} {'first byte':>10} {'title':>8} "
              f"{'live title':>10} {'loading':>8} {'drawn':>8} {'budget':>7} {'':>4} "
              f"{'file names':>10}")
    print(header)
    print("-" * len(header))
    over = 0
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            for slug in slugs:
                v = _best([visit(browser, slug) for _ in range(max(args.repeat, 1))])
                budget = HOME_BUDGET if slug == "home" else PAGE_BUDGET
                ok = (v.drawn is not None and v.drawn <= budget and not v.file_names
                      and v.title is not None and v.title <= TITLE_TARGET)
                over += not ok
                print(f"{v.path:<22} {_s(v.server_start):>12} {_s(v.first_byte):>10} "
                      f"{_s(v.title):>8} {_s(v.live_title):>10} {_s(v.loading):>8} "
                      f"{_s(v.drawn):>8} "
                      f"{budget:>5.0f} s {'ok' if ok else 'OVER':>4} "
                      f"{'seen' if v.file_names else 'never':>10}"
                      + (f"  ({v.error})" if v.error else ""), flush=True)
        finally:
            browser.close()
    print(f"\nBudgets: drawn ≤ {HOME_BUDGET:.0f} s (home), ≤ {PAGE_BUDGET:.0f} s (pages); title "
          f"≤ {TITLE_TARGET} s after the first byte; file-name navigation never on screen.")
    print(f"{len(slugs) - over} of {len(slugs)} paths within budget.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
