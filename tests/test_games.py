"""Tic-tac-toe as a table: the known counts, board checks, and the exact solver."""

from functools import cache

import numpy as np
import pytest

from rlviz.games import PRESETS, TICTACTOE, GameTable, build_table, count_games, solve
from rlviz.games.tictactoe import LINES, MOVE_NAMES, click, decode, encode, normalise, winner

TABLE = TICTACTOE.table
SOLUTION = TICTACTOE.solution


# ----------------------------------------------------------------- an independent reference
def line_of(cells: str) -> str | None:
    for a, b, c in LINES:
        if cells[a] != "." and cells[a] == cells[b] == cells[c]:
            return cells[a]
    return None


@cache
def minimax(cells: str) -> int:
    """Value for the player to move, straight from the rules on board strings."""
    mover = "x" if cells.count("x") == cells.count("o") else "o"
    if line_of(cells) is not None:
        return -1
    empty = [i for i, ch in enumerate(cells) if ch == "."]
    if not empty:
        return 0
    return max(-minimax(cells[:i] + mover + cells[i + 1:]) for i in empty)


# ----------------------------------------------------------------- the table
def test_table_has_the_known_number_of_positions():
    assert TABLE.n_states == 5478
    assert int(TABLE.terminal.sum()) == 958
    assert TABLE.max_plies == 9 and TABLE.n_moves == 9


def test_table_counts_the_known_number_of_games_and_results():
    # Number of move sequences reaching each position, forward in index (= ply) order.
    ways = np.zeros(TABLE.n_states, dtype=np.int64)
    ways[TABLE.START] = 1
    for s in range(TABLE.n_states):
        for nxt in TABLE.next_state[s][TABLE.legal[s]]:
            ways[nxt] += ways[s]
    ended = TABLE.terminal
    won = ended & (TABLE.outcome == -1)
    x_won = won & (TABLE.plies % 2 == 1)
    assert ways[ended].sum() == 255_168
    assert ways[x_won].sum() == 131_184
    assert ways[won & ~x_won].sum() == 77_904
    assert ways[ended & ~won].sum() == 46_080
    assert TICTACTOE.games == {"games": 255_168, "first_wins": 131_184,
                               "second_wins": 77_904, "draws": 46_080}
    assert count_games(TABLE) == TICTACTOE.games


def test_positions_are_numbered_by_plies_and_moves_add_one_mark():
    assert (np.diff(TABLE.plies) >= 0).all()
    s, a = np.nonzero(TABLE.legal)
    nxt = TABLE.next_state[s, a]
    assert (TABLE.plies[nxt] == TABLE.plies[s] + 1).all()
    before = [decode(int(code)) for code in TABLE.codes[s[:500]]]
    after = [decode(int(code)) for code in TABLE.codes[nxt[:500]]]
    for b, aft, move in zip(before, after, a[:500], strict=True):
        assert b[move] == "." and aft[move] in "xo"
        assert b[:move] + b[move + 1:] == aft[:move] + aft[move + 1:]


def test_terminal_positions_have_a_line_or_a_full_board():
    for s in np.flatnonzero(TABLE.terminal):
        cells = TICTACTOE.text(s)
        has_line = line_of(cells) is not None
        assert has_line or "." not in cells
        assert TABLE.outcome[s] == (-1 if has_line else 0)


def test_successors_match_the_arrays():
    moves, nexts, outcome = TABLE.successors
    for s in (0, 1, 100, 4000, int(np.flatnonzero(TABLE.terminal)[0])):
        assert moves[s] == tuple(np.flatnonzero(TABLE.legal[s]))
        assert nexts[s] == tuple(TABLE.next_state[s][TABLE.legal[s]])
        assert outcome[s] == TABLE.outcome[s]


def test_build_table_rejects_inconsistent_arrays():
    with pytest.raises(ValueError, match="finished game"):
        GameTable(name="bad", move_names=("a",), codes=np.array([0, 1]),
                  next_state=np.array([[1], [0]], dtype=np.int32),
                  terminal=np.array([False, True]), outcome=np.zeros(2, dtype=np.int8),
                  plies=np.array([0, 1], dtype=np.int16))


def test_a_tiny_game_is_built_and_solved():
    # Nim with 3 stones, take 1 or 2; whoever takes the last stone wins.
    table = build_table(
        "nim", ("take 1", "take 2"), 3,
        legal_moves=lambda n: [m for m in (0, 1) if m + 1 <= n],
        play=lambda n, m: n - (m + 1),
        outcome=lambda n: -1 if n == 0 else None,
    )
    assert table.codes.tolist() == [3, 2, 1, 0]
    assert table.next_state.tolist() == [[1, 2], [2, 3], [3, -1], [-1, -1]]
    sol = solve(table)
    # 3 stones: the mover loses (any move leaves 1 or 2, which the opponent takes).
    assert sol.value.tolist() == [-1, 1, 1, -1]
    assert sol.optimal_moves(1) == (1,)


# ----------------------------------------------------------------- the solver
def test_solver_matches_an_independent_minimax_on_every_position():
    values = np.array([minimax(TICTACTOE.text(s)) for s in range(TABLE.n_states)])
    np.testing.assert_array_equal(SOLUTION.value, values)


def test_solver_matches_backward_induction_layer_by_layer():
    horizon = TABLE.max_plies + 1
    score = np.where(TABLE.terminal, TABLE.outcome * (horizon - TABLE.plies), 0).astype(float)
    for ply in range(TABLE.max_plies, -1, -1):
        layer = np.flatnonzero((TABLE.plies == ply) & ~TABLE.terminal)
        kids = TABLE.next_state[layer]
        child = np.where(kids >= 0, -score[np.maximum(kids, 0)], -np.inf)
        score[layer] = child.max(axis=1)
    np.testing.assert_array_equal(SOLUTION.score, score.astype(np.int16))


