"""The learners, and the two chain problems, RiverSwim and the deep sea, as episodic MDPs."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.mdp import TabularMDP

__all__ = [
    "DEEP_SEA_SIZES",
    "LABELS",
    "LEARNERS",
    "Problem",
    "deep_sea",
    "make_problem",
    "riverswim",
]


LEARNERS: tuple[str, ...] = ("epsilon_greedy", "optimistic", "bonus", "psrl")
LABELS = {
    "epsilon_greedy": "ε-greedy Q-learning",
    "optimistic": "optimistic Q-learning",
    "bonus": "count bonus β/√N",
    "psrl": "posterior sampling",
    "random": "random walker (ε = 1)",
}
MODEL_BASED = frozenset({"bonus", "psrl"})
KINDS = (*LEARNERS, "random")

N_SLOTS = 3
"""Outcomes of every move: back, stay, forward (``BACK, STAY, FORWARD``)."""
BACK, STAY, FORWARD = range(N_SLOTS)
LEFT, RIGHT = 0, 1


RIVERSWIM_HORIZON = 20
RIVERSWIM_REWARDS = (5 / 1000, 1.0)
RIVERSWIM_RIGHT = {"left bank": (0.0, 0.4, 0.6), "middle": (0.05, 0.6, 0.35),
                   "right bank": (0.4, 0.6, 0.0)}
"""(back, stay, forward) probabilities of swimming right (Osband, Russo & Van Roy, 2013, Fig. 2)."""
DEEP_SEA_COST = 0.01
DEEP_SEA_SIZES = (2, 3, 4, 5, 6, 8, 10, 12, 14, 16, 20)
MIN_SIZE, MAX_SIZE = 2, 40


# --------------------------------------------------------------------------- problems
@dataclass(frozen=True, eq=False)
class Problem:
    """An episodic chain problem: a tabular model, an episode length and where the far reward is.

    Attributes:
        key: ``"riverswim"`` or ``"deep_sea"``.
        label: A human-readable name ("RiverSwim", "deep sea, N = 10").
        mdp: The chain over positions ``0..S-1``; outcome ``k`` of every move is back, stay or
            forward (clipped at the ends), the layout every learner assumes.
        horizon: Steps per episode ``H``.
        far_state: The position at the far (right) end.
        far_action: The action that collects the far reward there (right).
        r_max: The largest reward of one step, for the optimistic learners.
        source: Where the problem is from.
    """

    key: str
    label: str
    mdp: TabularMDP
    horizon: int
    far_state: int
    far_action: int
    r_max: float
    source: str

    @property
    def n_states(self) -> int:
        """Number of chain positions S."""
        return self.mdp.n_states

    @property
    def size(self) -> int:
        """The problem's N: its number of positions."""
        return self.mdp.n_states


def _chain(probs: np.ndarray, rewards: np.ndarray, name: str) -> TabularMDP:
    """A chain whose outcome slots are (back, stay, forward), clipped at both ends.

    Args:
        probs: ``[S, A, 3]`` probability of going back, staying, going forward.
        rewards: ``[S, A]`` reward of each move, whatever its outcome.
        name: The model's label.
    """
    n_states, n_actions, _ = probs.shape
    s = np.arange(n_states)[:, None, None]
    moves = np.array([-1, 0, 1])[None, None, :]
    next_state = np.broadcast_to(np.clip(s + moves, 0, n_states - 1), probs.shape)
    start = np.zeros(n_states)
    start[0] = 1.0
    return TabularMDP(
        next_state=next_state, prob=probs,
        reward=np.broadcast_to(rewards[..., None], probs.shape),
        terminal=np.zeros(n_states, dtype=bool), start=start,
        action_names=("left", "right")[:n_actions], name=name,
    )


def riverswim(*, horizon: int = RIVERSWIM_HORIZON) -> Problem:
    """The six-state RiverSwim of Strehl & Littman (2008) as an episodic problem.

    Left moves back with probability 1; right goes (back, stay, forward) with
    ``RIVERSWIM_RIGHT``; left at position 0 pays 5/1000 and right at position 5 pays 1 (the
    scaling of Osband, Russo & Van Roy, 2013). Episodes last ``horizon`` steps from position 0.
    """
    n = 6
    probs = np.zeros((n, 2, N_SLOTS))
    probs[:, LEFT, BACK] = 1.0
    probs[0, RIGHT] = RIVERSWIM_RIGHT["left bank"]
    probs[1:-1, RIGHT] = RIVERSWIM_RIGHT["middle"]
    probs[-1, RIGHT] = RIVERSWIM_RIGHT["right bank"]
    rewards = np.zeros((n, 2))
    rewards[0, LEFT], rewards[-1, RIGHT] = RIVERSWIM_REWARDS
    return Problem(
        key="riverswim", label="RiverSwim", mdp=_chain(probs, rewards, "RiverSwim"),
        horizon=int(horizon), far_state=n - 1, far_action=RIGHT, r_max=max(RIVERSWIM_REWARDS),
        source="Strehl & Littman (2008), Fig. 1; episodic, H = 20: Osband, Russo & Van Roy "
        "(2013), Fig. 2",
    )


def deep_sea(n: int) -> Problem:
    """The deterministic deep sea of size ``n`` as a chain of ``n`` columns and ``n`` steps.

    Right moves forward and costs ``0.01 / n``; left moves back (stays at column 0) for free;
    right in the last column pays 1 (less the cost). Only ``n`` rights in a row find it.
    """
    n = int(n)
    probs = np.zeros((n, 2, N_SLOTS))
    probs[:, LEFT, BACK] = 1.0
    probs[:, RIGHT, FORWARD] = 1.0
    rewards = np.zeros((n, 2))
    rewards[:, RIGHT] = -DEEP_SEA_COST / n
    rewards[-1, RIGHT] += 1.0
    return Problem(
        key="deep_sea", label=f"deep sea, N = {n}", mdp=_chain(probs, rewards, f"deep sea {n}"),
        horizon=n, far_state=n - 1, far_action=RIGHT, r_max=1.0 - DEEP_SEA_COST / n,
        source="Osband et al. (2019), JMLR 20(124), §7.1; bsuite deep_sea (Osband et al., 2020)",
    )


def make_problem(key: str, n: int = 10) -> Problem:
    """``riverswim()`` or ``deep_sea(n)`` by name, checking the user's choice.

    Raises:
        InputError: for an unknown name or a size outside [2, 40].
    """
    if key == "riverswim":
        return riverswim()
    if key == "deep_sea":
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or not (
            MIN_SIZE <= n <= MAX_SIZE
        ):
            raise InputError(f"The deep sea's size N must be a whole number from {MIN_SIZE} to "
                             f"{MAX_SIZE}; got {n!r}.")
        return deep_sea(int(n))
    raise InputError(f"Unknown problem {key!r}: choose RiverSwim or the deep sea.")
