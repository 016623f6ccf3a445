"""``boom.py`` served the way ``app.py`` serves the app: through ``st.App``."""

import streamlit as st

app = st.App("boom.py")
