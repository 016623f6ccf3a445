"""Plain-loop reference for ``rlviz.planning``: one run at a time, step by step, in the book's
order (Sutton & Barto, 2018, the boxed Tabular Dyna-Q of §8.2 and Dyna-Q+ of §8.3).

It draws the same uniforms as the engine (row ``t`` of run ``r``'s real-step dice, row ``t`` of
its planning draws) and writes every update out by hand, so the vectorised engine must equal it
element for element. The benchmarks time it against ``planning.run_dyna``.
"""

from __future__ import annotations

import math

import numpy as np

from rlviz import td
from rlviz.planning import engine


def dyna_loop(maze, *, planner="dyna_q", n=5, runs=1, episodes=None, steps=None,
              change_at=None, epsilon=0.1, alpha=0.1, gamma=0.95, kappa=1e-3, seed=0,
              max_steps=20_000, max_updates=150_000):
    """Every run of one planner, as ``planning.run_dyna`` would train it (same result fields)."""
    n_cells, n_actions = maze.n_cells, maze.n_actions
    plus = planner == "dyna_q_plus"
    walks = not plus or kappa == 0  # the engine's walk: which runs count their budget late
    limit = max_steps if steps is None else min(steps, max_steps)
    change = math.inf if maze.n_worlds == 1 else change_at
    budget = max(max_updates // (1 + n), 1)
    width = td.TIE_KEYS + n_actions
    out = dict(lengths=[], played=[], rewards=[], steps_taken=[], first_reward=[], q=[],
               tried=[], model_next=[], visits=[], stopped_early=[])
    for r, child in enumerate(np.random.SeedSequence(seed).spawn(runs)):
        gen = np.random.default_rng(child)
        blocks: list[np.ndarray] = []
        plan_rows = engine._PlanRows(seed, r, n) if n else None

        def row(t, blocks=blocks, gen=gen):
            while t >= td.BLOCK * len(blocks):
                blocks.append(gen.random((td.BLOCK, width)))
            return blocks[t // td.BLOCK][t % td.BLOCK]

        q = np.zeros((n_cells, n_actions))
        model: dict[tuple[int, int], tuple[float, int]] = {}
        last = np.zeros((n_cells, n_actions), dtype=np.int64)
        seen: list[int] = []
        tried: dict[int, list[int]] = {}
        visits = np.zeros(n_cells, dtype=np.int64)
        rewards = np.zeros(limit)
        lengths: list[int] = []
        t, s, fresh, last_end = 0, int(maze.start[0]), True, -1
        first = -1
        stop_at = limit if walks else min(limit, budget)
        while t < stop_at and (episodes is None or len(lengths) < episodes):
            w = int(t >= change)
            if t == change and (not maze.floor[1, s] or maze.terminal[1, s] or fresh):
                s = int(maze.start[1])
            u = row(t)
            if u[td.EXPLORE] < epsilon:
                a = int(u[td.RANDOM_ACTION] * n_actions)
            else:
                best = np.flatnonzero(q[s] == q[s].max())
                a = int(best[u[td.TIE_KEYS:][best].argmax()])
            s2, rew = int(maze.next_cell[w, s, a]), float(maze.reward[w, s, a])
            if rew != 0 and first < 0:
                first = t
                if walks:
                    stop_at = min(limit, t + budget)
            q[s, a] += alpha * (rew + gamma * q[s2].max() - q[s, a])  # (d) direct RL
            if s not in tried:  # (e) model learning
                tried[s] = []
                seen.append(s)
            if a not in tried[s]:
                tried[s].append(a)
            model[s, a] = (rew, s2)
            last[s, a] = t + 1
            visits[s] += 1
            for k in range(n):  # (f) planning
                us, ua = plan_rows.rows(t, t + 1)[0, k]
                ps = seen[int(us * len(seen))]
                pa = int(ua * n_actions) if plus else tried[ps][int(ua * len(tried[ps]))]
                pr, ps2 = model.get((ps, pa), (0.0, ps))
                if plus:
                    pr += kappa * math.sqrt(t + 1 - last[ps, pa])
                q[ps, pa] += alpha * (pr + gamma * q[ps2].max() - q[ps, pa])
            rewards[t] = rew
            if maze.terminal[w, s2]:
                lengths.append(t - last_end)
                last_end, fresh = t, True
                s = int(maze.start[int(t + 1 >= change)])
            else:
                s, fresh = s2, False
            t += 1
        known = np.zeros((n_cells, n_actions), dtype=bool)
        believed = np.broadcast_to(np.arange(n_cells)[:, None], known.shape).copy()
        for (c, b), (_, c2) in model.items():
            known[c, b], believed[c, b] = True, c2
        out["lengths"].append(lengths[:episodes] if episodes else [])
        out["played"].append(len(lengths))
        out["rewards"].append(rewards)
        out["steps_taken"].append(t)
        out["first_reward"].append(first)
        out["q"].append(q)
        out["tried"].append(known)
        out["model_next"].append(believed)
        out["visits"].append(visits)
        out["stopped_early"].append(len(lengths) < episodes if episodes else t < limit)
    width_n = episodes or 0
    out["lengths"] = np.array([x + [0] * (width_n - len(x)) for x in out["lengths"]],
                              dtype=np.int64).reshape(runs, width_n)
    return {k: np.asarray(v) for k, v in out.items()}
