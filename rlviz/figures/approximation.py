"""Figures of the deadly-triad page: Baird's problem, weights and errors over time, the switchboard.

Weights charts colour the components (w₁…w₆ one family, w₇, w₈); error charts colour the
algorithms, dashed where a learner follows π itself (on-policy). Errors are drawn on a log axis
labelled by decades, where exponential growth is a straight line. A run that diverged ends
where it passed the limit, with a cross and a note: nothing past it is drawn.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import plotly.graph_objects as go

from rlviz.approximation import (
    DIVERGED,
    BairdExperiment,
    Run,
    Switchboard,
    TwoState,
    two_state_growth,
)
from rlviz.figures.theme import INK, MUTED, colors_for, diverging, hex_to_rgba

__all__ = [
    "COLORS",
    "contrast_figure",
    "diagram",
    "growth_figure",
    "method_figure",
    "n_dial_figure",
    "switch_curves",
    "switch_grid",
    "switch_label",
    "two_state_figure",
    "weight_scale",
]

COLORS = colors_for(["td", "policy_evaluation", "tdc", "emphatic_td", "monte_carlo"])
"""Semi-gradient TD (sampled), semi-gradient DP (expected), TDC, emphatic TD, Monte Carlo."""
METHOD_COLOR = {
    "semi-gradient TD": COLORS["td"],
    "semi-gradient DP": COLORS["policy_evaluation"],
    "TDC": COLORS["tdc"],
    "expected TDC": COLORS["tdc"],
    "expected emphatic TD": COLORS["emphatic_td"],
}
UPPER = "#1c7ed6"  # w1..w6, one family
UPPER_SHADES = ("#1864ab", "#1c7ed6", "#339af0", "#4dabf7", "#74c0fc", "#a5d8ff")  # tabular
W7 = "#c2255c"
W8 = "#2b8a3e"
DIVERGES = "#e03131"
FEATURES = "#c2255c"  # the switchboard: Baird's features
TABULAR = "#0c8599"  # the switchboard: one feature per state
STABLE = "#1c7ed6"
FLOOR = 1e-12  # errors below this are drawn at it (the axis says so)
SUB = "₀₁₂₃₄₅₆₇₈₉"


def _sub(k: int) -> str:
    return "".join(SUB[int(c)] for c in str(k))


def _thin(k: int, most: int = 400) -> np.ndarray:
    """Indices of at most ``most`` evenly spread points of ``k``, the last included."""
    if k <= most:
        return np.arange(k)
    return np.unique(np.r_[np.linspace(0, k - 1, most).astype(int), k - 1])


@functools.cache
def _t975(dof: int) -> float:
    from scipy import stats

    return float(stats.t.ppf(0.975, dof))


def _band(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over the last axis and the ends of its 95% t-interval (the mean, for one run).

    The interval is cut to the range of the runs themselves: with few runs and a wide spread
    it could otherwise reach below every run (below zero, on a log axis).
    """
    mean = values.mean(axis=-1)
    n = values.shape[-1]
    if n < 2:
        return mean, mean, mean
    half = _t975(n - 1) * values.std(axis=-1, ddof=1) / math.sqrt(n)
    lo, hi = values.min(axis=-1), values.max(axis=-1)
    return mean, np.clip(mean - half, lo, hi), np.clip(mean + half, lo, hi)


def _band_trace(x, lo, hi, color: str, *, xaxis: str = "x", yaxis: str = "y",
                group: str | None = None) -> go.Scatter:
    return go.Scatter(
        x=np.r_[x, x[::-1]], y=np.r_[hi, lo[::-1]], fill="toself", mode="lines",
        line=dict(width=0), fillcolor=hex_to_rgba(color, 0.18), hoverinfo="skip",
        showlegend=False, xaxis=xaxis, yaxis=yaxis, legendgroup=group,
    )


# --------------------------------------------------------------------------- axes
def weight_scale(runs: list[Run], choice: str = "auto") -> str:
    """``"linear"`` or ``"signed log"``: auto picks the log once a weight passes 1000."""
    if choice != "auto":
        return choice
    top = max(float(np.abs(r.weights[: r.live]).max()) for r in runs)
    return "signed log" if top > 1000 else "linear"


def _slog(y: np.ndarray) -> np.ndarray:
    """sign(y) · log₁₀(1 + |y|): decades away from zero, either side."""
    return np.sign(y) * np.log10(1.0 + np.abs(y))


def _decade(k: int) -> str:
    if k <= 3:
        return str(10**k)
    return "10" + "".join("⁰¹²³⁴⁵⁶⁷⁸⁹"[int(c)] for c in str(k))


