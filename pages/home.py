import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import streamlit as st

from rlviz import ui
from rlviz.ui.catalog import SECTIONS, available_pages

INTRO = (
    "An interactive explorer of reinforcement-learning algorithms. Pick a family, move a "
    "slider, and the algorithm re-runs and redraws: made for teaching a class, rehearsing for "
    "an interview at the whiteboard, or getting a feel for what a hyperparameter really does."
)

with ui.page("home", heading="rlviz", intro=INTRO, share=False):
    pages = available_pages()
    if not pages:
        st.info("No algorithm pages yet.")
    columns = 3
    for start in range(0, len(pages), columns):
        row = st.columns(columns, gap="medium")
        for col, info in zip(row, pages[start : start + columns], strict=False):
            with col, st.container(border=True, height="stretch"):
                if info.thumbnail.is_file():
                    st.image(str(info.thumbnail), width="stretch", link=info.url_path)
                st.caption(f"{SECTIONS.index(info.section) + 1:02d} · {info.section}")
                st.page_link(str(info.file), label=f"**{info.title}**", icon=info.icon)
                st.markdown(info.teaches)

    st.divider()
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown("#### Every page has")
        st.markdown(
            "- **Live controls** in the sidebar; the algorithm re-runs as you move them.\n"
            "- **A shareable link** that restores the exact view, seed included.\n"
            "- **A known-answer check** against a textbook or paper value.\n"
            "- **The equations** and **the code that actually ran**.\n"
            "- **Export** of figures, data and settings."
        )
    with right:
        st.markdown("#### In a class")
        st.markdown(
            "Each page ends with *Try this* prompts: ask the room to predict what a slider will "
            "do, then move it. Share a link to put everyone on the same view; *Make a teacher "
            "link* hides or locks controls and turns on a presentation mode for the projector, "
            "and the **Lessons** page walks a class through several views, prompt by prompt."
        )
