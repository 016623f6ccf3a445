"""One look for every chart: a plotly template, a fixed colour per algorithm, one diverging scale.

Colour meaning is the same on every page: Q-learning is always the same orange, SARSA always the
same blue, and values/advantages always use ``DIVERGING`` centred at zero (negative red, positive
blue).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

__all__ = [
    "ALGORITHM_COLORS",
    "DIVERGING",
    "FONT",
    "INK",
    "MUTED",
    "PALETTE",
    "SEQUENTIAL",
    "TEMPLATE",
    "color",
    "colors_for",
    "diverging",
    "figure",
    "hex_to_rgba",
    "log_ticks",
]

FONT = "Inter, 'Segoe UI', system-ui, -apple-system, sans-serif"
INK = "#1f2430"
MUTED = "#868e96"
GRID = "#e9ecef"

# A qualitative palette that stays readable for common colour-vision deficiencies.
PALETTE = (
    "#1c7ed6",  # blue
    "#e8590c",  # orange
    "#2b8a3e",  # green
    "#7048e8",  # violet
    "#c2255c",  # magenta
    "#0c8599",  # teal
    "#e67700",  # amber
    "#495057",  # graphite
)

ALGORITHM_COLORS: dict[str, str] = {
    # dynamic programming
    "policy_evaluation": "#2b8a3e",
    "value_iteration": "#1c7ed6",
    "policy_iteration": "#e8590c",
    "synchronous": "#1c7ed6",
    "in_place": "#e8590c",
    # TD control
    "q_learning": "#e8590c",
    "sarsa": "#1c7ed6",
    "expected_sarsa": "#2b8a3e",
    "double_q": "#7048e8",
    # bandits
    "greedy": "#495057",
    "epsilon_greedy": "#e8590c",
    "optimistic": "#c2255c",
    "ucb": "#1c7ed6",
    "thompson": "#2b8a3e",
    "gradient": "#7048e8",
    "gradient_no_baseline": "#b197fc",
    # policy gradients
    "clipped": "#1c7ed6",
    "unclipped": "#e03131",
    "kl_penalty": "#7048e8",
    # returns
    "td": "#e8590c",
    "monte_carlo": "#7048e8",
    "gae": "#1c7ed6",
    # planning
    "uct": "#1c7ed6",
    "puct": "#e8590c",
    "minimax": "#2b8a3e",
    # distributional
    "source": "#1c7ed6",
    "shifted": "#e67700",
    "projected": "#2b8a3e",
    "naive_projection": "#e03131",
    # offline
    "behaviour": "#868e96",
    "naive": "#e03131",
    "cql": "#1c7ed6",
    # references drawn on any chart
    "optimal": INK,
    "reference": INK,
    "bound": "#495057",
}

# Negative values red, zero white, positive blue; always used with zmid = 0.
DIVERGING = [
    [0.0, "#b2182b"],
    [0.25, "#ef8a62"],
    [0.5, "#f7f7f7"],
    [0.75, "#67a9cf"],
    [1.0, "#2166ac"],
]
SEQUENTIAL = [[0.0, "#f8f9fa"], [0.35, "#a5d8ff"], [0.7, "#4dabf7"], [1.0, "#1864ab"]]

TEMPLATE = go.layout.Template(
    layout=go.Layout(
        font=dict(family=FONT, size=13, color=INK),
        title=dict(font=dict(size=16), x=0.0, xanchor="left", y=0.98, yanchor="top"),
        paper_bgcolor="white",
        plot_bgcolor="white",
        colorway=list(PALETTE),
        # Room for tick labels of up to seven characters with the axis titles beside them.
        # Charts size their margins rather than use plotly's automargin, which has the
        # browser measure every tick label of the axis and lay the chart out again (about
        # twice the drawing time); only an axis of free text (racer names, responses) keeps
        # it. tests/test_browser.py finds any chart text cut off or run into its axis title.
        margin=dict(l=80, r=24, t=56, b=56),
        hovermode="closest",
        hoverlabel=dict(font=dict(family=FONT, size=12), bgcolor="white"),
        legend=dict(
            orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0.0,
            bgcolor="rgba(255,255,255,0)", font=dict(size=12),
        ),
        xaxis=dict(
            showgrid=True, gridcolor=GRID, zeroline=False, linecolor="#adb5bd",
            ticks="outside", tickcolor="#adb5bd", title=dict(standoff=8),
        ),
        yaxis=dict(
            showgrid=True, gridcolor=GRID, zeroline=False, linecolor="#adb5bd",
            ticks="outside", tickcolor="#adb5bd", title=dict(standoff=8),
        ),
        coloraxis=dict(colorbar=dict(thickness=12, outlinewidth=0)),
    ),
    data=dict(
        scatter=[go.Scatter(line=dict(width=2.2))],
        heatmap=[go.Heatmap(colorbar=dict(thickness=12, outlinewidth=0))],
        bar=[go.Bar(marker=dict(line=dict(width=0)))],
    ),
)
pio.templates["rlviz"] = TEMPLATE
# The default for every figure made in this process: a named default costs nothing per figure,
# while passing the template object to each one validates and copies it (about 1.3 ms apiece).
pio.templates.default = "rlviz"


def figure(**layout) -> go.Figure:
    """A new empty figure in the rlviz template, with any layout overrides."""
    return go.Figure(layout=layout or None)


def color(name: str) -> str:
    """The fixed colour of an algorithm (or role) across all pages.

    Unknown names get a stable colour from the palette, so a new racer never goes grey.
    """
    if name in ALGORITHM_COLORS:
        return ALGORITHM_COLORS[name]
    return PALETTE[sum(name.encode()) % len(PALETTE)]


def colors_for(names: Iterable[str]) -> dict[str, str]:
    """Distinct colours for several names, keeping each algorithm's own where they differ."""
    out: dict[str, str] = {}
    used: set[str] = set()
    names = list(names)
    for name in names:
        c = color(name)
        if c not in used:
            out[name] = c
            used.add(c)
    spare = [c for c in PALETTE if c not in used]
    for name in names:
        if name not in out:
            out[name] = spare.pop(0) if spare else color(name)
    return out