def _slog_axis(top: float) -> dict:
    """Ticks of a signed-log axis at 0 and ±10ᵏ, labelled by value."""
    kmax = max(1, math.ceil(math.log10(max(top, 10.0))))
    step = 1 if kmax <= 6 else 2
    ks = range(0, kmax + 1, step)
    vals = [0.0] + [float(_slog(np.array(10.0**k))) for k in ks]
    vals += [-v for v in vals[1:]]
    text = ["0"] + [_decade(k) for k in ks] + ["−" + _decade(k) for k in ks]
    return dict(tickvals=vals, ticktext=text, zeroline=True, zerolinecolor="#ced4da")


def _log_axis(values: list[np.ndarray]) -> dict:
    """A log axis over decades covering ``values`` (clipped at ``FLOOR``), ticks at decades."""
    finite = np.concatenate([np.ravel(v) for v in values])
    finite = finite[np.isfinite(finite) & (finite >= FLOOR)]
    lo = math.floor(math.log10(finite.min())) if finite.size else -1
    hi = math.ceil(math.log10(finite.max())) if finite.size else 1
    hi = max(hi, lo + 1)
    span = hi - lo
    dtick = 1 if span <= 5 else 2 if span <= 10 else 3 if span <= 15 else 4
    return dict(type="log", range=[lo - 0.05, hi + 0.05], dtick=dtick, exponentformat="power",
                showexponent="all", minor=dict(showgrid=False, ticks=""))


def _above(x: np.ndarray, *ys: np.ndarray) -> list[np.ndarray]:
    """The points whose first y reaches ``FLOOR`` (a log axis's floor; later ys are clipped)."""
    keep = ys[0] >= FLOOR
    return [x[keep], ys[0][keep], *(np.maximum(y[keep], FLOOR) for y in ys[1:])]


# --------------------------------------------------------------------------- Baird's problem
def diagram(*, target_solid: float = 1.0, height: int = 330) -> go.Figure:
    """Baird's seven states with their values in the weights (Sutton & Barto 2018, Figure 11.1)."""
    xs = np.linspace(0.0, 10.0, 6)
    top, low = 2.0, (5.0, 0.0)
    notes, shapes = [], []
    arrow = dict(xref="x", yref="y", axref="x", ayref="y", showarrow=True, arrowhead=2, text="")
    for x in xs:
        # solid: from every state to the lower one
        notes.append(dict(x=low[0], y=low[1], ax=x, ay=top, arrowsize=1.1, arrowwidth=1.6,
                          arrowcolor=INK, standoff=18, startstandoff=18, **arrow))
        # dashed: from any state to each upper one (drawn from the lower state, offset)
        x0, y0, x1, y1 = low[0] + 0.25, low[1] + 0.3, x + 0.25, top - 0.3
        xm, ym = x0 + 0.86 * (x1 - x0), y0 + 0.86 * (y1 - y0)
        shapes.append(dict(type="line", x0=x0, y0=y0, x1=xm, y1=ym,
                           line=dict(color=MUTED, width=1.3, dash="dot")))
        notes.append(dict(x=x1, y=y1, ax=xm, ay=ym, arrowsize=1, arrowwidth=1.2,
                          arrowcolor=MUTED, **arrow))
    pi = "1" if target_solid == 1 else f"{target_solid:.3g}"
    notes += [
        dict(x=11.1, y=-1.0, xanchor="right", showarrow=False, align="right",
             font=dict(size=11, color=MUTED), text=f"—— solid → lower state<br>b = 1/7, π = {pi}"),
        dict(x=-1.1, y=-1.0, xanchor="left", showarrow=False, align="left",
             font=dict(size=11, color=MUTED),
             text="······ dashed → an upper state<br>b = 6/7, reward 0 always"),
    ]
    traces = [
        go.Scatter(x=xs, y=[top] * 6, mode="markers+text",
                   text=[f"2w{_sub(i + 1)}+w₈" for i in range(6)], textposition="top center",
                   marker=dict(size=34, color="white", line=dict(color=UPPER, width=2.5)),
                   textfont=dict(size=12, color=INK),
                   hovertemplate="upper state: v̂ = %{text}<extra></extra>"),
        go.Scatter(x=[low[0]], y=[low[1]], mode="markers+text", text=["w₇+2w₈"],
                   textposition="bottom center",
                   marker=dict(size=34, color="white", line=dict(color=W7, width=2.5)),
                   textfont=dict(size=12, color=INK),
                   hovertemplate="lower state: v̂ = w₇+2w₈<extra></extra>"),
    ]
    return go.Figure(data=traces, layout=dict(
        height=height, margin=dict(l=10, r=10, t=10, b=10), showlegend=False,
        xaxis=dict(visible=False, range=[-1.2, 11.2], fixedrange=True),
        yaxis=dict(visible=False, range=[-1.35, 2.8], fixedrange=True),
        annotations=notes, shapes=shapes))


