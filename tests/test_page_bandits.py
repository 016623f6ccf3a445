"""The bandit regret races page in AppTest: defaults, extremes, links, lessons, bad input."""

import json
import re

import pytest

from rlviz.ui.chrome import FRIENDLY_ERROR
from tests.conftest import PAGES, assert_healthy, run_page, shown_text

PAGE = PAGES / "bandits.py"
SMALL = {"runs": "20", "steps": "200"}
ALL_RACERS = "greedy,eps_a,eps_b,optimistic,ucb,thompson,gradient_a,gradient_b"


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def trace_names(at) -> set[str]:
    return {t.get("name") for spec in charts(at) for t in spec["data"] if t.get("name")}


def test_defaults_draw_every_chart_and_match_the_book():
    at = run_page(PAGE)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 6
    names = trace_names(at)
    for racer in ("greedy", "ε-greedy ε=0.1", "UCB c=2", "Thompson N(0, 1²)", "gradient α=0.1"):
        assert racer in names
    table = next(m.value for m in at.markdown if "| check |" in m.value)
    assert ":red[" not in table and table.count(":green[") == 9
    assert any("Lai–Robbins and UCB1 bounds are drawn" in c.value for c in at.caption)


@pytest.mark.parametrize(
    "query",
    [
        {"testbed": "bernoulli", "racers": "eps_a,ucb,thompson", "ucb_c": "1.4142135623730951"}
        | SMALL,
        {"testbed": "bernoulli_random", "arms": "2", "racers": ALL_RACERS} | SMALL,
        {"testbed": "random_walk", "arms": "20", "runs": "20", "steps": "10000",
         "racers": "eps_a,eps_b,thompson", "eps_b_alpha": "0.1", "walk": "0.1"},
        {"testbed": "gaussian", "arms": "20", "mu": "6", "noise": "4", "racers": ALL_RACERS,
         "eps_a_decay": "0.1", "eps_a_eps": "1", "gradient_a_alpha": "0.8", "ucb_c": "0",
         "optimistic_alpha": "0", "t": "1"} | SMALL,
        {"testbed": "gaussian", "arms": "2", "noise": "0.1", "racers": "greedy", "t": "200"}
        | SMALL,
    ],
    ids=["bernoulli-bounds", "two-random-arms", "long-drift", "all-racers-extreme", "one-racer"],
)
def test_extremes_run_cleanly(query):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 6
    assert not at.warning, [w.value for w in at.warning]


def test_fixed_bernoulli_arms_draw_both_bounds():
    at = run_page(PAGE, query={"testbed": "bernoulli", "racers": "ucb,thompson"} | SMALL)
    assert_healthy(at)
    names = trace_names(at)
    assert "Lai–Robbins rate (lower bound, asymptotic)" in names
    assert "UCB1 upper bound (Auer et al. 2002)" in names
    assert "Thompson Beta(1, 1)" in names
    assert not any("bounds are drawn for" in c.value for c in at.caption)


def test_a_link_restores_the_view():
    query = {"testbed": "random_walk", "arms": "4", "runs": "50", "steps": "500", "seed": "7",
             "racers": "eps_a,eps_b", "eps_b_alpha": "0.1", "t": "250", "walk": "0.05"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.selectbox(key="bandits.testbed").value == "random_walk"
    assert at.slider(key="bandits.arms").value == 4
    assert at.select_slider(key="bandits.runs").value == 50
    assert at.select_slider(key="bandits.eps_b_alpha").value == 0.1
    assert at.slider(key="bandits.t").value == 250
    assert at.number_input(key="bandits.seed").value == 7
    assert at.multiselect(key="bandits.racers").value == ["eps_a", "eps_b"]
    assert {k: at.query_params[k] for k in query} == query
    assert "step t = 250" in json.dumps(charts(at)[4]["layout"]["title"])


def test_moving_a_control_updates_the_link():
    at = run_page(PAGE, query=SMALL)
    at.select_slider(key="bandits.steps").set_value(500).run()
    assert_healthy(at)
    assert at.query_params["steps"] == "500"
    at.slider(key="bandits.t").set_value(321).run()
    assert at.query_params["t"] == "321"


def test_scrubber_follows_the_number_of_steps():
    at = run_page(PAGE, query=SMALL | {"t": "150"})
    at.select_slider(key="bandits.steps").set_value(100).run()
    assert_healthy(at)
    assert at.slider(key="bandits.t").value == 100  # 150 no longer fits: back to the default


@pytest.mark.slow  # six full races
@pytest.mark.parametrize("lesson", range(6))
def test_every_lesson_loads_a_valid_view(lesson):
    at = run_page(PAGE, query=SMALL)
    at.button(key=f"bandits.lesson.{lesson}").click().run()
    assert_healthy(at)
    assert not at.warning, [w.value for w in at.warning]
    assert len(at.get("plotly_chart")) == 6


def test_the_bounds_lesson_is_the_bernoulli_race():
    at = run_page(PAGE, query=SMALL)
    at.button(key="bandits.lesson.4").click().run()
    assert at.selectbox(key="bandits.testbed").value == "bernoulli"
    assert at.multiselect(key="bandits.racers").value == ["eps_a", "ucb", "thompson"]
    assert "UCB1 (c=√2)" in trace_names(at)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"testbed": "bernoulli", "probs": "0.9, 1.5"}, "[0, 1]"),
        ({"testbed": "bernoulli", "probs": "0.9, lots"}, "'lots' is not a probability"),
        ({"testbed": "bernoulli", "probs": " , "}, "at least one success probability"),
        ({"racers": ""}, "Choose at least one racer"),
    ],
)
def test_bad_input_is_a_clear_message(query, message):
    at = run_page(PAGE, query=SMALL | query)
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and message in errors[0], errors
    assert FRIENDLY_ERROR not in errors[0]
    assert "Traceback" not in " ".join(shown_text(at))


@pytest.mark.parametrize(
    ("query", "raced"),
    [
        ({"runs": "2000", "steps": "10000"}, "runs × 10000 steps**"),
        ({"runs": "2000", "steps": "5000"}, "runs × 5000 steps**"),
        ({"runs": "2000", "steps": "1000", "racers": ALL_RACERS, "testbed": "bernoulli",
          "probs": ", ".join(["0.5"] * 60)}, "steps**"),
    ],
)
def test_a_race_too_big_to_run_live_races_the_most_runs_that_fit_and_says_so(query, raced):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert not at.error
    assert len(at.get("plotly_chart")) == 6  # every chart is drawn
    notes = [i.value for i in at.info if "more than this page races live" in i.value]
    assert len(notes) == 1 and raced in notes[0], notes
    shown = re.search(r"\*\*(\d+) runs × (\d+) steps\*\*", notes[0])
    caption = f"{shown[1]} runs × {shown[2]} steps"
    assert any(caption in c.value for c in at.caption)
    assert at.select_slider(key="bandits.runs").value == int(query["runs"])  # the ask is kept


@pytest.mark.parametrize(
    ("query", "name"),
    [({"runs": "7"}, "runs"), ({"arms": "abc"}, "arms"), ({"racers": "ucb,nobody"}, "racers"),
     ({"ucb_c": "9"}, "ucb_c"), ({"t": "100000"}, "t")],
)
def test_bad_link_values_fall_back_with_a_notice(query, name):
    at = run_page(PAGE, query=SMALL | query)
    assert_healthy(at)
    assert any(f"`{name}=" in w.value for w in at.warning)
    assert len(at.get("plotly_chart")) == 6
