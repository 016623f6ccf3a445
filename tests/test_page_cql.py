"""The CQL page in AppTest: both views at defaults and extremes, links, the badge, bad input."""

import json

import pytest
import torch

from tests.conftest import PAGES, assert_healthy, run_page

PAGE = PAGES / "cql.py"


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    # See tests/test_offline.py: threads only slow these tiny tensors down on a busy machine.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def charts(at) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def badge(at) -> str:
    return next(m.value for m in at.markdown if "| check |" in m.value)


def metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def test_one_state_defaults_teach_the_lesson():
    at = run_page(PAGE)
    assert_healthy(at)
    assert len(charts(at)) == 6  # Q by action, return vs α, error vs α, 3 training
    names = {t.get("name") for t in charts(at)[0]["data"]}
    assert {"true mean reward r(a)", "naive offline Q", "CQL Q, α = 1"} <= names
    assert any(n.startswith("naive's pick: really earns -0.30") for n in names)
    shaded = [s for s in charts(at)[0]["layout"]["shapes"] if s["type"] == "rect"]
    assert len(shaded) == 2  # the data's window leaves actions out on both sides
    m = metrics(at)
    assert float(m["Naive policy really earns"]) < float(m["CQL policy (α = 1) really earns"])
    table = badge(at)
    assert table.count(":green[") == 2 and ":red[" not in table


def test_grid_table_badge_checks_the_exact_fixed_points():
    at = run_page(PAGE, query={"view": "grid", "model": "table"})
    assert_healthy(at)
    assert len(charts(at)) == 8  # data, naive, CQL, return vs α, error vs α, 3 training
    table = badge(at)
    assert "empirical MDP" in table and "solved exactly" in table
    assert table.count(":green[") == 4 and ":red[" not in table
    m = metrics(at)
    assert float(m["CQL policy (α = 1) really earns"]) > float(m["Naive policy really earns"])


@pytest.mark.parametrize(
    "query",
    [
        {"alpha": "10", "size": "20", "coverage": "0.05", "actions": "201", "noise": "1",
         "model": "table", "steps": "250", "init": "3"},
        {"alpha": "0", "coverage": "1", "size": "20000", "curve": "two_peaks", "centre": "1"},
        {"view": "grid", "grid": "four_rooms", "epsilon": "1", "size": "20", "gamma": "0.99",
         "slip": "0.3", "alpha": "0.01", "steps": "250"},
        {"view": "grid", "grid": "maze", "epsilon": "0", "size": "20000", "model": "table",
         "alpha": "10", "init": "0", "gamma": "0.5"},
    ],
    ids=["one-state-small", "one-state-full-coverage", "four-rooms-mlp", "maze-table"],
)
def test_extremes_run_cleanly(query):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert len(charts(at)) >= 4
    assert not at.warning, [w.value for w in at.warning]


def test_a_link_restores_the_view():
    query = {"view": "grid", "alpha": "0.2", "size": "200", "model": "table", "grid": "maze",
             "epsilon": "0.35", "gamma": "0.9", "seed": "7", "steps": "500"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.select_slider(key="cql.alpha").value == 0.2
    assert at.select_slider(key="cql.size").value == 200
    assert at.select_slider(key="cql.steps").value == 500
    assert at.selectbox(key="cql.grid").value == "maze"
    assert at.slider(key="cql.epsilon").value == 0.35
    assert at.slider(key="cql.gamma").value == 0.9
    assert at.number_input(key="cql.seed").value == 7
    assert {k: at.query_params[k] for k in query} == query
    assert "CQL policy (α = 0.2) really earns" in metrics(at)


def test_moving_alpha_updates_the_link_and_reuses_the_training():
    at = run_page(PAGE)
    before = metrics(at)["Naive policy really earns"]
    at.select_slider(key="cql.alpha").set_value(0.01).run()
    assert_healthy(at)
    assert at.query_params["alpha"] == "0.01"
    assert metrics(at)["Naive policy really earns"] == before  # same batch, same naive learner
    assert "CQL policy (α = 0.01) really earns" in metrics(at)


def test_bad_link_values_fall_back_with_a_notice():
    at = run_page(PAGE, query={"alpha": "banana", "size": "-3", "grid": "moon"})
    assert not at.exception
    assert not at.error
    notices = " ".join(w.value for w in at.warning)
    assert "alpha=banana" in notices and "size=-3" in notices and "grid=moon" in notices
    assert at.select_slider(key="cql.alpha").value == 1.0
    assert len(charts(at)) == 6
