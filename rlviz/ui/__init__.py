"""The only library code that imports streamlit: page chrome, URL-bound controls, panels."""

from rlviz.ui.caching import cached, cached_figures
from rlviz.ui.chrome import Check, Page, chart, page
from rlviz.ui.controls import (
    Choice,
    Control,
    FloatSlider,
    IntSlider,
    MultiChoice,
    Number,
    Params,
    Section,
    Seed,
    SelectSlider,
    Table,
    TableColumn,
    Text,
    Toggle,
)

__all__ = [
    "Check",
    "Choice",
    "Control",
    "FloatSlider",
    "IntSlider",
    "MultiChoice",
    "Number",
    "Page",
    "Params",
    "Section",
    "Seed",
    "SelectSlider",
    "Table",
    "TableColumn",
    "Text",
    "Toggle",
    "cached",
    "cached_figures",
    "chart",
    "page",
]
