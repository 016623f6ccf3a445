"""The dice of TD control: every run's rows of uniforms, and what each column decides.

Run ``r`` owns the generator ``SeedSequence(seed).spawn(runs)[r]`` and draws one row of uniforms
per step of its own life; column ``k`` of row ``t`` always serves the same purpose (``EXPLORE`` …
``TIE_KEYS``). Every learner trained with the same seed reads run ``r``'s rows, so compared
algorithms see the same dice wherever their decisions coincide.
"""

from __future__ import annotations

import numpy as np

from rlviz.mdp import TabularMDP

__all__ = [
    "BLOCK",
    "EXPLORE",
    "RANDOM_ACTION",
    "START",
    "TABLE_COIN",
    "TIE_KEYS",
    "TRANSITION",
]


BLOCK = 256
"""Rows of uniforms the loop reference draws from a run's generator at a time. A generator's
doubles come one after the other whatever the size of each draw, so row t is the same for any
block size (the compiled loops draw one row per step)."""

# Columns of a run's row of uniforms: which decision each one drives. The last ``A`` columns
# are tie-break keys, one per action.
EXPLORE, RANDOM_ACTION, TRANSITION, TABLE_COIN, START, TIE_KEYS = range(6)


def _n_streams(n_actions: int) -> int:
    return TIE_KEYS + n_actions


def _generators(seed: int, runs: int) -> list[np.random.Generator]:
    """One generator per run; run r's stream does not depend on how many runs there are."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(runs)]


class _RunDice:
    """One run's rows of uniforms, drawn ``BLOCK`` rows at a time: ``row(t)`` is ``[streams]``."""

    def __init__(self, gen: np.random.Generator, n_actions: int):
        self._gen = gen
        self._shape = (BLOCK, _n_streams(n_actions))
        self._blocks: list[np.ndarray] = []

    def row(self, t: int) -> np.ndarray:
        while t >= BLOCK * len(self._blocks):
            self._blocks.append(self._gen.random(self._shape))
        return self._blocks[t // BLOCK][t % BLOCK]


def _start_sampler(mdp: TabularMDP):
    """Start states from uniforms, or None when the start is a single state."""
    if mdp.start.max() == 1.0:
        return None
    cum = np.cumsum(mdp.start)
    cum[-1] = 1.0
    return lambda u: np.minimum(np.searchsorted(cum, u, side="right"), mdp.n_states - 1)
