r"""The Dyna engine: every run of every planner at once, each a *lane*.

A step is a few numpy operations over the lanes, and the ``n`` planning updates of a step are
``n`` rounds over the lanes (``plan``). Lanes keep their own clocks: while all rewards a lane has
seen are 0 its Q stays exactly 0 and its planning changes nothing, so its walk to the first
reward (the first episode) is taken without planning, all lanes together, and each lane then
plans from its own first reward on. The lanes then step together, each at its own time.

Random numbers, paired. Run ``r`` draws its real steps' dice exactly as ``rlviz.td`` does (row
``t`` of the generator ``SeedSequence(seed).spawn(runs)[r]``, blocks of ``td.BLOCK`` rows: the
exploration coin, the random action, and one tie-break key per action), so Dyna-Q with ``n = 0``
reproduces ``td.run_control``'s Q-learning draw for draw. Its planning draws come from a separate
stream, one block of rows per ``td.BLOCK`` steps, keyed by (seed, run, block): they do not
depend on ``n``'s history, and every planner's run ``r`` sees the same dice.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from rlviz import td
from rlviz.errors import InputError
from rlviz.planning.mazes import PLANNERS, Maze
from rlviz.planning.steps import (
    exploration_bonus,
    plan,
    q_update,
    sample_model,
)

# The columns of a run's dice: rlviz.td's layout (so n = 0 is td's Q-learning, draw for draw).
EXPLORE, RANDOM_ACTION, TIE_KEYS = td.EXPLORE, td.RANDOM_ACTION, td.TIE_KEYS
BLOCK = td.BLOCK
PLANNING_STREAM = 8
"""Part of the key of the planning draws (seed, run, ``PLANNING_STREAM``, block)."""


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class DynaResult:
    """Every run of each planner on one maze; lanes ``[P, R]`` are (planner, run).

    A run stops after ``episodes`` episodes (or ``steps`` steps), or when its step or update
    budget runs out (``stopped_early``); episodes it never finished have length 0.
    """

    planners: tuple[str, ...]
    n: int | tuple[int, ...]  # planning updates per real step (or one per planner)
    lengths: np.ndarray  # [P, R, N] steps of each episode, 0 if not finished
    played: np.ndarray  # [P, R] episodes finished
    rewards: np.ndarray | None  # [P, R, T] reward of each step (step protocol), else None
    steps_taken: np.ndarray  # [P, R] real steps taken
    first_reward: np.ndarray  # [P, R] step at which the first reward came (first episode's end)
    q: np.ndarray  # [P, R, C, A] final action values
    tried: np.ndarray  # [P, R, C, A] bool, pairs tried in the real world
    model_next: np.ndarray  # [P, R, C, A] the model's next cell of each pair (untried: itself)
    visits: np.ndarray  # [P, R, C] real steps taken from each cell
    stopped_early: np.ndarray  # [P, R] bool, a budget ran out first
    settings: dict = field(default_factory=dict)

    @property
    def runs(self) -> int:
        """Runs per planner."""
        return self.played.shape[1]

    def index(self, planner: str) -> int:
        """Position of a planner along the first axis."""
        return self.planners.index(planner)

    def cumulative_reward(self) -> np.ndarray:
        """``[P, R, T]`` reward summed up to each step (step protocol)."""
        if self.rewards is None:
            raise ValueError("this result counted episodes, not steps")
        return np.cumsum(self.rewards, axis=2)


# --------------------------------------------------------------------------- random streams
class _RunRows:
    """Rows ``[start, stop)`` of one run's real-step dice, drawn as ``rlviz.td`` draws them."""

    def __init__(self, gen: np.random.Generator, width: int):
        self._gen, self._width = gen, width
        self._blocks: dict[int, np.ndarray] = {}
        self._drawn = 0

    def forget(self, before: int) -> None:
        """Drop the blocks that hold only rows before ``before``."""
        for k in [k for k in self._blocks if (k + 1) * BLOCK <= before]:
            del self._blocks[k]

    def rows(self, start: int, stop: int) -> np.ndarray:
        first, last = start // BLOCK, (stop - 1) // BLOCK
        while self._drawn <= last:  # a generator is read in order: every block, once
            self._blocks[self._drawn] = self._gen.random((BLOCK, self._width))
            self._drawn += 1
        out = np.concatenate([self._blocks[k] for k in range(first, last + 1)])
        return out[start - first * BLOCK: stop - first * BLOCK]


