import base64
import json

import numpy as np
import pytest

from rlviz import exploration as ex
from tests.conftest import PAGES, assert_healthy, open_panels, run_page

PAGE = PAGES / "exploration.py"
SMALL = {"runs": "4", "episodes": "50", "sweep_n": "8", "cap": "100", "sweep_runs": "3"}


def checks(at):
    table = next(m.value for m in at.markdown if "| check |" in m.value)
    return table.splitlines()[2:]


def charts(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def arr(field):
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"])
    return np.asarray(field, dtype=float)


def test_defaults():
    at = run_page(PAGE)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 6  # regret, four visit maps, the sweep
    rows = checks(at)
    assert len(rows) == 6 and all("check_circle" in r for r in rows), rows
    assert not at.query_params  # defaults leave the link clean
    assert at.session_state["exploration.problem"] == "riverswim"
    assert at.slider(key="exploration.n").disabled  # N is for the deep sea only
    open_panels(at, "exploration")
    assert_healthy(at)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"regret.html", "first_treasure_vs_n.html", "regret.csv", "sweep.csv",
            "settings.json"} <= labels
    assert len(at.latex) == 7


def test_the_regret_curves_are_the_library_values():
    at = run_page(PAGE, query=SMALL)
    res = ex.run_study(ex.riverswim(), ex.LEARNERS, runs=4, episodes=50, seed=0, epsilon=0.1,
                       alpha=0.5, beta=0.5)
    mean = res.regret_band()[0]
    spec = charts(at)[0]
    for k, kind in enumerate(res.kinds):
        trace = next(t for t in spec["data"] if t.get("name") == ex.LABELS[kind])
        np.testing.assert_allclose(arr(trace["y"]), mean[k], atol=1e-9)


def test_the_deep_sea_view_checks_its_optimal_value():
    at = run_page(PAGE, query={**SMALL, "problem": "deep_sea", "n": "6"})
    assert_healthy(at)
    assert not at.slider(key="exploration.n").disabled
    rows = checks(at)
    assert any("deep sea, N = 6" in r and "0.990000" in r for r in rows)
    assert all("check_circle" in r for r in rows)
    assert "Regret on deep sea, N = 6" in " ".join(s.value for s in at.subheader)


@pytest.mark.parametrize(
    "query",
    [
        {"problem": "deep_sea", "n": "4"}, {"problem": "deep_sea", "n": "12"},
        {"epsilon": "0"}, {"epsilon": "1"}, {"alpha": "1", "beta": "0"}, {"beta": "3"},
        {"learners": "psrl"}, {"learners": "epsilon_greedy"}, {"learners": "optimistic,bonus"},
        {"runs": "2", "sweep_runs": "2"}, {"seed": "2147483647"}, {"cap": "300", "sweep_n": "16"},
        {"problem": "deep_sea", "n": "12", "learners": "bonus,psrl", "epsilon": "1"},
    ],
    ids=lambda q: ",".join(f"{k}={v}" for k, v in q.items()),
)
def test_extremes_stay_healthy(query):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    assert not at.warning  # every value above is valid: no notice
    assert all("check_circle" in r for r in checks(at)), checks(at)


def test_a_link_restores_every_control():
    query = {"problem": "deep_sea", "n": "7", "learners": "optimistic,psrl", "epsilon": "0.3",
             "alpha": "0.8", "beta": "1.2", "episodes": "50", "runs": "3", "sweep_n": "10",
             "cap": "100", "sweep_runs": "2", "seed": "42"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.session_state["exploration.problem"] == "deep_sea"
    assert at.slider(key="exploration.n").value == 7
    assert at.multiselect(key="exploration.learners").value == ["optimistic", "psrl"]
    assert at.slider(key="exploration.epsilon").value == 0.3
    assert at.slider(key="exploration.beta").value == 1.2
    assert at.number_input(key="exploration.seed").value == 42
    assert {k: at.query_params.get(k) for k in query} == query


def test_a_moved_slider_lands_in_the_link():
    at = run_page(PAGE, query=SMALL)
    at.slider(key="exploration.beta").set_value(1.5).run()
    assert_healthy(at)
    assert at.query_params.get("beta") == "1.5"


@pytest.mark.parametrize(("query", "name"), [
    ({"n": "99"}, "n"), ({"problem": "lake"}, "problem"), ({"episodes": "77"}, "episodes"),
    ({"learners": "sarsa"}, "learners"), ({"epsilon": "nan"}, "epsilon"),
])
def test_bad_link_values_fall_back_with_a_notice(query, name):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert f"`{name}=" in notices and "was ignored" in notices


def test_no_learner_is_a_clear_message_and_the_page_keeps_working():
    at = run_page(PAGE, query=SMALL)
    at.multiselect(key="exploration.learners").set_value([]).run()
    assert not at.exception
    assert "Choose at least one learner" in " ".join(e.value for e in at.error)
    at.multiselect(key="exploration.learners").set_value(["bonus"]).run()
    assert_healthy(at)


def test_the_sweep_marks_what_was_not_reached():
    at = run_page(PAGE, query=SMALL)
    spec = charts(at)[-1]
    text = " ".join(t.get("hovertemplate", "") for t in spec["data"])
    assert "not reached within 100 episodes" in text
    exact = next(t for t in spec["data"] if t.get("name", "").startswith("random walker: 2"))
    np.testing.assert_allclose(arr(exact["y"]), 2.0 ** arr(exact["x"]))


# --------------------------------------------------------------------------- figure builders
def test_figures_label_axes_and_use_each_learners_colour():
    from rlviz.figures import exploration as figs

    res = ex.run_study(ex.deep_sea(5), ex.LEARNERS, runs=3, episodes=20, seed=0, epsilon=0.1,
                       alpha=0.5, beta=0.5)
    fig = figs.regret_figure(res)
    assert fig.layout.xaxis.title.text == "episode"
    colours = {t.name: t.line.color for t in fig.data if t.name in ex.LABELS.values()}
    assert colours[ex.LABELS["psrl"]] == figs.learner_color("psrl")
    assert len(set(colours.values())) == len(ex.LEARNERS)
    heat = figs.visits_figure(res, "bonus")
    z = np.asarray(heat.data[0].z)
    np.testing.assert_allclose(z.sum(axis=1), 100.0)  # one position per step in each episode
    sweep = ex.sweep_first_reach([2, 4, 8], ["epsilon_greedy", "bonus"], runs=3, cap=50,
                                 seed=0, epsilon=0.1, alpha=0.5, beta=0.5)
    fig = figs.first_reach_figure(sweep)
    assert fig.layout.yaxis.type == "log"
    assert list(fig.layout.yaxis.ticktext) == ["1", "10", "100"]
