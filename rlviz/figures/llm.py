"""Figures of the GRPO page: exact curves, one group's advantages, the token mask, KL estimators.

Also the toy model's table, the whiteboard arithmetic, captions and the known-answer rows.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from rlviz import llm
from rlviz.figures.theme import DIVERGING, INK, SEQUENTIAL, figure, hex_to_rgba

__all__ = [
    "COLORS",
    "LABELS",
    "METRICS",
    "advantage_table",
    "checks",
    "curves",
    "group_advantages",
    "group_table",
    "kl_caption",
    "kl_estimators",
    "kl_table",
    "policy_tables",
    "summary",
    "token_mask",
    "worked_latex",
]

LABELS = {
    "reinforce": "REINFORCE",
    "rloo": "RLOO",
    "grpo": "GRPO",
    "dr_grpo": "Dr. GRPO",
    "ppo": "PPO",
}
# One colour per trainer on every chart of the page; PPO keeps the PPO-clip page's blue.
COLORS = {
    "reinforce": "#c2255c",
    "rloo": "#7048e8",
    "grpo": "#e8590c",
    "dr_grpo": "#2b8a3e",
    "ppo": "#1c7ed6",
}
ESTIMATOR_COLORS = {"k1": "#e67700", "k2": "#7048e8", "k3": "#0c8599"}
BAND_ALPHA = 0.16
METRICS = {
    "reward": "exact expected reward",
    "kl": "exact KL(π ‖ π_ref), nats",
    "length": "mean response length (tokens)",
    "wrong_length": "mean length of wrong responses",
}
MASKED = "#dee2e6"


def _legend_top(fig: go.Figure) -> go.Figure:
    fig.update_layout(legend=dict(orientation="h", yanchor="bottom", y=1.02, x=0.0,
                                  font=dict(size=12)))
    return fig


def curves(result: llm.Comparison, metric: str, *, height: int = 380) -> go.Figure:
    """A metric against training step: mean over seeds and its 95% band, one colour per trainer."""
    mean, low, high = result.band(metric)
    x = result.checkpoints
    fig = figure(height=height, hovermode="x unified", margin=dict(l=60, r=16, t=64, b=48),
                 xaxis=dict(title="training step", rangemode="tozero"),
                 yaxis=dict(title=METRICS[metric]))
    for k, name in enumerate(result.trainers):
        c = COLORS[name]
        ok = np.isfinite(mean[k])
        if result.seeds > 1 and ok.any():
            fig.add_trace(go.Scatter(
                x=np.concatenate([x[ok], x[ok][::-1]]),
                y=np.concatenate([high[k][ok], low[k][ok][::-1]]),
                fill="toself", fillcolor=hex_to_rgba(c, BAND_ALPHA), line=dict(width=0),
                hoverinfo="skip", showlegend=False, name=f"{LABELS[name]} 95% band"))
        fig.add_trace(go.Scatter(
            x=x[ok], y=mean[k][ok], mode="lines", name=LABELS[name], line=dict(color=c),
            hovertemplate="%{y:.3f}"))
    return _legend_top(fig)


def summary(result: llm.Comparison, metric: str, *, digits: int = 3) -> str:
    """The last checkpoint's mean ± 95% half-width per trainer, as one caption line."""
    mean, low, high = result.band(metric)
    parts = []
    for k, name in enumerate(result.trainers):
        m, half = mean[k, -1], (high[k, -1] - low[k, -1]) / 2
        if not np.isfinite(m):
            parts.append(f"{LABELS[name]} none")
        elif result.seeds > 1:
            parts.append(f"{LABELS[name]} {m:.{digits}f} ± {half:.{digits}f}")
        else:
            parts.append(f"{LABELS[name]} {m:.{digits}f}")
    seeds = f"mean ± 95% half-width over {result.seeds} seeds" if result.seeds > 1 else "1 seed"
    return f"At step {result.steps} ({seeds}): " + " · ".join(parts) + "."


def _response_labels(view: llm.GroupView) -> list[str]:
    return [f"{i + 1}: {text}  (r = {r:.4g})"
            for i, (text, r) in enumerate(zip(view.texts, view.rewards, strict=True))]


