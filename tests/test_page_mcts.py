"""The MCTS page in AppTest: defaults, extremes, links, the board editor, bad input."""

import json

import pytest

from tests.conftest import PAGES, assert_healthy, panel_labels, run_page, shown_text

PAGE = PAGES / "mcts.py"


def badge(at) -> str:
    """'matches' or 'differs': the known-answer badge."""
    tables = [m.value for m in at.markdown if "| check |" in m.value]
    assert tables, "no known-answer table"
    return "matches" if ":red[" not in tables[0] else "differs"


def tree_spec(at) -> dict:
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return next(c for c in charts if c["layout"].get("coloraxis"))


def test_defaults_draw_every_chart_and_pass_the_known_answer():
    at = run_page(PAGE)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 4
    assert badge(at) == "matches"
    spec = tree_spec(at)
    assert spec["frames"], "the tree grows with play/pause frames"
    assert "Iteration 400 of 400" in spec["layout"]["title"]["text"]
    assert {"The equations", "The code that ran", "Export"} <= panel_labels(at)


@pytest.mark.parametrize(
    "query",
    [
        {"simulations": "5000", "depth": "9", "top_k": "9"},
        {"simulations": "10", "c": "0", "rule": "puct", "prior": "misleading"},
        {"c": "4", "rule": "puct", "prior": "solver", "iteration": "1", "phase": "select"},
        {"board": "xoxxoo.xo", "simulations": "20", "phase": "simulate"},
        {"board": "xx.oo....", "depth": "1", "top_k": "1", "phase": "expand"},
    ],
    ids=["most-work", "greedy-misled", "first-iteration", "one-move-left", "smallest-drawing"],
)
def test_extremes_run_cleanly(query):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 4
    assert not at.warning, [w.value for w in at.warning]


@pytest.mark.parametrize("phase", ["select", "expand", "simulate", "backup"])
def test_every_phase_tells_its_story(phase):
    at = run_page(PAGE, query={"phase": phase, "iteration": "37"})
    assert_healthy(at)
    words = {"select": "Select.", "expand": "Expand.", "simulate": "Simulate.",
             "backup": "Back up."}[phase]
    assert any(m.value.startswith(f"**{words}") for m in at.markdown)
    assert "Iteration 37 of 400" in tree_spec(at)["layout"]["title"]["text"]
    if phase == "select":
        assert any("took" in df.value.columns for df in at.dataframe)


def test_a_link_restores_the_exact_view():
    query = {"simulations": "700", "c": "2.5", "rule": "puct", "prior": "solver", "seed": "9",
             "depth": "3", "top_k": "2", "board": "xo..x...o", "iteration": "123",
             "phase": "simulate"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.slider(key="mcts.simulations").value == 700
    assert at.slider(key="mcts.c").value == 2.5
    assert at.text_input(key="mcts.board").value == "xo..x...o"
    assert at.number_input(key="mcts.seed").value == 9
    assert at.slider(key="mcts.iteration").value == 123
    assert dict(at.query_params) == query
    # Widgets write the link, and the link opens the same view in a new session.
    at.slider(key="mcts.top_k").set_value(4).run()
    link = dict(at.query_params)
    assert link == {**query, "top_k": "4"}
    again = run_page(PAGE, query=link)
    assert again.slider(key="mcts.top_k").value == 4
    assert tree_spec(again)["data"] == tree_spec(at)["data"]


def test_the_seed_changes_the_search():
    a = tree_spec(run_page(PAGE, query={"seed": "1"}))
    b = tree_spec(run_page(PAGE, query={"seed": "2"}))
    assert a["data"][2]["marker"]["size"] != b["data"][2]["marker"]["size"]


def test_clicking_cells_and_presets_edits_the_board():
    at = run_page(PAGE)
    at.button(key="mcts.cell4").click().run()
    assert at.text_input(key="mcts.board").value == "....x...."
    at.button(key="mcts.cell0").click().run()
    assert at.text_input(key="mcts.board").value == "o...x...."
    at.button(key="mcts.cell4").click().run()
    assert at.text_input(key="mcts.board").value == "o........"
    assert any("X moves first" in e.value for e in at.error)  # O alone cannot happen
    at.button(key="mcts.preset.win_in_one").click().run()
    assert at.text_input(key="mcts.board").value == "xx.oo...."
    assert_healthy(at)
    assert badge(at) == "matches"
    assert any("c1 ★" in df.value["move"].tolist() for df in at.dataframe)


def test_an_impossible_board_gets_a_clear_message_and_the_editor_stays():
    at = run_page(PAGE, query={"board": "oo......."})
    assert not at.exception
    assert any("X moves first" in e.value for e in at.error)
    assert at.button(key="mcts.cell0").label == "O"
    at.button(key="mcts.preset.fork").click().run()
    assert_healthy(at)


@pytest.mark.parametrize(
    ("board", "message"),
    [("xxx", "needs 9 cells"), ("xxxoo....", "game is over"), ("x?o......", "only x, o")],
)
def test_bad_boards_are_explained(board, message):
    at = run_page(PAGE, query={"board": board})
    assert not at.exception
    assert any(message in e.value for e in at.error), [e.value for e in at.error]


def test_bad_link_values_fall_back_with_a_notice():
    at = run_page(PAGE, query={"simulations": "lots", "rule": "ucb", "iteration": "99999"})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert "simulations=lots" in notices and "rule=ucb" in notices
    assert at.slider(key="mcts.simulations").value == 400


def test_the_iteration_follows_the_end_when_simulations_change():
    at = run_page(PAGE)
    at.slider(key="mcts.simulations").set_value(600).run()
    assert at.slider(key="mcts.iteration").value == 600
    at.slider(key="mcts.iteration").set_value(50).run()
    at.slider(key="mcts.simulations").set_value(800).run()
    assert at.slider(key="mcts.iteration").value == 50
    at.slider(key="mcts.simulations").set_value(30).run()
    assert at.slider(key="mcts.iteration").value == 30
    assert_healthy(at)


def test_a_misleading_prior_shows_a_failing_badge_not_an_error():
    at = run_page(PAGE, query={"board": "x...o...x", "rule": "puct", "prior": "misleading",
                               "simulations": "300"})
    assert_healthy(at)
    assert badge(at) == "differs"
    assert any("loss in 4" in t for t in shown_text(at))


def test_a_bad_board_keeps_the_rest_of_the_link():
    at = run_page(PAGE, query={"board": "oo.......", "iteration": "5", "phase": "select"})
    assert any("X moves first" in e.value for e in at.error)
    assert not any("does not use" in w.value for w in at.warning)
    assert dict(at.query_params) == {"board": "oo.......", "iteration": "5", "phase": "select"}
