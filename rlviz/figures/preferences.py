"""Figures of the preference-learning page.

The reward model against gold, the policies, the over-optimisation chart, training, DPO's
implicit reward, the worked losses and the known-answer rows.

Multi-panel figures are laid out directly (axis domains as plain dicts, one ``go.Figure`` call).
Colours: one per method (π_ref grey, the closed form blue, best-of-n orange, DPO violet, the
policy gradient green); gold reward amber and the reward model teal wherever rewards are drawn;
on the over-optimisation chart solid lines are gold and dashed lines the proxy.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rlviz.figures.theme import DIVERGING, INK, MUTED, color, hex_to_rgba
from rlviz.interview.whiteboard import rlhf as whiteboard
from rlviz.preferences import (
    GOLD_PEAK,
    Data,
    PolicyRun,
    Scores,
    Verification,
    dpo_loss,
)

__all__ = [
    "COLORS",
    "EQUATIONS",
    "LABELS",
    "distance",
    "frontier_figure",
    "implicit_reward_figure",
    "known_answers",
    "policies_caption",
    "policies_figure",
    "policy_table",
    "reward_figure",
    "training_figure",
    "worked_bt",
    "worked_dpo",
]

COLORS = {
    "reference": color("behaviour"),
    "closed_form": "#1c7ed6",
    "best_of_n": "#e8590c",
    "dpo": "#7048e8",
    "policy_gradient": "#2b8a3e",
    "gold": "#e67700",
    "proxy": "#0c8599",
}
LABELS = {
    "reference": "π_ref",
    "closed_form": "closed form π*",
    "dpo": "DPO",
    "policy_gradient": "KL-penalised PG",
    "best_of_n": "best-of-n",
}
GAO = "Gao, Schulman & Hilton (2022)"
DPO_PAPER = "Rafailov et al. (2023)"
BON_PAPER = "Beirami et al. (2024)"
NO_DATA = "rgba(134,142,150,0.14)"
NEG, POS = DIVERGING[0][1], DIVERGING[-1][1]
LEGEND_ABOVE = dict(orientation="h", yanchor="bottom", y=1.02, x=0.0)
"""A legend over the plot: plotly widens the top margin for it, so however many rows it wraps
into on a phone it covers neither the plot nor the x-axis title."""


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """``(first, last)`` index of each run of True in a 1-D mask."""
    padded = np.concatenate([[False], mask, [False]]).astype(np.int8)
    edges = np.flatnonzero(np.diff(padded))
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _uncovered(data: Data, yref: str = "paper", y0: float = 0.0, y1: float = 1.0) -> list[dict]:
    """Grey bands over the responses that appear in no pair."""
    x, half = data.space.x, 0.5 * float(data.space.x[1] - data.space.x[0])
    return [dict(type="rect", xref="x", yref=yref, x0=x[a] - half, x1=x[b] + half, y0=y0,
                 y1=y1, fillcolor=NO_DATA, line_width=0, layer="below")
            for a, b in _runs(data.counts == 0)]


def _peak_line(y0: float = 0.0, y1: float = 1.0) -> dict:
    return dict(type="line", xref="x", yref="paper", x0=GOLD_PEAK, x1=GOLD_PEAK, y0=y0, y1=y1,
                line=dict(color=COLORS["gold"], width=1.2, dash="dot"))


def _title(text: str, y: float) -> dict:
    return dict(text=f"<b>{text}</b>", xref="paper", yref="paper", x=0.0, y=y,
                xanchor="left", yanchor="bottom", showarrow=False, font=dict(size=13))


# Short lines, so that each fits a phone's width: (caption, LaTeX), an empty caption continues.
EQUATIONS = (
    ("Bradley–Terry: the chance that y_w is preferred to y_l, and the reward model's loss",
     r"P(y_w \succ y_l) = \sigma\big(r(y_w) - r(y_l)\big)"),
    ("", r"\mathcal L_{RM}(\theta) = -\mathbb E\,\log\sigma\big(r_\theta(y_w)"
         r" - r_\theta(y_l)\big)"),
    ("The KL-regularised objective and its closed-form maximiser (value β log Z)",
     r"\max_\pi\; \mathbb E_{y\sim\pi}[r(y)] - \beta\,\mathrm{KL}(\pi\,\|\,\pi_{ref})"),
    ("", r"\pi^*(y) = \pi_{ref}(y)\,e^{r(y)/\beta} / Z"),
    ("DPO: invert the optimum for r; Z cancels in the Bradley–Terry difference",
     r"r(y) = \beta\log\frac{\pi^*(y)}{\pi_{ref}(y)} + \beta\log Z"),
    ("", r"\mathcal L_{DPO} = -\mathbb E\,\log\sigma(z)"),
    ("", r"z = \beta\log\frac{\pi_\theta(y_w)}{\pi_{ref}(y_w)} - \beta\log\frac{\pi_\theta(y_l)}"
         r"{\pi_{ref}(y_l)}"),
    ("DPO's gradient: each pair weighted by σ(−z), how wrong its implicit reward still is",
     r"\nabla\mathcal L_{DPO} = -\beta\,\mathbb E\big[\sigma(-z)\,g\big]"),
    ("", r"g = \nabla\log\pi_\theta(y_w) - \nabla\log\pi_\theta(y_l)"),
    ("The KL-penalised policy gradient from B samples: the KL folded into each score, a "
     "leave-one-out baseline", r"s_i = r(y_i) - \beta\log\frac{\pi(y_i)}{\pi_{ref}(y_i)}"),
    ("", r"\widehat{\nabla J} = \frac1B\sum_{i}\big(s_i - b_i\big)\nabla\log\pi(y_i)"),
    ("", r"b_i = \frac{1}{B-1}\sum_{j\ne i}s_j"),
    ("Sampled KL estimates at y ~ π, with ρ = π_ref(y)/π(y)",
     r"k_1 = -\log\rho, \quad k_2 = \tfrac12(\log\rho)^2"),
    ("", r"k_3 = (\rho - 1) - \log\rho"),
    ("Best-of-n by r from π_ref (F, F⁻: mass at or below, strictly below r(y); T = F − F⁻)",
     r"P_n(y) = \frac{\pi_{ref}(y)}{T(y)}\big(F(y)^n - F^-(y)^n\big)"),
    ("", r"\mathrm{KL} \le \log n - \frac{n-1}{n}, \quad \text{win} \le \frac{n}{n+1}"),
    (f"The functional forms of {GAO}, with d = √KL",
     r"R_{bon}(d) = d\,(\alpha_{bon} - \beta_{bon}\,d)"),
    ("", r"R_{RL}(d) = d\,(\alpha_{RL} - \beta_{RL}\log d)"),
)


# ----------------------------------------------------------------------- the reward model
def reward_figure(data: Data, *, height: int = 640) -> go.Figure:
    """Gold and learned reward per response, the model's error, and where the pairs are.

    Three panels over the length axis: rewards (the model shifted to gold's mean under
    ``π_ref``: a Bradley–Terry reward is known only up to a constant), the error ``r̂ − r*``,
    and ``π_ref`` beside each response's share of the pairs. Grey bands: no pair touches them.
    """
    s = data.space
    x = s.x
    proxy = data.aligned(data.proxy)
    err = proxy - s.gold
    share = data.counts / (2.0 * data.pairs.n)
    width = float(x[1] - x[0]) * 0.8
    traces = [
        go.Scatter(x=x, y=s.gold, name="gold reward r* (hidden)", mode="lines",
                   line=dict(color=COLORS["gold"], width=3),
                   hovertemplate="length %{x:.3f}<br>r* %{y:.3f}<extra>gold</extra>"),
        go.Scatter(x=x, y=proxy, name="reward model r̂ (learned)", mode="lines+markers",
                   marker=dict(size=4), line=dict(color=COLORS["proxy"], width=2.4),
                   hovertemplate="length %{x:.3f}<br>r̂ %{y:.3f}<extra>reward model</extra>"),
        go.Bar(x=x, y=err, width=width, name="error r̂ − r*", xaxis="x2", yaxis="y2",
               marker_color=np.where(err >= 0, POS, NEG).tolist(), showlegend=False,
               hovertemplate="length %{x:.3f}<br>r̂ − r* %{y:.3f}<extra></extra>"),
        go.Bar(x=x, y=s.p_ref, width=width, name="π_ref", xaxis="x3", yaxis="y3",
               marker_color=hex_to_rgba(COLORS["reference"], 0.55),
               hovertemplate="length %{x:.3f}<br>π_ref %{y:.4f}<extra></extra>"),
        go.Scatter(x=x, y=share, name="share of the pairs", mode="markers", xaxis="x3",
                   yaxis="y3", marker=dict(size=6, color=COLORS["proxy"], symbol="circle-open",
                                           line=dict(width=1.6)),
                   hovertemplate="length %{x:.3f}<br>in %{customdata} pairs<extra></extra>",
                   customdata=data.counts),
    ]
    span = [float(x[0]) - width, float(x[-1]) + width]
    top, mid, low = [0.52, 1.0], [0.30, 0.44], [0.0, 0.20]
    shapes = _uncovered(data) + [_peak_line()]
    layout = go.Layout(
        height=height, bargap=0.1, shapes=shapes,
        legend=LEGEND_ABOVE,
        margin=dict(l=60, r=20, t=50, b=50),
        xaxis=dict(domain=[0, 1], anchor="y", range=span, showticklabels=False, matches="x3"),
        yaxis=dict(domain=top, title=dict(text="reward")),
        xaxis2=dict(domain=[0, 1], anchor="y2", range=span, showticklabels=False,
                    matches="x3"),
        yaxis2=dict(domain=mid, title=dict(text="r̂ − r*"), zeroline=True,
                    zerolinecolor="#ced4da"),
        xaxis3=dict(domain=[0, 1], anchor="y3", range=span,
                    title=dict(text="response length (0 shortest, 1 longest)")),
        yaxis3=dict(domain=low, title=dict(text="probability"), rangemode="tozero"),
        annotations=[
            _title("The model's error", mid[1] + 0.01),
            _title("Where the pairs are", low[1] + 0.01),
            dict(x=GOLD_PEAK, y=1.0, xref="x", yref="paper", yanchor="top", xanchor="left",
                 xshift=4, showarrow=False, text="gold's best length",
                 font=dict(size=11, color=COLORS["gold"])),
        ],
    )
    return go.Figure(data=traces, layout=layout)


# ------------------------------------------------------------------------------ policies
def policies_figure(run: PolicyRun, data: Data, *, height: int = 440) -> go.Figure:
    """π_ref, the closed-form π*, DPO, the policy gradient and best-of-n over the responses."""
    x = data.space.x
    p = {name: np.exp(lp) for name, lp in run.logp.items()}
    pg_runs = np.exp(run.pg.logp[-1])  # [R, K]
    traces = [
        go.Scatter(x=x, y=p["reference"], name=LABELS["reference"], mode="lines",
                   line=dict(color=COLORS["reference"], width=1.5), fill="tozeroy",
                   fillcolor=hex_to_rgba(COLORS["reference"], 0.25),
                   hovertemplate="length %{x:.3f}<br>π_ref %{y:.4f}<extra></extra>"),
        go.Scatter(x=x, y=p["closed_form"], name=f"closed form π* (β = {run.beta:g})",
                   mode="lines", line=dict(color=COLORS["closed_form"], width=3.2),
                   hovertemplate="length %{x:.3f}<br>π* %{y:.4f}<extra></extra>"),
        go.Scatter(x=x, y=p["best_of_n"], name=f"best-of-{run.bon.n}", mode="lines",
                   line=dict(color=COLORS["best_of_n"], width=2, dash="dash"),
                   hovertemplate="length %{x:.3f}<br>best-of-n %{y:.4f}<extra></extra>"),
        go.Scatter(x=x, y=p["dpo"], name="DPO", mode="markers",
                   marker=dict(color=COLORS["dpo"], size=8, symbol="circle-open",
                               line=dict(width=2)),
                   hovertemplate="length %{x:.3f}<br>DPO %{y:.4f}<extra></extra>"),
        go.Scatter(x=x, y=p["policy_gradient"],
                   name=f"KL-penalised PG (mean of {pg_runs.shape[0]} runs)", mode="markers",
                   marker=dict(color=COLORS["policy_gradient"], size=7, symbol="x-thin",
                               line=dict(width=2, color=COLORS["policy_gradient"])),
                   error_y=dict(type="data", symmetric=False,
                                array=pg_runs.max(0) - p["policy_gradient"],
                                arrayminus=p["policy_gradient"] - pg_runs.min(0),
                                color=hex_to_rgba(COLORS["policy_gradient"], 0.5),
                                thickness=1.2, width=0),
                   hovertemplate="length %{x:.3f}<br>PG %{y:.4f}<extra></extra>"),
    ]
    layout = go.Layout(
        height=height, shapes=_uncovered(data) + [_peak_line()],
        legend=LEGEND_ABOVE,
        margin=dict(l=60, r=20, t=70, b=50),
        xaxis=dict(title=dict(text="response length"),
                   range=[-0.02, 1.02]),
        yaxis=dict(title=dict(text="probability"), rangemode="tozero"),
    )
    return go.Figure(data=traces, layout=layout)


def distance(x: float) -> str:
    """A total variation (0 to 1) as text: three decimals, or an exponent when tiny."""
    return f"{x:.3f}" if x >= 1e-3 else f"{x:.1e}"


def policies_caption(run: PolicyRun, v: Verification) -> str:
    """What the policies chart shows: how close DPO and the policy gradient came to π*."""
    runs = run.pg.logp.shape[1]
    where = ("On the reward model's features" if run.policy == "features"
             else "With one logit per response")
    return (f"{where}, DPO ends {distance(v.tv_dpo)} and the policy gradient (mean of {runs} "
            f"run{'s' if runs > 1 else ''}; bars: the runs' range) {distance(v.tv_pg)} from π* "
            "in total variation. Grey bands: responses in no pair; dotted: gold's best length.")


def policy_table(run: PolicyRun, data: Data) -> pd.DataFrame:
    """Each policy's exact KL, √KL, proxy and gold rewards (relative to π_ref) and objective."""
    table = run.table(data)
    rows = []
    for name, sc in table.items():
        label = f"best-of-{run.bon.n}" if name == "best_of_n" else LABELS[name]
        rows.append({
            "policy": label, "KL(π‖π_ref)": float(sc.kl), "√KL": float(sc.sqrt_kl),
            "proxy r̂ gain": float(sc.proxy), "gold r* gain": float(sc.gold),
            f"r̂ gain − {run.beta:g}·KL": float(sc.proxy) - run.beta * float(sc.kl),
        })
    return pd.DataFrame(rows)