def group_advantages(view: llm.GroupView, *, height: int = 400) -> go.Figure:
    """Each group trainer's advantage of every response of the group, side by side."""
    labels = [f"{i + 1}<br>{t}" for i, t in enumerate(view.texts)]
    fig = figure(height=height, barmode="group", bargap=0.22, bargroupgap=0.04,
                 hovermode="x unified", margin=dict(l=60, r=16, t=64, b=70),
                 xaxis=dict(title="response (number, text)", tickangle=0,
                            tickfont=dict(size=11)),
                 yaxis=dict(title="advantage of the response", zeroline=True,
                            zerolinecolor="#adb5bd"))
    for name in llm.GROUP_TRAINERS:
        adv = view.advantages[name]
        first = adv[np.arange(len(labels)), view.counted.argmax(axis=1)]
        fig.add_trace(go.Bar(x=labels, y=first, name=LABELS[name], marker_color=COLORS[name],
                             hovertemplate="%{y:.4f}"))
    fig.add_trace(go.Scatter(
        x=labels, y=view.seq_rewards, mode="markers", name="reward r",
        marker=dict(symbol="diamond", size=11, color=INK, line=dict(color="white", width=1)),
        hovertemplate="%{y:.4f}"))
    return _legend_top(fig)


def token_mask(view: llm.GroupView, trainer: str, *, height: int | None = None) -> go.Figure:
    """The tokens of the group, coloured by how hard ``trainer``'s loss pushes each one (w·A).

    Grey cells are not counted by the loss: the prompt when it is masked, and the padding after
    each response's end token.
    """
    push = view.push(trainer)
    z = np.where(view.counted, push, np.nan)
    letters = np.array(llm.VOCAB)[view.tokens]
    padding = ~(view.is_prompt | view.is_response)
    text = np.where(padding, "", letters)
    finite = z[np.isfinite(z)]
    limit = float(np.abs(finite).max()) if finite.size and np.abs(finite).max() > 0 else 1.0
    g, t = z.shape
    cols = ["q₁", "q₂"] + [str(i) for i in range(1, t - 1)]
    rows = _response_labels(view)
    fig = figure(height=height or 130 + 34 * g, margin=dict(l=10, r=10, t=40, b=56),
                 plot_bgcolor=MASKED,
                 xaxis=dict(title="token (q₁ q₂: the prompt)", type="category",
                            showgrid=False, tickangle=0),
                 # the responses are free text: their axis alone sizes its margin in the browser
                 yaxis=dict(autorange="reversed", showgrid=False, automargin=True))
    fig.add_trace(go.Heatmap(
        z=z, x=cols, y=rows, text=text, texttemplate="%{text}", textfont=dict(size=15),
        colorscale=DIVERGING, zmid=0.0, zmin=-limit, zmax=limit, xgap=2, ygap=2,
        colorbar=dict(title=dict(text="w·A", side="right"), thickness=12),
        hovertemplate="%{y}<br>%{x}: %{text}<br>w·A = %{z:.4f}<extra></extra>"))
    return fig


