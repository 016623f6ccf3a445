"""The floor of the load benchmark: a bare Streamlit script that draws a page's figures only.

``benchmarks.load`` runs the same sessions against rlviz and against this script, and reports
rlviz's server time per rerun as a multiple of this one's, so that the figure means something on
any machine: what a rerun of a page costs beyond drawing its figures with ``st.plotly_chart``.

The figures are those a page draws at its defaults, built by the page's own builders: capture
them once (``python -m benchmarks.floor_app --capture figures.pkl``, which runs every page in
``AppTest`` and keeps each figure it charts), then serve this file with the capture's path in
``RLVIZ_FLOOR_FIGURES``. A session picks the page with ``?page=<slug>`` (or ``RLVIZ_FLOOR_PAGE``
sets one page for all). The figures are loaded once per process and shared; each run charts
every one of them with the same options rlviz uses, and draws one slider (when the page has one)
so that a session reruns the script the way it reruns a page.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = "RLVIZ_FLOOR_FIGURES"
PAGE = "RLVIZ_FLOOR_PAGE"


def capture(out: Path, slugs: list[str] | None = None, timeout: float = 120) -> dict:
    """Run each page at its defaults in ``AppTest`` and pickle the figures it charts.

    Returns ``{slug: {"figures": [go.Figure, ...], "slider": bool}}`` (also written to ``out``).
    """
    sys.path.insert(0, str(ROOT))
    import plotly.graph_objects as go
    import streamlit as st
    from streamlit.delta_generator import DeltaGenerator
    from streamlit.testing.v1 import AppTest

    from rlviz.ui.catalog import available_pages

    pages = list(available_pages())  # the home page charts nothing and has no slider
    if slugs:
        pages = [p for p in pages if p.slug in slugs or p.url_path in slugs]
    seen: list = []
    original, module_level = DeltaGenerator.plotly_chart, st.plotly_chart

    def keep(self, figure_or_data, *args, **kwargs):
        # A plain figure, as the page's builder made it (a shared one reaches Streamlit as
        # the dict it keeps for sending, see rlviz.ui.caching.SentFigure).
        seen.append(go.Figure(figure_or_data.to_dict()))
        return original(self, figure_or_data, *args, **kwargs)

    # ``st.plotly_chart`` is a method bound when streamlit was imported: replace both.
    DeltaGenerator.plotly_chart = keep
    st.plotly_chart = lambda *args, **kwargs: keep(st._main, *args, **kwargs)
    captured: dict[str, dict] = {}
    try:
        for info in pages:
            seen.clear()
            at = AppTest.from_file(str(info.file), default_timeout=timeout).run()
            if at.exception:
                raise RuntimeError(f"page {info.slug} failed: {at.exception[0].message}")
            captured[info.url_path] = {"figures": list(seen), "slider": len(at.slider) > 0}
    finally:
        DeltaGenerator.plotly_chart, st.plotly_chart = original, module_level
    out.write_bytes(pickle.dumps(captured))
    return captured


def _arrays(x):
    """A figure's dict with plotly's encoded arrays (``{"dtype", "bdata"}``) as numpy arrays."""
    import base64

    import numpy as np

    if isinstance(x, dict):
        if "bdata" in x and set(x) <= {"dtype", "bdata", "shape"}:
            a = np.frombuffer(base64.b64decode(x["bdata"]), dtype=np.dtype(x["dtype"]))
            if "shape" in x:
                a = a.reshape([int(n) for n in str(x["shape"]).split(",")])
            return a
        return {k: _arrays(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_arrays(v) for v in x]
    return x


def _load(path: str) -> dict:
    import plotly.graph_objects as go
    import streamlit as st

    @st.cache_resource(show_spinner=False)
    def load(path: str) -> dict:
        # A pickled figure comes back with its numpy arrays already encoded for sending; the
        # builders hand st.plotly_chart numpy arrays, so the floor does too.
        pages = pickle.loads(Path(path).read_bytes())
        for page in pages.values():
            page["figures"] = [go.Figure(_arrays(f.to_dict())) for f in page["figures"]]
        return pages

    return load(path)


def draw() -> None:
    """The script body: the chosen page's figures and one slider, nothing else."""
    import streamlit as st

    from rlviz.ui.chrome import PLOTLY_CONFIG

    pages = _load(os.environ[FIGURES])
    slug = os.environ.get(PAGE) or st.query_params.get("page", "")
    page = pages.get(slug, {"figures": [], "slider": False})
    if page["slider"]:
        st.slider("x", min_value=0.0, max_value=1.0, value=0.5, step=0.01, key="floor.x")
    for i, fig in enumerate(page["figures"]):
        st.plotly_chart(fig, theme=None, config=PLOTLY_CONFIG, key=f"floor.{i}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--capture", type=Path, required=True, help="where to write the figures")
    ap.add_argument("--pages", default="", help="comma-separated slugs (default: all)")
    args = ap.parse_args(argv)
    got = capture(args.capture, [s for s in args.pages.split(",") if s] or None)
    for slug, page in got.items():
        print(f"{slug or 'home'}: {len(page['figures'])} figures, slider: {page['slider']}")
    return 0


if __name__ == "__main__" and FIGURES not in os.environ:
    sys.exit(main())
elif FIGURES in os.environ:
    draw()
