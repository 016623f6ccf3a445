r"""Prioritized sweeping against Dyna-Q: updates until the greedy path is a shortest one.

Dyna-Q replays remembered transitions chosen at random, most of which change nothing while the
values are still 0 almost everywhere. Prioritized sweeping (Sutton & Barto, 2018, Section 8.4)
keeps a queue of state-action pairs ordered by how much their value would change,

.. math:: P = \big|R + \gamma \max_a Q(S', a) - Q(S, A)\big|,

updates the top pair, and then queues every pair the model says leads into its state (its
*predecessors*), so value flows backwards from the goal along the routes that lead there. A pair
whose priority is not above the threshold θ is not queued.

Example 8.4 counts the updates each method makes (real and planned; prioritized sweeping makes
only the planned ones of its queue) until the greedy path from S is a shortest path, on the
Dyna maze at increasing resolutions: each cell becomes a block of 1 × 2, 2 × 2, 2 × 4, … cells,
so the number of states doubles at each level, 47, 94, 188, 376, … as on the book's axis (the
start stays a single cell, the top-left of its block; the goal becomes a block of goals).

The queue is a heap and the steps are sequential, so the methods are plain loops over Python
lists (``q[s][a]``), one run at a time; the readable steps come first (``priority``, ``push``,
``sweep_step``, ``replay``), the engine after.

Random numbers, paired. Run ``r`` at resolution level ``k`` draws its real steps' dice in blocks of
``BLOCK`` rows, block ``b`` from the key (seed, ``SWEEP_STREAM``, k, r, 0, b): the exploration
coin, the random action, and one tie-break key per action. Dyna-Q's planning draws come from the
key (seed, ``SWEEP_STREAM``, k, r, 1, b), ``[BLOCK, n, 2]`` per block. Both methods read the same
real-step dice, so their first episodes are the same walk, step for step.

Reference: Sutton & Barto (2018), Section 8.4, the prioritized sweeping box and Example 8.4;
Moore & Atkeson (1993); Peng & Williams (1993).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass, field

import numpy as np

from rlviz.envs import parse_layout
from rlviz.errors import InputError
from rlviz.planning.mazes import DYNA_MAZE, Maze, maze

SWEEPERS: tuple[str, ...] = ("dyna_q", "prioritized")
LEVELS: tuple[int, ...] = (0, 1, 2)
"""The resolution levels offered: the Dyna maze with 47, 94 and 188 states (``blocks``)."""
BUDGET = dict(max_updates=50_000, max_steps=10_000)
"""What a run of the page's study may spend: a run that has not got there stops (censored)."""
BOOK_THETA = 1e-4
SWEEP_STREAM = 84
"""Part of the key of every draw of this study (Example 8.4)."""
BLOCK = 256
EXPLORE, RANDOM_ACTION, TIE_KEYS = 0, 1, 2  # the columns of a real step's dice


# --------------------------------------------------------------------------- readable steps
def priority(r, q_next, q_sa, *, gamma):
    r"""How much one update of a pair would change its value: its place in the queue.

    .. math:: P = \big|R + \gamma \max_a Q(S', a) - Q(S, A)\big|

    Args:
        r: The model's reward ``R`` of the pair.
        q_next: ``[A]`` the values ``Q(S', ·)`` of the state the model says it leads to.
        q_sa: The pair's current value ``Q(S, A)``.
        gamma: Discount γ.
    """
    return abs(r + gamma * max(q_next) - q_sa)


def push(queue, queued, pair, p, *, theta, order):
    r"""Queue ``pair`` with priority ``p`` if ``p > θ`` and it is not already queued higher.

    A pair is in the queue once, at its highest priority: a higher one replaces it (the old
    entry stays in the heap, marked stale by ``queued``, and is skipped when it comes up).

    Args:
        queue: The heap of ``(−P, order, (S, A))``: the largest P first, ties first come.
        queued: ``{(S, A): P}`` the priority each pair is queued with now.
        pair: ``(S, A)``.
        p: Its priority.
        theta: The threshold θ ≥ 0.
        order: An ``itertools.count`` that orders equal priorities, first come first served.

    Returns:
        Whether the pair was queued.
    """
    if p <= theta or p <= queued.get(pair, 0.0):
        return False
    queued[pair] = p
    heapq.heappush(queue, (-p, next(order), pair))
    return True


