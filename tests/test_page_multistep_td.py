import base64
import json

import numpy as np
import pytest

from rlviz import prediction as pr
from tests.conftest import PAGES, assert_healthy, open_panels, run_page

PAGE = PAGES / "multistep_td.py"
SLUG = "multistep_td"
SMALL = {"runs": "10", "episodes": "5"}  # quick where the protocol is not the point


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


@pytest.mark.slow
def test_defaults():
    at = run_page(PAGE)
    assert_healthy(at)
    assert not at.warning and not at.query_params
    assert len(at.get("plotly_chart")) == 8
    rows = checks(at)
    assert all("check_circle" in r for r in rows), rows
    assert any("Figure 7.2: best setting" in r and "n = 4, α = 0.4" in r for r in rows)
    assert any("Forward = backward" in r for r in rows)
    open_panels(at, SLUG)
    assert_healthy(at)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"sweep.html", "heatmap.html", "backup.html", "example_6_2.csv",
            "sweep_n_step.csv", "settings.json"} <= labels
    assert len(at.latex) >= 2 + len(__import__("rlviz.figures.prediction",
                                               fromlist=["EQUATIONS"]).EQUATIONS)


@pytest.mark.parametrize(
    "query",
    [{"method": "offline_lambda_return"}, {"method": "td_lambda", "lam": "1.0", "alpha": "1.0"},
     {"method": "true_online", "lam": "0.0", "alpha": "0.0"}, {"n": "512", "tau": "0"},
     {"n": "1", "alpha": "1.0", "episode": "5", "tau": "3"}, {"k": "0"},
     {"method": "td_lambda", "lam": "0.99", "alpha": "0.6", "k": "5"},
     {"seed": "2147483647"}, {"runs": "20", "episodes": "10"}],
    ids=lambda q: ",".join(f"{k}={v}" for k, v in q.items()),
)
def test_settings_stay_healthy(query):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    assert not at.warning, [w.value for w in at.warning]
    assert all("check_circle" in r for r in checks(at)), checks(at)


def test_the_sweep_chart_is_the_library_sweep():
    at = run_page(PAGE, query=SMALL)
    assert_healthy(at)
    runs = pr.sample_runs(19, runs=10, episodes=5, seed=0)
    want = pr.n_step_td(runs, ns=pr.NS, alphas=pr.ALPHAS).summary()
    traces = {t["name"]: t for t in figure(at, "sweep")["data"] if t.get("mode") ==
              "lines+markers"}
    np.testing.assert_allclose(arr(traces["4"]["y"]), want.curve[2])
    assert "best" in {t.get("name") for t in figure(at, "sweep")["data"]}


def test_a_lambda_method_adds_the_comparison_and_its_checks():
    at = run_page(PAGE, query={**SMALL, "method": "td_lambda", "lam": "0.9"})
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 9
    names = {t["name"] for t in figure(at, "compare")["data"] if t.get("name")}
    assert {"offline λ-return", "TD(λ)", "true online TD(λ)"} <= names
    assert any("diverges" == t.get("name") for t in figure(at, "sweep")["data"])
    assert any("checked at 100 runs and 10 episodes" in c.value for c in at.caption)


def test_the_lambda_sweeps_are_capped_at_the_books_work_and_say_so():
    at = run_page(PAGE, query={"method": "true_online", "episodes": "20", "runs": "20"})
    assert_healthy(at)
    runs = at.select_slider(key=f"{SLUG}.runs")
    assert list(runs.options) == ["10", "20", "50"]
    assert any("up to 50 runs" in c.value for c in at.sidebar.caption)
    at.select_slider(key=f"{SLUG}.episodes").set_value(10).run()
    assert list(at.select_slider(key=f"{SLUG}.runs").options) == ["10", "20", "50", "100"]
    assert not any("up to 50 runs" in c.value for c in at.sidebar.caption)


