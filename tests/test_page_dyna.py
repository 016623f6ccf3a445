import base64
import json

import numpy as np
import pytest

from rlviz import planning as pl
from tests.code_ran import unrun_shown_code
from tests.conftest import PAGES, assert_healthy, open_panels, run_page

PAGE = PAGES / "dyna.py"
SLUG = "dyna"
# Cheap settings for the tests that look at something other than the work itself.
SMALL = {"runs": "4", "episodes": "20"}
SMALL_CHANGE = {"c_runs": "2"}
SMALL_SWEEP = {"exp": "sweeping", "w_runs": "2", "sizes": "0,1"}


def checks(at):
    table = next(m.value for m in at.markdown if "| check |" in m.value)
    return table.splitlines()[2:]


def figure(at, key):
    chart = next(c for c in at.get("plotly_chart") if key in c.proto.id)
    return json.loads(chart.proto.spec)


def arr(field):
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"])
    return np.asarray(field, dtype=float)


def test_defaults():
    at = run_page(PAGE)
    assert_healthy(at)
    assert not at.warning
    assert len(at.get("plotly_chart")) == 3  # Figure 8.2 and the two policies of Figure 8.3
    rows = checks(at)
    assert len(rows) == 7 and all("check_circle" in r for r in rows), rows
    assert any("Whiteboard version" in r for r in rows)
    assert any("rlviz.td's Q-learning" in r for r in rows)
    assert not at.query_params
    open_panels(at, SLUG)
    assert_healthy(at)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"steps_per_episode.html", "policy_n0.html", "policy_n50.html", "episodes.csv",
            "settings.json"} <= labels
    assert len(at.latex) >= 4


@pytest.mark.parametrize("which", ["blocking", "shortcut"])
def test_the_changing_mazes(which):
    at = run_page(PAGE, query={"exp": which})
    assert_healthy(at)
    assert not at.warning
    assert len(at.get("plotly_chart")) == 3  # cumulative reward and the two agents' models
    rows = checks(at)
    assert all("check_circle" in r for r in rows), rows
    assert any("Dyna-Q+ vs Dyna-Q" in r for r in rows)
    open_panels(at, SLUG)
    assert_healthy(at)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"cumulative_reward.html", "model_dyna_q_plus.html", "cumulative_reward.csv"} <= labels


@pytest.mark.parametrize(
    "query",
    [{"ns": "0"}, {"ns": "50"}, {"ns": "1,5"}, {"ns": "10,20,50"}, {"alpha": "1"},
     {"alpha": "0.05"}, {"epsilon": "0"}, {"epsilon": "0.3"}, {"gamma": "0.5"},
     {"gamma": "0.99"}, {"seed": "2147483647"}, {"runs": "2", "episodes": "20"},
     {"layout": "S..#..G\n...#...\n......."}, {"layout": "S.G"}, {"layout": "SG"}],
    ids=lambda q: ",".join(f"{k}={v[:10]}" for k, v in q.items()),
)
def test_extremes_stay_healthy(query):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    assert not at.warning
    assert len(at.get("plotly_chart")) >= 2


@pytest.mark.parametrize(
    "query",
    [{"exp": "blocking", "n": "0"}, {"exp": "shortcut", "kappa": "0"},
     {"exp": "shortcut", "kappa": "0.01", "c_alpha": "0.05"},
     {"exp": "blocking", "epsilon": "0", "gamma": "0.5"},
     {"exp": "blocking", "b_before": "S..\n...\n..G", "b_after": "S#.\n.#.\n..G"}],
    ids=lambda q: ",".join(f"{k}={v[:10]}" for k, v in q.items()),
)
def test_changing_extremes_stay_healthy(query):
    at = run_page(PAGE, query={**SMALL_CHANGE, **query})
    assert_healthy(at)
    assert not at.warning
    assert len(at.get("plotly_chart")) == 3


