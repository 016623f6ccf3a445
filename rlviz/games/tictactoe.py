"""Tic-tac-toe: the board as two 9-bit masks, every position in one table, solved exactly.

Description:
    Two players, X and O, take turns marking an empty cell of a 3x3 board; X moves first. The
    first to complete a row, column or diagonal wins; a full board without a line is a draw.

Board text:
    Nine characters, row by row from the top: ``x``, ``o`` or ``.`` (empty), e.g. ``x.o......``.
    Upper case, ``-`` or ``_`` for empty, and separators (spaces, ``|``, ``/``, ``,``) are
    accepted and normalised.

Move space:
    A cell, 0..8 row by row, named ``a1`` … ``c3`` (column letter, row number from the top).

Encoding:
    ``code = x_mask | o_mask << 9`` where bit ``i`` of a mask marks cell ``i``; a precomputed
    512-entry table says whether a mask holds a line.

Source:
    The tests check the table against the game's well-known counts: 5,478 positions reachable
    from the empty board, 958 of them finished, and 255,168 distinct games (131,184 won by X,
    77,904 by O, 46,080 drawn).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from rlviz.errors import InputError
from rlviz.games.base import GameTable, Solution, build_table, count_games, solve

__all__ = [
    "CELLS",
    "LINES",
    "MOVE_NAMES",
    "PRESETS",
    "TICTACTOE",
    "Preset",
    "TicTacToe",
    "click",
    "decode",
    "encode",
    "normalise",
    "readable",
    "winner",
]

CELLS = 9
MOVE_NAMES = ("a1", "b1", "c1", "a2", "b2", "c2", "a3", "b3", "c3")
LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
LINE_MASKS = tuple(sum(1 << i for i in line) for line in LINES)
HAS_LINE = tuple(any(m & line == line for line in LINE_MASKS) for m in range(1 << CELLS))
"""``HAS_LINE[mask]``: whether the cells of ``mask`` hold a complete line."""
FULL = (1 << CELLS) - 1
EMPTY_CHARS = ".-_"
SEPARATORS = " \t\n\r|/,;"


def normalise(text: str) -> str:
    """Check a board's characters and return it as nine of ``x``, ``o``, ``.``.

    Raises:
        InputError: With the offending character, or the number of cells found.
    """
    cells = []
    for ch in str(text):
        if ch in SEPARATORS:
            continue
        low = ch.lower()
        if low in "xo":
            cells.append(low)
        elif ch in EMPTY_CHARS:
            cells.append(".")
        else:
            raise InputError(
                f"The board may hold only x, o and . (an empty cell); found {ch!r}."
            )
    if len(cells) != CELLS:
        raise InputError(
            f"The board needs 9 cells written row by row (like x.o......); found {len(cells)}."
        )
    return "".join(cells)


def readable(text: str) -> str | None:
    """The normalised board, or None when the text cannot be read as a board."""
    try:
        return normalise(text)
    except InputError:
        return None


def encode(text: str) -> int:
    """Board text -> ``x_mask | o_mask << 9`` (characters checked, legality not)."""
    cells = normalise(text)
    x = sum(1 << i for i, ch in enumerate(cells) if ch == "x")
    o = sum(1 << i for i, ch in enumerate(cells) if ch == "o")
    return x | o << CELLS


def decode(code: int) -> str:
    """``x_mask | o_mask << 9`` -> board text."""
    x, o = code & FULL, code >> CELLS
    return "".join("x" if x >> i & 1 else "o" if o >> i & 1 else "." for i in range(CELLS))


def winner(text: str) -> str | None:
    """``"x"`` or ``"o"`` if that player has a line, ``"both"``, or None."""
    code = encode(text)
    x_won, o_won = HAS_LINE[code & FULL], HAS_LINE[code >> CELLS]
    if x_won and o_won:
        return "both"
    return "x" if x_won else "o" if o_won else None


def click(text: str, cell: int) -> str:
    """The board after clicking a cell: place the next mark, or clear a marked cell.

    An empty cell gets the mark of the player to move (X when the marks are level, else O). A
    board whose text cannot be read starts over from the empty board.
    """
    if not 0 <= cell < CELLS:
        raise ValueError(f"cells are numbered 0 to 8; got {cell}")
    try:
        cells = list(normalise(text))
    except InputError:
        cells = ["."] * CELLS
    if cells[cell] != ".":
        cells[cell] = "."
    else:
        cells[cell] = "x" if cells.count("x") <= cells.count("o") else "o"
    return "".join(cells)


def _legal_moves(code: int) -> list[int]:
    taken = (code | code >> CELLS) & FULL
    return [i for i in range(CELLS) if not taken >> i & 1]


def _play(code: int, move: int) -> int:
    x, o = code & FULL, code >> CELLS
    mover_is_x = bin(x).count("1") == bin(o).count("1")
    return code | (1 << move if mover_is_x else 1 << (move + CELLS))


def _outcome(code: int) -> int | None:
    x, o = code & FULL, code >> CELLS
    if HAS_LINE[x] or HAS_LINE[o]:
        return -1  # the player who just moved made the line; the player to move has lost
    if (x | o) == FULL:
        return 0
    return None


@dataclass(frozen=True)
class Preset:
    """A position worth searching from, and what it teaches."""

    name: str
    label: str
    board: str
    lesson: str


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset("empty", "Empty board", ".........",
               "Every first move draws with best play, so every root move is optimal."),
        Preset("win_in_one", "Win in one", "xx.oo....",
               "X completes the top row at c1; every other move lets O win or only draws."),
        Preset("must_block", "Must block", "xo..o...x",
               "O threatens the middle column, so X must take b3; every other move loses."),
        Preset("fork", "Fork", "xo..x...o",
               "X wins by making two threats at once (a2 or a3); O can block only one."),
        Preset("stop_fork", "Stop the fork", "x...o...x",
               "O must answer on an edge; a corner lets X fork and win."),
    )
}


class TicTacToe:
    """Tic-tac-toe with its table of 5,478 positions and its exact solution.

    Use the module's ``TICTACTOE`` instance: the table and the solution are built once, on
    first use.
    """

    name = "tic-tac-toe"
    move_names = MOVE_NAMES

    @cached_property
    def table(self) -> GameTable:
        """Every position reachable from the empty board."""
        return build_table(self.name, MOVE_NAMES, 0, _legal_moves, _play, _outcome)

    @cached_property
    def solution(self) -> Solution:
        """The exact value of every position and move (memoised negamax)."""
        return solve(self.table)

    @cached_property
    def games(self) -> dict[str, int]:
        """Distinct games and how they end (``rlviz.games.count_games``)."""
        return count_games(self.table)

    def check(self, text: str) -> str:
        """Check that a board can arise in a game; return its normalised text.

        Raises:
            InputError: Saying what makes the board impossible, in the players' terms.
        """
        cells = normalise(text)
        n_x, n_o = cells.count("x"), cells.count("o")
        if not (n_x == n_o or n_x == n_o + 1):
            raise InputError(
                f"X moves first, so X has as many marks as O or one more; this board has "
                f"{n_x} X and {n_o} O."
            )
        won = winner(cells)
        if won == "both":
            raise InputError("Both X and O have three in a row, but a game stops at the first.")
        if won == "x" and n_x == n_o:
            raise InputError("X has three in a row, yet O moved afterwards: the game had ended.")
        if won == "o" and n_x > n_o:
            raise InputError("O has three in a row, yet X moved afterwards: the game had ended.")
        if encode(cells) not in self.table.index:
            raise InputError("This board cannot arise in a game of tic-tac-toe.")
        return cells

    def position(self, text: str) -> int:
        """The table index of a board that can arise in a game and still has a move to make.

        Raises:
            InputError: If the board is impossible or the game is already over.
        """
        cells = self.check(text)
        state = self.table.index[encode(cells)]
        if self.table.terminal[state]:
            won = winner(cells)
            if won is None:
                raise InputError("The board is full, so the game is over (a draw). "
                                 "Clear a cell or pick a preset to search.")
            raise InputError(f"{won.upper()} has three in a row, so the game is over. "
                             "Clear a cell or pick a preset to search.")
        return state

    def text(self, state: int) -> str:
        """Board text of a table index."""
        return decode(int(self.table.codes[state]))

    def to_move(self, state: int) -> str:
        """``"X"`` or ``"O"``: who moves in a position."""
        return "XO"[int(self.table.plies[state]) % 2]


TICTACTOE = TicTacToe()
"""The game instance every caller shares (its table is built once)."""