class _PlanRows:
    """Rows ``[start, stop)`` of one run's planning draws, ``[rows, n, 2]``.

    Block ``k`` of them comes from its own key (seed, run, ``PLANNING_STREAM``, k), so any
    block can be drawn alone.
    """

    def __init__(self, seed: int, run: int, n: int):
        self._seed, self._run, self._n = seed, run, n
        self._blocks: dict[int, np.ndarray] = {}

    def _block(self, k: int) -> np.ndarray:
        if k not in self._blocks:
            key = np.random.SeedSequence(self._seed, spawn_key=(self._run, PLANNING_STREAM, k))
            self._blocks[k] = np.random.default_rng(key).random((BLOCK, self._n, 2))
        return self._blocks[k]

    def forget(self, before: int) -> None:
        """Drop the blocks that hold only rows before ``before``."""
        for k in [k for k in self._blocks if (k + 1) * BLOCK <= before]:
            del self._blocks[k]

    def rows(self, start: int, stop: int) -> np.ndarray:
        first, last = start // BLOCK, (stop - 1) // BLOCK
        out = np.concatenate([self._block(k) for k in range(first, last + 1)])
        return out[start - first * BLOCK: stop - first * BLOCK]


def _run_rows(seed: int, runs: int, n_actions: int) -> list[_RunRows]:
    width = TIE_KEYS + n_actions
    children = np.random.SeedSequence(seed).spawn(runs)  # rlviz.td's generators
    return [_RunRows(np.random.default_rng(c), width) for c in children]


def _actions(u: np.ndarray, q_s: np.ndarray | None, epsilon) -> np.ndarray:
    """ε-greedy actions from dice ``u [..., width]`` and values ``q_s [..., A]`` (None: all tied).

    Among tied best actions the one with the largest tie-break key wins, as in ``rlviz.td``.
    """
    n_actions = u.shape[-1] - TIE_KEYS
    keys = np.nextafter(u[..., TIE_KEYS:], 2.0)  # never 0, so a tied action beats an untied one
    if q_s is None:
        greedy = keys.argmax(axis=-1)
    else:
        greedy = np.where(q_s == q_s.max(axis=-1, keepdims=True), keys, 0.0).argmax(axis=-1)
    random_action = (u[..., RANDOM_ACTION] * n_actions).astype(np.int64)
    return np.where(u[..., EXPLORE] < epsilon, random_action, greedy)


def _preference(u: np.ndarray, epsilon) -> np.ndarray:
    """``[..., A]`` each step's actions in the order ε-greedy prefers them, from dice ``u``.

    Greedy: the largest tie-break key first, so the first best action in this order is the
    tied best action with the largest key (as ``_actions`` chooses it). Exploring: the random
    action ``A`` times, chosen whatever the values say.
    """
    n_actions = u.shape[-1] - TIE_KEYS
    order = np.argsort(-u[..., TIE_KEYS:], axis=-1, kind="stable")
    explore = u[..., EXPLORE] < epsilon
    order[explore] = (u[..., RANDOM_ACTION][explore] * n_actions).astype(np.int64)[:, None]
    return order


