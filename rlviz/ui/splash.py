"""The first paint: each page's title and a loading note, in the HTML the server sends.

Streamlit's page is an empty shell until its JavaScript (several megabytes) has loaded, opened a
connection and run the script, which takes a second or two on a small machine. ``Splash`` is an
ASGI middleware (given to ``st.App``) that writes into that shell, for the path asked for, the
page's title, the sentence its home card teaches, and a "Loading…" note, styled like the page
that replaces it. A few lines of script remove it as soon as the live page has drawn its own
title (or shown an error, or a dialog), so the visitor never sees two titles. It is a picture
of what is coming, hidden from assistive technology (which waits for the live page).

Only the HTML of a page's path is touched: static files, Streamlit's own endpoints and every
non-HTML response pass through unchanged.
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from rlviz.ui.catalog import DRILL, HOME, LESSONS, PageInfo, available_pages

__all__ = ["LOADING", "Splash", "inject", "page_for"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

LOADING = "Loading the page…"

_INTERNAL = ("_stcore", "static", "media", "component", "app", "~")
"""First path segments that are Streamlit's own (endpoints, assets, uploads), never a page."""

_STYLE = """
#rlviz-splash{position:fixed;inset:0;z-index:999990;background:#fff;color:#1f2430;
  pointer-events:none;font-family:"rlviz splash",ui-sans-serif,system-ui,sans-serif;
  transition:opacity .15s ease-out}
#rlviz-splash.rlviz-gone{opacity:0}
#rlviz-splash .rlviz-bar{height:3.75rem;border-bottom:1px solid #eef0f5}
#rlviz-splash .rlviz-body{padding:.5rem 5rem 0;max-width:100%}
#rlviz-splash h1{font-size:2.75rem;font-weight:700;line-height:1.2;margin:0;
  padding:0 0 1rem;letter-spacing:-.005em}
#rlviz-splash p{font-size:1rem;line-height:1.6;margin:0 0 1rem;color:#1f2430;max-width:60rem}
#rlviz-splash .rlviz-loading{display:inline-flex;align-items:center;gap:.6rem;
  padding:.75rem 1rem;border:1px solid #e3e7f1;border-radius:.6rem;background:#f4f6fb}
#rlviz-splash .rlviz-spin{width:1rem;height:1rem;border-radius:50%;
  border:2px solid #c9d2f5;border-top-color:#3b5bdb;animation:rlviz-spin .8s linear infinite}
@keyframes rlviz-spin{to{transform:rotate(360deg)}}
#rlviz-splash .rlviz-side{display:none}
@media (min-width:768px){#rlviz-splash.rlviz-sided .rlviz-side{display:block;position:absolute;
  left:0;top:0;bottom:0;width:300px;background:#f4f6fb;border-right:1px solid #e3e7f1}
  #rlviz-splash.rlviz-sided .rlviz-bar,#rlviz-splash.rlviz-sided .rlviz-body{margin-left:300px}}
@media (max-width:640px){#rlviz-splash .rlviz-body{padding:.5rem 1rem 0}
  #rlviz-splash h1{font-size:2rem}}
"""

# Gone when the live page shows its title, an error or a dialog; in any case after 60 s. Then
# the chart code named in data-charts is imported (run once; the app's own import reuses it).
_SCRIPT = """
(function(){var s=document.getElementById('rlviz-splash');if(!s)return;
var sel='[data-testid="stMain"] h1,[data-testid="stException"],[data-testid="stAlert"],'
+'[role="dialog"]';var o;
function gone(){if(!s.parentNode)return;s.classList.add('rlviz-gone');
var c=s.getAttribute('data-charts');if(c)c.split(' ').forEach(function(h){
import(h).catch(function(){})});
setTimeout(function(){s.remove()},160);if(o)o.disconnect()}
o=new MutationObserver(function(){if(document.querySelector(sel))gone()});
o.observe(document.documentElement,{childList:true,subtree:true});setTimeout(gone,60000)})();
"""

_FONT = re.compile(r'<link[^>]*rel="preload"[^>]*href="([^"]+\.woff2)"')

PRELOAD = ("PlotlyChart.",)
"""Streamlit's code for the elements a page draws first, loaded by its app only when the first
one arrives: a page's shell asks for it at once, so it downloads while the app starts, and runs
it as soon as the live page shows its title. The browser is then waiting for the script's
output, and plotly's start-up (about a second of the main thread here) no longer delays the
first chart."""


@functools.cache
def _preloads() -> tuple[str, ...]:
    import streamlit

    js = Path(streamlit.__file__).parent / "static" / "static" / "js"
    return tuple(sorted(f"./static/js/{f.name}" for f in js.glob("*.js")
                        if f.name.startswith(PRELOAD)))


