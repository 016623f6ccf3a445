"""Small two-player games as explicit tables, solved exactly (tic-tac-toe)."""

from rlviz.games.base import Game, GameTable, Solution, build_table, count_games, solve
from rlviz.games.tictactoe import PRESETS, TICTACTOE, Preset, TicTacToe

__all__ = [
    "PRESETS",
    "TICTACTOE",
    "Game",
    "GameTable",
    "Preset",
    "Solution",
    "TicTacToe",
    "build_table",
    "count_games",
    "solve",
]