def test_a_link_past_the_cap_falls_back_with_a_notice_and_n_step_is_not_capped():
    at = run_page(PAGE, query={"method": "td_lambda", "episodes": "20", "runs": "100"})
    assert_healthy(at)
    assert at.session_state[f"{SLUG}.runs"] == 50
    assert any("`runs=" in w.value for w in at.warning)
    at = run_page(PAGE, query={"episodes": "20", "runs": "10"})
    assert list(at.select_slider(key=f"{SLUG}.runs").options)[-1] == "100"


def test_a_link_restores_every_control():
    query = {"method": "true_online", "n": "8", "lam": "0.95", "alpha": "0.15", "runs": "20",
             "episodes": "5", "seed": "3", "k": "2", "episode": "2", "tau": "1"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.session_state[f"{SLUG}.lam"] == 0.95
    assert at.session_state[f"{SLUG}.alpha"] == 0.15
    assert {k: at.query_params.get(k) for k in query} == query


def test_moving_alpha_moves_the_ring_and_the_link():
    at = run_page(PAGE, query=SMALL)
    at.select_slider(key=f"{SLUG}.alpha").set_value(0.2).run()
    assert_healthy(at)
    assert at.query_params.get("alpha") == "0.2"
    ring = next(t for t in figure(at, "sweep")["data"] if t.get("name") == "up close")
    assert arr(ring["x"])[0] == 0.2


@pytest.mark.parametrize(
    ("query", "name"),
    [({"method": "sarsa"}, "method"), ({"alpha": "0.33"}, "alpha"), ({"n": "3"}, "n"),
     ({"runs": "7"}, "runs"), ({"episodes": "50"}, "episodes"), ({"k": "99"}, "k")],
)
def test_bad_link_values_fall_back_with_a_notice(query, name):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert f"`{name}=" in notices and "was ignored" in notices


def test_the_backup_caption_follows_the_episode():
    at = run_page(PAGE, query={**SMALL, "n": "512"})
    assert_healthy(at)
    assert any("bootstraps from nothing" in m.value for m in at.markdown)
    at = run_page(PAGE, query={**SMALL, "n": "1", "episode": "1", "tau": "0"})
    assert any("bootstraps from $V(S_{1})$" in m.value for m in at.markdown)


# --------------------------------------------------------------------------- figure builders
def small_summary(method="n_step"):
    runs = pr.sample_runs(19, runs=6, episodes=3, seed=1)
    params = pr.NS if method == "n_step" else pr.LAMBDAS
    return pr.run_sweep(method, runs, params=params, alphas=pr.ALPHAS).summary(), runs


def test_the_sweep_figure_marks_every_best_and_never_draws_a_diverged_point():
    from rlviz.figures import prediction as figs

    s, _ = small_summary("td_lambda")
    fig = figs.sweep_figure(s, chosen=(3, 8))
    curves = [t for t in fig.data if t.mode == "lines+markers"]
    assert len(curves) == len(pr.LAMBDAS)
    for t, row in zip(curves, s.curve, strict=True):
        drawn = np.array([np.nan if y is None else y for y in t.y], dtype=float)
        assert np.isnan(drawn[~np.isfinite(row)]).all()
    crosses = next(t for t in fig.data if t.name == "diverges")
    assert len(crosses.x) == int((~np.isfinite(s.curve)).any(axis=1).sum())
    heat = figs.heatmap_figure(s)
    z = heat.data[0].z
    assert any(v is None for row in z for v in row)


def test_the_backup_figure_and_arithmetic_agree():
    from rlviz.figures import prediction as figs

    _, runs = small_summary()
    b = pr.n_step_backup(runs, n=2, alpha=0.5, episode=2, tau=1)
    fig = figs.backup_figure(b, n_states=19)
    thick = next(t for t in fig.data if "added" in t.name)
    assert len(thick.x) == b.used + 1
    lines = figs.backup_latex(b)
    assert f"= {figs._num(b.new_value)}" in lines[-1]
    assert (r"\gamma^{2}" in lines[0]) == b.bootstraps
