"""Static PNG export of figures, from one headless browser kept open while exports are asked for.

Plotly draws a PNG in a headless Chromium (through kaleido). Starting that browser for every
file is most of the cost (3-4 s a file here); a browser kept open draws the next one in under a
second. So the first PNG asked for starts one renderer per server process, the next ones reuse
it, and it closes itself after ``IDLE_SECONDS`` without an export (it holds about 300 MB while
open). If the renderer fails, the export falls back to plotly's own one-off browser, so a file
is always produced when one can be.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import logging
import shutil
import threading
import time
from typing import Any

__all__ = ["IDLE_SECONDS", "available", "figure_png"]

IDLE_SECONDS = 120.0
START_TIMEOUT = 90.0
RENDER_TIMEOUT = 90.0

log = logging.getLogger("rlviz.ui")


@functools.cache
def available() -> bool:
    """Whether this machine has a Chromium to draw PNGs with."""
    return shutil.which("chromium") is not None or shutil.which("google-chrome") is not None


def _size(fig_dict: dict, name: str, default: int) -> int:
    layout = fig_dict.get("layout", {})
    return layout.get(name) or layout.get("template", {}).get("layout", {}).get(name) or default


class _Renderer:
    """One kaleido session on an event loop in a thread of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one export (or start) at a time
        self._loop: asyncio.AbstractEventLoop | None = None
        self._kaleido: Any = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._last_used = time.monotonic()

    def _running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and self._ready.is_set()

    def start(self) -> None:
        """Start the browser in the background (returns at once)."""
        if self._thread is not None and self._thread.is_alive():
            return
        self._ready.clear()
        self._last_used = time.monotonic()
        self._thread = threading.Thread(target=self._serve, name="rlviz-png", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        try:
            asyncio.run(self._session())
        except Exception:
            log.exception("the PNG renderer stopped")
        finally:
            self._ready.clear()
            self._kaleido = self._loop = self._stop = None

    async def _session(self) -> None:
        import kaleido

        async with kaleido.Kaleido(n=1, timeout=RENDER_TIMEOUT) as k:
            self._kaleido, self._loop, self._stop = k, asyncio.get_running_loop(), asyncio.Event()
            self._ready.set()
            while not self._stop.is_set():
                try:
                    await asyncio.wait_for(self._stop.wait(), timeout=10)
                except TimeoutError:
                    if time.monotonic() - self._last_used > IDLE_SECONDS:
                        break

    def stop(self) -> None:
        """Close the browser (for tests and shutdown)."""
        loop, stop, thread = self._loop, self._stop, self._thread
        if loop is not None and stop is not None:
            loop.call_soon_threadsafe(stop.set)
        if thread is not None:
            thread.join(timeout=30)

    def png(self, fig: Any, scale: float) -> bytes:
        from plotly.io import defaults

        fig_dict = fig.to_dict()
        opts = {
            "format": "png", "scale": scale,
            "width": _size(fig_dict, "width", defaults.default_width),
            "height": _size(fig_dict, "height", defaults.default_height),
        }
        with self._lock:
            self._last_used = time.monotonic()
            self.start()
            if not self._ready.wait(START_TIMEOUT) or not self._running():
                raise RuntimeError("the PNG renderer did not start")
            work = self._kaleido.calc_fig(fig_dict, opts=opts)
            future = asyncio.run_coroutine_threadsafe(work, self._loop)
            try:
                return future.result(timeout=RENDER_TIMEOUT)
            finally:
                self._last_used = time.monotonic()


_RENDERER = _Renderer()
_ONE_OFF = threading.Lock()
atexit.register(_RENDERER.stop)  # close the browser with the server


def figure_png(fig: Any, scale: float = 2) -> bytes:
    """The figure as PNG bytes (``scale`` times its layout size)."""
    try:
        return _RENDERER.png(fig, scale)
    except Exception:
        log.exception("the PNG renderer failed; drawing this figure with a one-off browser")
        _RENDERER.stop()
    with _ONE_OFF:  # each one-off export starts a browser: one at a time
        return fig.to_image(format="png", scale=scale)
