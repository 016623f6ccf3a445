"""How the app is served: the router script behind ``st.App``, warmed up before anyone visits.

``streamlit run app.py`` finds the ``st.App`` that ``app.py`` declares and serves it with the
same server, command-line flags and ``.streamlit/config.toml`` as any Streamlit script. Two
things come with it:

- The script every session runs is ``ROUTER``, in a folder with no ``pages/`` beside it, so
  Streamlit never turns on its automatic navigation of the files in ``pages/`` (which it would
  otherwise show to the first visitors of a new server until ``st.navigation`` had run once).
- ``MIDDLEWARE`` writes each page's title and a loading note into the HTML shell the server
  sends, so the first paint already says which page is coming (``rlviz.ui.splash``).
- ``lifespan`` runs once when the server starts, before it accepts a connection: it loads the
  heavy libraries (``rlviz.ui.boot``), every module the written pages import, the compiled loops
  those modules register (``rlviz.compiled``), what plotly and Streamlit only load when a first
  figure or table is drawn and what torch only loads when a first optimiser is built, so no
  visitor's script run waits for an import or a compiler.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import importlib
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from rlviz import compiled
from rlviz.ui.catalog import DRILL, HOME, LESSONS, available_pages

__all__ = ["MIDDLEWARE", "ROUTER", "lifespan", "page_imports", "route", "warm_up"]

ROUTER = Path(__file__).resolve().parent / "script" / "router.py"

log = logging.getLogger("rlviz.ui")


def _middleware() -> list[Any]:
    from starlette.middleware import Middleware

    from rlviz.ui.splash import Splash

    return [Middleware(Splash)]


MIDDLEWARE = _middleware()
"""What ``st.App`` runs before Streamlit's own handlers: the splash written into each page's
HTML shell (``rlviz.ui.splash``), so its title shows before Streamlit's JavaScript has loaded."""


def page_imports(path: Path) -> list[str]:
    """The modules a page file imports at its top level, in order."""
    found: list[str] = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
            # ``from rlviz import dp`` imports the submodule rlviz.dp
            found += [f"{node.module}.{a.name}" for a in node.names]
    return list(dict.fromkeys(found))


def warm_up() -> float:
    """Import the heavy libraries and every module the written pages use; returns seconds.

    A name that is not a module (``from rlviz.ui import page``) is skipped; a page whose
    imports fail is logged and left for its own run to report.
    """
    t0 = time.perf_counter()
    importlib.import_module("rlviz.ui.boot")
    for info in (HOME, DRILL, LESSONS, *available_pages()):
        for name in page_imports(info.file):
            try:
                importlib.import_module(name)
            except ModuleNotFoundError as err:
                if err.name != name:  # a missing dependency, not a name that is no module
                    log.exception("warming up page %s: importing %s failed", info.slug, name)
            except Exception:
                log.exception("warming up page %s: importing %s failed", info.slug, name)
    compiled.warm_up()  # the compiled loops those modules registered: loaded, or compiled once
    _draw_once()
    _train_once()
    gc.freeze()  # they live as long as the process: keep them out of every collection
    return time.perf_counter() - t0


def _draw_once() -> None:
    """Build, serialise and tabulate a small figure and table, as a page would.

    Plotly loads the validators of a trace type or layout property on first use (a third of a
    second for a first figure here) and Streamlit loads pyarrow for a first table.
    """
    import pandas as pd
    import plotly.graph_objects as go
    import pyarrow as pa
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, subplot_titles=("a", "b"))
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines+markers", name="a",
                             line={"dash": "dot"}, marker={"symbol": "star"}), row=1, col=1)
    fig.add_trace(go.Bar(x=["a", "b"], y=[1, 2], text=["1", "2"]), row=1, col=2)
    fig.add_trace(go.Heatmap(z=[[0, 1], [1, 0]], colorbar={"title": {"text": "v"}}), row=1, col=2)
    fig.add_annotation(text="note", x=0, y=0, showarrow=True, arrowhead=2)
    fig.add_shape(type="rect", x0=0, x1=1, y0=0, y1=1, fillcolor="grey", opacity=0.2)
    fig.add_vline(x=0.5, line_dash="dash")
    fig.update_layout(title={"text": "t"}, legend={"orientation": "h"}, hovermode="x unified",
                      sliders=[{"steps": [{"label": "0", "method": "animate", "args": [["0"]]}]}],
                      updatemenus=[{"type": "buttons", "buttons": [{"label": "play",
                                                                     "method": "animate"}]}])
    fig.update_xaxes(title_text="x", type="log")
    fig.update_yaxes(title_text="y", range=[0, 1])
    fig.frames = [go.Frame(data=[go.Scatter(x=[0], y=[0])], name="0")]
    fig.to_json()
    pa.Table.from_pandas(pd.DataFrame({"a": [1.0], "b": ["x"]}))


def _train_once() -> None:
    """One optimiser step of a tiny torch model, as the deep-learning pages take.

    Torch imports its graph compiler (``torch._dynamo``, about two and a half seconds here) the
    first time an optimiser is built, and starts its autograd engine on a first backward pass.
    """
    import torch

    model = torch.nn.Linear(2, 1)
    for make in (torch.optim.Adam, torch.optim.SGD):
        opt = make(model.parameters(), lr=0.1)
        loss = model(torch.ones(1, 2)).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()


@contextlib.asynccontextmanager
async def lifespan(app: Any) -> AsyncIterator[None]:
    """``st.App`` start and stop hook: warm up before the server takes its first visitor."""
    seconds = warm_up()
    log.info("rlviz warmed up in %.1f s", seconds)
    yield


def route() -> None:
    """Run the app's navigation and the current page (the body of the router script)."""
    from rlviz.ui import navigation

    navigation.route()
