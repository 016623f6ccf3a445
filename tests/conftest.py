"""Shared test helpers: run a page in AppTest and read what it shows."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
PAGES = ROOT / "pages"
DEMO = ROOT / "tests" / "apps" / "chrome_demo.py"

# Words that betray a number gone wrong in what a user reads.
BAD_NUMBER = re.compile(r"(?<![A-Za-z])(nan|NaN|-?inf|Infinity)(?![A-Za-z])")
TEXT_KINDS = (
    "title", "header", "subheader", "markdown", "caption", "text", "latex",
    "error", "warning", "info", "success", "exception",
)


def without_code(markdown: str) -> str:
    """Text outside inline code spans (which quote user input verbatim)."""
    return re.sub(r"`[^`]*`", "", markdown)


def plain(markdown: str) -> str:
    """Markdown source as a reader sees it: backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", markdown)


def run_page(path: Path | str, *, query: dict[str, str] | None = None,
             timeout: float = 120) -> AppTest:
    """Run a page script once, optionally with URL query parameters."""
    at = AppTest.from_file(str(path), default_timeout=timeout)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    return at.run()


def open_panels(at: AppTest, slug: str) -> AppTest:
    """Open a page's equations, code and export panels (drawn only while open) and rerun."""
    open_panel(at, slug, "equations", "source", "export")
    return at.run()


def panel_labels(at: AppTest) -> set[str]:
    """The labels of the panels a page offers in its row of panel toggles, open or not."""
    labels: set[str] = set()
    for group in at.button_group:
        if group.key and group.key.endswith("._panels"):
            labels |= {option.split(": ", 1)[-1] for option in group.options}
    return labels


def open_panel(at: AppTest, slug: str, *names: str) -> AppTest:
    """Turn on panels in a page's row of panel toggles (for the next run), keeping the others."""
    key = f"{slug}._panels"
    shown = list(at.session_state[key]) if key in at.session_state else []
    at.session_state[key] = list(dict.fromkeys([*shown, *names]))
    return at


def open_share(at: AppTest, slug: str) -> AppTest:
    """Open a page's "Share this view" box (drawn only while open) and rerun."""
    at.session_state[f"{slug}._share"] = True
    return at.run()


def shown_text(at: AppTest) -> list[str]:
    """Everything a user reads on the page: text elements, metrics, tables and chart labels."""
    out: list[str] = []
    for kind in TEXT_KINDS:
        for el in at.get(kind):
            value = getattr(el, "value", None)
            if value is None and hasattr(el, "proto"):
                value = getattr(el.proto, "body", None) or getattr(el.proto, "message", None)
            if value is not None:
                out.append(str(value))
    for metric in at.metric:
        out.append(f"{metric.label}: {metric.value} {metric.proto.delta}")
    for table in [*at.get("table"), *at.get("dataframe")]:
        if getattr(table.proto, "editing_mode", 0):  # a data editor: the user's own cells,
            continue  # where an emptied cell is a legitimate blank, not a number gone wrong
        try:
            out.append(table.value.to_string())
        except Exception:  # noqa: BLE001 - a table we cannot read is not a test failure
            pass
    for chart in at.get("plotly_chart"):
        spec = json.loads(chart.proto.spec)
        out.extend(_figure_strings(spec))
    return out


def _figure_strings(spec: dict) -> list[str]:
    """Titles, axis titles, annotation and trace texts of a plotly figure spec."""
    found: list[str] = []

    def walk(node, key=""):
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "template":
                    continue
                walk(v, k)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)
        elif isinstance(node, str) and key in {"text", "title", "name", "hovertext"}:
            found.append(node)

    walk(spec)
    return found


def assert_healthy(at: AppTest) -> None:
    """No exception, no error box, and no NaN or infinity in anything shown."""
    assert not at.exception, [e.message for e in at.exception]
    errors = [e.value for e in at.error]
    assert not errors, errors
    bad = [t for t in shown_text(at) if BAD_NUMBER.search(without_code(t))]
    assert not bad, bad[:5]


@pytest.fixture
def demo() -> Path:
    return DEMO


# ---------------------------------------------------------------- real server and browser
import os  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402

CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage",
]
# Settled: the page has drawn its title, no run in progress (neither the status widget nor the
# app's script state says so: while a page is still importing, nothing else on screen does), no
# skeletons, and every plotly chart has drawn.
SETTLED = """() => !!document.querySelector('[data-testid="stMain"] h1')
  && !document.querySelector('[data-testid="stStatusWidget"]')
  && document.querySelector('[data-testid="stApp"]')
       ?.getAttribute('data-test-script-state') === 'notRunning'
  && !document.querySelector('[data-testid="stSkeleton"]')
  && Array.from(document.querySelectorAll('[data-testid="stPlotlyChart"]'))
       .every(c => c.querySelector('.main-svg'))"""
ARTIFACTS = ROOT / "artifacts"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, *extra: str, script: Path = ROOT / "app.py") -> subprocess.Popen:
    """Start ``streamlit run <script>`` on loopback (with the repository's config) and wait
    until it answers its health check."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(script),
         "--server.port", str(port), "--server.address", "127.0.0.1", *extra],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
    )
    # Patience, not a budget: a fresh clone's first server compiles every loop of
    # rlviz.compiled once (about 25 s on a quiet 2-core machine, more on a busy one).
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited: {proc.stdout.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise RuntimeError("streamlit did not become healthy within 240 s")


@pytest.fixture(scope="session")
def server():
    port = free_port()
    proc = start_server(port)
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def chromium_path() -> str | None:
    return shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )


@pytest.fixture(scope="session")
def browser():
    path = chromium_path()
    if path is None:
        if os.environ.get("RLVIZ_REQUIRE_BROWSER"):
            pytest.fail("chromium is required (RLVIZ_REQUIRE_BROWSER is set) but not installed")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_ARGS)
        yield b
        b.close()


LOCAL_HOSTS = {"127.0.0.1", "localhost"}


def local_only(context) -> list[str]:
    """Abort every request ``context`` (a browser context or page) makes to another machine;
    returns the list of those URLs, filled as they happen."""
    from urllib.parse import urlparse

    foreign: list[str] = []

    def route(r):
        url = urlparse(r.request.url)
        if url.scheme in {"http", "https", "ws", "wss"} and url.hostname not in LOCAL_HOSTS:
            foreign.append(r.request.url)
            return r.abort()
        return r.continue_()

    context.route("**/*", route)
    return foreign


@pytest.fixture
def browser_page(browser):
    """A page in a wide window. Whatever the test does there, no request may leave this
    machine (the app must work in a classroom without internet): checked when it ends."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    foreign = local_only(page)
    yield page
    page.close()
    assert not foreign, f"requests that left the machine: {foreign}"


def settle(page, timeout_ms: int = 60_000) -> None:
    """Wait until the app has finished running and every chart has drawn."""
    page.wait_for_selector('[data-testid="stApp"]', timeout=timeout_ms)
    # every page has a title: the run began (the splash's title is not the page's)
    page.wait_for_selector('[data-testid="stMain"] h1', timeout=timeout_ms)
    page.wait_for_function(SETTLED, timeout=timeout_ms)
    page.wait_for_timeout(500)  # a rerun may start right after the first settle
    page.wait_for_function(SETTLED, timeout=timeout_ms)
