import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import streamlit as st

from rlviz import drill, interview, ui
from rlviz.ui import drill as quiz

INTRO = (
    "Interview questions on every page, each with a short answer and the live view that proves "
    "it. Commit to an answer, reveal, and mark whether you knew it: your progress lives in this "
    "page's address, so a reload or a bookmark keeps it and the server keeps none of it."
)

with ui.page("drill", intro=INTRO, share=False):
    bank = interview.bank()
    topics, levels = quiz.filters()
    chosen = drill.filter_questions(bank, topics=topics, difficulties=levels)
    found = quiz.progress(bank)
    st.sidebar.caption(f"{len(chosen)} of {len(bank)} questions selected.")

    quiz.quiz(bank, chosen, found)

    st.subheader("Your session by topic", anchor=False)
    quiz.summary(chosen, found)

    st.subheader("Print or keep the selection", anchor=False)
    quiz.handout_buttons(chosen)
