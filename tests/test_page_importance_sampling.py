import base64
import json

import numpy as np
import pytest

from rlviz import off_policy as op
from tests.conftest import PAGES, assert_healthy, open_panels, run_page

PAGE = PAGES / "importance_sampling.py"
SLUG = "importance_sampling"
SMALL = {"bj_runs": "10", "bj_episodes": "1000", "iv_episodes": "1000", "runs": "50", "n": "20"}


def checks(at):
    table = next(m.value for m in at.markdown if "| check |" in m.value)
    return table.splitlines()[2:]


def figure(at, key):
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith(key)
                 or key in c.proto.id)
    return json.loads(chart.proto.spec)


def arr(field):
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"])
    return np.asarray(field)


def test_defaults():
    at = run_page(PAGE)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 7
    rows = checks(at)
    assert len(rows) == 8 and all("check_circle" in r for r in rows), rows
    assert "book's 100-million-episode" in rows[0]
    assert not at.query_params
    open_panels(at, SLUG)
    assert_healthy(at)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"blackjack_mse.html", "figure_5_4.html", "mse.html", "worked_episode.html",
            "blackjack_mse.csv", "chain.csv", "worked_episode.csv", "settings.json"} <= labels
    assert len(at.latex) >= 9


@pytest.mark.parametrize(
    "query",
    [{"delta": "0"}, {"delta": "1", "horizon": "10"}, {"delta": "1", "horizon": "1"},
     {"critic": "true"}, {"critic": "zero", "delta": "0.95"}, {"critic": "same_data"},
     {"n": "10", "runs": "50", "horizon": "10", "delta": "1"},
     {"n": "200", "runs": "200", "horizon": "10", "delta": "0.55"},
     {"player": "21", "usable": "0", "dealer": "1"}, {"player": "12", "dealer": "10"},
     {"player": "20", "usable": "1", "dealer": "6"}, {"iv_runs": "1"},
     {"seed": "2147483647"}, {"pd_gamma": "0"}, {"pd": "pi=1;b=1;r=-3"}],
    ids=lambda q: ",".join(f"{k}={v[:10]}" for k, v in q.items()),
)
def test_extremes_stay_healthy(query):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    assert not at.warning


def test_the_book_row_appears_only_at_the_books_state():
    at = run_page(PAGE, query={**SMALL, "player": "15"})
    assert not any("100-million" in r for r in checks(at))


def test_a_link_restores_every_control():
    query = {"delta": "0.35", "horizon": "7", "n": "50", "runs": "100", "critic": "true",
             "bj_runs": "20", "bj_episodes": "2000", "player": "16", "usable": "0",
             "dealer": "9", "iv_runs": "3", "iv_episodes": "10000", "seed": "11",
             "pd": "pi=0.5,1;b=0.25,0.5;r=2,-1", "pd_gamma": "0.9"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.slider(key=f"{SLUG}.delta").value == 0.35
    assert at.session_state[f"{SLUG}.pd"]["b"] == [0.25, 0.5]
    assert {k: at.query_params.get(k) for k in query} == query


@pytest.mark.parametrize(
    ("query", "name"),
    [({"delta": "2"}, "delta"), ({"n": "7"}, "n"), ({"critic": "bad"}, "critic"),
     ({"pd": "pi=1"}, "pd"), ({"dealer": "11"}, "dealer")],
)
def test_bad_link_values_fall_back_with_a_notice(query, name):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert f"`{name}=" in notices and "was ignored" in notices


@pytest.mark.parametrize(
    ("table", "message"),
    [("pi=0.5;b=0;r=1", "b(a|s) at step 0 is 0"), ("pi=nan;b=0.5;r=1", "step 0 is empty"),
     ("pi=2;b=0.5;r=1", "a probability is from 0 to 1"), ("pi=;b=;r=", "episode is empty")],
)
def test_a_bad_worked_episode_gives_a_message_and_the_rest_still_draws(table, message):
    at = run_page(PAGE, query={**SMALL, "pd": table})
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert message in errors.replace("\\", "")
    assert len(at.get("plotly_chart")) == 6  # every chart but the worked one
    assert all("check_circle" in r for r in checks(at))
    at.button(key=f"{SLUG}.pd_preset0").click().run()
    assert_healthy(at)


def test_presets_replace_the_worked_episode():
    at = run_page(PAGE, query=SMALL)
    at.button(key=f"{SLUG}.pd_preset1").click().run()
    assert_healthy(at)
    assert at.session_state[f"{SLUG}.pd"]["r"] == [0, 0, 0, 1.0]
    bars = {t["name"]: arr(t["y"]) for t in figure(at, "worked")["data"] if t["type"] == "bar"}
    ordinary, per_decision = bars.values()
    assert ordinary.sum() == pytest.approx(per_decision.sum())


def test_a_moved_slider_lands_in_the_link_and_the_table():
    at = run_page(PAGE, query=SMALL)
    at.slider(key=f"{SLUG}.delta").set_value(0.8).run()
    assert_healthy(at)
    assert at.query_params.get("delta") == "0.8"
    assert any("At δ = 0.8" in m.value for m in at.markdown)


def test_the_charts_show_the_library_values():
    at = run_page(PAGE, query=SMALL)
    study = op.estimator_study(delta=0.5, horizon=5, episodes=20, runs=50, seed=0)
    traces = {t["name"]: t for t in figure(at, "mse")["data"] if t.get("mode")}
    np.testing.assert_allclose(arr(traces["ordinary IS"]["y"]), study.mse("ordinary")[0])
    fig = figure(at, "infinite_variance")
    blue = [arr(t["y"]) for t in fig["data"] if t["name"].startswith("weighted")]
    assert len(blue) == 10 and all(set(np.unique(b)) <= {0.0, 1.0} for b in blue)
