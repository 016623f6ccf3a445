"""The deadly-triad page in AppTest: defaults, extremes, links, divergence drawn honestly."""

import base64
import json

import numpy as np
import pytest

from rlviz import approximation as ap
from rlviz.figures import approximation as figs
from tests.conftest import PAGES, assert_healthy, open_panels, run_page

PAGE = PAGES / "deadly_triad.py"
SMALL = {"steps": "250", "runs": "3"}  # quick where the number of steps is not the point
CHARTS = 12


def known_answer(at) -> str:
    return next(m.value for m in at.markdown if "| check |" in m.value)


def captions(at) -> str:
    return " ".join(c.value for c in at.caption)


def figure(at, key):
    chart = next(c for c in at.get("plotly_chart") if c.proto.id and key in c.proto.id)
    return json.loads(chart.proto.spec)


def arr(field):
    """A trace's data array, whether plotly wrote it as a list or as typed base64."""
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"])
    return np.asarray(field, dtype=float)


def chart_specs(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def assert_figures_finite(at):
    for spec in chart_specs(at):
        for trace in spec["data"]:
            for name in ("x", "y", "z"):
                if name in trace and not isinstance(trace[name], str):
                    values = trace[name]
                    if isinstance(values, list) and values and isinstance(values[0], str):
                        continue
                    if isinstance(values, list) and values and isinstance(values[0], list):
                        values = [v for row in values for v in row]
                    assert np.isfinite(arr(values)).all(), (trace.get("name"), name)


def test_defaults_reproduce_the_book():
    at = run_page(PAGE)
    assert_healthy(at)
    assert not at.warning
    assert len(at.get("plotly_chart")) == CHARTS
    table = known_answer(at)
    assert ":red[" not in table and table.count("check_circle") == 10
    assert "Figure 11.5: expected TDC's √VE after 1000 sweeps | 1.935 | 2 |" in table
    assert "| 13 | 13 |" in table  # first stable n
    assert not at.query_params  # defaults leave the link clean
    assert "×1.002393 off-policy" in captions(at)
    assert_figures_finite(at)


def test_panels_open_with_equations_code_and_every_export():
    at = open_panels(run_page(PAGE, query=SMALL), "deadly_triad")
    assert_healthy(at)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"td.html", "dp.html", "switchboard.html", "td.csv", "switchboard.csv",
            "settings.json"} <= labels
    code = " ".join(c.value for c in at.code)
    assert "def semi_gradient_td_step" in code and "def expected_td_step" in code
    assert len(at.get("latex")) >= 8


def test_the_worked_update_shows_the_values_it_uses():
    at = run_page(PAGE, query={**SMALL, "gamma": "0.73", "alpha": "0.002"})
    assert_healthy(at)
    worked = next(el.value for el in at.get("latex") if "aligned" in el.value)
    assert "1 + 0.002\\,(0.73\\cdot 2 \\cdot 1 - 1)" in worked
    assert f"{1 + 0.002 * (2 * 0.73 - 1):.10g}" in worked


EXTREMES = {
    "largest": dict(steps="2000", runs="30", alpha="0.1", tdc_alpha="0.05", beta="0.2",
                    etd_alpha="0.1", n="40", scale="auto"),
    "on_policy_target": dict(pi="0.14285714285714285", n="mc", off_policy="0", approx="0",
                             scale="signed log", seed="2147483647"),
    "no_discount": dict(gamma="0", alpha="0.001", steps="100", runs="1", scale="linear"),
    "mildly_off": dict(pi="0.6", gamma="0.5", n="13", approx="0", steps="2000"),
}


@pytest.mark.parametrize("query", EXTREMES.values(), ids=EXTREMES.keys())
def test_extremes_stay_healthy_and_every_check_passes(query):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert not at.warning, [w.value for w in at.warning]
    assert ":red[" not in known_answer(at)
    assert_figures_finite(at)


def test_divergence_is_reported_where_it_happens():
    at = run_page(PAGE, query={"steps": "2000", "alpha": "0.1", "runs": "3"})
    assert_healthy(at)
    text = captions(at)
    assert "semi-gradient TD** diverged" in text and "semi-gradient DP** diverged" in text
    exp = ap.baird_experiment(alpha=0.1, steps=2000, runs=3)
    assert f"sweep {exp.dp.diverged_at:,}" in text
    dp = figure(at, "deadly_triad.dp")
    marks = [t for t in dp["data"] if t.get("marker", {}).get("symbol") == "x"]
    assert marks and arr(marks[0]["x"])[0] == exp.dp.diverged_at
    assert any("diverged at" in a["text"] for a in dp["layout"]["annotations"])
    assert dp["layout"]["yaxis"]["title"]["text"] == "weights (signed log)"  # auto: past 1000