# -------------------------------------------------------------------- over-optimisation
def _curve(d, y, name, c, dash, group, hover, custom, show=True, width=2.6) -> go.Scatter:
    return go.Scatter(x=d, y=y, name=name, mode="lines", legendgroup=group, showlegend=show,
                      line=dict(color=c, dash=dash, width=width), customdata=custom,
                      hovertemplate=hover)


def frontier_figure(data: Data, run: PolicyRun, *, height: int = 500) -> go.Figure:
    """Gold and proxy reward against √KL for the β sweep and best-of-n, choices marked.

    Solid: gold reward; dashed: the reward model's (the proxy). Thin dotted: the functional
    forms of Gao, Schulman & Hilton (2022) fitted to the gold curves, and the best gold reward
    any policy reaches at that KL (the gold reward's own π*).
    """
    f = data.frontier
    c_cf, c_bon = COLORS["closed_form"], COLORS["best_of_n"]
    hover_b = ("β = %{customdata:.3g}<br>√KL %{x:.3f}<br>%{y:.3f}<extra>%{fullData.name}"
               "</extra>")
    hover_n = ("n = %{customdata}<br>√KL %{x:.3f}<br>%{y:.3f}<extra>%{fullData.name}"
               "</extra>")
    traces = [
        _curve(f.sweep.sqrt_kl, f.sweep.gold, "π*_β: gold", c_cf, "solid", "cf", hover_b,
               f.betas),
        _curve(f.sweep.sqrt_kl, f.sweep.proxy, "π*_β: proxy", c_cf, "dash", "cf", hover_b,
               f.betas),
        _curve(f.bon.sqrt_kl, f.bon.gold, "best-of-n: gold", c_bon, "solid", "bon", hover_n,
               f.ns),
        _curve(f.bon.sqrt_kl, f.bon.proxy, "best-of-n: proxy", c_bon, "dash", "bon", hover_n,
               f.ns),
        _curve(f.gold_sweep.sqrt_kl, f.gold_sweep.gold, "best gold at each KL (π* of r*)",
               INK, "dot", "gold", hover_b, f.betas, width=1.4),
    ]
    for d_max, (a, b), form, c, group in (
        (f.sweep.sqrt_kl.max(), f.fit_sweep, "rl", c_cf, "cf"),
        (f.bon.sqrt_kl.max(), f.fit_bon, "bon", c_bon, "bon"),
    ):
        d = np.linspace(1e-3, float(d_max), 120)
        y = d * (a - b * (np.log(d) if form == "rl" else d))
        form_text = "d(α − β log d)" if form == "rl" else "d(α − β d)"
        text = f"{GAO}: {form_text}, α = {a:.2f}, β = {b:.2f}"
        traces.append(go.Scatter(x=d, y=y, mode="lines", name=f"fit {form_text}",
                                 legendgroup=group, line=dict(color=c, dash="dot", width=1.3),
                                 hovertemplate=text + "<extra></extra>"))
    table = run.table(data)
    marks = (
        ("closed_form", f"π* at β = {run.beta:g}", "circle", 13),
        ("best_of_n", f"best-of-{run.bon.n}", "diamond", 13),
        ("dpo", "DPO", "circle-open", 16),
        ("policy_gradient", "KL-penalised PG", "x-thin", 12),
    )
    for name, label, symbol, size in marks:
        sc: Scores = table[name]
        d = float(sc.sqrt_kl)
        extra = (f"<br>KL {float(sc.kl):.3f} (bound log n − (n−1)/n = {run.bon.kl_bound:.3f})"
                 if name == "best_of_n" else f"<br>KL {float(sc.kl):.3f}")
        traces.append(go.Scatter(
            x=[d, d], y=[float(sc.gold), float(sc.proxy)], mode="markers", name=label,
            marker=dict(color=COLORS[name], size=size, symbol=symbol,
                        line=dict(width=2, color=COLORS[name] if "open" in symbol or
                                  "thin" in symbol else "white")),
            hovertemplate=label + extra + "<br>%{y:.3f}<extra></extra>",
        ))
    ys = np.concatenate([f.sweep.gold, f.sweep.proxy, f.bon.gold, f.bon.proxy,
                         f.gold_sweep.gold, [float(table[n].proxy) for n in table]])
    lo, hi = float(np.min(ys)), float(np.max(ys))
    pad = 0.08 * max(hi - lo, 0.1)
    layout = go.Layout(
        height=height, legend=LEGEND_ABOVE, margin=dict(l=60, r=20, t=40, b=50),
        xaxis=dict(title=dict(text="√KL(π‖π_ref), in √nats"), rangemode="tozero"),
        yaxis=dict(title=dict(text="reward gain over π_ref"), zeroline=True,
                   zerolinecolor="#ced4da", range=[lo - pad, hi + pad]),
    )
    return go.Figure(data=traces, layout=layout)


