"""rlviz: an interactive explorer of reinforcement-learning algorithms.

Run with ``streamlit run app.py``. This file only routes; every page lives in ``pages/``.
"""

import rlviz.ui.boot  # noqa: F401  (first: the heavy libraries, loaded once and in order)

import streamlit as st

from rlviz.ui import navigation

st.set_page_config(page_title="rlviz", page_icon=":material/insights:", layout="wide")
navigation.mark_routed()
st.navigation(navigation.build(), expanded=True).run()
