"""The app's navigation, built from the page catalog."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from rlviz.ui.catalog import HOME, ROOT, SECTIONS, available_pages

APP = ROOT / "app.py"

__all__ = ["build", "leave_legacy_pages_mode", "mark_routed"]


ROUTED = "_rlviz.routed"
"""Session-state flag: ``app.py`` has run in this session, so pages run inside its navigation."""


def mark_routed() -> None:
    """Called by ``app.py`` on every run: this session is routed through the app's navigation."""
    st.session_state[ROUTED] = True


def leave_legacy_pages_mode() -> None:
    """Make a page opened straight from a link run inside the app's navigation.

    Streamlit decides once per server process, when the first session starts, whether a
    ``pages/`` folder means its old automatic multipage mode; only a call to ``st.navigation``
    (in ``app.py``) turns that off. So on a freshly started server, the first visitors through a
    shared link such as ``/c51?gamma=0.5`` would run the page file on its own, under an
    automatic sidebar of file names. Called at the top of every page: when this session's run
    did not come through ``app.py``, switch that mode off and rerun, which runs ``app.py`` and
    so the page inside the real navigation, link values intact. Pages run on their own by
    tests, or by a script other than ``app.py``, are left alone.
    """
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    if st.session_state.get(ROUTED):
        return
    ctx = get_script_run_ctx()
    main = Path(ctx.pages_manager.main_script_path) if ctx is not None else None
    if main is None or main.resolve() != APP.resolve():
        return
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
