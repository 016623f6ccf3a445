"""The app's navigation, built from the page catalog, and the route every session runs."""

from __future__ import annotations

import functools

import streamlit as st

from rlviz.ui.catalog import DRILL, HOME, LESSONS, ROOT, SECTIONS, available_pages

__all__ = ["FAVICON", "build", "favicon", "route"]

FAVICON = ROOT / "assets" / "favicon.png"
"""The app's icon, served by the app itself (a material icon would be fetched from a font host)."""


@functools.cache
def favicon() -> bytes:
    """The icon's bytes, read once per process."""
    return FAVICON.read_bytes()


def build() -> dict[str, list]:
    """``st.navigation`` sections: Home, the drill and Lessons, then each section with a page."""
    sections: dict[str, list] = {
        "": [st.Page(str(HOME.file), title=HOME.title, icon=HOME.icon, default=True),
             st.Page(str(DRILL.file), title=DRILL.title, icon=DRILL.icon,
                     url_path=DRILL.url_path)]
    }
    if LESSONS.exists:
        sections[""].append(st.Page(str(LESSONS.file), title=LESSONS.title, icon=LESSONS.icon,
                                    url_path=LESSONS.url_path))
    for section in SECTIONS:
        pages = [
            st.Page(str(p.file), title=p.title, icon=p.icon, url_path=p.url_path)
            for p in available_pages()
            if p.section == section
        ]
        if pages:
            sections[section] = pages
    return sections


NAVIGATION = "_rlviz.navigation"
"""Session-state key: this session's ``st.Page`` objects, built on its first run.

Building them resolves and checks every page's path and icon (a few milliseconds for all the
pages, on every rerun). They are kept per session, not shared: ``st.navigation`` marks the page
it picks as runnable on the object itself, and sessions run at the same time."""


def route() -> None:
    """Declare the navigation and run the current page."""
    st.set_page_config(page_title="rlviz", page_icon=favicon(), layout="wide")  # and each page
    sections = st.session_state.get(NAVIGATION)
    if sections is None:
        sections = st.session_state[NAVIGATION] = build()
    st.navigation(sections, position="top").run()