def sweep_step(q, queue, queued, model, predecessors, *, alpha, gamma, theta, order):
    r"""One planning update of prioritized sweeping: pop, update, queue the predecessors.

    Take the pair ``(S, A)`` of highest priority off the queue; with ``(R, S') = Model(S, A)``,

    .. math:: Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + \gamma \max_a Q(S', a) - Q(S, A)\big];

    then for every pair ``(S̄, Ā)`` the model says leads to ``S``, with reward ``R̄``, queue it
    with priority ``|R̄ + γ max_a Q(S, a) − Q(S̄, Ā)|`` if that is above θ (``push``).

    Args:
        q: ``[C][A]`` action values, a list of lists (updated in place: the engine's table).
        queue: The heap (``push``).
        queued: The priority each queued pair has now (``push``).
        model: ``[C][A]`` ``(R, S')`` of each pair tried, else None.
        predecessors: ``[C]`` the pairs ``(S̄, Ā)`` the model says lead to each state.
        alpha: Step size α.
        gamma: Discount γ.
        theta: The threshold θ.
        order: The counter of ``push``.

    Returns:
        The state ``S`` updated, or None if the queue was empty.
    """
    while queue:
        neg_p, _, (s, a) = heapq.heappop(queue)
        if queued.get((s, a)) == -neg_p:  # else a stale entry: the pair was queued higher
            break
    else:
        return None
    del queued[(s, a)]
    r, s_next = model[s][a]
    q[s][a] += alpha * (r + gamma * max(q[s_next]) - q[s][a])
    for s_bar, a_bar in predecessors[s]:
        r_bar = model[s_bar][a_bar][0]
        p = priority(r_bar, q[s], q[s_bar][a_bar], gamma=gamma)
        push(queue, queued, (s_bar, a_bar), p, theta=theta, order=order)
    return s


def replay(q, model, seen, tried, u, *, alpha, gamma):
    r"""Dyna-Q's planning: ``n`` transitions replayed from the model, chosen at random.

    For each pair of uniforms ``(u_S, u_A)``: ``S`` is entry ``⌊u_S · |seen|⌋`` of the states
    observed (in the order first seen), ``A`` entry ``⌊u_A · |tried(S)|⌋`` of the actions taken
    there, ``(R, S') = Model(S, A)``, and

    .. math:: Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + \gamma \max_a Q(S', a) - Q(S, A)\big].

    Args:
        q: ``[C][A]`` action values (updated in place: the engine's table).
        model: ``[C][A]`` ``(R, S')`` of each pair tried, else None.
        seen: The states observed, in the order first seen.
        tried: ``[C]`` the actions taken in each state, in the order first taken.
        u: ``[n][2]`` uniforms in [0, 1), one pair per replay.
        alpha: Step size α.
        gamma: Discount γ.

    Returns:
        The states whose values changed.
    """
    changed = []
    for u_s, u_a in u:
        s = seen[int(u_s * len(seen))]
        a = tried[s][int(u_a * len(tried[s]))]
        r, s_next = model[s][a]
        before = q[s][a]
        q[s][a] += alpha * (r + gamma * max(q[s_next]) - before)
        if q[s][a] != before:
            changed.append(s)
    return changed