# ------------------------------------------------------------------------------ training
def _band(steps, values, c, name, axis, show) -> list[go.Scatter]:
    """Mean of the runs with a 95% t-interval band (no band for one run)."""
    from scipy import stats

    values = np.asarray(values, dtype=float)  # [T, R]
    runs = values.shape[1]
    mean = values.mean(axis=1)
    out = []
    if runs > 1:
        half = stats.t.ppf(0.975, runs - 1) * values.std(axis=1, ddof=1) / math.sqrt(runs)
        out.append(go.Scatter(
            x=np.concatenate([steps, steps[::-1]]), y=np.concatenate([mean + half,
                                                                     (mean - half)[::-1]]),
            fill="toself", fillcolor=hex_to_rgba(c, 0.18), line=dict(width=0),
            hoverinfo="skip", showlegend=False, xaxis=f"x{axis}", yaxis=f"y{axis}",
            legendgroup=name))
    out.append(go.Scatter(x=steps, y=mean, mode="lines", name=name, legendgroup=name,
                          showlegend=show, line=dict(color=c, width=2.2), xaxis=f"x{axis}",
                          yaxis=f"y{axis}",
                          hovertemplate="step %{x}<br>%{y:.4f}<extra>" + name + "</extra>"))
    return out


def training_figure(run: PolicyRun, data: Data, *, height: int = 620) -> go.Figure:
    """DPO and the policy gradient step by step: objective, gold reward, KL; π*'s as targets."""
    beta, target = run.beta, run.table(data)["closed_form"]
    dc, pc = run.dpo_curves, run.pg_curves
    r = run.pg.logp.shape[1]
    pg_name = f"KL-penalised PG (mean of {r} runs, 95% band)" if r > 1 else "KL-penalised PG"
    panels = (
        (f"Objective: r̂ gain − {beta:g}·KL", dc.proxy - beta * dc.kl,
         pc.proxy - beta * pc.kl, float(target.proxy - beta * target.kl)),
        ("Gold reward gain", dc.gold, pc.gold, float(target.gold)),
        ("KL(π‖π_ref); dotted: sampled k1", dc.kl, pc.kl, float(target.kl)),
    )
    traces: list[go.Scatter] = []
    layout: dict = dict(height=height, annotations=[], margin=dict(l=60, r=20, t=60, b=50),
                        legend=LEGEND_ABOVE | dict(y=1.05))
    gap, h = 0.13, (1.0 - 0.26) / 3
    for k, (title, dpo_y, pg_y, goal) in enumerate(panels):
        axis = "" if k == 0 else str(k + 1)
        top = 1.0 - k * (h + gap)
        traces.append(go.Scatter(
            x=run.dpo.steps, y=dpo_y, mode="lines", name="DPO",
            legendgroup="dpo", showlegend=k == 0, line=dict(color=COLORS["dpo"], width=2.2),
            xaxis=f"x{axis}", yaxis=f"y{axis}",
            hovertemplate="step %{x}<br>%{y:.4f}<extra>DPO</extra>"))
        traces += _band(run.pg.steps, pg_y, COLORS["policy_gradient"], pg_name, axis, k == 0)
        if k == 2 and run.pg.kl_estimate is not None:
            traces.append(go.Scatter(
                x=run.pg.steps, y=run.pg.kl_estimate.mean(axis=1), mode="lines",
                name="PG's sampled KL (batch mean of k1)", showlegend=False,
                line=dict(color=COLORS["policy_gradient"], width=1.2, dash="dot"),
                xaxis=f"x{axis}", yaxis=f"y{axis}",
                hovertemplate="step %{x}<br>sampled k1 %{y:.4f}<extra></extra>"))
        end = max(int(run.dpo.steps[-1]), int(run.pg.steps[-1]))
        traces.append(go.Scatter(
            x=[0, end], y=[goal, goal], mode="lines", name="closed form π* (the target)",
            legendgroup="target", showlegend=k == 0,
            line=dict(color=COLORS["closed_form"], width=1.5, dash="dash"), xaxis=f"x{axis}",
            yaxis=f"y{axis}", hovertemplate=f"π*: {goal:.4f}<extra></extra>"))
        layout[f"xaxis{axis}"] = dict(domain=[0, 1], anchor=f"y{axis}",
                                      title=dict(text="gradient step") if k == 2 else None)
        layout[f"yaxis{axis}"] = dict(domain=[max(top - h, 0.0), top], anchor=f"x{axis}")
        layout["annotations"].append(_title(title, top + 0.005))
    return go.Figure(data=traces, layout=go.Layout(**layout))


