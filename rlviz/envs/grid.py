"""Gridworlds built from a small text layout.

The whole transition table is built once from the layout; nothing about the geometry lives in
the algorithms. Legend:

    .  floor
    #  wall (no state; moving into it leaves the agent where it was)
    S  start (floor; exactly one)
    G  goal (terminal)
    H  hole (terminal)
    C  cliff (entering it costs ``cliff_reward`` and sends the agent back to the start)

Moving off the edge of the grid also leaves the agent in place. With ``slip > 0`` the agent moves
in the intended direction with probability ``1 - slip`` and in each of the two perpendicular
directions with probability ``slip / 2``.
"""

from __future__ import annotations

import numpy as np

from rlviz.errors import InputError
from rlviz.mdp import GridInfo, TabularMDP

__all__ = [
    "ACTION_DELTAS",
    "ACTION_NAMES",
    "LEGEND",
    "MAX_SIDE",
    "cliff_layout",
    "cliff_walking",
    "gridworld",
    "parse_layout",
]

LEGEND: dict[str, str] = {
    ".": "floor",
    "#": "wall",
    "S": "start (exactly one)",
    "G": "goal, ends the episode",
    "H": "hole, ends the episode",
    "C": "cliff: penalty, back to the start",
}
ACTION_NAMES: tuple[str, ...] = ("up", "right", "down", "left")
ACTION_DELTAS = np.array([(-1, 0), (0, 1), (1, 0), (0, -1)], dtype=np.int64)
MAX_SIDE = 50
"""Largest number of rows or columns a layout may have."""


def parse_layout(layout: str) -> tuple[str, ...]:
    """Check a text layout and return its rows.

    Blank lines and spaces at the ends of rows are ignored.

    Args:
        layout: Rows separated by newlines, using the characters of ``LEGEND``.

    Returns:
        The rows, all the same length.

    Raises:
        InputError: naming the row and column (counted from 1) of the first problem.
    """
    if not isinstance(layout, str):
        raise ValueError(f"the layout must be text; got {type(layout).__name__}")
    rows = [line.strip() for line in layout.strip().splitlines() if line.strip()]
    if not rows:
        raise InputError("the layout is empty: write at least one row, e.g. 'S..G'")
    if len(rows) > MAX_SIDE:
        raise InputError(f"the layout has {len(rows)} rows; at most {MAX_SIDE} are allowed")
    width = len(rows[0])
    for i, row in enumerate(rows, start=1):
        if len(row) > MAX_SIDE:
            raise InputError(
                f"row {i} has {len(row)} columns; at most {MAX_SIDE} are allowed"
            )
        if len(row) != width:
            raise InputError(
                f"row {i} has {len(row)} columns but row 1 has {width}: every row must have "
                "the same length"
            )
        for j, ch in enumerate(row, start=1):
            if ch not in LEGEND:
                known = " ".join(LEGEND)
                raise InputError(
                    f"row {i}, column {j}: unknown character {ch!r} (use one of: {known})"
                )
    starts = [(i, j) for i, row in enumerate(rows, 1) for j, ch in enumerate(row, 1) if ch == "S"]
    if not starts:
        raise InputError("the layout has no start: put exactly one 'S' on a floor cell")
    if len(starts) > 1:
        where = ", ".join(f"row {i} column {j}" for i, j in starts)
        raise InputError(f"the layout has {len(starts)} starts ({where}); keep exactly one 'S'")
    return tuple(rows)


