import base64
import json

import numpy as np
import pytest

from rlviz import policy_gradient as pg
from tests.conftest import PAGES, assert_healthy, open_panels, run_page

PAGE = PAGES / "policy_gradient.py"
# Fewer runs and episodes where the learning curves are not the point.
SMALL = {"runs": "10", "episodes": "200", "study_n": "500"}


def checks(at):
    table = next(m.value for m in at.markdown if "| check |" in m.value)
    return table.splitlines()[2:]


def charts(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def arr(field):
    """A trace's data array, whether plotly wrote it as a list or as typed base64."""
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"])
    return np.asarray(field)


def test_defaults():
    at = run_page(PAGE)
    assert_healthy(at)
    assert not at.warning
    assert len(at.get("plotly_chart")) == 8
    rows = checks(at)
    assert len(rows) == 10 and all("check_circle" in r for r in rows)  # the book's row too
    assert not at.query_params  # defaults leave the link clean
    assert at.session_state["policy_gradient.alphas"] == [-13]
    open_panels(at, "policy_gradient")
    assert_healthy(at)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"learning_curves.html", "gradient_cloud.html", "learning_curves.csv",
            "gradient_estimates.csv", "gradient_summary.csv", "settings.json"} <= labels
    assert len(at.get("latex")) >= 9 + 5  # the equations panel and the worked derivation


def test_the_curves_are_the_library_means():
    at = run_page(PAGE, query=SMALL)
    t = pg.train([pg.Method("reinforce", 2.0**-13)], runs=10, episodes=200, p0=0.05, seed=0)
    curves = next(c for c in charts(at)
                  if "total reward" in c["layout"].get("yaxis", {}).get("title", {}).get(
                      "text", ""))
    mean = next(tr for tr in curves["data"] if tr.get("name") == "REINFORCE, α = 2⁻¹³")
    np.testing.assert_allclose(arr(mean["y"]), t.returns[0].mean(axis=0))


@pytest.mark.parametrize(
    "query",
    [
        {"alphas": "-15,-12,-10"}, {"alphas": ""}, {"p0": "0.95"}, {"p0": "0.5", "window": "50"},
        {"critic": "one_value"}, {"ac_theta": "-3", "ac_w": "-2"}, {"b_theta": "-6", "b_w": "-2"},
        {"b_theta": "-12", "b_w": "-10"}, {"study_p": "0.05", "b": "-100"},
        {"study_p": "0.95", "b": "0"}, {"seed": "2147483647"},
        {"wb_tr": "20", "wb_tl": "-20", "wb_a": "0", "wb_alpha": "1", "wb_g": "1000",
         "wb_b": "-1000"},
        {"wb_alpha": "0", "wb_g": "0.123456789"},
    ],
    ids=lambda q: ",".join(f"{k}={v[:12]}" for k, v in q.items()),
)
def test_extremes_stay_healthy(query):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    assert not at.warning  # every value above is valid: no notice


def test_the_book_row_appears_only_at_the_books_settings():
    at = run_page(PAGE, query=SMALL)  # 200 episodes: not the book's protocol
    assert not any("Figures 13.1 and 13.2" in r for r in checks(at))
    assert all("check_circle" in r for r in checks(at))