def _weight_traces(run: Run, scale: str) -> tuple[list[go.Scatter], float]:
    """Lines for w₁…w₆, w₇ and w₈: means over runs with 95% bands, and the largest |w| drawn.

    The six upper weights are exchangeable, so they are drawn as their mean.
    """
    keep = _thin(run.live)
    t, w = run.t[keep], run.weights[keep]  # [K, R, F]
    top = float(np.abs(w).max())
    if w.shape[-1] == 8:
        spread = float(np.abs(w[:, :, :6] - w[:, :, :1]).max())
        upper = "w₁…w₆" if spread <= 1e-9 * max(top, 1.0) else "w₁…w₆ (mean of the six)"
        items = [(upper, w[:, :, :6].mean(axis=-1), UPPER), ("w₇", w[:, :, 6], W7),
                 ("w₈", w[:, :, 7], W8)]
    else:
        items = [(f"w{_sub(i + 1)}", w[:, :, i], UPPER_SHADES[i % 6]) for i in range(w.shape[-1])]
    signed = scale == "signed log"
    traces = []
    for name, values, c in items:
        mean, lo, hi = _band(values)
        if values.shape[1] > 1:
            traces.append(_band_trace(t, _slog(lo) if signed else lo,
                                      _slog(hi) if signed else hi, c, group=name))
        traces.append(go.Scatter(
            x=t, y=_slog(mean) if signed else mean, customdata=mean if signed else None,
            mode="lines", line=dict(color=c, width=2), name=name, legendgroup=name,
            hovertemplate=f"{name}: %{{{'customdata' if signed else 'y'}:.4g}}<extra></extra>",
        ))
    return traces, top


def method_figure(run: Run, *, title: str, unit: str, scale: str = "linear",
                  height: int = 560) -> go.Figure:
    """Weights over time (top) and √VE, √PBE on a log axis (bottom) for one method.

    Sampled runs show the mean over runs with a 95% band; ``unit`` names the x axis ("steps"
    or "sweeps").
    """
    traces, top = _weight_traces(run, scale)
    k = run.live
    keep = _thin(k)
    errors, notes = [], []
    for name, values, dash in (("√VE", run.value_error[keep], "solid"),
                               ("√PBE", run.pbe[keep], "dot")):
        x, mean, lo, hi = _above(run.t[keep], *_band(values))
        errors += [mean, lo, hi]
        if values.shape[1] > 1:
            traces.append(_band_trace(x, lo, hi, INK, group=name, xaxis="x2", yaxis="y2"))
        traces.append(go.Scatter(
            x=x, y=mean, mode="lines", name=name, legendgroup=name, xaxis="x2", yaxis="y2",
            line=dict(color=INK, width=2, dash=dash),
            hovertemplate=f"{name}: %{{y:.3g}}<extra></extra>"))
    at = run.diverged_at
    if at is not None:
        y = float(max(run.value_error[k - 1].mean(), FLOOR))
        traces.append(go.Scatter(
            x=[at], y=[y], mode="markers", xaxis="x2", yaxis="y2", showlegend=False,
            marker=dict(symbol="x", size=11, color=DIVERGES),
            hovertemplate=f"diverged at {at:,}: |w| > {_decade(round(math.log10(DIVERGED)))}"
                          "<extra></extra>"))
        notes.append(dict(x=at, y=math.log10(y), xref="x2", yref="y2", showarrow=False,
                          text=f"diverged at {at:,}", xanchor="right", yanchor="bottom",
                          font=dict(size=11, color=DIVERGES)))
    weights_axis = dict(title="weights" if scale == "linear" else "weights (signed log)",
                        domain=[0.47, 1.0])
    if scale == "signed log":
        weights_axis.update(_slog_axis(top))
    n_runs = run.weights.shape[1]
    note = f"mean of {n_runs} runs, 95% band" if n_runs > 1 else "no sampling: one trajectory"
    end = max(float(run.t[k - 1]), 1.0)
    return go.Figure(data=traces, layout=dict(
        height=height, hovermode="x unified", margin=dict(t=104, r=16), annotations=notes,
        # both lines from the top edge down (plotly anchors a two-line title by its first line)
        title=dict(text=f"{title}<br><span style='font-size:12px;color:{MUTED}'>{note}</span>",
                   y=1.0, yref="container", yanchor="top", pad=dict(t=24)),
        legend=dict(orientation="h", y=1.0, yanchor="bottom", x=0.0, font=dict(size=11)),
        xaxis=dict(anchor="y", matches="x2", showticklabels=False, range=[0, end]),
        yaxis=weights_axis,
        xaxis2=dict(anchor="y2", title=unit, range=[0, end]),
        yaxis2=dict(title="RMS error", domain=[0.0, 0.39], **_log_axis(errors)),
    ))