def kl_estimators(study: llm.KLStudy, *, height: int = 380) -> tuple[go.Figure, go.Figure]:
    """Mean of each estimator against the exact KL (with its 95% band), and one sample's spread."""
    x = study.exact
    order = np.argsort(x)
    x = x[order]
    top = float(max(x.max(), 1e-3))
    mean_fig = figure(height=height, hovermode="x unified",
                      margin=dict(l=60, r=16, t=64, b=48),
                      xaxis=dict(title="exact KL(π ‖ π_ref), nats", rangemode="tozero"),
                      yaxis=dict(title=f"mean of {study.n_samples} estimates"))
    mean_fig.add_trace(go.Scatter(x=[0, top], y=[0, top], mode="lines", name="exact",
                                  line=dict(color=INK, dash="dash", width=1.5),
                                  hoverinfo="skip"))
    spread_fig = figure(height=height, hovermode="x unified",
                        margin=dict(l=60, r=16, t=64, b=48),
                        xaxis=dict(title="exact KL(π ‖ π_ref), nats", rangemode="tozero"),
                        yaxis=dict(title="spread of one estimate (std)", rangemode="tozero"))
    for i, name in enumerate(llm.ESTIMATORS):
        c = ESTIMATOR_COLORS[name]
        m, se, sd = study.mean[i][order], study.se[i][order], study.std[i][order]
        mean_fig.add_trace(go.Scatter(
            x=np.concatenate([x, x[::-1]]),
            y=np.concatenate([m + 1.96 * se, (m - 1.96 * se)[::-1]]), fill="toself",
            fillcolor=hex_to_rgba(c, 0.2), line=dict(width=0), hoverinfo="skip",
            showlegend=False, name=f"{name} 95% band"))
        mean_fig.add_trace(go.Scatter(x=x, y=m, mode="lines+markers", name=name,
                                      marker=dict(size=5), line=dict(color=c),
                                      hovertemplate="%{y:.4f}"))
        spread_fig.add_trace(go.Scatter(x=x, y=sd, mode="lines+markers", name=name,
                                        marker=dict(size=5), line=dict(color=c),
                                        hovertemplate="%{y:.4f}"))
    return _legend_top(mean_fig), _legend_top(spread_fig)


def policy_tables(result: llm.Comparison, trainer: str, seed_index: int = 0, *,
                  height: int = 320) -> tuple[go.Figure, go.Figure]:
    """The whole language model: π_ref(next | previous), and the table after training.

    Two figures, so that a narrow screen stacks them instead of squeezing their numbers.
    """
    k = result.index(trainer)
    theta = result.logits[k, seed_index, -1]
    trained = np.exp(theta - np.logaddexp.reduce(theta, axis=-1, keepdims=True))
    rows = [f"after {v}" if v != "." else "start" for v in llm.VOCAB]
    titles = ("π_ref, the reference model",
              f"{LABELS[trainer]} after {result.steps} steps (seed 1)")
    out = []
    for title, probs in zip(titles, (result.task.ref_probs, trained), strict=True):
        fig = figure(height=height, margin=dict(l=68, r=10, t=44, b=44),
                     title=dict(text=title, font=dict(size=14)),
                     xaxis=dict(title="next token", type="category", showgrid=False),
                     yaxis=dict(autorange="reversed", type="category", showgrid=False))
        fig.add_trace(go.Heatmap(
            z=probs, x=list(llm.VOCAB), y=rows, zmin=0, zmax=1, colorscale=SEQUENTIAL,
            text=[[f"{p:.2f}" for p in row] for row in probs], texttemplate="%{text}",
            textfont=dict(size=12), xgap=2, ygap=2, showscale=False,
            hovertemplate="%{y} → %{x}: %{z:.3f}<extra></extra>"))
        out.append(fig)
    return out[0], out[1]


def _num(x: float, digits: int = 4) -> str:
    """``x`` with at most ``digits`` decimals, trailing zeros dropped (LaTeX-ready)."""
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _exact(x: float) -> str:
    """A number as given (up to ten significant digits), for the inputs of the arithmetic."""
    text = f"{x:.10g}"
    return "0" if text == "-0" else text


def _eq(x: float, digits: int) -> str:
    """``= x`` when ``x`` prints exactly with ``digits`` decimals, ``≈ x`` when rounded."""
    text = _num(x, digits)
    return ("= " if float(text) == x else r"\approx ") + text