# --------------------------------------------------------------------------- the engine
def _check(maze_, planners, n, runs, episodes, steps, change_at, epsilon, alpha, gamma, kappa,
           max_steps, max_updates):
    if not isinstance(maze_, Maze):
        raise TypeError(f"expected a Maze; got {type(maze_).__name__}")
    ns = tuple(n) if isinstance(n, tuple | list) else (n,) * len(planners)
    if len(ns) != len(planners):
        raise ValueError(f"give one n per planner; got {n} for {planners}")
    if not planners or any(p not in PLANNERS for p in planners) or len(set(zip(
            planners, ns, strict=True))) < len(planners):
        raise ValueError(f"planners must be distinct names from {PLANNERS} (or the same "
                         f"name with different n); got {planners}")
    if (episodes is None) == (steps is None):
        raise ValueError("give exactly one of episodes and steps")
    counts = [("runs", runs, 1), *(("planning steps n", k, 0) for k in ns),
              ("max_steps", max_steps, 1), ("max_updates", max_updates, 1)]
    counts += [("episodes", episodes, 1)] if episodes is not None else [("steps", steps, 1)]
    for name, value, least in counts:
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
            raise InputError(f"the number of {name} must be a whole number ≥ {least}; got {value}")
    if len(set(ns)) > 1 and not maze_.terminal.all(axis=0).any():
        raise ValueError("planners with different n need a goal shared by every world")
    if maze_.n_worlds > 1 and change_at is None:
        raise ValueError("a maze with two worlds needs change_at")
    if change_at is not None and (isinstance(change_at, bool) or int(change_at) < 0):
        raise InputError(f"the change must come at step 0 or later; got {change_at}")
    if not (np.isfinite(alpha) and 0.0 < alpha <= 1.0):
        raise InputError(f"the step size α must be in (0, 1]; got {alpha}")
    for name, value in (("the exploration rate ε", epsilon), ("the discount γ", gamma)):
        if not (np.isfinite(value) and 0.0 <= value <= 1.0):
            raise InputError(f"{name} must be between 0 and 1; got {value}")
    if not (np.isfinite(kappa) and kappa >= 0.0):
        raise InputError(f"the bonus scale κ must be 0 or more; got {kappa}")


@dataclass
class _Tables:
    """Every lane's learner: values, model and the lists ``sample_model`` draws from."""

    q: np.ndarray  # [L, C, A]
    tried: np.ndarray  # [L, C, A] bool
    model_next: np.ndarray  # [L, C, A] next cell (untried: the cell itself)
    model_reward: np.ndarray  # [L, C, A]
    last_tried: np.ndarray  # [L, C, A] the step after which each pair was last tried (0: never)
    seen: np.ndarray  # [L, C] observed states in the order first seen
    n_seen: np.ndarray  # [L]
    tried_list: np.ndarray  # [L, C, A] actions taken in each state, in the order first taken
    n_tried: np.ndarray  # [L, C]
    visits: np.ndarray  # [L, C]

    @classmethod
    def empty(cls, lanes: int, n_cells: int, n_actions: int) -> _Tables:
        shape = (lanes, n_cells, n_actions)
        return cls(
            q=np.zeros(shape), tried=np.zeros(shape, dtype=bool),
            model_next=np.broadcast_to(np.arange(n_cells)[None, :, None], shape).copy(),
            model_reward=np.zeros(shape), last_tried=np.zeros(shape, dtype=np.int64),
            seen=np.zeros((lanes, n_cells), dtype=np.int64),
            n_seen=np.zeros(lanes, dtype=np.int64),
            tried_list=np.zeros(shape, dtype=np.int64),
            n_tried=np.zeros((lanes, n_cells), dtype=np.int64),
            visits=np.zeros((lanes, n_cells), dtype=np.int64),
        )

    def remember(self, lanes, cell, action) -> None:
        """Append first-time pairs ``(cell, action) [k]`` of ``lanes [k]`` to the lists."""
        new_state = self.n_tried[lanes, cell] == 0
        self.seen[lanes[new_state], self.n_seen[lanes[new_state]]] = cell[new_state]
        self.n_seen[lanes[new_state]] += 1
        self.tried_list[lanes, cell, self.n_tried[lanes, cell]] = action
        self.n_tried[lanes, cell] += 1
        self.tried[lanes, cell, action] = True


