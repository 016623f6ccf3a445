"""Environments as explicit tabular models: gridworld layouts, the cliff, gymnasium adapters."""

from rlviz.envs.grid import (
    ACTION_DELTAS,
    ACTION_NAMES,
    LEGEND,
    MAX_SIDE,
    cliff_layout,
    cliff_walking,
    gridworld,
    parse_layout,
)
from rlviz.envs.gym import from_gymnasium, make_frozen_lake
from rlviz.envs.layouts import LAYOUTS

__all__ = [
    "ACTION_DELTAS",
    "ACTION_NAMES",
    "LAYOUTS",
    "LEGEND",
    "MAX_SIDE",
    "cliff_layout",
    "cliff_walking",
    "from_gymnasium",
    "gridworld",
    "make_frozen_lake",
    "parse_layout",
]
