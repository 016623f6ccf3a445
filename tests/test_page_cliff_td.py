"""The Q-learning vs SARSA page in AppTest: defaults, extremes, links, bad input, the whiteboard."""

import pytest

from rlviz.ui.chrome import FRIENDLY_ERROR
from tests.conftest import PAGES, assert_healthy, panel_labels, run_page

PAGE = PAGES / "cliff_td.py"


def known_answer(at) -> str:
    return next(m.value for m in at.markdown if "| check |" in m.value)


def latex(at) -> str:
    return "\n".join(el.value for el in at.get("latex"))


def test_defaults_reproduce_the_book():
    at = run_page(PAGE)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 7  # curves, paths, 2 x 2 heatmaps, the worked update
    table = known_answer(at)
    assert table.count(":green[:material/check_circle:]") == 3 and ":red[" not in table
    assert "Q-learning's greedy path: moves from S to G | 13 | 13" in table
    captions = " ".join(c.value for c in at.caption)
    assert "Mean return over the last 100 episodes: Q-learning -50.4 · SARSA -28.4." in captions
    assert {"The equations", "The code that ran", "Export"} <= panel_labels(at)
    assert not at.warning


EXTREMES = {
    "smallest": dict(algos="q_learning,sarsa,expected_sarsa,double_q", runs="1", episodes="50",
                     window="1", epsilon="0", alpha="1", gamma="0.5", decay="1", rows="2",
                     cols="3", slip="0.3", max_steps="100", seed="123"),
    "largest": dict(algos="double_q,sarsa", runs="60", episodes="100", window="50",
                    epsilon="0.5", alpha="0.05", rows="8", cols="16", slip="0.3",
                    max_steps="100"),
}


@pytest.mark.parametrize("query", EXTREMES.values(), ids=EXTREMES.keys())
def test_extremes_run_cleanly(query):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    n = len(query["algos"].split(","))
    assert len(at.get("plotly_chart")) == 3 + 2 * n
    assert not at.warning, [w.value for w in at.warning]


def test_a_link_restores_the_view_and_moving_a_control_updates_the_link():
    query = dict(algos="sarsa,expected_sarsa", epsilon="0.2", alpha="0.3", episodes="120",
                 runs="8", rows="3", cols="7", seed="42", wb_a="1", wb_gamma="1")
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.multiselect(key="cliff_td.algos").value == ["sarsa", "expected_sarsa"]
    assert at.slider(key="cliff_td.epsilon").value == 0.2
    assert at.slider(key="cliff_td.cols").value == 7
    assert at.number_input(key="cliff_td.seed").value == 42
    assert at.query_params["cols"] == "7"
    at.slider(key="cliff_td.alpha").set_value(0.7).run()
    assert_healthy(at)
    assert at.query_params["alpha"] == "0.7" and at.query_params["seed"] == "42"
    # slip 0 on a 3 x 7 grid: 1 up, 6 right, 1 down
    assert "Optimal return from S on the 3×7 cliff (value iteration) | -8 | -8" in known_answer(at)


def test_the_same_link_draws_the_same_numbers_and_a_new_seed_others():
    query = dict(episodes="60", runs="5", seed="7")
    first = run_page(PAGE, query=query)
    again = run_page(PAGE, query=query)
    other = run_page(PAGE, query=query | dict(seed="8"))
    summary = [[c.value for c in at.caption][0] for at in (first, again, other)]
    assert summary[0] == summary[1] != summary[2]


@pytest.mark.parametrize(("query", "name"), [
    (dict(epsilon="abc"), "epsilon"),
    (dict(runs="1000"), "runs"),
    (dict(algos="q_learning,td3"), "algos"),
    (dict(max_steps="7"), "max_steps"),
    (dict(wb_alpha="0"), "wb_alpha"),
])
def test_bad_link_values_fall_back_to_defaults_with_a_notice(query, name):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert f"`{name}=" in notices and "starts at its default" in notices


def test_the_caption_says_when_runs_use_up_their_step_budget():
    # heavy exploration and a short horizon on the largest slippery grid: the learners wander
    at = run_page(PAGE, query=dict(algos="q_learning", runs="2", epsilon="0.5", gamma="0.5",
                                   rows="8", cols="16", slip="0.3"))
    assert_healthy(at)
    captions = " ".join(c.value for c in at.caption)
    assert "Runs that used up their 30,000 steps before the last episode: Q-learning 2 of 2." in (
        captions)


def test_the_runs_slider_stops_at_the_cap_that_keeps_the_heaviest_view_under_2_s():
    at = run_page(PAGE, query=dict(runs="61", episodes="50"))
    assert at.slider(key="cliff_td.runs").value == 50
    assert "`runs=" in " ".join(w.value for w in at.warning)


def test_no_algorithm_gives_a_clear_message():
    at = run_page(PAGE)
    at.multiselect(key="cliff_td.algos").set_value([]).run()
    assert not at.exception
    assert [e.value for e in at.error] == ["Choose at least one algorithm to train."]
    assert FRIENDLY_ERROR not in at.error[0].value
    at.multiselect(key="cliff_td.algos").set_value(["sarsa"]).run()
    assert_healthy(at)


def test_slippery_grid_checks_value_iteration_against_exact_evaluation():
    at = run_page(PAGE, query=dict(slip="0.1", episodes="50", runs="4"))
    assert_healthy(at)
    table = known_answer(at)
    assert "value iteration vs exact value of its greedy policy" in table
    assert ":green[:material/check_circle:] | Optimal return" in table


def test_whiteboard_worked_update():
    at = run_page(PAGE, query=dict(episodes="50", runs="2"))
    shown = latex(at)
    assert r"\mathbf{-1.95}" in shown and r"\mathbf{-2.85}" in shown
    assert r"\mathbf{-2.0175}" in shown
    # the greedy a' makes SARSA's target Q-learning's
    at = run_page(PAGE, query=dict(episodes="50", runs="2", wb_a="1"))
    assert latex(at).count(r"\mathbf{-1.95}") == 2
    at.toggle(key="cliff_td.wb_terminal").set_value(True).run()
    assert_healthy(at)
    assert latex(at).count(r"\mathbf{-1.5}") == 3  # every target is r = -1
    at.number_input(key="cliff_td.wb_q").set_value(4.0).run()
    assert latex(at).count(r"\mathbf{1.5}") == 3