# ------------------------------------------------------------------ DPO's implicit reward
def implicit_reward_figure(run: PolicyRun, data: Data, *, height: int = 440) -> go.Figure:
    """DPO's implicit reward β log(π/π_ref) against the reward model's, both shifted.

    Each point is a response; both rewards are shifted to the gold reward's mean under π_ref
    (each is known only up to a constant). On the features, DPO's points lie on the diagonal.
    """
    space = data.space
    implicit = data.aligned(run.beta * (run.logp["dpo"] - space.log_ref))
    proxy = data.aligned(data.proxy)
    covered = data.counts > 0
    lo = float(min(implicit.min(), proxy.min()))
    hi = float(max(implicit.max(), proxy.max()))
    pad = 0.05 * max(hi - lo, 0.1)
    traces = [go.Scatter(x=[lo - pad, hi + pad], y=[lo - pad, hi + pad], mode="lines",
                         name="equal (up to the shift)", line=dict(color=MUTED, dash="dash",
                                                                   width=1.2),
                         hoverinfo="skip")]
    for mask, label, style in ((covered, "responses in the pairs", dict(
            color=COLORS["dpo"], size=8)), (~covered, "responses in no pair", dict(
            color="white", size=8, line=dict(color=COLORS["dpo"], width=1.5)))):
        if mask.any():
            traces.append(go.Scatter(
                x=proxy[mask], y=implicit[mask], mode="markers", name=label, marker=style,
                customdata=space.x[mask],
                hovertemplate="length %{customdata:.3f}<br>r̂ %{x:.3f}<br>β log π/π_ref "
                "%{y:.3f}<extra></extra>"))
    layout = go.Layout(
        height=height, legend=LEGEND_ABOVE,
        margin=dict(l=60, r=20, t=50, b=50),
        xaxis=dict(title=dict(text="reward model r̂(y) (shifted)"), range=[lo - pad, hi + pad]),
        yaxis=dict(title=dict(text="DPO's β·log π(y)/π_ref(y) (shifted)"),
                   range=[lo - pad, hi + pad]),
    )
    return go.Figure(data=traces, layout=layout)