@dataclass(frozen=True)
class _Lanes:
    """The worlds copied once per lane and indexed like Q: a step is a table look-up.

    Pair ``(s, a)`` of lane ``l`` sits at ``(l * C + s) * A + a``, the same place as its ``Q``;
    world ``w``'s copy starts ``w * L * C * A`` further on. Rows ``l * C + s`` name states.
    """

    next_cell: np.ndarray  # [W * L*C*A] the next cell
    next_at: np.ndarray  # [W * L*C*A] where the next state's values start: (l * C + s') * A
    reward: np.ndarray  # [W * L*C*A]
    after_at: np.ndarray  # [W * L*C*A] the same for the state of the next step (S after a goal)
    ends: np.ndarray  # [W * L*C*A] bool, the move reaches a goal
    size: int  # L * C * A

    @classmethod
    def build(cls, maze_: Maze, lanes: int) -> _Lanes:
        worlds, n_cells, n_actions = maze_.next_cell.shape
        shape = (worlds, lanes, n_cells, n_actions)
        base = (np.arange(lanes) * n_cells)[None, :, None, None]
        next_row = maze_.next_cell[:, None] + base  # [W, L, C, A]
        ends = np.broadcast_to(
            np.take_along_axis(maze_.terminal, maze_.next_cell.reshape(worlds, -1), axis=1)
            .reshape(worlds, 1, n_cells, n_actions), shape)
        after = np.where(ends, maze_.start[:, None, None, None] + base, next_row)
        return cls(next_cell=np.broadcast_to(maze_.next_cell[:, None], shape).ravel(),
                   next_at=(next_row * n_actions).ravel(),
                   reward=np.broadcast_to(maze_.reward[:, None], shape).ravel(),
                   after_at=(after * n_actions).ravel(), ends=ends.ravel(),
                   size=lanes * n_cells * n_actions)


def _first_walk(maze_: Maze, streams, lane_run, walking, limit: int, change: int, epsilon: float,
                tables: _Tables) -> tuple[np.ndarray, np.ndarray]:
    """The steps of the ``walking`` lanes before their first reward, all lanes together.

    While a lane has seen only zero rewards its values are all 0, so ε-greedy picks by the
    dice alone and every update (real or planned) leaves Q at exactly 0: the walk is taken
    without them, and the model it builds is written afterwards from the walk's log.

    Returns:
        ``(t [L], cell [L])``: each lane's first step still to take, and where it stands.
    """
    lanes, n_cells, n_actions = len(lane_run), maze_.n_cells, maze_.n_actions
    t_lane = np.zeros(lanes, dtype=np.int64)
    cell = np.full(lanes, maze_.start[0], dtype=np.int64)
    active = np.flatnonzero(walking)
    if active.size == 0:
        return t_lane, cell
    world_next = maze_.next_cell.reshape(maze_.n_worlds, -1)
    world_reward = maze_.reward.reshape(maze_.n_worlds, -1)
    cur = cell[active]
    stopped = np.full(active.size, -1, dtype=np.int64)  # step of each lane's first reward
    at_stop = cur.copy()  # where each lane stood then
    log_cell, log_action, log_next = [], [], []
    t = 0
    while t < limit and (stopped < 0).any():
        block = min(BLOCK, limit - t)
        dice = np.stack([streams[lane_run[lane]].rows(t, t + block) for lane in active], axis=1)
        actions = _actions(dice, None, epsilon)  # [B, k]: Q is 0, so every action is tied
        cells = np.empty((block, active.size), dtype=np.int64)
        nexts = np.empty_like(cells)
        for i in range(block):
            world = int(t + i >= change)
            if t + i == change:  # the world changes under the lanes still walking
                away = ~maze_.floor[1, cur] | maze_.terminal[1, cur] | (t + i == 0)
                cur = np.where(away, maze_.start[1], cur)
            j = cur * n_actions + actions[i]
            if world_reward[world, j].any():
                hit = (world_reward[world, j] != 0) & (stopped < 0)
                stopped[hit], at_stop[hit] = t + i, cur[hit]
            cells[i] = cur
            cur = nexts[i] = world_next[world, j]  # lanes that stopped walk on; ignored below
            if (stopped >= 0).all():
                cells, nexts, actions = cells[: i + 1], nexts[: i + 1], actions[: i + 1]
                break
        log_cell.append(cells)
        log_action.append(actions[: len(cells)])
        log_next.append(nexts)
        t += len(cells)
    going = stopped < 0
    stopped[going], at_stop[going] = t, cur[going]
    t_lane[active], cell[active] = stopped, at_stop

    # The model the walk built, from its log (time-major, so first and last uses are in order).
    cells, actions, nexts = (np.concatenate(x) for x in (log_cell, log_action, log_next))
    steps = np.arange(len(cells))[:, None]
    taken = steps < stopped[None, :]  # [T, k] steps each lane really took
    lane = np.broadcast_to(active[None, :], cells.shape)[taken]
    time = np.broadcast_to(steps, cells.shape)[taken]
    c, a, s2 = cells[taken], actions[taken], nexts[taken]
    pair = (lane * n_cells + c) * n_actions + a
    _, last = np.unique(pair[::-1], return_index=True)
    last = len(pair) - 1 - last
    tables.tried.reshape(-1)[pair] = True
    tables.model_next.reshape(-1)[pair[last]] = s2[last]
    tables.last_tried.reshape(-1)[pair[last]] = time[last] + 1
    tables.visits.reshape(-1)[:] += np.bincount(lane * n_cells + c, minlength=lanes * n_cells)
    never = np.iinfo(np.int64).max
    first_state = np.full(lanes * n_cells, never)
    keys, first = np.unique(lane * n_cells + c, return_index=True)
    first_state[keys] = time[first]
    first_pair = np.full(lanes * n_cells * n_actions, never)
    keys, first = np.unique(pair, return_index=True)
    first_pair[keys] = time[first]
    first_state = first_state.reshape(lanes, n_cells)
    first_pair = first_pair.reshape(lanes, n_cells, n_actions)
    tables.seen[:] = np.argsort(first_state, axis=1, kind="stable")
    tables.n_seen[:] = (first_state < never).sum(axis=1)
    tables.tried_list[:] = np.argsort(first_pair, axis=2, kind="stable")
    tables.n_tried[:] = (first_pair < never).sum(axis=2)
    return t_lane, cell


