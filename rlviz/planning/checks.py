"""The Dyna page's known answers, computed live.

Value iteration, the random walk, ``rlviz.td``'s Q-learning, the book's figures and the
whiteboard version.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz import td
from rlviz.envs import parse_layout
from rlviz.planning.mazes import DYNA_MAZE
from rlviz.planning.steps import plan, q_update
from rlviz.planning.studies import CHANGES, SOURCE, ChangingStudy, PlanningStudy, settled_at
from rlviz.planning.sweeping import SweepingStudy


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


def whiteboard_gap(study: PlanningStudy, n: int, *, replays: int = 20, seed: int = 0) -> float:
    """Largest gap between the whiteboard's Dyna-Q step and rlviz's, on this view's run 1.

    From run 1's final values and model: one real step from S (the greedy action), then
    ``replays`` transitions replayed from pairs it tried, through both.
    """
    from rlviz.interview.whiteboard import dyna as wb

    m, res = study.maze, study.results[n]
    q0 = res.q[0, 0]
    pairs = np.argwhere(res.tried[0, 0])
    rng = np.random.default_rng(seed)
    chosen = pairs[rng.integers(len(pairs), size=replays)]
    s = int(m.start[0])
    a = int(q0[s].argmax())
    r, s2 = float(m.reward[0, s, a]), int(m.next_cell[0, s, a])
    model = {(int(c), int(b)): (float(m.reward[0, c, b]), int(res.model_next[0, 0, c, b]))
             for c, b in pairs}
    board = wb.dyna_q_step(q0.copy(), dict(model), s, a, r, s2, [tuple(p) for p in chosen],
                           alpha=res.settings["alpha"], gamma=res.settings["gamma"])
    mine = q0.copy()
    mine[s, a] = q_update(mine[s, a], r, mine[s2], alpha=res.settings["alpha"],
                          gamma=res.settings["gamma"])
    model[(s, a)] = (r, s2)
    ps, pa = chosen[:, 0][None], chosen[:, 1][None]
    pr = np.array([[model[(int(c), int(b))][0] for c, b in chosen]])
    pn = np.array([[model[(int(c), int(b))][1] for c, b in chosen]])
    mine = plan(mine[None], ps, pa, pr, pn, alpha=res.settings["alpha"],
                gamma=res.settings["gamma"])[0]
    return float(np.abs(board - mine).max())


def planning_known_answers(study: PlanningStudy) -> list[Known]:
    """The Dyna maze's checks: value iteration, the random walk, td's Q-learning, the book."""
    m, ns = study.maze, study.ns
    first = {n: study.results[n].lengths[0, :, 0] for n in ns}
    runs = len(first[ns[0]])
    gamma = study.results[ns[0]].settings["gamma"]
    mean_first = float(first[ns[0]].mean())
    spread = float(first[ns[0]].std(ddof=1)) if runs > 1 else 0.0
    from scipy.stats import t as student_t

    half = float(student_t.ppf(0.975, runs - 1) * spread / np.sqrt(runs)) if runs > 1 else 0.0
    book = m.layouts[0] == parse_layout(DYNA_MAZE)
    out = [
        Known("Shortest path from S to G (value iteration, rlviz.dp)", m.shortest[0],
              14 if book else m.shortest[0], 0.0,
              f"{SOURCE}, Figure 8.2 (its axis ends at 14 steps)" if book else
              "this maze: −V*(S) with −1 per move"),
        Known("First episode: the same walk for every n (largest difference in steps, any run)",
              float(max(np.abs(first[n] - first[ns[0]]).max() for n in ns)), 0.0, 0.0,
              f"{SOURCE}, Figure 8.2: 'exactly the same … for all values of n'"),
        Known(f"First episode: mean steps over {runs} runs vs the random walk's expectation",
              mean_first, study.walk, max(half, 1e-9),
              "(I − P)m = 1 for the uniform walk (every Q = 0); the book reports "
              "'about 1700' for its runs", fmt=".1f"),
    ]
    if 0 in ns:
        res0 = study.results[0]
        k_runs, k_eps = min(res0.runs, 5), min(res0.lengths.shape[2], 10)
        ref = td.run_control(
            m.mdps[0], algorithm="q_learning", episodes=k_eps, runs=k_runs,
            epsilon=res0.settings["epsilon"], alpha=res0.settings["alpha"], gamma=gamma,
            seed=res0.settings["seed"], max_steps=res0.settings["max_steps"],
            max_total_steps=res0.settings["max_steps"])
        same = np.array_equal(ref.lengths, res0.lengths[0, :k_runs, :k_eps])
        out.append(Known(f"n = 0 is rlviz.td's Q-learning: same episode lengths ({k_runs} runs "
                         f"× {k_eps} episodes, same seed)", "identical" if same else "differ",
                         "identical", passed=same, source="Sutton & Barto (2018), §8.2"))
    settle = {n: settled_at(study.mean_lengths(n)) for n in ns}
    if None not in settle.values() and len(ns) > 1:
        order = [settle[n] for n in ns]
        out.append(Known(
            "Episodes until the curve settles (within 25% of its last 10): " + ", ".join(
                f"n = {n}" for n in ns),
            ", ".join(str(s) for s in order), "fewer as n grows (book: about 25, 5 and 3 "
            "for n = 0, 5, 50)", passed=all(a >= b for a, b in zip(order, order[1:],
                                                                 strict=False))
            and order[0] > order[-1], source=f"{SOURCE}, §8.2, the text on Figure 8.2"))
    top = ns[-1]
    q_start = float(study.results[top].q[0, :, m.start[0]].max(axis=1).mean())
    optimum = gamma ** (m.shortest[0] - 1)
    out.append(Known(f"n = {top}: learned max_a Q(S, a), mean over runs, vs V*(S) = "
                     f"γ^(d−1)", q_start, optimum, 0.05 * optimum,
                     "Bellman optimality: reward 1 after d moves", fmt=".4f"))
    out.append(Known("Whiteboard version equals rlviz on this view (one real step and 20 "
                     "replays from run 1's model): largest gap", whiteboard_gap(study, top),
                     0.0, 1e-12, "rlviz.interview.whiteboard.dyna"))
    return out


def changing_known_answers(study: ChangingStudy, which: str) -> list[Known]:
    """The changing maze's checks: value iteration before and after, and the book's result."""
    m = study.maze
    book = which in CHANGES and tuple(m.layouts) == tuple(parse_layout(x)
                                                          for x in CHANGES[which][0])
    figure = {"blocking": "Figure 8.4", "shortcut": "Figure 8.5"}.get(which, "")
    out = [Known("Shortest path before → after the change (value iteration, rlviz.dp)",
                 f"{m.shortest[0]} → {m.shortest[1]}",
                 {"blocking": "10 → 16", "shortcut": "16 → 10"}[which] if book else
                 f"{m.shortest[0]} → {m.shortest[1]}",
                 passed=True if not book else (m.shortest == ((10, 16) if which == "blocking"
                                                              else (16, 10))),
                 source=f"{SOURCE}, {figure} (the two layouts)" if book else "this maze")]
    gain = study.gain_after()
    if "dyna_q" in gain and "dyna_q_plus" in gain:
        out.append(Known("Reward collected after the change: Dyna-Q+ vs Dyna-Q (mean over runs)",
                         f"{gain['dyna_q_plus']:.1f} vs {gain['dyna_q']:.1f}",
                         "Dyna-Q+ more", passed=gain["dyna_q_plus"] > gain["dyna_q"],
                         source=f"{SOURCE}, {figure or 'Figures 8.4–8.5'}"))
    paths = study.path_lengths()
    best = m.shortest[1]
    share = {p: float((v == best).mean()) for p, v in paths.items()}
    if which == "shortcut" and book:
        out.append(Known("Runs whose final greedy path takes the shortcut: Dyna-Q+ vs Dyna-Q",
                         f"{share['dyna_q_plus']:.0%} vs {share['dyna_q']:.0%}",
                         "Dyna-Q 'never switched to the shortcut'",
                         passed=share["dyna_q_plus"] > share["dyna_q"],
                         source=f"{SOURCE}, Example 8.3"))
    return out


def sweeping_known_answers(study: SweepingStudy) -> list[Known]:
    """Example 8.4's checks: value iteration per size, the paired first walk, the book's result."""
    from rlviz.planning.sweeping import distances, scaled_maze

    by_bfs = []
    for k in study.levels:
        m = scaled_maze(k)
        by_bfs.append(distances(m)[int(m.start[0])])
    sizes = ", ".join(f"{s:,}" for s in study.states)
    out = [
        Known(f"Shortest path from S at {sizes} states: value iteration (rlviz.dp) vs "
              "breadth-first search", " / ".join(map(str, study.shortest)),
              " / ".join(map(str, by_bfs)), passed=tuple(by_bfs) == study.shortest,
              source=f"{SOURCE}, Figure 8.2 (14 steps at 47 states)"),
    ]
    gap = max(int(np.abs(np.diff(res.first_episode, axis=0)).max())
              for res in study.results.values())
    out.append(Known("First episode: the same walk for both methods (paired dice; largest "
                     "difference in steps, any run and size)", float(gap), 0.0, 0.0,
                     "every Q is 0 until the first reward: nothing to plan"))
    ps, dq = (study.summary(p)[0] for p in ("prioritized", "dyna_q"))
    ratio = ", ".join(f"×{d / p:,.0f}" for d, p in zip(dq, ps, strict=True))
    out.append(Known("Prioritized sweeping needs fewer updates than Dyna-Q at every size "
                     "(geometric means; Dyna-Q ÷ prioritized sweeping)", ratio,
                     "fewer at every size, by a wide margin", passed=bool((ps < dq).all()),
                     source=f"{SOURCE}, Example 8.4 ('a decisive advantage')"))
    paired = float((study.updates("prioritized") <= study.updates("dyna_q")).mean())
    out.append(Known("Paired runs in which prioritized sweeping used no more updates than "
                     "Dyna-Q", f"{paired:.0%}", "most", passed=paired >= 0.5,
                     source="the same dice, run by run"))
    return out
