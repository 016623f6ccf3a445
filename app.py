"""rlviz: an interactive explorer of reinforcement-learning algorithms.

Run with ``streamlit run app.py``. This file only routes; every page lives in ``pages/``.
"""

import importlib
import threading

import streamlit as st

from rlviz.ui import navigation

# The torch pages' modules take a second or two to import; start on that in the background
# as soon as the server serves anyone, so the first visit to those pages does not wait for it.
TORCH_MODULES = ("rlviz.ppo", "rlviz.distributional", "rlviz.offline")


@st.cache_resource(show_spinner=False)
def warm_up() -> threading.Thread:
    def load() -> None:
        for name in TORCH_MODULES:
            try:
                importlib.import_module(name)
            except ImportError:
                pass

    thread = threading.Thread(target=load, name="rlviz-warm-up", daemon=True)
    thread.start()
    return thread


st.set_page_config(page_title="rlviz", page_icon=":material/insights:", layout="wide")
warm_up()
st.navigation(navigation.build(), expanded=True).run()