def run_dyna(
    maze_: Maze,
    *,
    planners: tuple[str, ...] = ("dyna_q",),
    n: int | tuple[int, ...] = 5,
    runs: int = 30,
    episodes: int | None = None,
    steps: int | None = None,
    change_at: int | None = None,
    epsilon: float = 0.1,
    alpha: float = 0.1,
    gamma: float = 0.95,
    kappa: float = 1e-3,
    seed: int = 0,
    max_steps: int = 20_000,
    max_updates: int = 150_000,
) -> DynaResult:
    r"""Train ``runs`` independent agents of each planner, all at once (Sutton & Barto, §8.2).

    Every real step of every run: choose ``A`` ε-greedily in ``S`` (ties at random), take it,
    update ``Q(S, A)`` from ``(R, S')`` (``q_update``), record ``Model(S, A) = (R, S')``, then
    make ``n`` planning updates on pairs from ``sample_model`` (``plan``), Dyna-Q+ with the reward
    ``exploration_bonus(R, τ, κ)``. Reaching a goal ends the episode; the next starts at S. Q
    starts at 0. With two worlds the second replaces the first from step ``change_at`` on; an
    agent standing where the new world has a wall or a goal, or starting an episode then,
    starts from the new world's S.

    Args:
        maze_: The maze (``maze``).
        planners: Names from ``PLANNERS``; run ``r`` of each shares its dice.
        n: Planning updates per real step (0: one-step Q-learning), or one per planner (the
            same planner may then appear once per n; it needs a goal in every world).
        runs: Independent runs per planner.
        episodes: Stop each run after this many episodes (Figure 8.2's protocol), or
        steps: after this many real steps (Figures 8.4 and 8.5).
        change_at: The step at which the second world takes over.
        epsilon: Exploration rate ε.
        alpha: Step size α.
        gamma: Discount γ.
        kappa: Dyna-Q+'s bonus scale κ.
        seed: Seed of every random draw.
        max_steps: Real steps a run may take at most.
        max_updates: Updates after the first reward (each real step makes 1 + n) a run may make.

    Returns:
        Episode lengths (and rewards per step), final values, models and visits.

    Raises:
        InputError: a setting out of range.
    """
    _check(maze_, planners, n, runs, episodes, steps, change_at, epsilon, alpha, gamma, kappa,
           max_steps, max_updates)
    lanes = len(planners) * runs
    n_cells, n_actions, worlds = maze_.n_cells, maze_.n_actions, maze_.n_worlds
    ns = tuple(int(k) for k in n) if isinstance(n, tuple | list) else (int(n),) * len(planners)
    n_lane = np.repeat(ns, runs)  # [L] planning updates per step of each lane
    n = max(ns)  # the planning rounds of a step; a lane with fewer replays a no-op in the rest
    spare = int(np.flatnonzero(maze_.terminal.all(axis=0))[0]) if len(set(ns)) > 1 else 0
    # The no-op: a goal's values are 0 and stay 0 (nobody acts there), and its model says
    # "stay, reward 0", so replaying it computes 0 + α(0 + γ·0 − 0) = 0.
    lane_run = np.tile(np.arange(runs), len(planners))
    plus = np.repeat([p == "dyna_q_plus" for p in planners], runs)
    bonus = plus.any()
    kappa_l = np.where(plus, float(kappa), 0.0)[:, None]
    limit = max_steps if steps is None else min(int(steps), max_steps)
    never = np.iinfo(np.int64).max
    change = never if worlds == 1 else int(change_at)
    n_episodes = 0 if episodes is None else int(episodes)
    streams = _run_rows(seed, runs, n_actions)
    plan_streams = {(r, k): _PlanRows(seed, r, k) for r in range(runs) for k in set(ns) if k}
    tab = _Tables.empty(lanes, n_cells, n_actions)
    world = _Lanes.build(maze_, lanes)

    # Before its first reward a lane without a bonus only walks (see _first_walk).
    t_lane, cell = _first_walk(maze_, streams, lane_run, ~plus | (kappa == 0), limit, change,
                               epsilon, tab)
    # A lane stops after its last step (its step budget), or at the end of its last episode.
    stop_at = np.minimum(limit, t_lane + np.maximum(int(max_updates) // (1 + n_lane), 1))
    least = min(maze_.shortest)  # no episode is shorter
    lengths = np.zeros((lanes, n_episodes), dtype=np.int64)
    rewards = np.zeros((lanes, limit)) if steps is not None else None
    played = np.zeros(lanes, dtype=np.int64)
    last_end = np.full(lanes, -1, dtype=np.int64)
    first_reward = np.full(lanes, -1, dtype=np.int64)
    final = _Tables.empty(lanes, n_cells, n_actions)
    done = t_lane >= stop_at
    final_t = np.where(done, t_lane, never)  # each lane's step count when it finished
    _keep(final, tab, np.flatnonzero(done))
    alpha_v, gamma_v = np.full(lanes, float(alpha)), np.full(lanes, float(gamma))
    lane_cells = np.arange(lanes) * n_cells
    lane_actions = np.arange(lanes) * n_actions  # where each lane's row starts in an [L, A]
    s_at = (lane_cells + cell) * n_actions  # where each lane's Q(S, ·) starts in q.ravel()
    action_at = np.arange(n_actions)[:, None]  # [A, 1] Q(s, a) sits at s_at + a
    fresh = t_lane == 0  # the lane starts an episode at its next step
    q = tab.q

    while not done.all():
        for r in range(runs):  # no lane of run r reads rows before its earliest lane's step
            earliest = int(t_lane[lane_run == r].min())
            streams[r].forget(earliest)
            for k in set(ns) - {0}:
                plan_streams[r, k].forget(earliest)
        dice = np.stack([streams[lane_run[lane]].rows(t_lane[lane], t_lane[lane] + BLOCK)
                         for lane in range(lanes)], axis=1)  # [B, L, width]
        prefer = _preference(dice, epsilon)  # [B, L, A]
        n_now = int(n_lane[~done].max())  # the planning rounds this block needs
        if n_now:
            draws = np.zeros((BLOCK, lanes, n_now, 2))  # [B, L, n, 2]
            for lane in np.flatnonzero(n_lane):
                k = min(n_lane[lane], n_now)
                draws[:, lane, :k] = plan_streams[lane_run[lane], n_lane[lane]].rows(
                    t_lane[lane], t_lane[lane] + BLOCK)[:, :k]
            pad = np.arange(n_now)[None, :] >= n_lane[:, None]  # [L, n] the no-op rounds
            padded = pad.any()
        # What happens at which step of this block: the world's change, each lane's last step.
        offset = None if worlds == 1 else world.size * (
            t_lane[None, :] + np.arange(BLOCK)[:, None] >= change)  # [B, L]
        changes = _by_step(np.where(done, never, change - t_lane))
        lasts = _by_step(np.where(done, never, stop_at - 1 - t_lane))
        check = never if episodes is None else int(
            ((n_episodes - played[~done]).min() - 1) * least)  # no episode can end sooner
        log_pair = np.empty((BLOCK, lanes), dtype=np.int64)
        log_r = np.empty((BLOCK, lanes))
        log_end = np.empty((BLOCK, lanes), dtype=bool)
        for i in range(BLOCK):
            if i in changes:  # the new world: off a wall or a goal, and its own start
                ls = changes[i]
                c = s_at[ls] // n_actions - lane_cells[ls]
                starting = log_end[i - 1, ls] if i else fresh[ls]  # an episode begins now
                away = ~maze_.floor[1, c] | maze_.terminal[1, c] | starting
                s_at[ls] = np.where(away, (lane_cells[ls] + maze_.start[1]) * n_actions, s_at[ls])
            flat = q.reshape(-1)
            # The first action, in the order of preference, whose value is the largest.
            choices = s_at[:, None] + prefer[i]  # [L, A] where those values sit
            sa = choices.take(flat.take(choices).argmax(axis=1) + lane_actions)
            here = sa if offset is None else sa + offset[i]  # the pair in the current world
            r, q_next = world.reward.take(here), flat.take(action_at + world.next_at.take(here)).T
            # (d) direct RL. A goal's values stay 0 (nobody acts there): no terminal mask needed.
            flat[sa] = q_update(flat.take(sa), r, q_next, alpha=alpha_v, gamma=gamma_v)
            log_pair[i], log_r[i], log_end[i] = sa, r, world.ends.take(here)
            if not n_now:  # Q-learning: the model is kept only to be shown
                tab.model_next.reshape(-1)[sa] = world.next_cell.take(here)
            else:  # (e) model learning, then (f) planning: n replayed transitions
                t_next = t_lane + (i + 1)
                _learn_model(tab, sa, world.next_cell.take(here), r, t_next, bonus)
                ps, pa = sample_model(draws[i, ..., 0], draws[i, ..., 1], tab.seen, tab.n_seen,
                                      tab.tried_list, tab.n_tried, any_action=plus)
                if padded:  # the rounds a lane does not make replay the no-op
                    ps, pa = np.where(pad, spare, ps), np.where(pad, 0, pa)
                at = (lane_cells[:, None] + ps) * n_actions + pa
                pr, pn = tab.model_reward.take(at), tab.model_next.take(at)
                if bonus:
                    pr = exploration_bonus(pr, t_next[:, None] - tab.last_tried.take(at), kappa_l)
                    if padded:
                        pr = np.where(pad, 0.0, pr)
                q = tab.q = plan(q, ps, pa, pr, pn, alpha=alpha_v, gamma=gamma_v)
            s_at = world.after_at.take(here)
            finished = lasts.get(i)
            if i >= check:
                played_now = played + log_end[: i + 1].sum(axis=0)
                ended = np.flatnonzero(~done & (played_now >= n_episodes))
                finished = ended if finished is None else np.union1d(finished, ended)
                remaining = (n_episodes - played_now[~done]).min()
                check = i + max(int((remaining - 1) * least), 1)
            if finished is not None and finished.size:
                finished = finished[~done[finished]]
                _keep(final, tab, finished)
                final_t[finished] = t_lane[finished] + i + 1
                done[finished] = True
                if done.all():
                    break
        # The block's log: episodes, rewards, visits of each lane, up to its last step.
        used = i + 1
        fresh = log_end[used - 1].copy()
        took = np.minimum(final_t, t_lane + used) - t_lane  # steps each lane counts here
        valid = np.arange(used)[:, None] < np.maximum(took, 0)[None, :]
        step_i, lane_i = np.nonzero(valid & log_end[:used])
        order = np.lexsort((step_i, lane_i))
        step_i, lane_i = step_i[order], lane_i[order]
        t_end = t_lane[lane_i] + step_i
        k = played[lane_i] + _rank_within(lane_i)
        keep = k < n_episodes
        prev = np.where(_rank_within(lane_i) == 0, last_end[lane_i], np.roll(t_end, 1))
        lengths[lane_i[keep], k[keep]] = (t_end - prev)[keep]
        np.add.at(played, lane_i, 1)
        last_end[lane_i] = t_end  # the last write per lane wins: its latest end
        rw = log_r[:used]
        if rewards is not None:
            si, li = np.nonzero(valid)
            rewards[li, t_lane[li] + si] = rw[si, li]
        got = valid & (rw != 0)
        first = np.where(got.any(axis=0), got.argmax(axis=0), -1)
        first_reward = np.where((first_reward < 0) & (first >= 0), t_lane + first, first_reward)
        pairs = log_pair[:used][valid]
        tab.tried.reshape(-1)[pairs] = True
        np.add.at(tab.visits.reshape(-1), pairs // n_actions, 1)
        _keep(final, tab, np.flatnonzero(done & (final_t > t_lane) & (final_t <= t_lane + used)),
              names=("visits",) if n_now else ("visits", "tried"))  # only the log fills in
        t_lane = t_lane + used

    shape = (len(planners), runs)
    stopped_early = played < n_episodes if episodes is not None else final_t < limit
    return DynaResult(
        planners=tuple(planners), n=ns[0] if len(set(ns)) == 1 else ns,
        lengths=lengths.reshape(*shape, n_episodes), played=played.reshape(shape),
        rewards=None if rewards is None else rewards.reshape(*shape, limit),
        steps_taken=final_t.reshape(shape), first_reward=first_reward.reshape(shape),
        q=final.q.reshape(*shape, n_cells, n_actions),
        tried=final.tried.reshape(*shape, n_cells, n_actions),
        model_next=final.model_next.reshape(*shape, n_cells, n_actions),
        visits=final.visits.reshape(*shape, n_cells),
        stopped_early=stopped_early.reshape(shape),
        settings=dict(n=ns[0] if len(set(ns)) == 1 else ns, runs=runs, episodes=episodes,
                      steps=steps, change_at=change_at,
                      epsilon=epsilon, alpha=alpha, gamma=gamma, kappa=kappa, seed=seed,
                      max_steps=max_steps, max_updates=max_updates),
    )


def _learn_model(tab: _Tables, sa, s2_cell, r, t_next, bonus: bool) -> None:
    """Dyna-Q's step (e): ``Model(S, A) ← (R, S')``, and when each pair was last tried."""
    new = np.flatnonzero(~tab.tried.reshape(-1)[sa])
    if new.size:
        n_actions = tab.q.shape[2]
        lanes = new
        cell = sa[new] // n_actions - lanes * tab.q.shape[1]
        tab.remember(lanes, cell, sa[new] % n_actions)
    tab.model_next.reshape(-1)[sa] = s2_cell
    tab.model_reward.reshape(-1)[sa] = r
    if bonus:
        tab.last_tried.reshape(-1)[sa] = t_next


def _by_step(at: np.ndarray) -> dict[int, np.ndarray]:
    """Lanes by the step of the block at which something happens to them (``at [L]``)."""
    inside = np.flatnonzero((at >= 0) & (at < BLOCK))
    out: dict[int, np.ndarray] = {}
    for lane in inside:
        out.setdefault(int(at[lane]), []).append(lane)
    return {k: np.array(v, dtype=np.int64) for k, v in out.items()}


def _rank_within(groups: np.ndarray) -> np.ndarray:
    """Position of each element among the equal values before it, for sorted ``groups``."""
    if groups.size == 0:
        return groups
    starts = np.r_[0, np.flatnonzero(np.diff(groups)) + 1]
    return np.arange(groups.size) - np.repeat(starts, np.diff(np.r_[starts, groups.size]))


def _keep(final: _Tables, tab: _Tables, lanes: np.ndarray,
          names: tuple[str, ...] = ("q", "tried", "model_next", "visits")) -> None:
    """Copy the finished ``lanes``' learners into ``final`` (the lanes go on idling)."""
    if lanes.size:
        for name in names:
            getattr(final, name)[lanes] = getattr(tab, name)[lanes]


def agent(res: DynaResult, i: int) -> DynaResult:
    """The result of planner ``i`` alone, as if it had been trained on its own (same dice)."""
    n = res.n[i] if isinstance(res.n, tuple) else res.n
    one = {f: getattr(res, f)[i:i + 1] for f in ("lengths", "played", "steps_taken",
                                                  "first_reward", "q", "tried", "model_next",
                                                  "visits", "stopped_early")}
    return DynaResult(planners=(res.planners[i],), n=n,
                      rewards=None if res.rewards is None else res.rewards[i:i + 1],
                      settings={**res.settings, "n": n}, **one)

