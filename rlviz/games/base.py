"""Small two-player games as explicit tables, and their exact solution by memoised negamax.

A game small enough to enumerate (tic-tac-toe has 5,478 positions) is stored the way
``rlviz.mdp`` stores an MDP: every position once, numbered, with the position each move leads
to. Search code then walks integer indices and never builds a board object, and the exact
solver visits each position once.

Value convention (used by the solver and by ``rlviz.mcts``): a value is always from the point
of view of the **player to move** in that position: +1 a win, 0 a draw, -1 a loss. The value
of a move is therefore minus the value of the position it leads to, because there the opponent
is to move (negamax).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar, Protocol

import numpy as np

__all__ = ["Game", "GameTable", "Solution", "build_table", "count_games", "solve"]


@dataclass(frozen=True, eq=False)
class GameTable:
    """Every position of a small, alternating, two-player, zero-sum game.

    Positions are numbered in the order a breadth-first walk from the start meets them, so the
    start is ``START`` and the number of moves played never decreases with the index.

    Attributes:
        name: The game's name.
        move_names: One short name per move (for tic-tac-toe, the cells ``a1`` … ``c3``).
        codes: ``[S]`` the game's own integer encoding of each position.
        next_state: ``[S, A]`` the position each move leads to; ``ILLEGAL`` where the move is
            not allowed (and everywhere in a finished game).
        terminal: ``[S]`` True where the game is over.
        outcome: ``[S]`` the result of a finished game for the player to move there: -1 (the
            opponent has just won) or 0 (a draw); 0 while the game goes on.
        plies: ``[S]`` moves played to reach the position.
    """

    START: ClassVar[int] = 0
    ILLEGAL: ClassVar[int] = -1

    name: str
    move_names: tuple[str, ...]
    codes: np.ndarray  # [S] int64
    next_state: np.ndarray  # [S, A] int32, ILLEGAL where not allowed
    terminal: np.ndarray  # [S] bool
    outcome: np.ndarray  # [S] int8 in {-1, 0}
    plies: np.ndarray  # [S] int16

    def __post_init__(self) -> None:
        n_states, n_moves = self.next_state.shape
        if len(self.move_names) != n_moves:
            raise ValueError(f"{len(self.move_names)} move names for {n_moves} moves")
        for name in ("codes", "terminal", "outcome", "plies"):
            if getattr(self, name).shape != (n_states,):
                raise ValueError(f"{name} must have shape [{n_states}]")
        if (self.next_state[self.terminal] != self.ILLEGAL).any():
            raise ValueError("a finished game cannot have legal moves")
        if (~self.terminal & ~self.legal.any(axis=1)).any():
            raise ValueError("a game that goes on needs at least one legal move")

    @property
    def n_states(self) -> int:
        """Number of positions S."""
        return int(self.next_state.shape[0])

    @property
    def n_moves(self) -> int:
        """Size of the move space A."""
        return int(self.next_state.shape[1])

    @property
    def legal(self) -> np.ndarray:
        """``[S, A]`` True where the move is allowed."""
        return self.next_state != self.ILLEGAL

    @property
    def max_plies(self) -> int:
        """The longest game, in moves."""
        return int(self.plies.max())

    @property
    def to_play(self) -> np.ndarray:
        """``[S]`` who moves: 0 the first player, 1 the second."""
        return (self.plies % 2).astype(np.int8)

    @cached_property
    def index(self) -> dict[int, int]:
        """Position number of each code."""
        return {int(code): i for i, code in enumerate(self.codes)}

    @cached_property
    def successors(self) -> tuple[list[tuple[int, ...]], list[tuple[int, ...]], list[int]]:
        """Plain-Python views for search loops: legal moves, next positions, and outcomes.

        Returns:
            ``(moves, nexts, outcome)``: per position the tuple of legal moves in increasing
            order, the tuple of positions they lead to, and ``outcome`` as a list (for
            terminal positions; 0 otherwise).
        """
        moves: list[tuple[int, ...]] = []
        nexts: list[tuple[int, ...]] = []
        for row in self.next_state.tolist():
            legal = tuple(a for a, s in enumerate(row) if s != self.ILLEGAL)
            moves.append(legal)
            nexts.append(tuple(row[a] for a in legal))
        return moves, nexts, self.outcome.tolist()


def count_games(table: GameTable) -> dict[str, int]:
    """Count the distinct games (move sequences from the start to a finished position).

    ``ways(start) = 1`` and ``ways(s') = sum of ways(s)`` over the moves ``s -> s'``, computed
    one ply layer at a time; a game ends in each finished position once per way of reaching it.

    Returns:
        ``{"games", "first_wins", "second_wins", "draws"}``.
    """
    ways = np.zeros(table.n_states, dtype=np.int64)
    ways[table.START] = 1
    s, a = np.nonzero(table.legal)
    for ply in range(table.max_plies):
        here = table.plies[s] == ply
        np.add.at(ways, table.next_state[s[here], a[here]], ways[s[here]])
    ended = table.terminal
    won = ended & (table.outcome == -1)
    first_won = won & (table.plies % 2 == 1)  # the first player made the last move
    return {
        "games": int(ways[ended].sum()),
        "first_wins": int(ways[first_won].sum()),
        "second_wins": int(ways[won & ~first_won].sum()),
        "draws": int(ways[ended & ~won].sum()),
    }


class Game(Protocol):
    """What search needs from a game: a name and its table of positions."""

    name: str

    @property
    def table(self) -> GameTable:
        """Every position of the game."""
        ...

    @property
    def solution(self) -> Solution:
        """The exact value of every position and move."""
        ...


def build_table(
    name: str,
    move_names: Sequence[str],
    start: int,
    legal_moves: Callable[[int], Sequence[int]],
    play: Callable[[int, int], int],
    outcome: Callable[[int], int | None],
) -> GameTable:
    """Enumerate every position reachable from ``start`` (breadth first).

    Args:
        name: The game's name.
        move_names: One name per move.
        start: Code of the starting position.
        legal_moves: Code -> the moves allowed there (ignored once the game is over).
        play: (code, move) -> code of the position after the move.
        outcome: Code -> None while the game goes on, else the result for the player to move
            (-1 lost, 0 draw).

    Returns:
        The game's table.
    """
    index = {start: 0}
    codes = [start]
    rows: list[list[int]] = []
    terminal: list[bool] = []
    results: list[int] = []
    plies = [0]
    queue = deque([start])
    n_moves = len(move_names)
    while queue:
        code = queue.popleft()
        row = [GameTable.ILLEGAL] * n_moves
        result = outcome(code)
        if result is None:
            for move in legal_moves(code):
                nxt = play(code, move)
                if nxt not in index:
                    index[nxt] = len(codes)
                    codes.append(nxt)
                    plies.append(plies[index[code]] + 1)
                    queue.append(nxt)
                row[move] = index[nxt]
        rows.append(row)
        terminal.append(result is not None)
        results.append(0 if result is None else result)
    return GameTable(
        name=name,
        move_names=tuple(move_names),
        codes=np.array(codes, dtype=np.int64),
        next_state=np.array(rows, dtype=np.int32).reshape(len(codes), n_moves),
        terminal=np.array(terminal, dtype=bool),
        outcome=np.array(results, dtype=np.int8),
        plies=np.array(plies, dtype=np.int16),
    )


@dataclass(frozen=True, eq=False)
class Solution:
    """The exact game-theoretic value of every position and move of a game.

    Attributes:
        value: ``[S]`` value for the player to move: +1 win, 0 draw, -1 loss, with best play by
            both sides.
        score: ``[S]`` the value refined by game length: the sign is ``value`` and, for a won or
            lost position, ``|score| = L + 1 - p`` where ``p`` is the ply at which the game ends
            when the winner wins as fast as possible and the loser loses as slowly as possible
            (``L`` the longest game); 0 for draws.
        move_value: ``[S, A]`` value of each move for the player to move (``-value`` of the
            position it leads to); NaN where the move is illegal.
        max_plies: ``L``.
    """

    value: np.ndarray  # [S] int8
    score: np.ndarray  # [S] int16
    move_value: np.ndarray  # [S, A] float64, NaN where illegal
    max_plies: int

    def optimal_moves(self, state: int) -> tuple[int, ...]:
        """The moves that keep the position's value (every minimax-optimal move)."""
        row = self.move_value[state]
        return tuple(int(a) for a in np.flatnonzero(row == self.value[state]))

    def plies_to_end(self, state: int, plies: int) -> int | None:
        """Moves left in a won or lost position under best play (None for a draw).

        Args:
            state: The position.
            plies: Moves already played in it (``table.plies[state]``).
        """
        s = int(self.score[state])
        return None if s == 0 else self.max_plies + 1 - abs(s) - plies


def solve(table: GameTable) -> Solution:
    """Solve a game exactly by memoised negamax over its table.

    ``score(s) = outcome(s) * (L + 1 - plies(s))`` when the game is over, else
    ``score(s) = max_a -score(next(s, a))``; the value is ``sign(score)``. Weighting a result
    by how early it happens makes the winner prefer the fastest win and the loser the slowest
    loss, without changing who wins.

    Source: Knuth & Moore (1975), "An analysis of alpha-beta pruning" (the negamax form of
    minimax); memoising on the position turns the game tree into its DAG of positions.

    Args:
        table: The game's positions.

    Returns:
        Values and scores of every position and move.
    """
    moves, nexts, outcome = table.successors
    horizon = table.max_plies + 1
    plies = table.plies.tolist()
    memo: list[int | None] = [None] * table.n_states

    def negamax(s: int) -> int:
        known = memo[s]
        if known is not None:
            return known
        if not moves[s]:
            best = outcome[s] * (horizon - plies[s])
        else:
            best = max(-negamax(child) for child in nexts[s])
        memo[s] = best
        return best

    negamax(table.START)
    score = np.array(memo, dtype=np.int16)
    value = np.sign(score).astype(np.int8)
    legal = table.legal
    move_value = np.where(legal, -value[np.where(legal, table.next_state, 0)], np.nan)
    return Solution(
        value=value, score=score, move_value=move_value.astype(np.float64),
        max_plies=table.max_plies,
    )