def gridworld(
    layout: str,
    *,
    slip: float = 0.0,
    step_reward: float = -1.0,
    goal_reward: float = 0.0,
    hole_reward: float = 0.0,
    cliff_reward: float = -100.0,
    name: str = "gridworld",
) -> TabularMDP:
    """Build a gridworld MDP from a text layout.

    Every state is a non-wall cell, numbered row by row. Actions are up, right, down, left.
    The reward of a move is the reward of the cell it enters (``goal_reward`` for G,
    ``hole_reward`` for H, ``cliff_reward`` for C) and ``step_reward`` otherwise.

    Args:
        layout: The grid as text (see ``LEGEND``).
        slip: Probability of moving perpendicular to the intended direction, split equally
            between the two sides; in [0, 1].
        step_reward: Reward for an ordinary move, including bumping into a wall.
        goal_reward: Reward for entering a goal.
        hole_reward: Reward for entering a hole.
        cliff_reward: Reward for stepping into the cliff (which returns the agent to the start).
        name: Label for figures.

    Returns:
        The MDP, with ``grid`` describing where each state sits.

    Raises:
        ValueError: if the layout is malformed or a parameter is out of range.
    """
    rows = parse_layout(layout)
    slip = float(slip)
    if not 0.0 <= slip <= 1.0:
        raise ValueError(f"slip must be a probability in [0, 1]; got {slip}")
    rewards = {
        "step_reward": step_reward,
        "goal_reward": goal_reward,
        "hole_reward": hole_reward,
        "cliff_reward": cliff_reward,
    }
    for key, value in rewards.items():
        if not np.isfinite(float(value)):
            raise ValueError(f"{key} must be a finite number; got {value}")

    chars = np.array([list(r) for r in rows])
    n_rows, n_cols = chars.shape
    cells = np.argwhere(chars != "#")  # row-major order
    state_of = np.full((n_rows, n_cols), -1, dtype=np.int64)
    state_of[cells[:, 0], cells[:, 1]] = np.arange(len(cells))
    start = int(state_of[chars == "S"][0])

    cell_char = chars[cells[:, 0], cells[:, 1]]  # [S]
    terminal = np.isin(cell_char, ["G", "H"])
    entry_reward = np.full(len(cells), float(step_reward))
    entry_reward[cell_char == "G"] = goal_reward
    entry_reward[cell_char == "H"] = hole_reward
    entry_reward[cell_char == "C"] = cliff_reward

    # Where each action's intended move lands from every state: [S, A].
    target = cells[:, None, :] + ACTION_DELTAS[None, :, :]
    inside = (
        (target[..., 0] >= 0) & (target[..., 0] < n_rows)
        & (target[..., 1] >= 0) & (target[..., 1] < n_cols)
    )
    landed = np.where(
        inside,
        state_of[np.clip(target[..., 0], 0, n_rows - 1), np.clip(target[..., 1], 0, n_cols - 1)],
        -1,
    )
    own = np.broadcast_to(np.arange(len(cells))[:, None], landed.shape)
    moved_to = np.where(landed >= 0, landed, own)  # walls and edges: stay
    move_reward = entry_reward[moved_to]
    # Stepping into the cliff sends the agent back to the start.
    moved_to = np.where(cell_char[moved_to] == "C", start, moved_to)

    n_actions = len(ACTION_NAMES)
    if slip > 0.0:
        # Outcome 0: intended direction; 1 and 2: the perpendicular ones (a - 1, a + 1 mod 4).
        dirs = np.stack(
            [np.arange(n_actions), (np.arange(n_actions) - 1) % 4, (np.arange(n_actions) + 1) % 4],
            axis=1,
        )  # [A, 3]
        next_state = moved_to[:, dirs]  # [S, A, 3]
        reward = move_reward[:, dirs]
        prob = np.broadcast_to(np.array([1.0 - slip, slip / 2, slip / 2]), next_state.shape).copy()
    else:
        next_state = moved_to[..., None]
        reward = move_reward[..., None]
        prob = np.ones_like(reward)

    # Terminal states are absorbing with reward 0.
    next_state = next_state.copy()
    reward = reward.copy()
    next_state[terminal] = np.arange(len(cells))[terminal][:, None, None]
    reward[terminal] = 0.0
    prob[terminal] = 0.0
    prob[terminal, :, 0] = 1.0

    d0 = np.zeros(len(cells))
    d0[start] = 1.0
    return TabularMDP(
        next_state=next_state,
        prob=prob,
        reward=reward,
        terminal=terminal,
        start=d0,
        action_names=ACTION_NAMES,
        grid=GridInfo(layout=rows, cells=cells, action_deltas=ACTION_DELTAS.copy()),
        name=name,
    )


def cliff_layout(rows: int = 4, cols: int = 12) -> str:
    """The cliff-walking layout: start bottom-left, goal bottom-right, cliff between them.

    Args:
        rows: Number of rows (at least 2).
        cols: Number of columns (at least 3).

    Returns:
        The layout text.
    """
    rows, cols = int(rows), int(cols)
    if not 2 <= rows <= MAX_SIDE or not 3 <= cols <= MAX_SIDE:
        raise ValueError(
            f"the cliff grid needs 2..{MAX_SIDE} rows and 3..{MAX_SIDE} columns; "
            f"got {rows}x{cols}"
        )
    body = ["." * cols] * (rows - 1)
    return "\n".join([*body, "S" + "C" * (cols - 2) + "G"])


def cliff_walking(
    *,
    rows: int = 4,
    cols: int = 12,
    slip: float = 0.0,
    step_reward: float = -1.0,
    cliff_reward: float = -100.0,
) -> TabularMDP:
    """Cliff walking (Sutton & Barto, Example 6.6), equal to gymnasium's CliffWalking-v1.

    Every move costs ``step_reward`` (also the one into the goal); stepping into the cliff costs
    ``cliff_reward`` and returns the agent to the start without ending the episode.
    Gymnasium's ``is_slippery=True`` corresponds to ``slip=2/3``.

    Args:
        rows: Grid rows (4 in the book).
        cols: Grid columns (12 in the book).
        slip: Probability of moving perpendicular to the intended direction.
        step_reward: Reward per move.
        cliff_reward: Reward for stepping into the cliff.

    Returns:
        The MDP.
    """
    return gridworld(
        cliff_layout(rows, cols),
        slip=slip,
        step_reward=step_reward,
        goal_reward=step_reward,
        cliff_reward=cliff_reward,
        name=f"cliff {rows}x{cols}",
    )
