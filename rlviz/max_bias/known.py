"""Known answers of the page: closed forms, identities, the whiteboard and the book's figure."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlviz.max_bias.estimators import EstimatorStudy, expected_max_of_normals, max_estimators
from rlviz.max_bias.learning import Result, epsilon_greedy
from rlviz.max_bias.mdp import A_EXPLORE, A_PICK, BLOCK, BOOK, LEFT, SOURCE, _dice


# --------------------------------------------------------------------------- known answers
@dataclass(frozen=True)
class Known:
    """One known answer: a live number against a textbook value or a derived identity."""

    label: str
    value: float | str
    reference: float | str
    tol: float = 0.0
    source: str = ""
    passed: bool | None = None
    fmt: str = ".4g"


def first_run_dice(seed: int, episodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Run 1's dice: uniforms ``[N, 6]`` and normals ``[N]`` (the same whatever the run count)."""
    blocks = [_dice(seed, 1, k) for k in range((episodes + BLOCK - 1) // BLOCK)]
    u = np.concatenate([b[0][:, :, 0] for b in blocks])[:episodes]
    z = np.concatenate([b[1][:, 0] for b in blocks])[:episodes]
    return u, z


def whiteboard_replay(result: Result) -> float:
    """Largest gap between the whiteboard's Double Q and the library's, replaying run 1.

    The whiteboard version (``rlviz.interview.whiteboard.max_bias``) plays run 1's episodes with
    run 1's dice; 0 means every value of both tables agrees after every episode.
    """
    from rlviz.interview.whiteboard import max_bias as wb

    res = result.methods["double_q"]
    mdp = result.mdp
    u, z = first_run_dice(result.seed, result.episodes)
    q1 = {"A": np.zeros(2), "B": np.zeros(mdp.n_actions)}
    q2 = {"A": np.zeros(2), "B": np.zeros(mdp.n_actions)}
    gap = 0.0
    for e in range(result.episodes):
        wb.double_q_episode(q1, q2, u[e], z[e], result.epsilon, result.alpha, result.gamma,
                            mdp.mean, mdp.sigma)
        ours_a, ours_b = res.kept_q_a[0, e + 1], res.kept_q_b[0, e + 1]
        gap = max(gap, float(np.abs(ours_a - np.stack([q1["A"], q2["A"]])).max()),
                  float(np.abs(ours_b - np.stack([q1["B"], q2["B"]])).max()))
    return gap


def book_settings(result: Result) -> bool:
    """Whether a view has the settings of Sutton & Barto's Figure 6.5 (and 1,000 runs or more)."""
    mdp = result.mdp
    return (mdp.n_actions, mdp.mean, mdp.sigma, result.epsilon, result.alpha, result.gamma,
            result.episodes) == (BOOK["n_actions"], BOOK["mean"], BOOK["sigma"],
                                 BOOK["epsilon"], BOOK["alpha"], BOOK["gamma"],
                                 BOOK["episodes"]) and result.runs >= 1000


def known_answers(result: Result, study: EstimatorStudy) -> list[Known]:
    """The page's checks: closed forms, identities, the whiteboard, and the book's figure.

    Sutton & Barto's Figure 6.5 is checked at its own settings only (``book_settings``).
    """
    eps = result.epsilon
    u, _ = _dice(result.seed, result.runs, 0)
    greedy_right = np.broadcast_to(np.array([result.mdp.q_left(result.gamma), 0.0]),
                                   (u.shape[0], u.shape[2], 2))  # Q(A, ·) known exactly
    went = epsilon_greedy(greedy_right, u[:, A_EXPLORE], u[:, A_PICK], eps) == LEFT
    sd = math.sqrt(max(eps / 2 * (1 - eps / 2), 1e-12) / went.size)
    i = study.actions.index(study.m)
    gap = whiteboard_replay(result) if "double_q" in result.methods else None
    rng = np.random.default_rng(np.random.SeedSequence(result.seed, spawn_key=(11,)))
    samples = rng.normal(size=(8, 50, study.m, study.samples))
    from rlviz.interview.whiteboard import max_bias as wb

    halves = samples.reshape(8, 50, study.m, 2, study.samples // 2).mean(axis=-1)
    ours = max_estimators(halves[..., 0], halves[..., 1])
    theirs = np.array([[wb.max_estimators(s) for s in row] for row in samples])
    wb_gap = float(max(np.abs(ours[k] - theirs[..., k]).max() for k in (0, 1)))

    s_label = f"m = {study.m}, σ = {study.sigma:g}, n = {study.samples}"
    out = [
        Known("E[max of 10 N(0, 1)] by integration: the 10-armed testbed's best arm",
              expected_max_of_normals(10), 1.5387527308351729, 1e-9,
              f"{SOURCE} §2.3 (\"about 1.55\"); rlviz.bandits.book", fmt=".10f"),
        Known("E[max of 2 N(0, 1)] by integration = 1/√π", expected_max_of_normals(2),
              1 / math.sqrt(math.pi), 1e-12,
              "max(a, b) = (a + b)/2 + half their distance, which averages 2/√π", fmt=".10f"),
        Known(f"Single estimator's bias ({s_label}): Monte Carlo vs (σ/√n)·E[max of m]"
              if study.gap == 0 else f"Single estimator's bias ({s_label}, gap {study.gap:g}): "
              "Monte Carlo vs integral", float(study.single_mc[i]), float(study.single_exact[i]),
              max(2 * float(study.single_half[i]), 1e-12),
              f"closed form; tolerance 2× the 95% half-width of {study.trials:,} trials"),
        Known("Double estimator's bias, all true values equal: Monte Carlo vs 0 (unbiased)"
              if study.gap == 0 else
              f"Double estimator's bias (gap {study.gap:g}): Monte Carlo vs −Δ(1 − P(best picked))",
              float(study.double_mc[i]), float(study.double_exact[i]),
              max(2 * float(study.double_half[i]), 1e-12),
              "van Hasselt (2010), Lemma 1 and Theorem 1"),
        Known(f"ε-greedy on the true values goes left ε/2 of the time ({went.size:,} draws of "
              "this view's dice)", float(went.mean()), eps / 2, max(4 * sd, 1e-12),
              f"{SOURCE}, Example 6.7: 5% at ε = 0.1"),
    ]
    if gap is not None:
        out.append(Known("Whiteboard version equals rlviz on this view: Double Q replaying run 1, "
                         "and the two estimators: largest gap", max(gap, wb_gap), 0.0, 1e-12,
                         "rlviz.interview.whiteboard.max_bias"))
    if not book_settings(result) or not {"q_learning", "double_q"} <= set(result.methods):
        return out
    q, d = result.methods["q_learning"], result.methods["double_q"]
    peak = int(q.left.mean.argmax())
    out += [
        Known("Figure 6.5: Q-learning at first goes left much more often than right (its peak)",
              f"{100 * q.left.mean[peak]:.1f}% at episode {peak + 1}", "well above 50%",
              source=f"{SOURCE}, Figure 6.5", passed=q.left.mean[peak] > 0.6),
        Known("Figure 6.5: … and always significantly more often than ε/2 (lowest 95% band)",
              f"{100 * q.left.low.min():.1f}%", "above 5%", source=f"{SOURCE}, Figure 6.5",
              passed=bool((q.left.low > eps / 2).all())),
        Known("Figure 6.5: Double Q-learning is essentially unaffected (% left, episodes "
              "251–300)", 100 * d.left_fraction(251, 300), 100 * eps / 2, 3.0,
              f"{SOURCE}, Figure 6.5: near the 5% optimum", fmt=".2f"),
    ]
    return out