def test_a_link_restores_every_control():
    query = {"alphas": "-12,-14", "b_theta": "-8", "b_w": "-5", "ac_theta": "-7", "ac_w": "-3",
             "critic": "one_value", "p0": "0.25", "episodes": "300", "runs": "20",
             "window": "5", "study_p": "0.42", "study_n": "1000", "b": "-33", "seed": "7",
             "wb_tr": "1.25", "wb_tl": "-0.75", "wb_a": "0", "wb_alpha": "0.05",
             "wb_g": "-7.5", "wb_b": "-3.25"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.session_state["policy_gradient.alphas"] == [-12, -14]
    assert at.session_state["policy_gradient.critic"] == "one_value"
    assert at.slider(key="policy_gradient.p0").value == 0.25
    assert at.slider(key="policy_gradient.study_p").value == 0.42
    assert at.number_input(key="policy_gradient.wb_g").value == -7.5
    # The page writes back exactly what it was given.
    assert {k: at.query_params.get(k) for k in query} == query


def test_a_moved_slider_lands_in_the_link_and_moves_the_study():
    at = run_page(PAGE, query=SMALL)
    at.slider(key="policy_gradient.study_p").set_value(0.6).run()
    assert_healthy(at)
    assert at.query_params.get("study_p") == "0.6"
    text = " ".join(m.value for m in at.markdown)
    assert "π(right) = 0.6" in text


@pytest.mark.parametrize(
    ("query", "name"),
    [({"p0": "1"}, "p0"), ({"alphas": "-9"}, "alphas"), ({"critic": "tabular"}, "critic"),
     ({"study_n": "123"}, "study_n"), ({"wb_a": "2"}, "wb_a"), ({"b_w": "-1"}, "b_w")],
)
def test_bad_link_values_fall_back_with_a_notice(query, name):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert f"`{name}=" in notices and "was ignored" in notices


def test_the_worked_derivation_shows_the_numbers_it_used():
    at = run_page(PAGE, query={**SMALL, "wb_tr": "0.123456789", "wb_g": "-12.5",
                               "wb_b": "-2.25", "wb_alpha": "0.03"})
    assert_healthy(at)
    latex = " ".join(x.value for x in at.get("latex"))
    assert "0.123456789" in latex and "-12.5 - (-2.25) = -10.25" in latex
    w = pg.worked_score(0.123456789, -0.5, pg.LEFT, ret=-12.5, baseline=-2.25, alpha=0.03)
    assert f"{w.new_theta[0]:.4f}".rstrip("0") in latex


def test_a_one_value_critic_runs_away_and_the_page_says_so():
    at = run_page(PAGE, query={**SMALL, "episodes": "1000", "critic": "one_value"})
    assert_healthy(at)
    captions = " ".join(c.value for c in at.caption)
    assert "runs of Actor-critic" in captions and ("ran away" in captions or "used their" in
                                                    captions)


# --------------------------------------------------------------------------- figure builders
@pytest.fixture(scope="module")
def study():
    return pg.gradient_study(0.3, episodes=600, constant=-20.0, seed=1)


def test_value_figure_marks_the_optimum_and_the_epsilon_greedy_policies():
    from rlviz.figures import policy_gradient as figs

    fig = figs.value_figure(study_p=0.4)
    star = next(t for t in fig.data if t.name.startswith("optimum"))
    assert star.x[0] == pytest.approx(2 - 2**0.5) and star.y[0] == pytest.approx(-11.657, abs=1e-3)
    eps = next(t for t in fig.data if t.name.startswith("ε-greedy"))
    np.testing.assert_allclose(eps.y, [-3.9 / 0.0475, -2.1 / 0.0475])


def test_cloud_figure_draws_the_exact_gradient_and_every_estimator(study):
    from rlviz.figures import policy_gradient as figs

    fig = figs.cloud_figure(study)
    means = [t for t in fig.data if t.name.endswith(": mean")]
    assert len(means) == len(pg.ESTIMATORS)
    np.testing.assert_allclose([t.y[0] for t in means], study.means)
    line = next(s for s in fig.layout.shapes if s.type == "line")
    assert line.y0 == pytest.approx(study.exact)
    assert fig.layout.xaxis.tickangle == 0


def test_variance_figure_labels_decades(study):
    from rlviz.figures import policy_gradient as figs

    fig = figs.variance_figure(study)
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis.dtick == 1
    np.testing.assert_allclose(fig.data[0].y, study.variances)


def test_parabola_bottoms_out_at_the_best_constant(study):
    from rlviz.figures import policy_gradient as figs

    fig = figs.parabola_figure(study)
    curve = fig.data[0]
    assert curve.x[int(np.argmin(curve.y))] == pytest.approx(study.best_constant,
                                                             abs=np.ptp(curve.x) / 250)
    best = next(t for t in fig.data if t.name.startswith("best constant"))
    assert best.x[0] == pytest.approx(study.best_constant)


def test_several_reinforce_step_sizes_get_shades_of_one_colour():
    from rlviz.figures import policy_gradient as figs

    ms = [pg.Method("reinforce", a) for a in pg.BOOK_REINFORCE]
    colours = [figs.method_color(m, ms) for m in ms]
    assert len(set(colours)) == 3
    assert figs.method_color(ms[0]) == figs.method_color(ms[1])  # alone: REINFORCE's colour