def test_a_link_restores_every_control_and_writes_back_what_it_was_given():
    query = {"gamma": "0.9", "pi": "0.7", "steps": "500", "runs": "4", "alpha": "0.02",
             "tdc_alpha": "0.01", "beta": "0.1", "etd_alpha": "0.01", "scale": "linear",
             "seed": "7", "off_policy": "0", "n": "8", "approx": "0"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.slider(key="deadly_triad.gamma").value == 0.9
    assert at.select_slider(key="deadly_triad.pi").value == 0.7
    assert at.select_slider(key="deadly_triad.n").value == 8
    assert at.toggle(key="deadly_triad.off_policy").value is False
    assert at.number_input(key="deadly_triad.seed").value == 7
    assert {k: at.query_params.get(k) for k in query} == query


def test_moving_the_switches_moves_the_outlined_cell():
    at = run_page(PAGE, query=SMALL)
    grid = figure(at, "deadly_triad.grid")
    assert grid["layout"]["shapes"][0]["y0"] == -0.5  # off-policy, features
    at.toggle(key="deadly_triad.approx").set_value(False).run()
    assert_healthy(at)
    grid = figure(at, "deadly_triad.grid")
    assert grid["layout"]["shapes"][0]["y0"] == 0.5  # off-policy, tabular
    assert at.query_params.get("approx") == "0"
    assert "off-policy · n = 1 · tabular" in captions(at)
    at.select_slider(key="deadly_triad.n").set_value("mc").run()
    assert figure(at, "deadly_triad.grid")["layout"]["shapes"][0]["x0"] == 0.5  # Monte Carlo
    assert "off-policy · Monte Carlo · tabular" in captions(at)


@pytest.mark.parametrize(
    ("query", "name"),
    [({"gamma": "1"}, "gamma"), ({"pi": "0.55"}, "pi"), ({"n": "7"}, "n"),
     ({"steps": "123"}, "steps"), ({"scale": "cubic"}, "scale")],
)
def test_bad_link_values_fall_back_with_a_notice(query, name):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert f"`{name}=" in notices and "was ignored" in notices


# --------------------------------------------------------------------------- figure builders
def test_log_axes_are_labelled_by_decades_and_skip_values_below_the_floor():
    etd = ap.run_expected_etd(ap.baird(), alpha=0.03, steps=1000)
    fig = figs.method_figure(etd, title="ETD", unit="sweeps")
    axis = fig.layout.yaxis2
    assert axis.type == "log" and axis.dtick in (1, 2, 3) and axis.exponentformat == "power"
    assert axis.range[0] >= np.log10(figs.FLOOR) - 0.1
    ve = next(t for t in fig.data if t.name == "√VE")
    assert np.min(ve.y) >= figs.FLOOR and len(ve.y) < etd.live  # the rounding-error tail


def test_signed_log_ticks_read_as_values():
    axis = figs._slog_axis(3e5)
    assert "0" in axis["ticktext"] and "10⁵" in axis["ticktext"] and "−100" in axis["ticktext"]
    assert axis["tickvals"][axis["ticktext"].index("100")] == pytest.approx(np.log10(101))


def test_weights_figure_draws_the_mean_of_the_runs_with_a_band():
    exp = ap.baird_experiment(runs=5, steps=300)
    fig = figs.method_figure(exp.td, title="TD", unit="steps")
    lines = {t.name: t for t in fig.data if t.mode == "lines" and t.name}
    assert {"w₁…w₆ (mean of the six)", "w₇", "w₈", "√VE", "√PBE"} <= set(lines)
    np.testing.assert_allclose(lines["w₈"].y[-1], exp.td.weights[-1, :, 7].mean())
    assert sum(1 for t in fig.data if t.fill == "toself") == 5
    dp = figs.method_figure(exp.dp, title="DP", unit="sweeps")
    assert "w₁…w₆" in {t.name for t in dp.data} and not any(t.fill for t in dp.data)


def test_switch_grid_colours_only_the_triad_red():
    sb = ap.switchboard(steps=50)
    fig = figs.switch_grid(sb, (1, 1, 1))
    z = np.array(fig.data[0].z)  # rows: sampling x representation; columns: n, Monte Carlo
    assert z[0, 0] < 0 and (np.delete(z.ravel(), 0) >= 0).all()
    assert fig.data[0].zmid == 0
    assert "diverges" in fig.data[0].text[0][0]
