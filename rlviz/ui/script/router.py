"""The Streamlit script that every session runs: the app's navigation around the current page.

``app.py`` serves this file through ``st.App`` (see ``rlviz.ui.launch``). It lives in a folder
of its own, with no ``pages/`` beside it, so Streamlit's automatic navigation of the files in a
``pages/`` folder never switches on, not even for the first visitor of a new server.
"""

from rlviz.ui import navigation

navigation.route()