def contrast_figure(exp: BairdExperiment, *, height: int = 400) -> go.Figure:
    """√VE of semi-gradient TD and DP, off-policy against on-policy, on a log axis."""
    traces, lines = [], []
    for run, label in ((exp.td, "TD, off-policy"), (exp.dp, "DP, off-policy"),
                       (exp.td_on, "TD, following π"), (exp.dp_on, "DP, π's distribution")):
        keep = _thin(run.live)
        t, mean, lo, hi = _above(run.t[keep], *_band(run.value_error[keep]))
        c = METHOD_COLOR[run.method]
        if run.weights.shape[1] > 1:
            traces.append(_band_trace(t, lo, hi, c, group=label))
        traces.append(go.Scatter(
            x=t, y=mean, mode="lines", name=label, legendgroup=label,
            line=dict(color=c, width=2.2, dash="dash" if run.on_policy else "solid"),
            hovertemplate=f"{label}: %{{y:.3g}}<extra></extra>"))
        lines += [mean, lo, hi]
        if run.diverged_at is not None and t.size:
            traces.append(go.Scatter(
                x=[t[-1]], y=[mean[-1]], mode="markers+text",
                text=[f"{label.split(',')[0]} diverged at {run.diverged_at:,}"],
                textposition="middle right", marker=dict(symbol="x", size=11, color=DIVERGES),
                textfont=dict(color=DIVERGES, size=11), showlegend=False,
                hovertemplate=f"{label} diverged at {run.diverged_at:,}<extra></extra>"))
    return go.Figure(data=traces, layout=dict(
        height=height, hovermode="x unified", margin=dict(t=70),
        xaxis=dict(title="steps (TD) or sweeps (DP)"),
        yaxis=dict(title="√VE (RMS value error)", **_log_axis(lines))))


# --------------------------------------------------------------------------- w -> 2w
def two_state_figure(res: TwoState, *, height: int = 400) -> go.Figure:
    """|w| over updates on a log axis: the A → B update alone, its closed form, on-policy."""
    off, on = COLORS["td"], INK
    k = np.arange(res.w.size)
    exact = np.abs(two_state_growth(res.gamma, res.alpha)) ** k
    every = slice(None, None, max(1, k.size // 25))
    x_on, w_on = _above(np.arange(res.w_on.size), np.abs(res.w_on))
    traces = [
        go.Scatter(x=k, y=np.abs(res.w), mode="lines", name="A → B alone (off-policy)",
                   line=dict(color=off, width=2.6),
                   hovertemplate="update %{x}: |w| = %{y:.4g}<extra></extra>"),
        go.Scatter(x=k[every], y=exact[every], mode="markers", name="(1 + α(2γ − 1))ᵏ",
                   marker=dict(color=off, size=7, symbol="circle-open"),
                   hovertemplate="closed form: %{y:.4g}<extra></extra>"),
        go.Scatter(x=x_on, y=w_on, mode="lines", name="A → B, then B → end (on-policy)",
                   line=dict(color=on, width=2, dash="dash"),
                   hovertemplate="episode %{x}: |w| = %{y:.4g}<extra></extra>"),
    ]
    if res.diverged_at is not None:
        traces.append(go.Scatter(
            x=[res.diverged_at], y=[abs(res.w[-1])], mode="markers+text",
            text=[f"diverged at {res.diverged_at:,}"], textposition="middle left",
            showlegend=False, marker=dict(symbol="x", size=11, color=DIVERGES),
            textfont=dict(size=11, color=DIVERGES), hoverinfo="skip"))
    return go.Figure(data=traces, layout=dict(
        height=height, margin=dict(t=70),
        legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0.0, font=dict(size=11)),
        xaxis=dict(title="updates (episodes, on-policy)"),
        yaxis=dict(title="|w|", **_log_axis([np.abs(res.w), np.abs(res.w_on), exact]))))


def growth_figure(res: TwoState, *, height: int = 400) -> go.Figure:
    """The w → 2w factor per update against γ at this α: above 1 from γ = ½ on."""
    off, on = COLORS["td"], INK
    gammas = np.linspace(0.0, 0.99, 100)
    now = two_state_growth(res.gamma, res.alpha)
    traces = [
        go.Scatter(x=gammas, y=[two_state_growth(g, res.alpha) for g in gammas], mode="lines",
                   line=dict(color=off, width=2.6), name="off-policy, per update",
                   hovertemplate="γ = %{x:.2f}: ×%{y:.5f} per update<extra></extra>"),
        go.Scatter(x=gammas, y=[two_state_growth(g, res.alpha, on_policy=True) for g in gammas],
                   mode="lines", line=dict(color=on, width=2, dash="dash"),
                   name="on-policy, per episode",
                   hovertemplate="γ = %{x:.2f}: ×%{y:.5f} per episode<extra></extra>"),
        go.Scatter(x=[res.gamma], y=[now], mode="markers", showlegend=False,
                   marker=dict(size=11, color=off, line=dict(color="white", width=1.5)),
                   hovertemplate=f"your γ: ×{now:.5f}<extra></extra>"),
    ]
    guide = dict(color=MUTED, width=1, dash="dot")
    return go.Figure(data=traces, layout=dict(
        height=height, margin=dict(t=70),
        legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0.0, font=dict(size=11)),
        annotations=[dict(x=0.5, y=1.0, yref="y domain", text="γ = ½", showarrow=False,
                          xanchor="right", yanchor="top", xshift=-3,
                          font=dict(size=11, color=MUTED))],
        shapes=[dict(type="line", xref="x domain", x0=0, x1=1, y0=1, y1=1, line=guide),
                dict(type="line", yref="y domain", x0=0.5, x1=0.5, y0=0, y1=1, line=guide)],
        xaxis=dict(title="γ", range=[0, 1], dtick=0.25),
        yaxis=dict(title=f"growth factor (α = {res.alpha:g})")))


