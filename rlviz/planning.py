r"""Dyna: planning with a learned model. Dyna-Q and Dyna-Q+ on gridworld mazes.

After every real step, Dyna-Q (Sutton & Barto, 2018, Section 8.2) does what Q-learning does,
``Q(S, A) += α[R + γ max_a Q(S', a) − Q(S, A)]``, records the transition in a table model
``Model(S, A) = (R, S')``, and then makes ``n`` more updates of the same kind on transitions
replayed from the model: a random previously observed state, a random action previously taken
there. With ``n = 0`` it is one-step Q-learning, and the update is ``rlviz.td``'s own
(``q_learning_target`` and ``td_update``). Dyna-Q+ (Section 8.3) adds the bonus ``κ√τ`` to the
reward of a replayed transition not tried for ``τ`` steps, and may replay actions never tried
(the model says they lead back to the same state with reward 0), so a stale model gets tested.

Mazes are text layouts turned into models by ``rlviz.envs.gridworld`` (``.`` floor, ``#`` wall,
``S`` start, ``G`` goal); reaching a goal pays 1, every other move 0. A world that changes
mid-run is a second layout of the same size. States are cells, numbered row by row, so a state
means the same place in both worlds.

Engine. ``run_dyna`` trains every run of every planner at once, each a *lane*: a step is a few
numpy operations over the lanes, and the ``n`` planning updates of a step are ``n`` rounds over
the lanes (``plan``). Lanes keep their own clocks: while all rewards a lane has seen are 0 its
Q stays exactly 0 and its planning changes nothing, so its walk to the first reward (the first
episode) is taken without planning, all lanes together, and each lane then plans from its own
first reward on. The lanes then step together, each at its own time.

Random numbers, paired. Run ``r`` draws its real steps' dice exactly as ``rlviz.td`` does (row
``t`` of the generator ``SeedSequence(seed).spawn(runs)[r]``, blocks of ``td.BLOCK`` rows: the
exploration coin, the random action, and one tie-break key per action), so Dyna-Q with ``n = 0``
reproduces ``td.run_control``'s Q-learning draw for draw. Its planning draws come from a separate
stream, one block of rows per ``td.BLOCK`` steps, keyed by (seed, run, block): they do not
depend on ``n``'s history, and every planner's run ``r`` sees the same dice.

Reference: Sutton & Barto (2018), *Reinforcement Learning: An Introduction*, 2nd ed., Sections
8.2-8.3, Figures 8.2-8.5.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from rlviz import dp, td
from rlviz.envs import gridworld, parse_layout
from rlviz.errors import InputError
from rlviz.mdp import TabularMDP

__all__ = [
    "BLOCKING_MAZE",
    "DYNA_MAZE",
    "LEGEND",
    "MAX_CELLS",
    "PLANNERS",
    "SHORTCUT_MAZE",
    "DynaResult",
    "Maze",
    "exploration_bonus",
    "greedy_mask",
    "greedy_path_length",
    "maze",
    "plan",
    "q_update",
    "random_walk_steps",
    "run_dyna",
    "sample_model",
    "shortest_path",
]

PLANNERS: tuple[str, ...] = ("dyna_q", "dyna_q_plus")
LEGEND: dict[str, str] = {
    ".": "floor",
    "#": "wall",
    "S": "start (exactly one)",
    "G": "goal: +1, and the episode starts again at S",
}
MAX_CELLS = 200
"""Largest maze (rows × columns) the engine takes: bounds a random walk's length."""

# Sutton & Barto (2018), Figure 8.2: 6 x 9, start on the left, goal in the top-right corner.
DYNA_MAZE = """
.......#G
..#....#.
S.#....#.
..#......
.....#...
.........
"""
# Figure 8.4: the gap in the barrier moves from the right end to the left end.
BLOCKING_MAZE = (
    """
........G
.........
.........
########.
.........
...S.....
""",
    """
........G
.........
.........
.########
.........
...S.....
""",
)
# Figure 8.5: a second gap opens at the right end: a shortcut.
SHORTCUT_MAZE = (BLOCKING_MAZE[1], """
........G
.........
.........
.#######.
.........
...S.....
""")

