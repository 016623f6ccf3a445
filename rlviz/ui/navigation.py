"""The app's navigation, built from the page catalog."""

from __future__ import annotations

import streamlit as st

from rlviz.ui.catalog import HOME, SECTIONS, available_pages

__all__ = ["build", "leave_legacy_pages_mode"]


def leave_legacy_pages_mode() -> None:
    """Make a page opened straight from a link run inside the app's navigation.

    Streamlit decides once per server process, when the first session starts, whether a
    ``pages/`` folder means the old automatic multipage mode; only a call to ``st.navigation``
    (in ``app.py``) turns that off. So on a freshly started server, a shared link such as
    ``/c51?gamma=0.5`` would run the page file on its own, with an automatic sidebar listing the
    raw file names. Called at the top of every page: if that mode is still on, switch it off and
    rerun, which runs ``app.py`` and so the page inside the real navigation, link values intact.
    """
    from streamlit.runtime.pages_manager import PagesManager

    if PagesManager.uses_pages_directory:
        PagesManager.uses_pages_directory = False
        st.rerun()


def build() -> dict[str, list]:
    """``st.navigation`` sections: Home first, then each section that has a written page."""
    sections: dict[str, list] = {
        "": [st.Page(str(HOME.file), title=HOME.title, icon=HOME.icon, default=True)]
    }
    for section in SECTIONS:
        pages = [
            st.Page(str(p.file), title=p.title, icon=p.icon, url_path=p.url_path)
            for p in available_pages()
            if p.section == section
        ]
        if pages:
            sections[section] = pages
    return sections
