"""Mazes for Dyna: text layouts turned into tables over cells, and what value iteration says.

Mazes are text layouts turned into models by ``rlviz.envs.gridworld`` (``.`` floor, ``#`` wall,
``S`` start, ``G`` goal); reaching a goal pays 1, every other move 0. A world that changes
mid-run is a second layout of the same size. States are cells, numbered row by row, so a state
means the same place in both worlds.

Reference: Sutton & Barto (2018), Figures 8.2, 8.4 and 8.5 (the three layouts).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz import dp
from rlviz.envs import gridworld, parse_layout
from rlviz.errors import InputError
from rlviz.mdp import TabularMDP, policy_value

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
        """Cells (rows × columns), walls included."""
        return self.next_cell.shape[1]

    @property
    def n_actions(self) -> int:
        """Moves per cell (up, right, down, left)."""
        return self.next_cell.shape[2]

    @property
    def n_worlds(self) -> int:
        """1, or 2 for a maze that changes."""
        return self.next_cell.shape[0]

    def cell(self, row: int, col: int) -> int:
        """The cell index of a (row, column)."""
        return row * self.shape[1] + col


def _world(layout: str, which: str, max_cells: int = MAX_CELLS) -> TabularMDP:
    """One layout as ``rlviz.envs.gridworld`` builds it, checked in the page's terms."""
    lines = [line.strip() for line in str(layout).strip().splitlines() if line.strip()]
    for i, line in enumerate(lines, start=1):
        for j, ch in enumerate(line, start=1):
            if ch not in LEGEND:
                raise InputError(
                    f"{which}, row {i}, column {j}: {ch!r} cannot be used here; the mazes on "
                    "this page use . (floor), # (wall), S (start) and G (goal)"
                )
    try:
        rows = parse_layout(layout)
    except ValueError as err:
        raise InputError(f"{which}: {err}") from None
    if not any("G" in row for row in rows):
        raise InputError(f"{which} has no goal: put at least one G on the grid")
    if len(rows) * len(rows[0]) > max_cells:
        raise InputError(
            f"{which} has {len(rows)} × {len(rows[0])} = {len(rows) * len(rows[0])} cells; "
            f"mazes here have at most {max_cells}"
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


def maze(layout: str, after: str | None = None, *, max_cells: int = MAX_CELLS) -> Maze:
    """Build the maze of a layout, or of two layouts of the same size (the world changes).

    Args:
        layout: The maze as text (``LEGEND``).
        after: The world after the change, or None for a maze that never changes.
        max_cells: The largest maze (rows × columns) accepted; the engine's bound by default.

    Raises:
        InputError: a malformed layout, a character other than ``. # S G``, no goal, a goal that
            cannot be reached from S, or two layouts of different sizes.
    """
    texts = [layout] if after is None else [layout, after]
    names = ["the maze"] if after is None else ["the maze before the change",
                                               "the maze after the change"]
    mdps = tuple(_world(text, name, max_cells) for text, name in zip(texts, names, strict=True))
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
    uniform = np.full((mdp.n_states, mdp.n_actions), 1.0 / mdp.n_actions)
    return float(-policy_value(cost, uniform, 1.0)[mdp.start_state])



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