def test_empty_board_is_a_draw_and_every_first_move_draws():
    assert SOLUTION.value[TABLE.START] == 0
    np.testing.assert_array_equal(SOLUTION.move_value[TABLE.START], np.zeros(9))
    assert SOLUTION.optimal_moves(TABLE.START) == tuple(range(9))


def test_only_the_centre_and_corners_hold_the_draw_after_a_centre_opening():
    s = TICTACTOE.position("....x....")
    assert SOLUTION.optimal_moves(s) == (0, 2, 6, 8)
    assert SOLUTION.move_value[s, 1] == -1


def test_move_values_are_minus_the_next_positions_values():
    s, a = np.nonzero(TABLE.legal)
    expected = -SOLUTION.value[TABLE.next_state[s, a]]
    np.testing.assert_array_equal(SOLUTION.move_value[s, a], expected)
    assert np.isnan(SOLUTION.move_value[~TABLE.legal]).all()


def test_depth_aware_score_prefers_the_fastest_win():
    s = TICTACTOE.position("xx.oo....")
    assert SOLUTION.plies_to_end(s, int(TABLE.plies[s])) == 1
    s = TICTACTOE.position("xo..x...o")  # the fork wins on X's next-but-one move
    assert SOLUTION.plies_to_end(s, int(TABLE.plies[s])) == 3
    assert SOLUTION.plies_to_end(TABLE.START, 0) is None


# ----------------------------------------------------------------- presets
def test_presets_teach_what_they_say():
    def optimal(board):
        return tuple(MOVE_NAMES[a] for a in SOLUTION.optimal_moves(TICTACTOE.position(board)))

    assert optimal(PRESETS["empty"].board) == MOVE_NAMES
    assert optimal(PRESETS["win_in_one"].board) == ("c1",)
    assert optimal(PRESETS["must_block"].board) == ("b3",)
    assert optimal(PRESETS["fork"].board) == ("a2", "a3")
    assert optimal(PRESETS["stop_fork"].board) == ("b1", "a2", "c2", "b3")


def test_must_block_really_is_a_block_and_losing_otherwise():
    s = TICTACTOE.position(PRESETS["must_block"].board)
    legal = np.flatnonzero(TABLE.legal[s])
    assert SOLUTION.value[s] == 0
    assert sorted(SOLUTION.move_value[s, legal]) == [-1, -1, -1, -1, 0]
    blocked = TICTACTOE.text(TABLE.next_state[s, 7])
    assert line_of(blocked.replace("x", ".")) is None


def test_fork_moves_make_two_threats():
    board = PRESETS["fork"].board
    for move in (3, 6):
        after = board[:move] + "x" + board[move + 1:]
        threats = [line for line in LINES
                   if sorted(after[i] for i in line) == [".", "x", "x"]]
        assert len(threats) == 2


# ----------------------------------------------------------------- reading boards
def test_normalise_accepts_separators_and_case():
    assert normalise("X.O|...|...") == "x.o......"
    assert normalise("x-o / _ _ _ / ...") == "x.o......"
    assert encode("x.o......") == 1 | (1 << 2) << 9
    assert decode(encode("xo..x...o")) == "xo..x...o"


@pytest.mark.parametrize(
    ("board", "message"),
    [
        ("x.o.....", "needs 9 cells"),
        ("x.o.......", "needs 9 cells"),
        ("x.o..z...", "only x, o and ."),
        ("oo.......", "X moves first"),
        ("xxx......", "X moves first"),
        ("xxxooo...", "Both X and O"),
        ("xxxoo.o..", "X has three in a row, yet O moved"),
        ("oooxx.xx.", "O has three in a row, yet X moved"),
    ],
)
def test_impossible_boards_get_a_clear_message(board, message):
    with pytest.raises(ValueError, match=message):
        TICTACTOE.position(board)


@pytest.mark.parametrize(
    ("board", "message"),
    [("xxxoo....", "X has three in a row, so the game is over"),
     ("xoxxoxoxo", "board is full")],
)
def test_finished_games_cannot_be_searched(board, message):
    TICTACTOE.check(board)  # possible boards ...
    with pytest.raises(ValueError, match=message):
        TICTACTOE.position(board)  # ... but nothing left to search


def test_a_double_line_made_by_one_move_is_possible():
    # X's last move at a1 completes the top row and the left column at once.
    board = "xxxxooxoo"
    assert winner(board) == "x"
    assert TICTACTOE.check(board) == board
    state = TABLE.index[encode(board)]
    assert TABLE.terminal[state] and TABLE.outcome[state] == -1


def test_click_places_the_next_mark_and_clears_a_marked_cell():
    assert click(".........", 4) == "....x...."
    assert click("....x....", 0) == "o...x...."
    assert click("o...x....", 4) == "o........"
    assert click("garbage", 8) == "........x"
    with pytest.raises(ValueError):
        click(".........", 9)


def test_the_board_rules_accept_exactly_the_reachable_positions():
    import itertools

    accepted = set()
    for cells in itertools.product("xo.", repeat=9):
        board = "".join(cells)
        try:
            accepted.add(encode(TICTACTOE.check(board)))
        except ValueError as err:
            assert "cannot arise" not in str(err)  # a specific reason is always given
    assert accepted == set(TABLE.index)