# --------------------------------------------------------------------------- the switchboard
def switch_label(key: tuple[int, int, int], n: int) -> str:
    """A setting of the three switches in words, e.g. ``off-policy · n = 1 · features``."""
    o, b, a = key
    return " · ".join(["off-policy" if o else "on-policy", f"n = {n}" if b else "Monte Carlo",
                       "features" if a else "tabular"])


def _short(key: tuple[int, int, int], n: int) -> str:
    """A legend-sized label: ``off · n=1 · approx``."""
    o, b, a = key
    return f"{'off' if o else 'on'} · {f'n={n}' if b else 'MC'} · {'approx' if a else 'tabular'}"


def _status(rho: float) -> str:
    if rho > 1.0 + 1e-9:
        return "diverges"
    if rho < 1.0 - 1e-9:
        return "converges"
    return "bounded"


def _decades_lost(rho: float) -> float:
    """Decades the error loses per 1000 sweeps, capped at ±3 (the switchboard's colour).

    Exactly 0 where it neither grows nor shrinks.
    """
    if _status(rho) == "bounded":
        return 0.0
    return float(np.clip(-1000.0 * math.log10(rho), -3, 3))


def _per_1000(rho: float) -> str:
    decades = 1000.0 * math.log10(rho)
    if abs(decades) < 2:
        return f"×{10**decades:.3g}"
    return f"×10^{decades:.0f}" if decades > 0 else f"×10^−{-decades:.0f}"


def switch_grid(sb: Switchboard, chosen: tuple[int, int, int], *, height: int = 380) -> go.Figure:
    """The eight settings of the triad, coloured by how fast the error changes per 1000 sweeps.

    Rows: sampling and representation; columns: bootstrapping or Monte Carlo. Blue converges,
    red diverges (the diverging scale, centred at "no change", capped at three decades either
    way); the chosen setting is outlined.
    """
    rows = [(1, 1), (1, 0), (0, 1), (0, 0)]  # (off_policy, approximation)
    row_names = ["off-policy<br>features", "off-policy<br>tabular", "on-policy<br>features",
                 "on-policy<br>tabular"]
    cols = [1, 0]  # bootstrapping
    col_names = [f"bootstraps (n = {sb.n})", "Monte Carlo"]
    z, text, hover = [], [], []
    for o, a in rows:
        growth = [sb.growth[(o, b, a)] for b in cols]
        z.append([_decades_lost(g) for g in growth])
        text.append([f"<b>{_status(g)}</b><br>{_per_1000(g)} / 1000" for g in growth])
        hover.append([f"{switch_label((o, b, a), sb.n)}<br>{_status(g)}: ×{g:.6f} per sweep"
                      for b, g in zip(cols, growth, strict=True)])
    o, b, a = chosen
    ri, ci = rows.index((o, a)), cols.index(b)
    return go.Figure(
        data=[go.Heatmap(z=z, x=col_names, y=row_names, text=text, texttemplate="%{text}",
                         textfont=dict(size=12), customdata=hover,
                         hovertemplate="%{customdata}<extra></extra>", showscale=False, xgap=3,
                         ygap=3, **diverging([-3, 3]))],
        layout=dict(height=height, margin=dict(l=92, r=10, t=30, b=10),
                    xaxis=dict(side="top", showgrid=False, ticks="", fixedrange=True),
                    yaxis=dict(autorange="reversed", showgrid=False, ticks="", fixedrange=True),
                    shapes=[dict(type="rect", x0=ci - 0.5, x1=ci + 0.5, y0=ri - 0.5,
                                 y1=ri + 0.5, line=dict(color=INK, width=3))]),
    )


