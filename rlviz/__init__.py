"""rlviz: the tested compute package behind the interactive explorer.

Submodules are imported by name (``from rlviz import dp``) so that importing the package stays
light: ``import rlviz`` loads neither streamlit, plotly nor torch.
"""

__version__ = "0.1.0"