# ------------------------------------------------------------------------- worked losses
def _n(x: float) -> str:
    """A number as LaTeX: as many digits as it carries (up to 6 significant)."""
    text = f"{float(x):.6g}"
    if "e" in text:
        mant, exp = text.split("e")
        return rf"{mant}\times 10^{{{int(exp)}}}"
    return text


def _p(x: float) -> str:
    """A number in parentheses when negative."""
    return f"({_n(x)})" if x < 0 else _n(x)


def worked_bt(r_w: float, r_l: float, loss: float) -> list[str]:
    """The Bradley–Terry loss of one pair, step by step (``loss`` from the library)."""
    margin = r_w - r_l
    prob = 1.0 / (1.0 + math.exp(-margin)) if margin > -700 else 0.0
    return [
        rf"\Delta = r_w - r_l = {_n(r_w)} - {_p(r_l)} = {_n(margin)}",
        rf"\sigma(\Delta) = 1 / (1 + e^{{{_n(-margin)}}}) = {_n(prob)}",
        rf"\mathcal{{L}}_{{BT}} = \log(1 + e^{{{_n(-margin)}}}) = {_n(loss)}",
    ]


def worked_dpo(logp_w: float, logp_l: float, ref_w: float, ref_l: float, beta: float,
               loss: float) -> list[str]:
    """The DPO loss of one pair, step by step (``loss`` from the library)."""
    rw, rl = logp_w - ref_w, logp_l - ref_l
    z = beta * (rw - rl)
    return [
        rf"\log\tfrac{{\pi}}{{\pi_{{ref}}}}(y_w) = {_n(logp_w)} - {_p(ref_w)} = {_n(rw)}",
        rf"\log\tfrac{{\pi}}{{\pi_{{ref}}}}(y_l) = {_n(logp_l)} - {_p(ref_l)} = {_n(rl)}",
        rf"z = {_n(beta)} \times ({_n(rw)} - {_p(rl)}) = {_n(z)}",
        rf"\mathcal{{L}}_{{DPO}} = \log(1 + e^{{{_n(-z)}}}) = {_n(loss)}",
    ]


