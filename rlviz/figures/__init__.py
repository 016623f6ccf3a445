"""Plotly figure builders: each takes a result and returns a ``go.Figure``; never streamlit."""

from rlviz.figures.theme import (
    ALGORITHM_COLORS,
    DIVERGING,
    SEQUENTIAL,
    TEMPLATE,
    color,
    colors_for,
    diverging,
    figure,
    hex_to_rgba,
)

__all__ = [
    "ALGORITHM_COLORS",
    "DIVERGING",
    "SEQUENTIAL",
    "TEMPLATE",
    "color",
    "colors_for",
    "diverging",
    "figure",
    "hex_to_rgba",
]
