"""The app's navigation, built from the page catalog."""

from __future__ import annotations

import streamlit as st

from rlviz.ui.catalog import HOME, SECTIONS, available_pages

__all__ = ["build"]


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