def worked_latex(w: llm.WorkedGroup, *, digits: int = 4) -> list[str]:
    """The whiteboard arithmetic of GRPO's advantages for one group, as LaTeX blocks.

    The rewards and their sum are printed as given; every derived value is printed with
    ``digits`` decimals, behind ``≈`` when that rounded it. Each step breaks before its result,
    so the lines stay narrow enough for a phone.
    """
    g = w.rewards.size
    squares = float(((w.rewards - w.mean) ** 2).sum())
    power = math.log10(llm.GRPO_EPS)
    eps = rf"10^{{{int(power)}}}" if power == int(power) else _exact(llm.GRPO_EPS)
    mean, std = _num(w.mean, digits), _num(w.std, digits)
    sign = "=" if float(_num(squares, digits)) == squares else r"\approx"
    rows = [
        rf"\bar r &= \tfrac{{1}}{{G}}\textstyle\sum_i r_i = "
        rf"\tfrac{{{_exact(float(w.rewards.sum()))}}}{{{g}}} {_eq(w.mean, digits)}",
        r"s &= \sqrt{\tfrac{1}{G-1}\textstyle\sum_i (r_i - \bar r)^2}",
        rf"&{sign} \sqrt{{\tfrac{{{_num(squares, digits)}}}{{{g - 1}}}}} {_eq(w.std, digits)}",
    ]
    for v in sorted(set(w.rewards.tolist()))[:3]:
        a = (v - w.mean) / (w.std + llm.GRPO_EPS)
        rows.append(rf"A(r {{=}} {_exact(v)}) &= \frac{{{_exact(v)} - {mean}}}{{{std} + {eps}}}")
        rows.append(rf"&{_eq(a, digits)}")
    blocks = [r"\begin{aligned}" + r" \\ ".join(rows) + r"\end{aligned}"]
    if w.all_equal:
        blocks.append(rf"\text{{all equal: }} s = 0,\ A = 0 / {eps} = 0")
    return blocks


def advantage_table(w: llm.WorkedGroup) -> dict[str, list]:
    """The group's rewards and every group trainer's advantages, column by column."""
    out: dict[str, list] = {"response": list(range(1, w.rewards.size + 1)),
                            "reward": w.rewards.tolist()}
    for name in llm.GROUP_TRAINERS:
        out[LABELS[name]] = w.advantages[name].tolist()
    return out


def kl_caption(study: llm.KLStudy) -> str:
    """What the estimator study shows at its most drifted policy, in one caption."""
    last = int(np.argmax(study.exact))
    k1, k2, k3 = (study.mean[i, last] for i in range(3))
    se = study.se[:, last]
    return (
        f"Each point: the policy of {LABELS[study.trainer]} (seed 1) at one step, "
        f"{study.n_samples:,} sampled responses, each estimator summed over a response's "
        f"tokens (band: 95% interval of the mean). At step {study.steps[last]} the exact KL is "
        f"{study.exact[last]:.4f}; k1 gives {k1:.4f} ± {1.96 * se[0]:.4f}, k2 {k2:.4f} ± "
        f"{1.96 * se[1]:.4f}, k3 {k3:.4f} ± {1.96 * se[2]:.4f}. The smallest single k1 is "
        f"{study.low[0].min():.3f}; the smallest k3 is {study.low[2].min():.3g}."
    )


def group_table(view: llm.GroupView) -> dict[str, list]:
    """One row per response of the group: text, reward and each trainer's first-token advantage."""
    first = view.counted.argmax(axis=1)
    rows = np.arange(len(view.texts))
    out: dict[str, list] = {"response": list(view.texts), "reward": view.rewards.tolist(),
                            "reward_used": view.seq_rewards.tolist(),
                            "tokens_counted": view.counted.sum(axis=1).tolist()}
    for name, adv in view.advantages.items():
        out[f"advantage_{name}"] = adv[rows, first].tolist()
    return out


def kl_table(study: llm.KLStudy) -> dict[str, list]:
    """One row per checkpoint: the exact KL and each estimator's mean, error and spread."""
    out: dict[str, list] = {"step": study.steps.tolist(), "exact_kl": study.exact.tolist()}
    for i, name in enumerate(llm.ESTIMATORS):
        out[f"{name}_mean"] = study.mean[i].tolist()
        out[f"{name}_se"] = study.se[i].tolist()
        out[f"{name}_std"] = study.std[i].tolist()
        out[f"{name}_min"] = study.low[i].tolist()
    return out