def diverging(values: np.ndarray | Iterable[float]) -> dict:
    """Heatmap colour settings for signed data: the diverging scale, symmetric limits around 0."""
    arr = np.asarray(values, dtype=np.float64)
    finite = arr[np.isfinite(arr)]
    limit = float(np.abs(finite).max()) if finite.size else 1.0
    limit = limit if limit > 0 else 1.0
    return dict(colorscale=DIVERGING, zmid=0.0, zmin=-limit, zmax=limit)


def hex_to_rgba(hex_color: str, alpha: float) -> str:
    """``#rrggbb`` to an ``rgba(...)`` string, for confidence bands."""
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _tick_label(v: float, powers: bool) -> str:
    exponent = round(math.log10(v))
    if powers and exponent not in (0, 1) and math.isclose(v, 10.0**exponent):
        return "10" + str(exponent).translate(_SUPERSCRIPT)
    return f"{v:,.0f}" if v >= 1 else f"{v:g}"


def log_ticks(values: Iterable[float], *, max_ticks: int = 8) -> dict:
    """Settings of a log axis whose every label reads as a plain number.

    Plotly's own log ticks label the minor steps with bare digits ("2 5 100 2 5"), which reads
    as a list of numbers. Here the ticks are 1-2-5 steps (10, 20, 50, 100, …) where they fit in
    ``max_ticks``, else 1-3 steps, else whole decades (thinned to fit), each labelled in full.
    Within one decade plotly's own ticks already read as numbers, and are kept.

    Args:
        values: The data the axis shows (non-positive and non-finite values are ignored).
        max_ticks: Most labelled ticks.

    Returns:
        ``dict(type="log", tickvals=..., ticktext=...)`` for ``update_xaxes``/``update_yaxes``.
    """
    v = np.asarray(list(values), dtype=np.float64)
    v = v[np.isfinite(v) & (v > 0)]
    if not v.size:
        return dict(type="log")
    low, high = float(v.min()), float(v.max())
    if high < 10 * low:  # within a decade plotly's own ticks are whole numbers already
        return dict(type="log")
    lo, hi = math.floor(math.log10(low)), math.ceil(math.log10(high))
    ticks: list[float] = []
    for steps in ((1, 2, 5), (1, 3), (1,)):
        ticks = [m * 10.0**e for e in range(lo, hi + 1) for m in steps
                 if low / 1.0001 <= m * 10.0**e <= high * 1.0001]
        if len(ticks) <= max_ticks:
            break
    if len(ticks) > max_ticks:
        ticks = ticks[:: math.ceil(len(ticks) / max_ticks)]
    powers = low < 1e-3 or high >= 1e5  # then every decade as a power of ten
    return dict(type="log", tickvals=ticks, ticktext=[_tick_label(t, powers) for t in ticks])
