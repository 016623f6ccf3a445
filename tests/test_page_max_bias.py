"""The maximization-bias page in AppTest: defaults, extremes, links, the capped work, by hand."""

import base64
import json

import numpy as np
import pytest

from rlviz import max_bias as mb
from rlviz.figures import max_bias as figs
from tests.conftest import PAGES, assert_healthy, open_panels, run_page

PAGE = PAGES / "max_bias.py"
SMALL = {"runs": "200", "episodes": "100", "trials": "1000"}
CHARTS = 7


def known_answer(at) -> str:
    return next(m.value for m in at.markdown if "| check |" in m.value)


def figure(at, key):
    chart = next(c for c in at.get("plotly_chart") if c.proto.id and key in c.proto.id)
    return json.loads(chart.proto.spec)


def arr(field):
    """A trace's data array, whether plotly wrote it as a list or as typed base64."""
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"])
    return np.asarray(field, dtype=float)


def assert_figures_finite(at):
    for chart in at.get("plotly_chart"):
        for trace in json.loads(chart.proto.spec)["data"]:
            for name in ("y",):
                values = trace.get(name)
                if values is None or (isinstance(values, list) and values
                                      and values[0] is None):
                    continue
                assert np.isfinite(arr(values)).all(), trace.get("name")


def test_defaults_reproduce_the_book_figure():
    at = run_page(PAGE)
    assert_healthy(at)
    assert not at.warning and not at.info
    assert len(at.get("plotly_chart")) == CHARTS
    table = known_answer(at)
    assert ":red[" not in table and table.count("check_circle") == 9
    assert "| 1.5387527308 | 1.5387527308 |" in table
    assert "Figure 6.5: Double Q-learning" in table
    assert not at.query_params  # defaults leave the link clean
    assert_figures_finite(at)
    left = figure(at, "max_bias.chart.left")
    names = [t["name"] for t in left["data"] if t.get("mode") == "lines"]
    assert names == ["Q-learning", "Double Q-learning", "Expected SARSA"]
    assert any("ε/2 = 5%" in a["text"] for a in left["layout"]["annotations"])


def test_the_curves_are_the_librarys():
    at = run_page(PAGE, query=SMALL)
    assert_healthy(at)
    res = mb.run(mb.MaxBiasMDP(), runs=200, episodes=100, seed=0)
    left = figure(at, "max_bias.chart.left")
    line = next(t for t in left["data"] if t.get("name") == "Double Q-learning")
    np.testing.assert_allclose(arr(line["y"]), 100 * res.methods["double_q"].left.mean)
    values = figure(at, "max_bias.chart.values")
    line = next(t for t in values["data"] if t.get("name") == "Q-learning: Q(A, left)")
    np.testing.assert_allclose(arr(line["y"]), res.methods["q_learning"].q_left.mean)


def test_panels_open_with_equations_code_and_every_export():
    at = open_panels(run_page(PAGE, query=SMALL), "max_bias")
    assert_healthy(at)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"left.html", "values.html", "estimators_by_actions.html", "episodes.csv",
            "estimators_by_samples.csv", "settings.json"} <= labels
    code = [c.value for c in at.code if c.language == "python"]  # not the share link
    assert code[0].lstrip().startswith("def episode(")  # the readable step first
    joined = " ".join(code)
    for name in ("def epsilon_greedy", "def q_learning_target", "def double_q_target",
                 "def expected_sarsa_target", "def td_update", "def expected_max_of_normals"):
        assert name in joined
    assert len(at.get("latex")) >= len(figs.EQUATIONS) + len(mb.METHODS)


def test_the_worked_update_shows_the_values_it_uses():
    at = run_page(PAGE, query={**SMALL, "episode": "40", "alpha": "0.23"})
    assert_healthy(at)
    res = mb.run(mb.MaxBiasMDP(), runs=200, episodes=100, alpha=0.23, seed=0)
    w = mb.worked_targets(res, 40)
    worked = [el.value for el in at.get("latex") if "v_B" in el.value]
    assert len(worked) == 3
    q = next(x for x in worked if r"\max_b Q(B, b) \\" in x)
    assert f"Q(B, b_{{{w.chosen['q_learning'] + 1}}})" in q
    assert "0.23 \\cdot (" in q  # α as it was set
    new = w.new_q_left["q_learning"]
    assert f"{new:.4f}".rstrip("0").rstrip(".") in q


EXTREMES = {
    "one_action": dict(actions="1", sigma="3", epsilon="0.5", alpha="1", **SMALL),
    "many_actions_long": dict(actions="100", episodes="500", runs="500", trials="500"),
    "no_noise_no_exploring": dict(sigma="0", epsilon="0", runs="100", samples="1000"),
    "gap_and_few_samples": dict(gap="2", samples="2", trials="20000", runs="100",
                                episodes="50", seed="2147483647"),
}


@pytest.mark.parametrize("query", EXTREMES.values(), ids=EXTREMES.keys())
def test_extremes_stay_healthy_and_every_check_passes(query):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert not at.warning, [w.value for w in at.warning]
    assert ":red[" not in known_answer(at)
    assert_figures_finite(at)


def test_a_link_restores_every_control_and_writes_back_what_it_was_given():
    query = {"actions": "20", "sigma": "1.5", "epsilon": "0.2", "alpha": "0.3", "episodes": "200",
             "runs": "500", "seed": "7", "samples": "50", "gap": "0.25", "trials": "2000",
             "episode": "33"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.slider(key="max_bias.actions").value == 20
    assert at.slider(key="max_bias.sigma").value == 1.5
    assert at.select_slider(key="max_bias.runs").value == 500
    assert at.select_slider(key="max_bias.samples").value == 50
    assert at.slider(key="max_bias.episode").value == 33
    assert at.number_input(key="max_bias.seed").value == 7
    assert {k: at.query_params.get(k) for k in query} == query


def test_runs_are_capped_by_the_work_and_the_page_says_so():
    at = run_page(PAGE, query={"actions": "100", "runs": "5000"})
    assert_healthy(at)
    assert any("runs=5000" in w.value for w in at.warning)  # a link beyond the cap
    runs = at.select_slider(key="max_bias.runs")
    assert runs.options[-1] == "2000" and runs.value == 2000
    assert at.select_slider(key="max_bias.episodes").options[-1] == "500"
    assert any("up to 500 episodes and 2,000 runs" in c.value for c in at.sidebar.caption)
    at = run_page(PAGE, query={"runs": "10000", "trials": "500", "episodes": "100"})
    assert_healthy(at)
    at.slider(key="max_bias.actions").set_value(100).run()  # moving a slider clamps the runs
    assert_healthy(at)
    assert at.select_slider(key="max_bias.runs").value == 5000
    assert at.query_params.get("runs") == "5000"


def test_the_episode_to_work_follows_the_episodes():
    at = run_page(PAGE, query={**SMALL, "episode": "90"})
    assert at.slider(key="max_bias.episode").value == 90
    at.select_slider(key="max_bias.episodes").set_value(50).run()
    assert_healthy(at)
    assert at.slider(key="max_bias.episode").value == 10  # out of range: back to its default
