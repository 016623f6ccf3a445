"""rlviz: an interactive explorer of reinforcement-learning algorithms.

Run with ``streamlit run app.py``. This file only routes; every page lives in ``pages/``.
"""

import streamlit as st

from rlviz.ui import navigation

st.set_page_config(page_title="rlviz", page_icon=":material/insights:", layout="wide")
st.navigation(navigation.build(), expanded=True).run()
