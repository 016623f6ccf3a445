"""The dice of TD control: every run's uniforms, and the decisions read from them.

Run ``r`` owns the generator ``SeedSequence(seed).spawn(runs)[r]`` and draws one row of uniforms
per step of its own life; column ``k`` of row ``t`` always serves the same purpose (``EXPLORE`` …
``TIE_KEYS``). Every learner trained with the same seed reads run ``r``'s rows, so compared
algorithms see the same dice wherever their decisions coincide.
"""

from __future__ import annotations

import functools
import itertools

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
"""Rows of uniforms each run draws from its generator at a time, and steps the engine prepares
at once (a block's dice and tables then stay in cache)."""

# Columns of a run's row of uniforms: which decision each one drives. The last ``A`` columns
# are tie-break keys, one per action.
EXPLORE, RANDOM_ACTION, TRANSITION, TABLE_COIN, START, TIE_KEYS = range(6)


def _n_streams(n_actions: int) -> int:
    return TIE_KEYS + n_actions


def _generators(seed: int, runs: int) -> list[np.random.Generator]:
    """One generator per run; run r's stream does not depend on how many runs there are."""
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(runs)]


class _Dice:
    """Blocks of uniforms ``[runs, block, streams]``: ``[r, t]`` holds run r's dice of step t.

    Each run's generator fills its own rows in place (a generator's doubles come one after the
    other whatever the size of each draw, so these are the rows ``_RunDice`` reads). ``peek``
    gives the first step of the next block early, ``[runs, streams]`` (SARSA needs the next
    step's dice when an episode is cut short at the last step of a block).
    """

    def __init__(self, seed: int, runs: int, n_actions: int, *, block: int = BLOCK):
        self._gens = _generators(seed, runs)
        self._shape = (runs, block, _n_streams(n_actions))
        self._next: np.ndarray | None = None

    def _draw(self) -> np.ndarray:
        block = np.empty(self._shape)
        for gen, rows in zip(self._gens, block, strict=True):
            gen.random(out=rows)
        return block

    def block(self) -> np.ndarray:
        block, self._next = (self._next, None) if self._next is not None else (self._draw(), None)
        return block

    def peek(self) -> np.ndarray:
        if self._next is None:
            self._next = self._draw()
        return self._next[:, 0]

    def keep(self, runs: np.ndarray) -> None:
        """Go on drawing for these runs only (indices into the current ones)."""
        self._gens = [self._gens[r] for r in runs]
        self._shape = (len(runs), *self._shape[1:])
        if self._next is not None:
            self._next = self._next[runs]


class _RunDice:
    """The same rows as ``_Dice`` for one run (the loop reference): ``row(t)`` is ``[streams]``."""

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


def _greedy_actions(q_s: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Greedy actions of ``q_s [A, R]``; among tied best actions, the one with the largest key.

    Keys are uniforms in [0, 1), moved up to the next double so that a tied action's key is
    never 0 (the same order as the keys, so every tied action is equally likely to win).
    """
    return ((q_s == np.maximum.reduce(q_s, axis=0)) * np.nextafter(keys, 2.0)).argmax(axis=0)


@functools.cache
def _order_table(n_actions: int) -> tuple[tuple[tuple[int, int], ...], np.ndarray]:
    """Every order of ``n_actions`` actions, looked up by which action of each pair goes first.

    Returns the pairs ``(a, b)``, ``a < b``, and a table whose row ``code`` is the order in which
    bit ``k`` of ``code`` is set when the second action of pair ``k`` goes before the first;
    rows ``2**P + a`` (P pairs) hold action ``a`` ``n_actions`` times.
    """
    pairs = tuple((a, b) for a in range(n_actions) for b in range(a + 1, n_actions))
    table = np.zeros((2 ** len(pairs) + n_actions, n_actions), dtype=np.int8)
    for order in itertools.permutations(range(n_actions)):
        place = {a: k for k, a in enumerate(order)}
        table[sum(1 << k for k, (a, b) in enumerate(pairs) if place[b] < place[a])] = order
    table[2 ** len(pairs):] = np.arange(n_actions)[:, None]
    table.setflags(write=False)
    return pairs, table


def _greedy_order(keys: np.ndarray, explore: np.ndarray | None,
                  random_u: np.ndarray) -> np.ndarray:
    """The order in which each step's greedy choice prefers the actions: ``[B, R, A]``.

    Among tied best actions the greedy choice is the one with the largest tie-break key (the
    first action when keys are equal): the first of the tied actions in this order, which
    ``argmax`` of Q read in this order (it returns the first maximum) finds in one call. An
    exploring step's order is its random action ``A`` times, so it is chosen whatever Q says.
    The order is a stable ``argsort`` of ``-keys``; for up to 5 actions it is looked up from
    which action of each pair has the larger key, which is faster.

    Args:
        keys: ``[R, B, A]`` tie-break keys of each run's steps.
        explore: ``[R, B]`` whether each step explores, or None (nothing folded in).
        random_u: ``[R, B]`` the uniforms that pick each step's random action.
    """
    n_actions = keys.shape[2]
    if n_actions > 5:
        order = np.argsort(-keys, axis=2, kind="stable")
        if explore is not None:
            order[explore] = (random_u[explore] * n_actions).astype(np.int64)[:, None]
        return np.ascontiguousarray(order.transpose(1, 0, 2))
    pairs, table = _order_table(n_actions)
    bits = np.uint8 if len(table) <= 256 else np.uint16
    code = np.zeros(keys.shape[:2], dtype=bits)
    for k, (a, b) in enumerate(pairs):
        code |= (keys[..., a] < keys[..., b]).view(np.uint8).astype(bits, copy=False) << k
    if explore is not None:  # code += (exploring code - code) where exploring, in whole numbers
        exploring = (random_u * n_actions).astype(bits) + bits(2 ** len(pairs))
        code += (exploring - code) * explore.view(np.uint8).astype(bits, copy=False)
    return table.take(np.ascontiguousarray(code.T), axis=0)