def checks(result: llm.Comparison, view: llm.GroupView, study: llm.KLStudy,
           whiteboard) -> list[dict]:
    """The known-answer rows of the page, live, as keyword arguments of ``ui.Check``."""
    total = llm.exact_metrics(result.logits[:, :, -1].reshape(-1, 5, 5), result.task)["total"]
    r = view.seq_rewards
    adv = llm.worked_group(r).advantages
    g = r.size
    equal = llm.worked_group([1.0, 1.0, 1.0, 1.0]).advantages
    equal_max = max(float(np.abs(equal[n]).max()) for n in ("grpo", "rloo", "dr_grpo"))
    half = llm.worked_group([1.0, 0.0, 0.0, 1.0]).advantages["grpo"][0]
    last = int(np.argmax(study.exact))
    bias, se = study.bias[:, last], study.se[:, last]
    ones = np.ones_like(view.logp)
    import torch

    unit = llm.policy_loss(torch.zeros(ones.shape, dtype=torch.float64),
                           torch.zeros(ones.shape, dtype=torch.float64),
                           torch.from_numpy(ones),
                           llm.token_weights(torch.tensor(view.counted)[None], "token_mean")[0],
                           epsilon=result.settings.epsilon)
    mask = view.is_response
    lib = float(llm.grpo_loss(view.logp, view.logp, view.logp_ref, r, mask,
                              epsilon=result.settings.epsilon, beta=result.settings.beta))
    board = float(whiteboard.grpo_loss(view.logp, view.logp, view.logp_ref, r, mask,
                                       clip=result.settings.epsilon, beta=result.settings.beta))
    gap = max(abs(lib - board), float(np.abs(whiteboard.grpo_advantages(r) - adv["grpo"]).max()))
    n_resp = len(llm.enumerate_responses(result.task.max_len).tokens)
    return [
        dict(label=f"All {n_resp:,} responses of every prompt: largest gap of Σ π(y) to 1",
             value=float(np.abs(total - 1).max()), reference=0.0, tol=1e-9,
             source="every response enumerated"),
        dict(label="GRPO: mean advantage of the sampled group", value=float(adv["grpo"].mean()),
             reference=0.0, tol=1e-12, source="Shao et al. (2024), §4.1.2"),
        dict(label="RLOO: sum of the sampled group's advantages", value=float(adv["rloo"].sum()),
             reference=0.0, tol=1e-12, source="Kool et al. (2019); Ahmadian et al. (2024)"),
        dict(label=f"RLOO = G/(G−1) · Dr. GRPO (G = {g}): largest gap",
             value=float(np.abs(adv["rloo"] - g / (g - 1) * adv["dr_grpo"]).max()),
             reference=0.0, tol=1e-12, source="Liu et al. (2025), §3.2"),
        dict(label="All-equal group [1, 1, 1, 1]: largest size of A (GRPO, RLOO, Dr. GRPO), finite",
             value=equal_max, reference=0.0, tol=0.0, source="0 / (0 + ε) = 0"),
        dict(label="[1, 0, 0, 1]: GRPO advantage of a 1 (sample std √⅓, ε = 10⁻⁴)",
             value=float(half), reference=float(np.sqrt(0.75)), tol=2e-4,
             source="(1 − ½) / √⅓ = √3 / 2"),
        dict(label="k1 is unbiased: mean − exact KL at the most drifted policy (±4 s.e.)",
             value=float(bias[0]), reference=0.0, tol=float(4 * se[0]) + 1e-12,
             source="Schulman (2020), “Approximating KL divergence”"),
        dict(label="k3 is unbiased: mean − exact KL at the most drifted policy (±4 s.e.)",
             value=float(bias[2]), reference=0.0, tol=float(4 * se[2]) + 1e-12,
             source="Schulman (2020)"),
        dict(label="k3 is never negative: smallest sampled k3", value=float(study.low[2].min()),
             reference="≥ 0", passed=bool(study.low[2].min() >= 0.0), fmt=".3g",
             source="ρ − 1 ≥ log ρ"),
        dict(label="Masked per-token PPO loss, zero log-ratios, unit advantages",
             value=float(unit), reference=-1.0, tol=1e-12,
             source="−Σ m·1·1 / Σ m = −1"),
        dict(label="Whiteboard version equals rlviz on this view (GRPO A and loss)",
             value=gap, reference=0.0, tol=1e-10, source="rlviz.interview.whiteboard.grpo"),
    ]