def switch_curves(sb: Switchboard, chosen: tuple[int, int, int], *,
                  height: int = 440) -> go.Figure:
    """√VE over sweeps for every setting; the chosen one bold, the rest thin.

    Red diverges, blue converges, grey neither (the learner never sees some states); dashed
    lines update in π's own distribution.
    """
    traces, lines = [], []
    for key, run in sb.runs.items():
        k = run.live
        keep = _thin(k, 300)
        x, y = _above(run.t[keep], run.value_error[keep, 0])
        lines.append(y)
        status = _status(sb.growth[key])
        c = DIVERGES if status == "diverges" else STABLE if status == "converges" else MUTED
        mine = key == chosen
        traces.append(go.Scatter(
            x=x, y=y, mode="lines", name=_short(key, sb.n), opacity=1.0 if mine else 0.6,
            line=dict(color=c, width=3.4 if mine else 1.4, dash="solid" if key[0] else "dash"),
            hovertemplate=f"{switch_label(key, sb.n)}: %{{y:.3g}}<extra></extra>"))
        if run.diverged_at is not None and y.size:
            traces.append(go.Scatter(x=[x[-1]], y=[y[-1]], mode="markers", showlegend=False,
                                     marker=dict(symbol="x", size=10, color=DIVERGES),
                                     hoverinfo="skip"))
    return go.Figure(data=traces, layout=dict(
        height=height, hovermode="x unified", margin=dict(t=130),
        xaxis=dict(title="sweeps (expected updates)"),
        yaxis=dict(title="√VE", **_log_axis(lines)),
        legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0.0, font=dict(size=11))))


def n_dial_figure(sb: Switchboard, chosen: tuple[int, int, int], *,
                  height: int = 440) -> go.Figure:
    """Error decades gained per 1000 sweeps against n, for each sampling and representation.

    Above zero the expected update diverges. Monte Carlo (n = ∞) is the point at the right.
    """
    mc_x = float(sb.ns[-1]) + 6
    traces = []
    for (o, a), g in sb.growth_by_n.items():
        label = f"{'off' if o else 'on'}-policy, {'features' if a else 'tabular'}"
        mine = (o, a) == (chosen[0], chosen[2])
        traces.append(go.Scatter(
            x=np.r_[sb.ns, mc_x], y=1000.0 * np.log10(np.r_[g, sb.growth_mc[(o, a)]]),
            mode="lines+markers", name=label,
            line=dict(color=FEATURES if a else TABULAR, dash="solid" if o else "dash",
                      width=3 if mine else 1.6),
            marker=dict(size=[4] * sb.ns.size + [10]),
            hovertemplate=f"{label}: %{{y:.3f}}<extra></extra>"))
    shapes = [dict(type="line", xref="paper", x0=0, x1=1, y0=0, y1=0,
                   line=dict(color=INK, width=1))]
    notes = []
    star = sb.first_stable_n
    if star is not None and star > 1:
        shapes.append(dict(type="line", yref="paper", x0=star - 0.5, x1=star - 0.5, y0=0, y1=1,
                           line=dict(color=DIVERGES, width=1, dash="dot")))
        notes.append(dict(x=star - 0.5, y=1, yref="paper", xanchor="left", yanchor="top",
                          showarrow=False, xshift=4, font=dict(size=11, color=DIVERGES),
                          text=f"stable from n = {star}"))
    ticks = [t for t in (1, 5, 10, 20, 30, 40) if t <= sb.ns[-1]]
    return go.Figure(data=traces, layout=dict(
        height=height, hovermode="x unified", margin=dict(t=80), shapes=shapes,
        annotations=notes,
        legend=dict(orientation="h", y=1.02, yanchor="bottom", x=0.0, font=dict(size=11)),
        xaxis=dict(title="n (steps before bootstrapping)", tickvals=ticks + [mc_x],
                   ticktext=[str(t) for t in ticks] + ["∞ MC"], range=[0, mc_x + 3],
                   tickangle=0),
        yaxis=dict(title="error decades per 1000 sweeps", zeroline=False)))


# --------------------------------------------------------------------------- words
def sci(x: float) -> str:
    """A number for a sentence: 17,190, 0.0074 or 3.2 × 10⁻⁷."""
    if 1e3 <= abs(x) < 1e6:
        return f"{x:,.0f}"
    if 1e-3 <= abs(x) < 1e3:
        return f"{x:.4g}"
    mantissa, exponent = f"{x:.2e}".split("e")
    power = "".join("⁰¹²³⁴⁵⁶⁷⁸⁹⁻"["0123456789-".index(c)] for c in str(int(exponent)))
    return f"10{power}" if mantissa == "1.00" else f"{mantissa} × 10{power}"


def stopped_note(run: Run, unit: str) -> str:
    """"<method> diverged at …" for a run that passed the limit, else ""."""
    if run.diverged_at is None:
        return ""
    return (f"**{run.method}** diverged: a weight passed {sci(DIVERGED)} at {unit} "
            f"{run.diverged_at:,}, where its curves stop.")


def baird_text(exp: BairdExperiment) -> str:
    """The problem in words, and whether this view's weights run away."""
    p = float(exp.problem.target[0, 0])
    how = " always" if p == 1 else f", {p:.3g} of the time"
    end = ("and still the weights run away." if exp.growth > 1 + 1e-9 else
           "and at these settings the expected update does not run away.")
    return ("Seven states, every reward 0, so the true value is 0 everywhere. The behaviour b "
            "takes *dashed* 6 times in 7, so it visits every state equally; the target π takes "
            f"*solid*, to the lower state{how}. Eight weights for seven states: the features can "
            f"represent the true values exactly (w ∝ (1, 1, 1, 1, 1, 1, 4, −2)), {end}")


