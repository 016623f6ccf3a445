"""The page's problems: the book's gridworld, FrozenLake and custom layouts, built as MDPs."""

from __future__ import annotations

import math
from dataclasses import dataclass

from rlviz.errors import InputError
from rlviz.mdp import TabularMDP

__all__ = [
    "PROBLEMS",
    "Problem",
    "make_problem",
]


# --------------------------------------------------------------------------- problems
MAX_CUSTOM_CELLS = 400
"""Largest custom layout (rows x columns) the page solves, to keep every sweep interactive."""


@dataclass(frozen=True)
class Problem:
    """A named environment with its customary settings.

    Attributes:
        label: Name shown to people.
        about: One sentence on what to look for.
        layout: Gridworld layout text (see ``rlviz.envs.LEGEND``); None for FrozenLake.
        frozen_lake: Gymnasium's FrozenLake map (``"4x4"``, ``"8x8"``), else None.
        slip: Probability of slipping sideways.
        step_reward: Reward of an ordinary move.
        goal_reward: Reward for entering a goal.
        gamma: Discount factor usually paired with it.
    """

    label: str
    about: str
    layout: str | None = None
    frozen_lake: str | None = None
    slip: float = 0.0
    step_reward: float = -1.0
    goal_reward: float = 0.0
    gamma: float = 1.0

    @property
    def custom(self) -> bool:
        """Whether the layout comes from the user."""
        return self.layout is None and self.frozen_lake is None

    def gym_kwargs(self, *, slip: float, step_reward: float, goal_reward: float) -> dict:
        """Keyword arguments of ``gymnasium.make("FrozenLake-v1", ...)`` for these settings."""
        if self.frozen_lake is None:
            raise ValueError(f"{self.label} is not a gymnasium environment")
        return dict(
            map_name=self.frozen_lake,
            is_slippery=slip > 0,
            success_rate=1.0 - slip,
            reward_schedule=(float(goal_reward), 0.0, float(step_reward)),
        )


def _layout(name: str) -> str:
    from rlviz.envs import LAYOUTS

    return LAYOUTS[name]


PROBLEMS: dict[str, Problem] = {
    "sutton_barto_4x4": Problem(
        "4×4 gridworld (Sutton & Barto, Fig. 4.1)",
        "Two terminal corners and −1 on every move, undiscounted: Example 4.1 of the book.",
        layout=_layout("sutton_barto_4x4"), step_reward=-1.0, goal_reward=-1.0, gamma=1.0,
    ),
    "frozen_lake_4x4": Problem(
        "FrozenLake 4×4 (gymnasium)",
        "Gymnasium's slippery lake: the intended move succeeds one time in three.",
        frozen_lake="4x4", slip=2 / 3, step_reward=0.0, goal_reward=1.0, gamma=0.99,
    ),
    "frozen_lake_8x8": Problem(
        "FrozenLake 8×8 (gymnasium)",
        "The larger lake: the safe route is long, and γ decides whether it is worth it.",
        frozen_lake="8x8", slip=2 / 3, step_reward=0.0, goal_reward=1.0, gamma=0.99,
    ),
    "cliff": Problem(
        "Cliff walking (Example 6.6)",
        "−1 per move and −100 for the cliff: with slip the best path moves away from the edge.",
        layout=_layout("cliff"), step_reward=-1.0, goal_reward=-1.0, gamma=1.0,
    ),
    "four_rooms": Problem(
        "Four rooms",
        "Value seeps through the doorways one room at a time.",
        layout=_layout("four_rooms"), step_reward=0.0, goal_reward=1.0, gamma=0.95,
    ),
    "bridge": Problem(
        "Bridge over holes",
        "The short way crosses a narrow bridge; with enough slip the long way round wins.",
        layout=_layout("bridge"), slip=0.1, step_reward=0.0, goal_reward=1.0, gamma=0.99,
    ),
    "maze": Problem(
        "Maze",
        "Values flow around corners one cell per synchronous sweep.",
        layout=_layout("maze"), step_reward=0.0, goal_reward=1.0, gamma=0.95,
    ),
    "corridor": Problem(
        "Corridor",
        "A goal at the end of a corridor: γ sets how far its value reaches.",
        layout=_layout("corridor"), step_reward=0.0, goal_reward=1.0, gamma=0.9,
    ),
    "custom": Problem(
        "Custom layout",
        "Your own grid, written as text.",
        step_reward=0.0, goal_reward=1.0, gamma=0.95,
    ),
}


def make_problem(
    name: str,
    *,
    slip: float,
    step_reward: float,
    goal_reward: float,
    layout: str | None = None,
) -> TabularMDP:
    """Build one of ``PROBLEMS`` with the given dynamics and rewards.

    Args:
        name: A key of ``PROBLEMS``.
        slip: Probability of slipping to one of the two perpendicular moves, in [0, 1].
        step_reward: Reward of an ordinary move.
        goal_reward: Reward for entering a goal.
        layout: The layout text of ``"custom"`` (ignored otherwise); at most
            ``MAX_CUSTOM_CELLS`` cells.

    Returns:
        The model (FrozenLake is read from gymnasium's own environment).

    Raises:
        ValueError: if the name is unknown or a setting is out of range.
        InputError: if the custom layout is malformed or too large.
    """
    from rlviz.envs import from_gymnasium, gridworld, parse_layout

    if name not in PROBLEMS:
        raise ValueError(f"unknown environment {name!r}; choose one of {', '.join(PROBLEMS)}")
    problem = PROBLEMS[name]
    if not 0.0 <= slip <= 1.0:
        raise ValueError(f"slip must be a probability in [0, 1]; got {slip}")
    for what, r in (("step reward", step_reward), ("goal reward", goal_reward)):
        if not math.isfinite(r):
            raise ValueError(f"the {what} must be a finite number; got {r}")
    if problem.frozen_lake is not None:
        import gymnasium as gym

        env = gym.make("FrozenLake-v1", **problem.gym_kwargs(
            slip=slip, step_reward=step_reward, goal_reward=goal_reward))
        try:
            return from_gymnasium(env, name=problem.label)
        finally:
            env.close()
    text = problem.layout
    if problem.custom:
        rows = parse_layout(layout if layout is not None else "")
        cells = len(rows) * len(rows[0])
        if cells > MAX_CUSTOM_CELLS:
            raise InputError(
                f"the layout has {len(rows)} × {len(rows[0])} = {cells} cells; this page solves "
                f"layouts of at most {MAX_CUSTOM_CELLS} cells (for example 20 × 20)"
            )
        text = "\n".join(rows)
    return gridworld(text, slip=slip, step_reward=step_reward, goal_reward=goal_reward,
                     name=problem.label)