# --------------------------------------------------------------------------- the mazes
def blocks(level: int) -> tuple[int, int]:
    """The block ``(rows, columns)`` each cell becomes at a resolution level.

    1 × 1, 1 × 2, 2 × 2, 2 × 4, …: the number of states doubles at each level (Example 8.4's
    axis).
    """
    return 2 ** (level // 2), 2 ** ((level + 1) // 2)


def states_at(level: int, layout: str = DYNA_MAZE) -> int:
    """States (non-wall cells) of the maze at a resolution level, without building it."""
    kr, kc = blocks(int(level))
    return sum(ch != "#" for row in parse_layout(layout) for ch in row) * kr * kc


def scaled_layout(layout: str, level: int) -> str:
    """The layout at a resolution level: each cell a block (``blocks``) of the same kind.

    The start stays one cell, the top-left one of its block; a goal becomes a block of goals.
    """
    if isinstance(level, bool) or not isinstance(level, int | np.integer) or level < 0:
        raise InputError(f"the resolution level must be a whole number ≥ 0; got {level}")
    kr, kc = blocks(int(level))
    rows = parse_layout(layout)
    out = []
    for row in rows:
        line = "".join(("." if ch == "S" else ch) * kc for ch in row)
        out += [line] * kr
    r0 = next(i for i, row in enumerate(rows) if "S" in row)
    c0 = rows[r0].index("S") * kc
    out[r0 * kr] = out[r0 * kr][:c0] + "S" + out[r0 * kr][c0 + 1:]
    return "\n".join(out)


def scaled_maze(level: int, layout: str = DYNA_MAZE) -> Maze:
    """The maze of ``scaled_layout(layout, level)`` (``mazes.maze``, no cap on its size)."""
    text = scaled_layout(layout, level)
    rows = text.splitlines()
    return maze(text, max_cells=len(rows) * len(rows[0]))


def distances(maze_: Maze) -> list[int]:
    """``[C]`` fewest moves from each cell to a goal (breadth-first, backwards from the goals).

    A cell from which no goal can be reached (or a wall) gets ``C``, more than any path.
    """
    n_cells, n_actions = maze_.n_cells, maze_.n_actions
    nxt = maze_.next_cell[0].tolist()
    into: list[list[int]] = [[] for _ in range(n_cells)]
    for s in np.flatnonzero(maze_.floor[0] & ~maze_.terminal[0]).tolist():
        for a in range(n_actions):
            if nxt[s][a] != s:
                into[nxt[s][a]].append(s)
    d = [n_cells] * n_cells
    frontier = np.flatnonzero(maze_.terminal[0]).tolist()
    for g in frontier:
        d[g] = 0
    while frontier:
        later = []
        for c in frontier:
            for s in into[c]:
                if d[s] == n_cells:
                    d[s] = d[c] + 1
                    later.append(s)
        frontier = later
    return d


def greedy_is_shortest(q, nxt, terminal, dist, start) -> tuple[bool, set[int]]:
    """Whether the greedy path from ``start`` (ties: the first action) is a shortest path.

    It is when every move lowers the distance to a goal by one (``dist``, ``distances``).

    Returns:
        ``(shortest, cells)``: the answer, and the cells whose greedy action it depended on
        (the path up to and including the first cell whose move is not shortest). Until one
        of their values changes, the answer stays the same.
    """
    s = start
    cells = {s}
    while not terminal[s]:
        qs = q[s]
        s_next = nxt[s][qs.index(max(qs))]
        if dist[s_next] != dist[s] - 1:
            return False, cells
        s = s_next
        cells.add(s)
    return True, cells


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class SweepResult:
    """Every run of Dyna-Q and prioritized sweeping on one maze; lanes ``[P, R]``."""

    planners: tuple[str, ...]
    updates: np.ndarray  # [P, R] updates until the greedy path was shortest (or the budget)
    steps: np.ndarray  # [P, R] real steps until then
    reached: np.ndarray  # [P, R] bool, the greedy path became a shortest one within budget
    first_episode: np.ndarray  # [P, R] steps of the first episode (the same walk: paired dice)
    q: np.ndarray  # [P, R, C, A] action values at the end
    settings: dict = field(default_factory=dict)

    @property
    def runs(self) -> int:
        """Runs per planner."""
        return self.updates.shape[1]

    def index(self, planner: str) -> int:
        """Position of a planner along the first axis."""
        return self.planners.index(planner)


# --------------------------------------------------------------------------- the engine
def _block(seed: int, key: tuple[int, ...], shape: tuple[int, ...]) -> list:
    """One block of uniforms from its own key, as nested lists (fast to read one by one)."""
    ss = np.random.SeedSequence(seed, spawn_key=(SWEEP_STREAM, *key))
    return np.random.default_rng(ss).random(shape).tolist()


def _check(planners, n, runs, theta, epsilon, alpha, gamma, max_updates, max_steps):
    if not planners or any(p not in SWEEPERS for p in planners) or len(set(planners)) < len(
            planners):
        raise ValueError(f"planners must be distinct names from {SWEEPERS}; got {planners}")
    for name, value, least in (("runs", runs, 1), ("planning steps n", n, 1),
                               ("max_updates", max_updates, 1), ("max_steps", max_steps, 1)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
            raise InputError(f"the number of {name} must be a whole number ≥ {least}; got {value}")
    if not (np.isfinite(theta) and theta >= 0.0):
        raise InputError(f"the threshold θ must be 0 or more; got {theta}")
    if not (np.isfinite(alpha) and 0.0 < alpha <= 1.0):
        raise InputError(f"the step size α must be in (0, 1]; got {alpha}")
    for name, value in (("the exploration rate ε", epsilon), ("the discount γ", gamma)):
        if not (np.isfinite(value) and 0.0 <= value <= 1.0):
            raise InputError(f"{name} must be between 0 and 1; got {value}")


def _one_run(maze_: Maze, planner: str, *, n, theta, epsilon, alpha, gamma, seed, key,
             dist, max_updates, max_steps):
    """One run of one planner until its greedy path is shortest.

    Returns ``(updates, steps, reached, first episode's steps, Q)``.
    """
    n_cells, n_actions = maze_.n_cells, maze_.n_actions
    nxt = maze_.next_cell[0].tolist()
    reward = maze_.reward[0].tolist()
    terminal = maze_.terminal[0].tolist()
    start = int(maze_.start[0])
    q = [[0.0] * n_actions for _ in range(n_cells)]
    model: list[list] = [[None] * n_actions for _ in range(n_cells)]
    predecessors: list[list] = [[] for _ in range(n_cells)]
    seen: list[int] = []
    tried: list[list[int]] = [[] for _ in range(n_cells)]
    queue: list = []
    queued: dict = {}
    order = itertools.count()
    sweeping = planner == "prioritized"
    actions = range(n_actions)
    s, t, updates, first_episode = start, 0, 0, 0
    done, watch = greedy_is_shortest(q, nxt, terminal, dist, start)
    if done:
        return 0, 0, True, 0, q
    dice = plan_u = None
    while t < max_steps and updates < max_updates:
        if t % BLOCK == 0:
            dice = _block(seed, (*key, 0, t // BLOCK), (BLOCK, TIE_KEYS + n_actions))
            if not sweeping:
                plan_u = _block(seed, (*key, 1, t // BLOCK), (BLOCK, n, 2))
        u = dice[t % BLOCK]
        # ε-greedy; among tied best actions the one with the largest tie-break key.
        if u[EXPLORE] < epsilon:
            a = int(u[RANDOM_ACTION] * n_actions)
        else:
            qs = q[s]
            best = max(qs)
            a, key_a = -1, -1.0
            for b in actions:
                if qs[b] == best and u[TIE_KEYS + b] > key_a:
                    a, key_a = b, u[TIE_KEYS + b]
        r, s_next = reward[s][a], nxt[s][a]
        t += 1
        if model[s][a] is None:  # (d) model learning: a deterministic world, one sample
            model[s][a] = (r, s_next)
            predecessors[s_next].append((s, a))
            if not tried[s]:
                seen.append(s)
            tried[s].append(a)
        dirty = False  # did a value the greedy path's answer depends on change?
        if sweeping:
            p = priority(r, q[s_next], q[s][a], gamma=gamma)
            push(queue, queued, (s, a), p, theta=theta, order=order)
            for _ in range(n):
                if updates >= max_updates:
                    break
                updated = sweep_step(q, queue, queued, model, predecessors, alpha=alpha,
                                     gamma=gamma, theta=theta, order=order)
                if updated is None:
                    break
                updates += 1
                dirty = dirty or updated in watch
        else:
            before = q[s][a]
            q[s][a] += alpha * (r + gamma * max(q[s_next]) - before)  # (d) direct RL
            changed = replay(q, model, seen, tried, plan_u[(t - 1) % BLOCK], alpha=alpha,
                             gamma=gamma)
            updates += 1 + n
            dirty = (q[s][a] != before and s in watch) or not watch.isdisjoint(changed)
        if terminal[s_next]:
            first_episode = first_episode or t
            s = start
        else:
            s = s_next
        if dirty:
            done, watch = greedy_is_shortest(q, nxt, terminal, dist, start)
            if done:
                return updates, t, True, first_episode, q
    return updates, t, False, first_episode, q


def run_sweeping(
    maze_: Maze,
    *,
    planners: tuple[str, ...] = SWEEPERS,
    n: int = 5,
    runs: int = 5,
    theta: float = BOOK_THETA,
    epsilon: float = 0.1,
    alpha: float = 1.0,
    gamma: float = 0.95,
    seed: int = 0,
    key: tuple[int, ...] = (0,),
    max_updates: int = BUDGET["max_updates"],
    max_steps: int = BUDGET["max_steps"],
) -> SweepResult:
    r"""Run Dyna-Q and prioritized sweeping until the greedy path from S is a shortest path.

    Every real step: choose ``A`` ε-greedily (ties by the dice), take it, record
    ``Model(S, A) = (R, S')``. Dyna-Q then updates ``Q(S, A)`` and makes ``n`` more updates on
    random remembered pairs (``replay``). Prioritized sweeping instead queues ``(S, A)`` with
    priority ``P`` if ``P > θ`` (``priority``, ``push``) and makes up to ``n`` updates from the
    queue (``sweep_step``). After each step the greedy path from S (ties: the first action) is
    followed; the run stops when it is a shortest path, or when a budget runs out. Q starts at 0.

    Args:
        maze_: A maze of one world (``scaled_maze``).
        planners: Names from ``SWEEPERS``; run ``r`` of each reads the same real-step dice.
        n: Planning updates per real step (prioritized sweeping: at most).
        runs: Independent runs per planner.
        theta: Prioritized sweeping's threshold θ.
        epsilon: Exploration rate ε.
        alpha: Step size α.
        gamma: Discount γ.
        seed: Seed of every random draw.
        key: Part of the key of this maze's draws (the study passes the resolution k).
        max_updates: Updates a run may make at most.
        max_steps: Real steps a run may take at most.

    Returns:
        The updates and steps each run made, and whether it got there within budget.

    Raises:
        InputError: a setting out of range.
    """
    _check(planners, n, runs, theta, epsilon, alpha, gamma, max_updates, max_steps)
    if not isinstance(maze_, Maze) or maze_.n_worlds != 1:
        raise ValueError("run_sweeping takes a maze of one world")
    dist = distances(maze_)
    if dist[int(maze_.start[0])] >= maze_.n_cells:
        raise InputError("no goal can be reached from S: open a way through")
    shape = (len(planners), runs)
    updates = np.zeros(shape, dtype=np.int64)
    steps = np.zeros(shape, dtype=np.int64)
    reached = np.zeros(shape, dtype=bool)
    first = np.zeros(shape, dtype=np.int64)
    q = np.zeros((*shape, maze_.n_cells, maze_.n_actions))
    for i, planner in enumerate(planners):
        for r in range(runs):
            out = _one_run(maze_, planner, n=int(n), theta=float(theta), epsilon=float(epsilon),
                           alpha=float(alpha), gamma=float(gamma), seed=int(seed),
                           key=(*key, r), dist=dist, max_updates=int(max_updates),
                           max_steps=int(max_steps))
            updates[i, r], steps[i, r], reached[i, r], first[i, r] = out[:4]
            q[i, r] = out[4]
    for arr in (updates, steps, reached, first, q):
        arr.setflags(write=False)
    return SweepResult(planners=tuple(planners), updates=updates, steps=steps, reached=reached,
                       first_episode=first, q=q,
                       settings=dict(n=n, runs=runs, theta=theta, epsilon=epsilon, alpha=alpha,
                                     gamma=gamma, seed=seed, key=key, max_updates=max_updates,
                                     max_steps=max_steps))


# --------------------------------------------------------------------------- the study
@dataclass(frozen=True)
class SweepingStudy:
    """Example 8.4: both planners on the Dyna maze at each resolution level, paired dice."""

    levels: tuple[int, ...]
    states: tuple[int, ...]  # [K] states (non-wall cells) of each maze
    shortest: tuple[int, ...]  # [K] fewest moves from S to a goal (value iteration)
    results: dict[int, SweepResult]  # by level

    def updates(self, planner: str) -> np.ndarray:
        """``[K, R]`` each run's updates (a lower bound where the run was censored)."""
        return np.array([self.results[k].updates[self.results[k].index(planner)]
                         for k in self.levels])

    def reached(self, planner: str) -> np.ndarray:
        """``[K, R]`` bool, the runs that got there within budget."""
        return np.array([self.results[k].reached[self.results[k].index(planner)]
                         for k in self.levels])

    def summary(self, planner: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        r"""``[K]`` geometric mean of the updates over the runs, and its 95% band.

        The band is the t-interval of the mean of ``log10(updates)``, turned back into updates:
        on the chart's log axis it is symmetric, and never below zero.
        """
        from scipy.stats import t as student_t

        logs = np.log10(np.maximum(self.updates(planner), 1))  # [K, R]
        mean = logs.mean(axis=1)
        runs = logs.shape[1]
        half = (student_t.ppf(0.975, runs - 1) * logs.std(axis=1, ddof=1) / np.sqrt(runs)
                if runs > 1 else np.zeros_like(mean))
        return 10 ** mean, 10 ** (mean - half), 10 ** (mean + half)


def sweeping_study(levels=(0, 1, 2), *, runs: int = 5, n: int = 5,
                   theta: float = BOOK_THETA, epsilon: float = 0.1, alpha: float = 1.0,
                   gamma: float = 0.95, seed: int = 0, max_updates: int = BUDGET["max_updates"],
                   max_steps: int = BUDGET["max_steps"], progress=None) -> SweepingStudy:
    """Dyna-Q and prioritized sweeping at each resolution of the Dyna maze (Example 8.4).

    Args:
        levels: Resolution levels, distinct, from ``LEVELS`` (``blocks``).
        runs: Independent runs per planner and level.
        n: Planning updates per real step.
        theta: Prioritized sweeping's threshold θ.
        epsilon: Exploration rate ε.
        alpha: Step size α (1 by default: the maze is deterministic).
        gamma: Discount γ.
        seed: Seed of every random draw (run r at level k has its own key).
        max_updates: Updates a run may make at most (``run_sweeping``).
        max_steps: Real steps a run may take at most.
        progress: Called with the fraction done after each level, or None.
    """
    ks = tuple(sorted({int(k) for k in levels}))
    if not ks:
        raise InputError("choose at least one maze size")
    if any(k not in LEVELS for k in ks):
        raise InputError(f"the resolution levels must be among "
                         f"{', '.join(map(str, LEVELS))}; got {', '.join(map(str, ks))}")
    results, states, shortest = {}, [], []
    work = sum(2 ** k for k in ks)
    done = 0
    for k in ks:
        m = scaled_maze(k)
        states.append(int(m.floor[0].sum()))
        shortest.append(m.shortest[0])
        results[k] = run_sweeping(m, n=n, runs=runs, theta=theta, epsilon=epsilon, alpha=alpha,
                                  gamma=gamma, seed=seed, key=(k,), max_updates=max_updates,
                                  max_steps=max_steps)
        done += 2 ** k
        if progress is not None:
            progress(done / work)
    return SweepingStudy(levels=ks, states=tuple(states), shortest=tuple(shortest),
                         results=results)