def baird_caption(exp: BairdExperiment) -> str:
    return (f"Growth of DP's error per sweep: ×{exp.growth:.6f} off-policy, ×{exp.growth_on:.6f} "
            f"in π's own distribution, ×{exp.growth_tabular:.6f} off-policy with one feature "
            "per state.")


def contrast_caption(exp: BairdExperiment) -> str:
    notes = [n for n in (stopped_note(exp.td, "step"), stopped_note(exp.dp, "sweep")) if n]
    return " ".join(notes) or (
        "Solid: learning about π from b's experience (off-policy). Dashed: the same updates on "
        "π's own experience. Following π at π(solid) = 1 visits only the lower state, so only "
        "its value is learned.")


def worked_update(res: TwoState) -> str:
    """The first w → 2w update as LaTeX, with the values it uses."""
    return (rf"\begin{{aligned}} w &\leftarrow w + \alpha\,(\gamma\cdot 2w - w)\cdot 1 \\"
            rf"&= 1 + {res.alpha:g}\,({res.gamma:g}\cdot 2 \cdot 1 - 1) \\"
            rf"&= {res.w[1]:.10g} = 1 + \alpha(2\gamma - 1) \end{{aligned}}")


def two_state_caption(res: TwoState, updates: int) -> str:
    factor = two_state_growth(res.gamma, res.alpha)
    verdict = "grows" if factor > 1 else "shrinks" if factor < 1 else "stays"
    stop = (f" (the run stops at update {res.diverged_at:,}, past {sci(DIVERGED)})"
            if res.diverged_at else "")
    return (f"Every update multiplies w by the same factor, so w {verdict} geometrically: after "
            f"{updates:,} updates w = {factor:.10g} to the power {updates:,} = "
            f"{sci(factor ** updates)}{stop}. On-policy the second state's own update (to the "
            f"end, target 0) shrinks w by 1 − 4α = {1 - 4 * res.alpha:.10g} in the same episode. "
            "It grows exactly when γ > ½, whatever α is.")


def gradient_text(tdc: Run, etd: Run, gamma: float) -> tuple[str, str]:
    """What expected TDC and expected emphatic TD did in this view."""
    first = (f"**TDC** descends the projected Bellman error: after {tdc.steps:,} sweeps "
             f"√PBE = {sci(float(tdc.pbe[tdc.live - 1, 0]))} while √VE = "
             f"{sci(float(tdc.value_error[tdc.live - 1, 0]))}. Baird's features represent every "
             "value function, so the projection Π is the identity and PBE is the Bellman error "
             f"itself; with γ = {gamma:g} a small Bellman error still allows a large value "
             "error, which TDC removes only slowly.")
    ve = etd.value_error[: etd.live, 0]
    path = f"Its √VE goes from {sci(float(ve[0]))}"
    if ve.max() > ve[0] * 1.01:
        path += f", up to {sci(float(ve.max()))} while the emphasis builds,"
    second = ("**Emphatic TD** reweights each state's update by its expected emphasis, which "
              "starts at b's distribution and grows toward (I − γP_πᵀ)⁻¹d as the followon trace "
              f"builds up. {path} to {sci(float(ve[-1]))}. Sampled, the emphasis is a product "
              "of ratios (7 or 0 at π(solid) = 1), far too noisy to use here: the book shows "
              "only its expectation.")
    return first, second


def switch_caption(sb: Switchboard, chosen: tuple[int, int, int]) -> str:
    run, rho = sb.runs[chosen], sb.growth[chosen]
    stop = f", diverged at sweep {run.diverged_at:,}" if run.diverged_at else ""
    return (f"**{switch_label(chosen, sb.n)}**: the error changes by ×{rho:.6f} per sweep in the "
            f"long run; √VE {sci(float(run.value_error[0, 0]))} → "
            f"{sci(float(run.value_error[run.live - 1, 0]))}{stop} after {run.steps:,} sweeps.")


def n_caption(sb: Switchboard, alpha: float) -> str:
    star, limit, crit = sb.first_stable_n, sb.first_stable_n_small_alpha, sb.critical_gamma
    note = ("On Baird's problem every row of P_π is the same distribution, so Pⁿ = P_π and the "
            "n-step update is the one-step update with discount γⁿ: bootstrapping fades as γⁿ "
            "falls.")
    if crit is None:
        return note + " With these policies off-policy TD(0) does not diverge for any γ < 1."
    if limit is not None:
        note += (f" Off-policy with features, for small α it diverges exactly when γⁿ > γ* = "
                 f"{crit:.6f} (15/17 at π(solid) = 1): stable from n = {limit}.")
    if star is not None and star != limit:
        note += (f" At α = {alpha:g} the eigenvalues are complex and the step size adds a "
                 f"little growth: stable from n = {star}.")
    return note