# ------------------------------------------------------------------------ known answers
def known_answers(data: Data, run: PolicyRun, v: Verification, *,
                  worked: tuple[float, float, float, float, float]) -> list[dict]:
    """The page's known-answer rows, as keyword arguments of ``rlviz.ui.Check``.

    Args:
        data: The data and reward model.
        run: The policies at the chosen β and n.
        v: The verification numbers (``rlviz.preferences.verify``).
        worked: The worked DPO example's inputs ``(log π(y_w), log π(y_l), log π_ref(y_w),
            log π_ref(y_l), β)``.
    """
    obj, bon, beta, space = v.objective, run.bon, run.beta, data.space
    others = max(val for name, val in obj.items() if name != "closed_form")
    star = np.exp(run.logp["closed_form"])
    *logs, b = worked
    wb_gap = max(
        float(np.max(np.abs(whiteboard.optimal_policy(space.p_ref, data.proxy, beta) - star))),
        float(np.max(np.abs(whiteboard.best_of_n(space.p_ref, data.proxy, bon.n) - bon.probs))),
        abs(float(whiteboard.dpo_loss(*logs, b) - dpo_loss(*logs, beta=b))))
    rows = [
        dict(label="A constant added to every reward: change in the BT loss, DPO loss and π*",
             value=v.shift_gap, reference=0.0, tol=1e-12, fmt=".2g",
             source="Bradley & Terry (1952): only differences enter"),
        dict(label=f"E[r̂] − β·KL at β = {beta:g}: Newton on the simplex vs the closed form",
             value=obj["numerical"], reference=obj["closed_form"],
             tol=1e-8 * max(1.0, abs(obj["closed_form"])), fmt=".10g",
             source=f"{DPO_PAPER}, eq. 4"),
        dict(label="E[r̂] − β·KL: π* minus the best other policy here",
             value=f"{obj['closed_form'] - others:.2g}", reference="≥ −1e-10 (rounding)",
             passed=others <= obj["closed_form"] + 1e-10 * max(1.0, abs(obj["closed_form"])),
             source="Gibbs variational principle"),
        dict(label="DPO on exact, plentiful pairs: error of implicit reward differences",
             value=v.implicit_error, reference=0.0, tol=1e-4,
             fmt=".2g", source=f"{DPO_PAPER}, Theorem 1"),
        dict(label=f"Best-of-{bon.n}: exact KL ≤ log n − (n−1)/n", value=f"{bon.kl:.4f}",
             reference=f"≤ {bon.kl_bound:.4f}", passed=bon.kl <= bon.kl_bound + 1e-12,
             source=f"{BON_PAPER}, Theorem 3.1"),
        dict(label=f"Best-of-{bon.n} win rate (ties half) ≤ n/(n+1), short by ≤ max π_ref/2 "
             f"= {bon.win_slack:.3g}",
             value=bon.win_rate, reference=bon.win_bound, tol=bon.win_slack,
             passed=0 <= bon.win_bound - bon.win_rate <= bon.win_slack + 1e-12,
             source=f"{BON_PAPER}, §5"),
        dict(label="dpo_loss(0.5, −0.5, 0, 0, β = 0.1) = −log σ(0.1) < log 2",
             value=float(dpo_loss(0.5, -0.5, 0.0, 0.0, beta=0.1)),
             reference=math.log1p(math.exp(-0.1)), tol=1e-12, fmt=".6f",
             source=f"{DPO_PAPER}, eq. 7"),
        dict(label="E_π[k1] = E_π[k3] = exact KL (PG's final policies)",
             value=v.kl_identity, reference=0.0, tol=1e-10, fmt=".2g",
             source="Schulman (2020), Approximating KL divergence"),
        dict(label="PG's last batches: mean k1 − exact KL, within 4 standard errors",
             value=v.k1_error, reference=0.0, tol=4 * v.k1_se, fmt=".3g",
             source="k1 is unbiased"),
        dict(label="Whiteboard version equals rlviz on this view",
             value=wb_gap, reference=0.0, tol=1e-12, fmt=".2g",
             source="rlviz.interview.whiteboard.rlhf"),
    ]
    if run.policy == "features":
        rows.insert(4, dict(
            label="DPO on the RM's features vs its closed form π*: total variation",
            value=v.tv_dpo, reference=0.0, tol=1e-3, fmt=".2g",
            source=f"{DPO_PAPER}, §4 (same data, same class)"))
    return rows
