"""Plain-loop reference for ``rlviz.planning.sweeping``: the book's boxes written out on arrays.

Prioritized sweeping (Sutton & Barto, 2018, §8.4) and tabular Dyna-Q (§8.2), one run at a time,
with a numpy Q table, the queue as a dictionary searched for its largest priority (no heap), and
the greedy path checked after every real step (no bookkeeping of which values it depends on).
It reads the same uniforms as the engine, so the two must agree run for run.
"""

from __future__ import annotations

import numpy as np

from rlviz.planning import sweeping as sw


def sweep_loop(maze, planner, *, n=5, theta=sw.BOOK_THETA, epsilon=0.1, alpha=1.0, gamma=0.95,
               seed=0, key=(0, 0), max_updates=50_000, max_steps=20_000):
    """One run: ``(updates, steps, reached, first episode's steps, Q [C, A])``."""
    n_cells, n_actions = maze.n_cells, maze.n_actions
    nxt, rew, term = maze.next_cell[0], maze.reward[0], maze.terminal[0]
    start = int(maze.start[0])
    d = _bfs(maze)
    q = np.zeros((n_cells, n_actions))
    model = {}  # (s, a) -> (r, s')
    seen, tried = [], {}
    queue = {}  # (s, a) -> (P, order)
    counter = 0
    s, t, updates, first = start, 0, 0, 0

    def shortest_now():
        c = start
        while not term[c]:
            c2 = int(nxt[c, int(np.argmax(q[c]))])
            if d[c2] != d[c] - 1:
                return False
            c = c2
        return True

    def insert(pair, p):
        nonlocal counter
        if p > theta and p > queue.get(pair, (0.0, 0))[0]:
            queue[pair] = (p, counter)
            counter += 1

    if shortest_now():
        return 0, 0, True, 0, q
    while t < max_steps and updates < max_updates:
        u = np.asarray(sw._block(seed, (*key, 0, t // sw.BLOCK),
                                 (sw.BLOCK, sw.TIE_KEYS + n_actions))[t % sw.BLOCK])
        if u[sw.EXPLORE] < epsilon:
            a = int(u[sw.RANDOM_ACTION] * n_actions)
        else:
            keys = np.where(q[s] == q[s].max(), u[sw.TIE_KEYS:], -1.0)
            a = int(np.argmax(keys))
        r, s2 = float(rew[s, a]), int(nxt[s, a])
        t += 1
        if (s, a) not in model:
            if s not in tried:
                seen.append(s)
                tried[s] = []
            tried[s].append(a)
        model[(s, a)] = (r, s2)
        if planner == "prioritized":
            insert((s, a), abs(r + gamma * q[s2].max() - q[s, a]))
            for _ in range(n):
                if not queue or updates >= max_updates:
                    break
                (ps, pa) = max(queue, key=lambda k: (queue[k][0], -queue[k][1]))
                del queue[(ps, pa)]
                pr, pn = model[(ps, pa)]
                q[ps, pa] += alpha * (pr + gamma * q[pn].max() - q[ps, pa])
                updates += 1
                for (bs, ba), (br, bn) in model.items():
                    if bn == ps:
                        insert((bs, ba), abs(br + gamma * q[ps].max() - q[bs, ba]))
        else:
            q[s, a] += alpha * (r + gamma * q[s2].max() - q[s, a])
            u_plan = sw._block(seed, (*key, 1, (t - 1) // sw.BLOCK),
                               (sw.BLOCK, n, 2))[(t - 1) % sw.BLOCK]
            for u_s, u_a in u_plan:
                ps = seen[int(u_s * len(seen))]
                pa = tried[ps][int(u_a * len(tried[ps]))]
                pr, pn = model[(ps, pa)]
                q[ps, pa] += alpha * (pr + gamma * q[pn].max() - q[ps, pa])
            updates += 1 + n
        if term[s2]:
            first = first or t
            s = start
        else:
            s = s2
        if shortest_now():
            return updates, t, True, first, q
    return updates, t, False, first, q


def _bfs(maze):
    """Fewest moves to a goal from every cell, by repeated relaxation (walls: n_cells)."""
    n_cells = maze.n_cells
    d = np.where(maze.terminal[0], 0, n_cells)
    for _ in range(n_cells):
        step = np.where(maze.terminal[0], 0, 1 + d[maze.next_cell[0]].min(axis=1))
        new = np.minimum(d, np.where(maze.floor[0], step, n_cells))
        if np.array_equal(new, d):
            break
        d = new
    return d
