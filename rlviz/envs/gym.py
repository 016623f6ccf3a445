"""Tabular models read from gymnasium's toy-text environments.

Gymnasium keeps the full model of its discrete environments in ``env.unwrapped.P``:
``P[s][a]`` is a list of ``(probability, next_state, reward, terminated)``. This module turns that
into a ``TabularMDP``, so dynamic programming can run on exactly the environment a user can roll
out in gymnasium. Gymnasium is imported only when these functions run.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rlviz.mdp import GridInfo, TabularMDP

__all__ = ["FROZEN_LAKE_ACTIONS", "CLIFF_ACTIONS", "from_gymnasium", "make_frozen_lake"]

# Action orders of gymnasium's environments (they differ from each other).
FROZEN_LAKE_ACTIONS = ("left", "down", "right", "up")
CLIFF_ACTIONS = ("up", "right", "down", "left")
_DELTAS = {"up": (-1, 0), "right": (0, 1), "down": (1, 0), "left": (0, -1)}


def _grid_of(env: Any, action_names: tuple[str, ...]) -> GridInfo | None:
    """Grid layout of a FrozenLake or CliffWalking environment, else None."""
    deltas = np.array([_DELTAS[a] for a in action_names], dtype=np.int64)
    if hasattr(env, "desc"):  # FrozenLake: bytes S, F, H, G
        rows = tuple(
            "".join(c.decode() if isinstance(c, bytes) else str(c) for c in row).replace("F", ".")
            for row in np.asarray(env.desc)
        )
    elif hasattr(env, "_cliff") and hasattr(env, "shape"):
        n_rows, n_cols = (int(x) for x in env.shape)
        chars = np.full((n_rows, n_cols), ".")
        chars[np.asarray(env._cliff, dtype=bool)] = "C"
        chars[np.unravel_index(int(env.start_state_index), (n_rows, n_cols))] = "S"
        chars[n_rows - 1, n_cols - 1] = "G"
        rows = tuple("".join(r) for r in chars)
    else:
        return None
    n_rows, n_cols = len(rows), len(rows[0])
    cells = np.stack(np.unravel_index(np.arange(n_rows * n_cols), (n_rows, n_cols)), axis=1)
    return GridInfo(layout=rows, cells=cells, action_deltas=deltas)


def from_gymnasium(env: Any, *, name: str | None = None) -> TabularMDP:
    """Build a ``TabularMDP`` from a gymnasium environment that exposes its model.

    A state is terminal when some transition into it reports ``terminated=True``. Gymnasium still
    lists moves out of such states (CliffWalking's goal, for instance); an episode never makes
    them, so the model replaces them with the absorbing, zero-reward self-loop of our convention.

    Args:
        env: A gymnasium environment (wrapped or not) whose ``unwrapped`` has ``P``,
            a ``Discrete`` observation space and a ``Discrete`` action space.
        name: Label for figures; defaults to the environment's id.

    Returns:
        The MDP, with a ``grid`` for FrozenLake and CliffWalking.

    Raises:
        ValueError: if the environment does not expose a tabular model.
    """
    base = getattr(env, "unwrapped", env)
    table = getattr(base, "P", None)
    if not isinstance(table, dict):
        raise ValueError(
            f"{type(base).__name__} has no tabular model: expected a dict env.unwrapped.P"
        )
    try:
        n_states = int(base.observation_space.n)
        n_actions = int(base.action_space.n)
    except AttributeError as err:
        raise ValueError("observation and action spaces must both be Discrete") from err

    terminal = np.zeros(n_states, dtype=bool)
    k_max = 1
    for s in range(n_states):
        for a in range(n_actions):
            outcomes = table[s][a]
            k_max = max(k_max, len(outcomes))
            for _p, s_next, _r, done in outcomes:
                if done:
                    terminal[int(s_next)] = True

    next_state = np.tile(np.arange(n_states)[:, None, None], (1, n_actions, k_max))
    prob = np.zeros((n_states, n_actions, k_max))
    reward = np.zeros((n_states, n_actions, k_max))
    for s in range(n_states):
        if terminal[s]:
            prob[s, :, 0] = 1.0
            continue
        for a in range(n_actions):
            for k, (p, s_next, r, _done) in enumerate(table[s][a]):
                next_state[s, a, k] = int(s_next)
                prob[s, a, k] = float(p)
                reward[s, a, k] = float(r)

    start = getattr(base, "initial_state_distrib", None)
    if start is None:
        start = np.zeros(n_states)
        start[0] = 1.0
    env_id = getattr(getattr(env, "spec", None), "id", None) or type(base).__name__
    if hasattr(base, "desc"):
        action_names = FROZEN_LAKE_ACTIONS
    elif hasattr(base, "_cliff"):
        action_names = CLIFF_ACTIONS
    else:
        action_names = tuple(f"a{i}" for i in range(n_actions))
    grid = _grid_of(base, action_names) if len(action_names) == n_actions else None
    return TabularMDP(
        next_state=next_state,
        prob=prob,
        reward=reward,
        terminal=terminal,
        start=np.asarray(start, dtype=np.float64),
        action_names=action_names,
        grid=grid,
        name=name or env_id,
    )


def make_frozen_lake(map_name: str = "4x4", *, is_slippery: bool = True) -> TabularMDP:
    """FrozenLake-v1 from gymnasium, as a ``TabularMDP`` (actions: left, down, right, up).

    Args:
        map_name: ``"4x4"`` or ``"8x8"``.
        is_slippery: Gymnasium's slippery ice (intended move with probability 1/3).

    Returns:
        The MDP.
    """
    if map_name not in ("4x4", "8x8"):
        raise ValueError(f"map_name must be '4x4' or '8x8'; got {map_name!r}")
    import gymnasium as gym

    env = gym.make("FrozenLake-v1", map_name=map_name, is_slippery=bool(is_slippery))
    try:
        return from_gymnasium(env, name=f"FrozenLake {map_name}")
    finally:
        env.close()