def _pages() -> dict[str, PageInfo]:
    return {p.url_path: p for p in (DRILL, LESSONS, *available_pages())}


def page_for(path: str, base: str = "") -> tuple[str, str, bool] | None:
    """(title, sentence, is a page) of the splash for a request path, or None if no page's.

    Every page but home has a sidebar and charts.

    ``base`` is the server's ``baseUrlPath``. The root is home; a path that names no page of
    the catalog gets a plain "rlviz" (the router then says the page does not exist).
    """
    rest = path.strip("/")
    base = base.strip("/")
    if base:
        if rest != base and not rest.startswith(base + "/"):
            return None
        rest = rest[len(base):].strip("/")
    if not rest:
        return "rlviz", HOME.teaches, False
    first = rest.split("/", 1)[0]
    if first in _INTERNAL or "." in rest.rsplit("/", 1)[-1]:
        return None
    info = _pages().get(rest)
    return (info.title, info.teaches, True) if info else ("rlviz", "", False)


def inject(page: str, title: str, sentence: str, *, sidebar: bool = False,
           charts: bool = False) -> str:
    """Streamlit's HTML shell with the splash for one page written into it.

    With ``sidebar`` a wide screen shows the sidebar's place too, where the page will draw its
    controls, so nothing jumps sideways when the live page replaces the splash. With ``charts``
    the browser starts loading Streamlit's chart code at once (``PRELOAD``).
    """
    font = _FONT.search(page)
    face = (f'@font-face{{font-family:"rlviz splash";src:url("{font.group(1)}") '
            'format("woff2");font-weight:200 900;font-display:swap}') if font else ""
    tab = "rlviz" if title == "rlviz" else f"{title} · rlviz"
    blurb = f"<p>{html.escape(sentence)}</p>" if sentence else ""
    hrefs = _preloads() if charts else ()
    evaluate = f' data-charts="{html.escape(" ".join(hrefs))}"' if hrefs else ""
    splash = (
        f'<div id="rlviz-splash" class="{"rlviz-sided" if sidebar else ""}"{evaluate} '
        'aria-hidden="true">'
        '<div class="rlviz-side"></div><div class="rlviz-bar"></div>'
        f'<div class="rlviz-body"><h1>{html.escape(title)}</h1>{blurb}'
        f'<div class="rlviz-loading" role="status"><span class="rlviz-spin"></span>'
        f"{LOADING}</div></div></div><script>{_SCRIPT}</script>"
    )
    page = re.sub(r"<title>.*?</title>", f"<title>{html.escape(tab)}</title>", page, count=1,
                  flags=re.S)
    preload = "".join(f'<link rel="modulepreload" crossorigin href="{href}">'
                      for href in (_preloads() if charts else ()))
    page = page.replace("</head>", f"{preload}<style>{face}{_STYLE}</style></head>", 1)
    return page.replace("</body>", f"{splash}</body>", 1)


class Splash:
    """ASGI middleware: write the splash into the HTML shell of a page's path."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]],
                 base: str | None = None) -> None:
        self.app = app
        self.base = base

    def _base(self) -> str:
        if self.base is None:
            import streamlit as st

            self.base = str(st.get_option("server.baseUrlPath") or "")
        return self.base

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        target = None
        if scope["type"] == "http" and scope.get("method") == "GET":
            target = page_for(scope.get("path", ""), self._base())
        if target is None:
            await self.app(scope, receive, send)
            return
        # Ask for the shell uncompressed (it is a few kilobytes) so it can be written into.
        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"accept-encoding"]
        scope = dict(scope, headers=headers)
        start: Message | None = None
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start":
                start = message
                if not _is_html(message):
                    await send(message)
                return
            if start is None or not _is_html(start) or message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            title, sentence, page = target
            # a teacher's presentation link starts with the sidebar collapsed
            sidebar = page and b"_present" not in scope.get("query_string", b"")
            body = inject(b"".join(chunks).decode("utf-8"), title, sentence, sidebar=sidebar,
                          charts=page).encode("utf-8")
            drop = {b"content-length", b"etag", b"last-modified", b"cache-control"}
            kept = [(k, v) for k, v in start.get("headers", []) if k.lower() not in drop]
            kept += [(b"content-length", str(len(body)).encode()), (b"cache-control", b"no-cache")]
            await send(dict(start, headers=kept))
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, capture)


def _is_html(start: Message) -> bool:
    if start.get("status", 200) != 200:
        return False
    headers = {k.lower(): v.lower() for k, v in start.get("headers", [])}
    return (headers.get(b"content-type", b"").startswith(b"text/html")
            and headers.get(b"content-encoding", b"identity") == b"identity")