def tables(exp: BairdExperiment, grad, two: TwoState, sb: Switchboard) -> dict:
    """The view's numbers for export: mean weights and errors per recorded step, and more."""
    import pandas as pd

    def table(run: Run, unit: str) -> pd.DataFrame:
        k = run.live
        mean = run.weights[:k].mean(axis=1)
        return pd.DataFrame({unit: run.t[:k],
                             **{f"w{i + 1}": mean[:, i] for i in range(mean.shape[1])},
                             "rms_ve": run.value_error[:k].mean(axis=1),
                             "rms_pbe": run.pbe[:k].mean(axis=1)})

    return {
        "td": table(exp.td, "step"), "dp": table(exp.dp, "sweep"),
        "td_on_policy": table(exp.td_on, "step"), "dp_on_policy": table(exp.dp_on, "sweep"),
        "tdc": table(grad.tdc, "step"), "tdc_expected": table(grad.tdc_expected, "sweep"),
        "etd_expected": table(grad.etd_expected, "sweep"),
        "two_state": pd.DataFrame({"update": np.arange(two.w.size), "w": two.w}),
        "switchboard": pd.DataFrame([
            {"setting": switch_label(k, sb.n), "growth_per_sweep": sb.growth[k],
             "rms_ve_start": float(r.value_error[0, 0]),
             "rms_ve_end": float(r.value_error[r.live - 1, 0]), "diverged_at": r.diverged_at}
            for k, r in sb.runs.items()]),
    }


EQUATIONS = [
    ("Off-policy semi-gradient TD(0), with the importance ratio of the action taken",
     r"\delta_t = R_{t+1} + \gamma\,\mathbf w_t^\top \mathbf x_{t+1} - \mathbf w_t^\top"
     r"\mathbf x_t,\qquad \mathbf w_{t+1} = \mathbf w_t + \alpha\,\rho_t\,\delta_t\,"
     r"\mathbf x_t,\qquad \rho_t = \frac{\pi(A_t\mid S_t)}{b(A_t\mid S_t)}"),
    ("Semi-gradient DP: the same update in expectation, over the update distribution d "
     "(uniform on Baird's: 1/|S| each)",
     r"\mathbf w_{k+1} = \mathbf w_k + \alpha \sum_s d(s)\Big(\mathbb E_\pi\big[R + \gamma"
     r"\,\hat v(S',\mathbf w_k) \mid s\big] - \hat v(s,\mathbf w_k)\Big)\,\mathbf x(s)"),
    ("The values move linearly; they grow if some eigenvalue of K exceeds 1 in modulus "
     "(n-step: γⁿ and Pⁿ)",
     r"X\mathbf w_{k+1} = K\,X\mathbf w_k + c,\qquad K = I - \alpha\,XX^\top D\,"
     r"(I - \gamma^n P_\pi^n)"),
    ("w → 2w: one update of the single transition", r"w_{t+1} = w_t + \alpha\,(0 + \gamma"
     r"\,2w_t - w_t)\cdot 1 = \big(1 + \alpha(2\gamma - 1)\big)\,w_t"),
    ("Projection and projected Bellman error, in the behaviour's distribution D",
     r"\Pi = X\,(X^\top D X)^{+}X^\top D,\qquad \bar\delta_{\mathbf w} = r_\pi + \gamma P_\pi"
     r" X\mathbf w - X\mathbf w,\qquad \overline{\mathrm{PBE}}(\mathbf w) = \big\lVert \Pi\,"
     r"\bar\delta_{\mathbf w}\big\rVert_D^2"),
    ("TDC (gradient-corrected TD); v estimates E[δ x] by least squares",
     r"\mathbf w \leftarrow \mathbf w + \alpha\rho_t\big(\delta_t\mathbf x_t - \gamma\,"
     r"\mathbf x_{t+1}\,\mathbf x_t^\top\mathbf v\big),\qquad \mathbf v \leftarrow "
     r"\mathbf v + \beta\rho_t\big(\delta_t - \mathbf v^\top\mathbf x_t\big)\mathbf x_t"),
    ("Emphatic TD(0): the followon trace M reweights each update; in expectation f",
     r"M_t = \gamma\rho_{t-1}M_{t-1} + I_t,\quad \mathbf w \leftarrow \mathbf w + \alpha M_t"
     r"\rho_t\delta_t\mathbf x_t,\qquad f_{t+1} = d\circ i + \gamma P_\pi^\top f_t"),
    ("The RMS errors of the charts (true values v_π = 0 here)",
     r"\sqrt{\overline{\mathrm{VE}}} = \Big(\sum_s d(s)\big(\hat v(s,\mathbf w) - "
     r"v_\pi(s)\big)^2\Big)^{1/2}"),
]
"""The page's equations: (caption, LaTeX)."""