def test_a_link_restores_every_control():
    query = {"ns": "1,10", "episodes": "25", "runs": "5", "alpha": "0.3", "epsilon": "0.2",
             "gamma": "0.9", "seed": "7", "layout": "S...\n.##.\n...G"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.session_state[f"{SLUG}.ns"] == [1, 10]
    assert at.slider(key=f"{SLUG}.alpha").value == 0.3
    assert {k: at.query_params.get(k) for k in query} == query
    changing = {"exp": "shortcut", "n": "5", "kappa": "0.0003", "c_runs": "3", "c_alpha": "0.5",
                "seed": "3"}
    at = run_page(PAGE, query=changing)
    assert_healthy(at)
    assert at.session_state[f"{SLUG}.kappa"] == 3e-4
    assert {k: at.query_params.get(k) for k in changing} == changing


@pytest.mark.parametrize(
    ("query", "name"),
    [({"alpha": "2"}, "alpha"), ({"epsilon": "0.5"}, "epsilon"), ({"ns": "7"}, "ns"),
     ({"ns": "0,1,5,10"}, "ns"),
     ({"exp": "cliff"}, "exp"), ({"episodes": "500"}, "episodes"), ({"runs": "x"}, "runs")],
)
def test_bad_link_values_fall_back_with_a_notice(query, name):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert f"`{name}=" in notices and "was ignored" in notices


@pytest.mark.parametrize(
    ("query", "message"),
    [({"layout": "S....\n....."}, "has no goal"),
     ({"layout": "S.X\n..G"}, "'X' cannot be used here"),
     ({"layout": "S.S\n..G"}, "keep exactly one 'S'"),
     ({"layout": "S#G\n.#."}, "no goal can be reached from S"),
     ({"layout": "S..\n.G"}, "every row must have the same length"),
     ({"layout": "\n".join(["S" + "." * 20] + ["." * 21] * 9 + ["." * 20 + "G"])},
      "at most 200"),
     ({"exp": "blocking", "b_after": "S.G"}, "must have the same size"),
     ({"exp": "shortcut", "s_after": "S#.\n.#.\n.#G", "s_before": "S..\n...\n..G"},
      "after the change no goal can be reached")],
    ids=["no-goal", "bad-char", "two-starts", "unreachable", "ragged", "too-big", "sizes",
         "walled-after"],
)
def test_a_bad_maze_gives_a_message_in_the_users_terms(query, message):
    base = SMALL if "exp" not in query else SMALL_CHANGE
    at = run_page(PAGE, query={**base, **query})
    assert not at.exception
    errors = " ".join(e.value for e in at.error).replace("\\", "")
    assert message in errors, errors
    assert "went wrong" not in errors  # a user's mistake, not the bug note


def test_no_budget_chosen_asks_for_one():
    at = run_page(PAGE, query=SMALL)
    at.multiselect(key=f"{SLUG}.ns").set_value([]).run()
    assert not at.exception
    assert any("at least one planning budget" in e.value for e in at.error)
    at.multiselect(key=f"{SLUG}.ns").set_value([5]).run()
    assert_healthy(at)


def test_a_moved_slider_lands_in_the_link_and_the_chart():
    at = run_page(PAGE, query=SMALL)
    at.slider(key=f"{SLUG}.alpha").set_value(0.5).run()
    assert_healthy(at)
    assert at.query_params.get("alpha") == "0.5"
    study = pl.planning_study(pl.DYNA_MAZE, ns=pl.BOOK_NS, runs=4, episodes=20, alpha=0.5)
    traces = [t for t in figure(at, "dyna.steps")["data"] if t.get("mode") == "lines"
              and t["name"].startswith("n = 5")]
    np.testing.assert_allclose(arr(traces[0]["y"]), study.mean_lengths(5)[1:])


def test_prioritized_sweeping():
    at = run_page(PAGE, query={"exp": "sweeping"})
    assert_healthy(at)
    assert not at.warning
    assert len(at.get("plotly_chart")) == 1
    rows = checks(at)
    assert len(rows) == 4 and all("check_circle" in r for r in rows), rows
    assert any("14 / 22 / 27" in r for r in rows)  # value iteration at 47, 94, 188 states
    assert any("fewer updates than Dyna-Q" in r for r in rows)
    fig = figure(at, "dyna.sweeping")
    assert fig["layout"]["yaxis"]["type"] == "log" and fig["layout"]["xaxis"]["type"] == "log"
    names = {t["name"] for t in fig["data"]}
    assert {"Dyna-Q", "Prioritized sweeping"} <= names
    open_panels(at, SLUG)
    assert_healthy(at)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"updates_until_optimal.html", "sweeping_runs.csv", "settings.json"} <= labels
    assert len(at.latex) >= 6


def test_prioritized_sweepings_code_panel_shows_code_that_ran():
    assert unrun_shown_code(PAGE, SLUG, query=SMALL_SWEEP) == []


@pytest.mark.parametrize(
    "query",
    [{"theta": "0"}, {"theta": "0.01"}, {"w_n": "1"}, {"w_n": "10"},
     {"epsilon": "0"}, {"epsilon": "0.3"}, {"gamma": "0.5"}, {"gamma": "0.99"},
     {"sizes": "2"}, {"seed": "2147483647"}],
    ids=lambda q: ",".join(f"{k}={v[:10]}" for k, v in q.items()),
)
def test_sweeping_extremes_stay_healthy(query):
    at = run_page(PAGE, query={**SMALL_SWEEP, **query})
    assert_healthy(at)
    assert not at.warning
    assert len(at.get("plotly_chart")) == 1


def test_a_sweeping_link_restores_every_control():
    query = {"exp": "sweeping", "sizes": "0,2", "w_runs": "3", "w_n": "10", "theta": "0.001",
             "seed": "4"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.session_state[f"{SLUG}.sizes"] == [0, 2]
    assert at.session_state[f"{SLUG}.theta"] == 1e-3
    assert {k: at.query_params.get(k) for k in query} == query
    study = pl.sweeping_study((0, 2), runs=3, n=10, theta=1e-3, seed=4)
    traces = [t for t in figure(at, "dyna.sweeping")["data"]
              if t["name"] == "Prioritized sweeping"]
    np.testing.assert_allclose(arr(traces[0]["y"]), study.summary("prioritized")[0])


def test_no_size_chosen_asks_for_one():
    at = run_page(PAGE, query=SMALL_SWEEP)
    at.multiselect(key=f"{SLUG}.sizes").set_value([]).run()
    assert not at.exception
    assert any("at least one maze size" in e.value for e in at.error)
    at.multiselect(key=f"{SLUG}.sizes").set_value([0]).run()
    assert_healthy(at)


@pytest.mark.parametrize(("query", "name"), [({"theta": "0.5"}, "theta"),
                                             ({"sizes": "7"}, "sizes"),
                                             ({"w_runs": "50"}, "w_runs")])
def test_bad_sweeping_link_values_fall_back_with_a_notice(query, name):
    at = run_page(PAGE, query={**SMALL_SWEEP, **query})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert f"`{name}=" in notices and "was ignored" in notices
