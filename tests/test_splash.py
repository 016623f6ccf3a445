"""The splash: each page's title and a loading note written into the HTML shell the server sends."""

from __future__ import annotations

import asyncio
import concurrent.futures
import re

import pytest

from rlviz.ui.catalog import HOME, available_pages, page_info
from rlviz.ui.splash import LOADING, Splash, inject, page_for

SHELL = (
    '<!DOCTYPE html><html><head><link rel="preload" href="./static/media/Font.abc.woff2" '
    'as="font"><title>Streamlit</title></head><body><div id="root"></div></body></html>'
)


def test_each_page_path_names_its_page():
    assert page_for("/") == ("rlviz", HOME.teaches, False)
    for info in available_pages():
        assert page_for(f"/{info.url_path}") == (info.title, info.teaches, True)
    assert page_for("/drill") == (page_info("drill").title, page_info("drill").teaches, True)
    assert page_for("/no_such_page") == ("rlviz", "", False)


@pytest.mark.parametrize("path", ["/_stcore/health", "/_stcore/stream", "/static/js/index.js",
                                  "/favicon.png", "/media/abc.png", "/component/x/index.html",
                                  "/~/+/", "/app/static/x"])
def test_streamlit_paths_and_files_are_left_alone(path):
    assert page_for(path) is None


def test_a_base_path_is_honoured():
    assert page_for("/class/cliff_td", "class") == (page_info("cliff_td").title,
                                                     page_info("cliff_td").teaches, True)
    assert page_for("/class", "/class/")[0] == "rlviz"
    assert page_for("/cliff_td", "class") is None
    assert page_for("/class/_stcore/health", "class") is None


def test_the_shell_carries_title_tab_font_and_note():
    page = inject(SHELL, "Q-learning <vs> SARSA", "It & that.", sidebar=True, charts=True)
    assert "<title>Q-learning &lt;vs&gt; SARSA · rlviz</title>" in page
    assert "<h1>Q-learning &lt;vs&gt; SARSA</h1>" in page
    assert "<p>It &amp; that.</p>" in page
    assert LOADING in page
    assert 'src:url("./static/media/Font.abc.woff2")' in page
    assert 'class="rlviz-sided"' in page
    assert page.index('id="rlviz-splash"') > page.index('id="root"')  # after the app's root
    assert page.count("<title>") == 1
    plain = inject(SHELL, "rlviz", "")
    assert "<title>rlviz</title>" in plain and "<p>" not in plain
    assert 'class=""' in plain
    assert 'rel="modulepreload"' not in plain


def test_a_page_loads_the_chart_code_at_once():
    from pathlib import Path

    import streamlit

    page = inject(SHELL, "t", "", charts=True)
    hrefs = re.findall(r'rel="modulepreload" crossorigin href="\./([^"]+)"', page)
    assert any("PlotlyChart" in h for h in hrefs)
    static = Path(streamlit.__file__).parent / "static"
    assert all((static / h).is_file() for h in hrefs)
    # ... and runs it once the live title is up, while the browser waits for the script
    evaluated = re.search(r'data-charts="([^"]+)"', page).group(1).split(" ")
    assert evaluated == [f"./{h}" for h in hrefs]
    assert "import(h)" in page and 'data-charts="' not in inject(SHELL, "t", "")


def _serve(middleware, request_path, response, *, method="GET", query=b""):
    """Run ``middleware`` around a fake app answering ``response`` = (headers, [chunks])."""
    seen: dict = {}
    sent: list[dict] = []

    async def app(scope, receive, send):
        seen["headers"] = dict(scope["headers"])
        headers, chunks = response
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for i, chunk in enumerate(chunks):
            await send({"type": "http.response.body", "body": chunk,
                        "more_body": i < len(chunks) - 1})

    async def receive():
        return {"type": "http.request"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": method, "path": request_path, "query_string": query,
             "headers": [(b"accept-encoding", b"gzip"), (b"host", b"x")]}
    # in a thread of its own: another test's browser may run an event loop in this one
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, middleware(app)(scope, receive, send)).result()
    return seen, sent


def _splash(app):
    return Splash(app, base="")


def test_the_page_html_is_rewritten_whole():
    html = [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", b"999"),
            (b"etag", b'"abc"')]
    half = len(SHELL) // 2
    chunks = [SHELL[:half].encode(), SHELL[half:].encode()]
    seen, sent = _serve(_splash, "/cliff_td", (html, chunks))
    assert b"accept-encoding" not in seen["headers"]  # asked uncompressed
    start, body = sent[0], b"".join(m.get("body", b"") for m in sent[1:])
    headers = dict(start["headers"])
    assert int(headers[b"content-length"]) == len(body)
    assert b"etag" not in headers and headers[b"cache-control"] == b"no-cache"
    assert page_info("cliff_td").title.encode() in body and LOADING.encode() in body


def test_a_presentation_link_starts_without_the_sidebar():
    html = [(b"content-type", b"text/html")]
    _, sent = _serve(_splash, "/cliff_td", (html, [SHELL.encode()]), query=b"_present=1")
    assert b'class=""' in sent[-1]["body"]
    assert b"PlotlyChart" in sent[-1]["body"]  # the charts still come


@pytest.mark.parametrize("path,method,ctype", [
    ("/static/js/index.js", "GET", b"text/javascript"),
    ("/cliff_td", "HEAD", b"text/html"),
    ("/cliff_td", "GET", b"application/json"),
])
def test_everything_else_passes_through_unchanged(path, method, ctype):
    chunks = [b"one", b"two"]
    seen, sent = _serve(_splash, path, ([(b"content-type", ctype)], chunks), method=method)
    assert [m.get("body") for m in sent[1:]] == chunks  # streamed as it came
    if path.startswith("/static") or method == "HEAD":
        assert seen["headers"][b"accept-encoding"] == b"gzip"


@pytest.mark.slow
def test_the_running_server_sends_the_splash(server):
    import urllib.request

    info = available_pages()[0]
    with urllib.request.urlopen(f"{server}/{info.url_path}", timeout=30) as r:
        page = r.read().decode()
    assert re.search(rf"<h1>{re.escape(info.title)}</h1>", page)
    assert LOADING in page
    with urllib.request.urlopen(f"{server}/_stcore/health", timeout=30) as r:
        assert r.read() == b"ok"
