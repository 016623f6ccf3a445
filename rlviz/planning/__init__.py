r"""Dyna: planning with a learned model. Dyna-Q and Dyna-Q+ on gridworld mazes.

After every real step, Dyna-Q (Sutton & Barto, 2018, Section 8.2) does what Q-learning does,
``Q(S, A) += α[R + γ max_a Q(S', a) − Q(S, A)]``, records the transition in a table model
``Model(S, A) = (R, S')``, and then makes ``n`` more updates of the same kind on transitions
replayed from the model: a random previously observed state, a random action previously taken
there. With ``n = 0`` it is one-step Q-learning, and the update is ``rlviz.td``'s own
(``q_learning_target`` and ``td_update``). Dyna-Q+ (Section 8.3) adds the bonus ``κ√τ`` to the
reward of a replayed transition not tried for ``τ`` steps, and may replay actions never tried
(the model says they lead back to the same state with reward 0), so a stale model gets tested.

Modules, by concern:

- ``mazes``: text layouts to tables over cells (``maze``), shortest paths by value iteration,
  the random walk's expected length, greedy policies and paths.
- ``steps``: the readable steps on arrays (``q_update``, ``exploration_bonus``,
  ``sample_model``, ``plan``).
- ``engine``: ``run_dyna``, every run of every planner at once, with paired random numbers.
- ``studies``: the page's studies (Figures 8.2-8.5).
- ``sweeping``: prioritized sweeping against Dyna-Q, updates until the greedy path is shortest
  (Section 8.4, Example 8.4): its readable steps (``priority``, ``push``, ``sweep_step``,
  ``replay``), its engine and study.
- ``checks``: the page's known answers.

Reference: Sutton & Barto (2018), *Reinforcement Learning: An Introduction*, 2nd ed., Sections
8.2-8.4, Figures 8.2-8.5 and Example 8.4.
"""

from __future__ import annotations

from rlviz.planning.checks import (
    Known,
    changing_known_answers,
    planning_known_answers,
    sweeping_known_answers,
    whiteboard_gap,
)
from rlviz.planning.engine import (
    BLOCK,
    EXPLORE,
    PLANNING_STREAM,
    RANDOM_ACTION,
    TIE_KEYS,
    DynaResult,
    run_dyna,
)
from rlviz.planning.mazes import (
    BLOCKING_MAZE,
    DYNA_MAZE,
    LEGEND,
    MAX_CELLS,
    PLANNERS,
    SHORTCUT_MAZE,
    Maze,
    greedy_mask,
    greedy_path_length,
    maze,
    random_walk_steps,
    shortest_path,
)
from rlviz.planning.steps import exploration_bonus, plan, q_update, sample_model
from rlviz.planning.studies import (
    BOOK_NS,
    BOOK_SETTINGS,
    CHANGES,
    SOURCE,
    ChangingStudy,
    PlanningStudy,
    changing_study,
    halfway_values,
    planning_study,
    settled_at,
)
from rlviz.planning.sweeping import (
    BOOK_THETA,
    BUDGET,
    LEVELS,
    SWEEPERS,
    SweepingStudy,
    SweepResult,
    blocks,
    priority,
    push,
    replay,
    run_sweeping,
    scaled_maze,
    states_at,
    sweep_step,
    sweeping_study,
)

__all__ = [
    "BLOCK",
    "BOOK_THETA",
    "BUDGET",
    "LEVELS",
    "SWEEPERS",
    "SweepResult",
    "SweepingStudy",
    "blocks",
    "priority",
    "push",
    "replay",
    "run_sweeping",
    "scaled_maze",
    "states_at",
    "sweep_step",
    "sweeping_known_answers",
    "sweeping_study",
    "BLOCKING_MAZE",
    "BOOK_NS",
    "BOOK_SETTINGS",
    "CHANGES",
    "DYNA_MAZE",
    "EXPLORE",
    "LEGEND",
    "MAX_CELLS",
    "PLANNERS",
    "PLANNING_STREAM",
    "RANDOM_ACTION",
    "SHORTCUT_MAZE",
    "SOURCE",
    "TIE_KEYS",
    "ChangingStudy",
    "DynaResult",
    "Known",
    "Maze",
    "PlanningStudy",
    "changing_known_answers",
    "changing_study",
    "exploration_bonus",
    "greedy_mask",
    "greedy_path_length",
    "halfway_values",
    "maze",
    "plan",
    "planning_known_answers",
    "planning_study",
    "q_update",
    "random_walk_steps",
    "run_dyna",
    "sample_model",
    "settled_at",
    "shortest_path",
    "whiteboard_gap",
]
