"""rlviz: an interactive explorer of reinforcement-learning algorithms.

Run with ``streamlit run app.py``. Streamlit finds the ``st.App`` below and serves it: the
heavy libraries are loaded when the server starts (``rlviz.ui.launch.lifespan``), each page's
HTML already carries its title and a loading note (``rlviz.ui.splash``), and every
session runs the router script, which draws the navigation and the current page from ``pages/``.
"""

import streamlit as st

from rlviz.ui import launch

app = st.App(launch.ROUTER, lifespan=launch.lifespan, middleware=launch.MIDDLEWARE)

if __name__ == "__main__":  # run as a Streamlit script itself (AppTest): route in place
    launch.route()