# The columns of a run's dice: rlviz.td's layout (so n = 0 is td's Q-learning, draw for draw).
EXPLORE, RANDOM_ACTION, TIE_KEYS = td.EXPLORE, td.RANDOM_ACTION, td.TIE_KEYS
BLOCK = td.BLOCK
PLANNING_STREAM = 8
"""Part of the key of the planning draws (seed, run, ``PLANNING_STREAM``, block)."""


# --------------------------------------------------------------------------- the maze
@dataclass(frozen=True, eq=False)
class Maze:
    """One or more worlds of the same size, as tables over cells (a cell is a state in each).

    World ``w`` is ``mdps[w]`` (``rlviz.envs.gridworld`` of ``layouts[w]``) re-indexed by cell:
    a wall cell has no moves of its own (the agent never stands there).
    """

    layouts: tuple[tuple[str, ...], ...]  # [W] the rows of each world's layout
    mdps: tuple[TabularMDP, ...]  # [W] each world as rlviz.envs builds it
    next_cell: np.ndarray  # [W, C, A] cell reached by each action (walls and edges: stay)
    reward: np.ndarray  # [W, C, A] reward of each move: 1 into a goal, else 0
    terminal: np.ndarray  # [W, C] bool, goal cells
    floor: np.ndarray  # [W, C] bool, cells that are not walls
    start: np.ndarray  # [W] start cell of each world
    shortest: tuple[int, ...]  # [W] fewest moves from S to a goal (value iteration)

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, columns)."""
        return len(self.layouts[0]), len(self.layouts[0][0])

    @property
    def n_cells(self) -> int:
        return self.next_cell.shape[1]

    @property
    def n_actions(self) -> int:
        return self.next_cell.shape[2]

    @property
    def n_worlds(self) -> int:
        return self.next_cell.shape[0]

    def cell(self, row: int, col: int) -> int:
        """The cell index of a (row, column)."""
        return row * self.shape[1] + col


def _world(layout: str, which: str) -> TabularMDP:
    try:
        rows = parse_layout(layout)
    except ValueError as err:
        raise InputError(f"{which}: {err}") from None
    bad = sorted({ch for row in rows for ch in row} - set(LEGEND))
    if bad:
        raise InputError(
            f"{which}: {', '.join(repr(b) for b in bad)} cannot be used here; the mazes on this "
            "page use . (floor), # (wall), S (start) and G (goal)"
        )
    if not any("G" in row for row in rows):
        raise InputError(f"{which} has no goal: put at least one G on the grid")
    if len(rows) * len(rows[0]) > MAX_CELLS:
        raise InputError(
            f"{which} has {len(rows)} × {len(rows[0])} = {len(rows) * len(rows[0])} cells; "
            f"mazes here have at most {MAX_CELLS}"
        )
    return gridworld("\n".join(rows), step_reward=0.0, goal_reward=1.0, name=which)


def shortest_path(mdp: TabularMDP) -> int | None:
    """Fewest moves from the start to a goal, by value iteration (``rlviz.dp``), or None.

    With reward −1 per move and γ = 1, sweep ``k`` of value iteration from ``V = 0`` gives
    ``V_k(s) = −min(k, d(s))``, ``d(s)`` the fewest moves to a goal; after one sweep more than
    there are states, ``−V(S)`` is ``d(S)`` when the goal can be reached (Sutton & Barto, 2018,
    Section 4.4).

    Args:
        mdp: A deterministic gridworld (its rewards are ignored; its goals are its terminals).
    """
    cost = TabularMDP(
        next_state=mdp.next_state, prob=mdp.prob,
        reward=np.where(mdp.terminal[:, None, None], 0.0, -1.0) * np.ones_like(mdp.reward),
        terminal=mdp.terminal, start=mdp.start, action_names=mdp.action_names, grid=mdp.grid,
    )
    sweeps = mdp.n_states + 1
    trace = dp.value_iteration(cost, gamma=1.0, theta=0.5, max_sweeps=sweeps)
    d = -float(trace.final_values[mdp.start_state])
    return int(round(d)) if d < sweeps - 0.5 else None


def maze(layout: str, after: str | None = None) -> Maze:
    """Build the maze of a layout, or of two layouts of the same size (the world changes).

    Args:
        layout: The maze as text (``LEGEND``).
        after: The world after the change, or None for a maze that never changes.

    Raises:
        InputError: a malformed layout, a character other than ``. # S G``, no goal, a goal that
            cannot be reached from S, or two layouts of different sizes.
    """
    texts = [layout] if after is None else [layout, after]
    names = ["the maze"] if after is None else ["the maze before the change",
                                               "the maze after the change"]
    mdps = tuple(_world(text, name) for text, name in zip(texts, names, strict=True))
    shapes = {m.grid.shape for m in mdps}
    if len(shapes) > 1:
        (r0, c0), (r1, c1) = mdps[0].grid.shape, mdps[1].grid.shape
        raise InputError(
            f"the two mazes must have the same size: {r0} × {c0} before the change, "
            f"{r1} × {c1} after"
        )
    n_rows, n_cols = mdps[0].grid.shape
    n_cells, n_actions = n_rows * n_cols, mdps[0].n_actions
    worlds = len(mdps)
    next_cell = np.tile(np.arange(n_cells)[None, :, None], (worlds, 1, n_actions))
    reward = np.zeros((worlds, n_cells, n_actions))
    terminal = np.zeros((worlds, n_cells), dtype=bool)
    floor = np.zeros((worlds, n_cells), dtype=bool)
    start = np.zeros(worlds, dtype=np.int64)
    shortest = []
    for w, (mdp, name) in enumerate(zip(mdps, names, strict=True)):
        cell_of = mdp.grid.cells[:, 0] * n_cols + mdp.grid.cells[:, 1]  # [S] state -> cell
        next_cell[w, cell_of] = cell_of[mdp.next_state[..., 0]]
        reward[w, cell_of] = mdp.reward[..., 0]
        terminal[w, cell_of] = mdp.terminal
        floor[w, cell_of] = True
        start[w] = cell_of[mdp.start_state]
        d = shortest_path(mdp)
        if d is None:
            raise InputError(f"in {name} no goal can be reached from S: open a way through")
        shortest.append(d)
    for arr in (next_cell, reward, terminal, floor, start):
        arr.setflags(write=False)
    return Maze(layouts=tuple(m.grid.layout for m in mdps), mdps=mdps, next_cell=next_cell,
                reward=reward, terminal=terminal, floor=floor, start=start,
                shortest=tuple(shortest))


def random_walk_steps(mdp: TabularMDP) -> float:
    r"""Expected number of moves of the uniformly random walk from S to a goal.

    While every action value is 0 (before the first reward), ε-greedy with random tie-breaking
    picks each action with probability 1/4, so the first episode of every Dyna agent is this
    walk. Its expected length solves :math:`(I - P_\pi) m = 1` over the non-goal states (the
    policy's value with reward −1 per move, ``rlviz.mdp.policy_value``).
    """
    cost = TabularMDP(
        next_state=mdp.next_state, prob=mdp.prob,
        reward=np.where(mdp.terminal[:, None, None], 0.0, -1.0) * np.ones_like(mdp.reward),
        terminal=mdp.terminal, start=mdp.start, action_names=mdp.action_names, grid=mdp.grid,
    )
    from rlviz.mdp import policy_value

    uniform = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    return float(-policy_value(cost, uniform, 1.0)[mdp.start_state])


# --------------------------------------------------------------------------- the readable steps
def q_update(q_sa, r, q_next, *, alpha, gamma, terminal=False):
    r"""Dyna-Q's one update, the same for a real transition and a replayed one.

    .. math:: Q(S, A) \leftarrow Q(S, A) + \alpha\big[R + \gamma \max_a Q(S', a) - Q(S, A)\big]

    It is one-step Q-learning, written with ``rlviz.td``'s own target and update.

    Args:
        q_sa: ``[...]`` the current ``Q(S, A)``.
        r: ``[...]`` the reward ``R`` (real, or the model's plus any bonus).
        q_next: ``[..., A]`` the values ``Q(S', ·)`` of the next state.
        alpha: Step size α.
        gamma: Discount γ.
        terminal: ``[...]`` whether ``S'`` ends the episode (its values are 0 anyway).

    Returns:
        ``[...]`` the new ``Q(S, A)``.
    """
    target = td.q_learning_target(r, q_next, gamma=gamma, terminal=terminal)
    return td.td_update(q_sa, target, alpha)


def exploration_bonus(r, tau, kappa):
    r"""Dyna-Q+'s planning reward: the model's reward plus a bonus for time untried.

    .. math:: \tilde R = R + \kappa \sqrt{\tau}

    where ``τ`` is the number of real steps since the action was last tried in that state
    (Sutton & Barto, 2018, Section 8.3). With ``κ = 0`` it is the model's reward.

    Args:
        r: ``[...]`` the model's reward.
        tau: ``[...]`` steps since the pair was last tried (since the start if never).
        kappa: Bonus scale κ ≥ 0 (scalar or broadcastable).
    """
    return r + kappa * np.sqrt(tau)


def sample_model(u_state, u_action, seen, n_seen, tried, n_tried, *, any_action):
    r"""Pick the pairs to replay: a random previously observed state, then a random action.

    Dyna-Q takes an action previously taken in that state; Dyna-Q+ any action (an untried one
    replays as "back to the same state, reward 0"). Uniforms ``u`` in [0, 1) pick position
    ``⌊u · count⌋`` of each list.

    Args:
        u_state, u_action: ``[L, n]`` uniforms, one pair per replayed transition of each lane.
        seen: ``[L, C]`` each lane's observed states in the order first seen.
        n_seen: ``[L]`` how many of them.
        tried: ``[L, C, A]`` the actions taken in each state, in the order first taken.
        n_tried: ``[L, C]`` how many of them.
        any_action: ``[L]`` bool, lanes that may replay any action (Dyna-Q+).

    Returns:
        ``(states, actions)``, each ``[L, n]``.
    """
    n_lanes, n_cells, n_actions = tried.shape
    lane = np.arange(n_lanes)[:, None] * n_cells  # where each lane's lists start, flat
    states = seen.reshape(-1)[lane + (u_state * n_seen[:, None]).astype(np.int64)]
    where = lane + states  # the state's row in each lane
    counts = np.where(any_action[:, None], n_actions, n_tried.reshape(-1)[where])
    pick = (u_action * counts).astype(np.int64)
    if not any_action.any():
        return states, tried.reshape(-1)[where * n_actions + pick]
    listed = tried.reshape(-1)[where * n_actions + np.minimum(pick, n_actions - 1)]
    actions = np.where(any_action[:, None], pick, listed)
    return states, actions


def plan(q, s, a, r, s_next, *, alpha, gamma):
    r"""``n`` planning updates of every lane, one after another: Dyna-Q's step (f).

    Round ``k`` replays transition ``k`` of every lane at once,
    ``Q(S_k, A_k) += α[R_k + γ max_a Q(S'_k, a) − Q(S_k, A_k)]`` (``q_update``); later rounds
    see the earlier rounds' values, as in the book's loop.

    Args:
        q: ``[L, C, A]`` each lane's action values (not changed: a new table is returned).
        s, a: ``[L, n]`` the replayed states and actions.
        r: ``[L, n]`` their rewards (with any bonus).
        s_next: ``[L, n]`` their next states, as the model says.
        alpha: Step size α (scalar or ``[L]``).
        gamma: Discount γ (scalar or ``[L]``).

    Returns:
        ``[L, C, A]`` the values after the ``n`` updates.
    """
    q = np.array(q, dtype=np.float64)
    lanes, n_cells, n_actions = q.shape
    row = _lane_starts(lanes, n_cells)  # [L, 1] each lane's first row
    q_sa_at = ((row + s) * n_actions + a).T.copy()  # [n, L] where Q(S, A) sits in q.ravel()
    next_at = (row + s_next).T.copy()  # [n, L] the row of Q(S', ·)
    r = np.asarray(r, dtype=np.float64).T.copy()
    flat, by_row = q.reshape(-1), q.reshape(-1, n_actions)
    for k in range(len(q_sa_at)):
        at = q_sa_at[k]
        flat[at] = q_update(flat[at], r[k], by_row[next_at[k]], alpha=alpha, gamma=gamma)
    return q


@functools.lru_cache(maxsize=64)
def _lane_starts(lanes: int, n_cells: int) -> np.ndarray:
    """``[L, 1]`` the first row of each lane's table, made once per size."""
    out = (np.arange(lanes) * n_cells)[:, None]
    out.setflags(write=False)
    return out


def greedy_mask(q) -> np.ndarray:
    """``[..., A]`` the greedy actions (all tied best ones), none where every value is equal.

    As in Sutton & Barto (2018), Figure 8.3: a state whose action values are all equal has no
    arrow.
    """
    q = np.asarray(q, dtype=np.float64)
    best = q == q.max(axis=-1, keepdims=True)
    return best & ~best.all(axis=-1, keepdims=True)


def greedy_path_length(maze_: Maze, q, world: int = -1) -> int | None:
    """Moves of the greedy path of ``q [C, A]`` from S to a goal in one world, or None.

    Ties go to the first action; a path that loops or stands still never arrives.
    """
    q = np.asarray(q, dtype=np.float64)
    s = int(maze_.start[world])
    for moves in range(1, maze_.n_cells + 1):
        s = int(maze_.next_cell[world, s, int(q[s].argmax())])
        if maze_.terminal[world, s]:
            return moves
    return None


# --------------------------------------------------------------------------- results
@dataclass(frozen=True)
class DynaResult:
    """Every run of each planner on one maze; lanes ``[P, R]`` are (planner, run).

    A run stops after ``episodes`` episodes (or ``steps`` steps), or when its step or update
    budget runs out (``stopped_early``); episodes it never finished have length 0.
    """

    planners: tuple[str, ...]
    n: int  # planning updates per real step
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
        return self.played.shape[1]

    def index(self, planner: str) -> int:
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
    """Rows ``[start, stop)`` of one run's planning draws, ``[rows, n, 2]``; block ``k`` of them
    comes from its own key (seed, run, ``PLANNING_STREAM``, k), so any block can be drawn alone."""

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


# --------------------------------------------------------------------------- the engine
def _check(maze_, planners, n, runs, episodes, steps, change_at, epsilon, alpha, gamma, kappa,
           max_steps, max_updates):
    if not isinstance(maze_, Maze):
        raise TypeError(f"expected a Maze; got {type(maze_).__name__}")
    if not planners or any(p not in PLANNERS for p in planners) or len(set(planners)) < len(
            planners):
        raise ValueError(f"planners must be distinct names from {PLANNERS}; got {planners}")
    if (episodes is None) == (steps is None):
        raise ValueError("give exactly one of episodes and steps")
    counts = [("runs", runs, 1), ("planning steps n", n, 0), ("max_steps", max_steps, 1),
              ("max_updates", max_updates, 1)]
    counts += [("episodes", episodes, 1)] if episodes is not None else [("steps", steps, 1)]
    for name, value, least in counts:
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
            raise InputError(f"the number of {name} must be a whole number ≥ {least}; got {value}")
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

    next_row: np.ndarray  # [W * L*C*A] row of the next state
    reward: np.ndarray  # [W * L*C*A]
    after: np.ndarray  # [W * L*C*A] the row at the next step: the start after a goal
    ends: np.ndarray  # [W * L*C*A] bool, the move reaches a goal
    size: int  # L * C * A

    @classmethod
    def build(cls, maze_: Maze, lanes: int) -> _Lanes:
        worlds, n_cells, n_actions = maze_.next_cell.shape
        base = (np.arange(lanes) * n_cells)[None, :, None, None]
        next_row = maze_.next_cell[:, None] + base  # [W, L, C, A]
        ends = np.broadcast_to(
            np.take_along_axis(maze_.terminal, maze_.next_cell.reshape(worlds, -1), axis=1)
            .reshape(worlds, 1, n_cells, n_actions), next_row.shape)
        after = np.where(ends, maze_.start[:, None, None, None] + base, next_row)
        reward = np.broadcast_to(maze_.reward[:, None], next_row.shape)
        return cls(next_row=next_row.ravel(), reward=reward.ravel(), after=after.ravel(),
                   ends=ends.ravel(), size=lanes * n_cells * n_actions)


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
    n: int = 5,
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
        n: Planning updates per real step (0: one-step Q-learning).
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
    lane_run = np.tile(np.arange(runs), len(planners))
    plus = np.repeat([p == "dyna_q_plus" for p in planners], runs)
    bonus = plus.any()
    kappa_l = np.where(plus, float(kappa), 0.0)[:, None]
    limit = max_steps if steps is None else min(int(steps), max_steps)
    never = np.iinfo(np.int64).max
    change = never if worlds == 1 else int(change_at)
    n_episodes = 0 if episodes is None else int(episodes)
    streams = _run_rows(seed, runs, n_actions)
    plan_streams = [_PlanRows(seed, r, n) for r in range(runs)] if n else []
    tab = _Tables.empty(lanes, n_cells, n_actions)
    world = _Lanes.build(maze_, lanes)

    # Before its first reward a lane without a bonus only walks (see _first_walk).
    t_lane, cell = _first_walk(maze_, streams, lane_run, ~plus | (kappa == 0), limit, change,
                               epsilon, tab)
    # A lane stops after its last step (its step budget), or at the end of its last episode.
    stop_at = np.minimum(limit, t_lane + max(int(max_updates) // (1 + n), 1))
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
    row = lane_cells + cell
    fresh = t_lane == 0  # the lane starts an episode at its next step
    q = tab.q

    while not done.all():
        for r in range(runs):  # no lane of run r reads rows before its earliest lane's step
            earliest = int(t_lane[lane_run == r].min())
            streams[r].forget(earliest)
            if n:
                plan_streams[r].forget(earliest)
        dice = np.stack([streams[lane_run[lane]].rows(t_lane[lane], t_lane[lane] + BLOCK)
                         for lane in range(lanes)], axis=1)  # [B, L, width]
        explore = dice[..., EXPLORE] < epsilon
        random_action = (dice[..., RANDOM_ACTION] * n_actions).astype(np.int64)
        keys = np.nextafter(dice[..., TIE_KEYS:], 2.0)  # never 0: a tied action beats the rest
        if n:
            draws = np.stack([plan_streams[lane_run[lane]].rows(t_lane[lane], t_lane[lane] + BLOCK)
                              for lane in range(lanes)], axis=1)  # [B, L, n, 2]
        # What happens at which step of this block: the world's change, each lane's last step.
        offset = world.size * (t_lane[None, :] + np.arange(BLOCK)[:, None] >= change)  # [B, L]
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
                c = row[ls] - lane_cells[ls]
                starting = log_end[i - 1, ls] if i else fresh[ls]  # an episode begins now
                away = ~maze_.floor[1, c] | maze_.terminal[1, c] | starting
                row[ls] = np.where(away, lane_cells[ls] + maze_.start[1], row[ls])
            q_rows = q.reshape(-1, n_actions)
            q_s = q_rows[row]
            greedy = np.where(q_s == q_s.max(axis=1, keepdims=True), keys[i], 0.0).argmax(axis=1)
            sa = row * n_actions + np.where(explore[i], random_action[i], greedy)
            here = sa + offset[i]  # the pair in the current world's tables
            s2, r = world.next_row[here], world.reward[here]
            flat = q.reshape(-1)
            # (d) direct RL. A goal's values stay 0 (nobody acts there): no terminal mask needed.
            flat[sa] = q_update(flat[sa], r, q_rows[s2], alpha=alpha_v, gamma=gamma_v)
            log_pair[i], log_r[i], log_end[i] = sa, r, world.ends[here]
            if not n:  # Q-learning: the model is kept only to be shown
                tab.model_next.reshape(-1)[sa] = s2 - lane_cells
            else:  # (e) model learning, then (f) planning: n replayed transitions
                t_next = t_lane + (i + 1)
                _learn_model(tab, sa, s2 - lane_cells, r, t_next, bonus)
                ps, pa = sample_model(draws[i, ..., 0], draws[i, ..., 1], tab.seen, tab.n_seen,
                                      tab.tried_list, tab.n_tried, any_action=plus)
                at = (lane_cells[:, None] + ps) * n_actions + pa
                pr = tab.model_reward.reshape(-1)[at]
                if bonus:
                    pr = exploration_bonus(pr, t_next[:, None] - tab.last_tried.reshape(-1)[at],
                                           kappa_l)
                q = tab.q = plan(q, ps, pa, pr, tab.model_next.reshape(-1)[at], alpha=alpha_v,
                                 gamma=gamma_v)
            row = world.after[here]
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
              names=("visits",) if n else ("visits", "tried"))  # what only the log fills in
        t_lane = t_lane + used

    shape = (len(planners), runs)
    stopped_early = played < n_episodes if episodes is not None else final_t < limit
    return DynaResult(
        planners=tuple(planners), n=int(n),
        lengths=lengths.reshape(*shape, n_episodes), played=played.reshape(shape),
        rewards=None if rewards is None else rewards.reshape(*shape, limit),
        steps_taken=final_t.reshape(shape), first_reward=first_reward.reshape(shape),
        q=final.q.reshape(*shape, n_cells, n_actions),
        tried=final.tried.reshape(*shape, n_cells, n_actions),
        model_next=final.model_next.reshape(*shape, n_cells, n_actions),
        visits=final.visits.reshape(*shape, n_cells),
        stopped_early=stopped_early.reshape(shape),
        settings=dict(n=n, runs=runs, episodes=episodes, steps=steps, change_at=change_at,
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


# --------------------------------------------------------------------------- the page's studies
SOURCE = "Sutton & Barto (2018)"
BOOK_NS = (0, 5, 50)
"""Figure 8.2's planning budgets."""
BOOK_SETTINGS = dict(epsilon=0.1, alpha=0.1, gamma=0.95)
"""Figure 8.2's ε, α and γ (the book's text beside it)."""
CHANGES = {"blocking": (BLOCKING_MAZE, 1000, 3000), "shortcut": (SHORTCUT_MAZE, 3000, 6000)}
"""Figures 8.4 and 8.5: the two layouts, the step at which the maze changes, the steps run."""


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


@dataclass(frozen=True)
class PlanningStudy:
    """Figure 8.2's protocol on one maze: Dyna-Q with several planning budgets, paired dice."""

    maze: Maze
    results: dict[int, DynaResult]  # by n
    walk: float  # expected length of the first episode (the random walk)
    halfway: dict[int, tuple[np.ndarray, int, int]]  # n -> (Q [C, A], steps into episode 2,
    # its length)

    @property
    def ns(self) -> tuple[int, ...]:
        return tuple(self.results)

    def mean_lengths(self, n: int) -> np.ndarray:
        """``[N]`` mean steps of each episode over the runs that finished it."""
        res = self.results[n]
        played = np.arange(res.lengths.shape[2]) < res.played[0][:, None]
        with np.errstate(invalid="ignore"):
            return np.where(played, res.lengths[0], 0).sum(0) / played.sum(0)


def planning_study(layout: str, *, ns=BOOK_NS, runs: int = 30, episodes: int = 50,
                   epsilon: float = 0.1, alpha: float = 0.1, gamma: float = 0.95, seed: int = 0,
                   progress=None) -> PlanningStudy:
    """Dyna-Q with each ``n`` in ``ns`` on one maze (Sutton & Barto, Figure 8.2), and the greedy
    policy of run 1 halfway through its second episode for the smallest and largest ``n``
    (Figure 8.3).

    Args:
        layout: The maze as text.
        ns: Planning budgets, distinct, at least one.
        progress: Called with the fraction done after each budget, or None.
    """
    ns = tuple(sorted({int(n) for n in ns}))
    if not ns:
        raise InputError("choose at least one planning budget n")
    m = maze(layout)
    settings = dict(runs=runs, episodes=episodes, epsilon=epsilon, alpha=alpha, gamma=gamma,
                    seed=seed)
    results = {}
    for k, n in enumerate(ns, start=1):
        results[n] = run_dyna(m, n=n, **settings)
        if progress is not None:
            progress(k / len(ns))
    halfway = {}
    for n in sorted({ns[0], ns[-1]}):
        halfway[n] = halfway_values(m, results[n], n=n, **{k: v for k, v in settings.items()
                                                          if k not in ("runs", "episodes")})
    return PlanningStudy(maze=m, results=results, walk=random_walk_steps(m.mdps[0]),
                         halfway=halfway)


def halfway_values(maze_: Maze, res: DynaResult, *, n: int, episode: int = 2, **settings):
    """Run 1's action values halfway through an episode (Sutton & Barto, Figure 8.3).

    The run is replayed alone (run 1 draws the same dice whatever the number of runs) and
    stopped after the middle step of ``episode``.

    Returns:
        ``(Q [C, A], steps into that episode, its length)``; the final ``Q`` (and 0, 0) when
        run 1 never finished that episode.
    """
    lengths = res.lengths[0, 0]
    if res.played[0, 0] < episode:
        return res.q[0, 0], 0, 0
    into = int(lengths[episode - 1] // 2)
    stop = int(lengths[: episode - 1].sum()) + into
    alone = run_dyna(maze_, n=n, runs=1, episodes=episode, max_steps=stop, **settings)
    return alone.q[0, 0], into, int(lengths[episode - 1])


@dataclass(frozen=True)
class ChangingStudy:
    """Dyna-Q and Dyna-Q+ on a maze that changes (Sutton & Barto, Figures 8.4 and 8.5)."""

    maze: Maze
    result: DynaResult
    change_at: int

    def gain_after(self) -> dict[str, float]:
        """Mean reward each planner collected after the change."""
        total = self.result.cumulative_reward()
        before = total[:, :, self.change_at - 1] if self.change_at > 0 else 0.0
        return {p: float((total[i, :, -1] - (before[i] if self.change_at > 0 else 0)).mean())
                for i, p in enumerate(self.result.planners)}

    def path_lengths(self) -> dict[str, np.ndarray]:
        """``[R]`` moves of each run's final greedy path in the new maze (0: never arrives)."""
        return {p: np.array([greedy_path_length(self.maze, self.result.q[i, r]) or 0
                             for r in range(self.result.runs)])
                for i, p in enumerate(self.result.planners)}


def changing_study(before: str, after: str, *, change_at: int, steps: int, n: int = 10,
                   kappa: float = 1e-3, runs: int = 10, epsilon: float = 0.1,
                   alpha: float = 1.0, gamma: float = 0.95, seed: int = 0) -> ChangingStudy:
    """Dyna-Q and Dyna-Q+ (paired dice) on a maze whose layout changes at step ``change_at``."""
    if not 0 < change_at < steps:
        raise InputError(f"the maze must change between step 1 and step {steps - 1}; "
                         f"got {change_at}")
    m = maze(before, after)
    res = run_dyna(m, planners=PLANNERS, n=n, runs=runs, steps=steps, change_at=change_at,
                   epsilon=epsilon, alpha=alpha, gamma=gamma, kappa=kappa, seed=seed)
    return ChangingStudy(maze=m, result=res, change_at=change_at)


def settled_at(mean_lengths: np.ndarray, *, slack: float = 1.25, last: int = 10) -> int | None:
    """The first episode (from 1) after which the mean length stays within ``slack`` × its
    level over the ``last`` episodes; None if there are too few episodes to say."""
    mean_lengths = np.asarray(mean_lengths, dtype=np.float64)
    if len(mean_lengths) < 2 * last or not np.isfinite(mean_lengths).all():
        return None
    level = mean_lengths[-last:].mean()
    above = np.flatnonzero(mean_lengths > slack * level)
    return 1 if above.size == 0 else int(above[-1]) + 2


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
