"""The C51 page in AppTest: defaults, extremes, the link, presets and clear messages."""

import json

import pytest

from tests.conftest import PAGES, assert_healthy, open_panels, plain, run_page

PAGE = PAGES / "c51.py"


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def checks(at) -> str:
    return next(m.value for m in at.markdown if "| check |" in m.value)


def badge_ok(at) -> bool:
    return any("matches" in m.value for m in at.markdown) and "cancel" not in checks(at)


def spec(at) -> dict:
    return json.loads(at.get("plotly_chart")[0].proto.spec)


def trace_names(at) -> set[str]:
    return {t.get("name") for t in spec(at)["data"] if t.get("name")}


def test_defaults():
    at = run_page(PAGE)
    assert_healthy(at)
    assert not at.query_params and not at.warning
    figure = spec(at)
    assert {"yaxis", "yaxis2", "yaxis3"} <= set(figure["layout"])  # three aligned panels
    assert {"source p", "split onto neighbours", "target atom r + γz", "projected m",
            "atom 11"} <= trace_names(at)
    assert badge_ok(at)
    assert "Projected mean = r + γ·E[p] (nothing clipped)" in checks(at)
    # r = 0.5, γ = 0.9, p centred near 1: the projected mean is r + γ·E[p], unchanged.
    assert metric(at, "Projected mean") == metric(at, "Target mean r + γ·E[p]") == "1.3994"
    assert "**Atom 11** sits at z = 1" in " ".join(m.value for m in at.markdown)
    open_panels(at, "c51")
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"projection.html", "atoms.csv", "settings.json"} <= labels


EXTREMES = [
    {"atoms": "2"},
    {"atoms": "201"},
    {"gamma": "0"},
    {"r": "0", "gamma": "1", "naive": "1"},
    {"r": "20", "naive": "1"},
    {"r": "-20", "gamma": "1"},
    {"done": "1", "r": "-3.7"},
    {"shape": "bimodal", "sep": "40", "sigma": "0.1"},
    {"shape": "uniform", "atoms": "201", "gamma": "1", "r": "0.3"},
    {"shape": "point", "mu": "-30", "r": "-20"},
    {"shape": "custom"},
    {"v_min": "-0.5", "v_max": "0.5", "atoms": "201", "r": "20"},
    {"v_min": "-100", "v_max": "100", "sigma": "20", "mu": "30"},
    {"v_min": "99", "v_max": "100", "atoms": "3", "done": "1"},
]


@pytest.mark.parametrize("query", EXTREMES, ids=lambda q: "&".join(map("=".join, q.items())))
def test_extremes_stay_healthy_and_every_check_passes(query):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert not at.warning or "naive" in query
    assert dict(at.query_params) == query  # every value was accepted and stays in the link
    assert at.get("plotly_chart") and badge_ok(at)


def test_widgets_write_the_link_and_it_restores_the_view():
    at = run_page(PAGE)
    at.slider(key="c51.r").set_value(2.0)
    at.slider(key="c51.gamma").set_value(0.8)
    at.toggle(key="c51.done").set_value(True)
    at.toggle(key="c51.naive").set_value(True)
    at.selectbox(key="c51.shape").set_value("bimodal")
    at.number_input(key="c51.v_max").set_value(12.0)
    at.slider(key="c51.atoms").set_value(31)
    at.run()
    assert_healthy(at)
    link = dict(at.query_params)
    # The followed atom keeps its index (11) although the most probable atom moved.
    assert link == {"r": "2", "gamma": "0.8", "done": "1", "naive": "1", "shape": "bimodal",
                    "v_max": "12", "atoms": "31", "atom": "11"}
    again = run_page(PAGE, query=link)
    assert_healthy(again)
    assert again.slider(key="c51.r").value == 2.0
    assert again.selectbox(key="c51.shape").value == "bimodal"
    assert again.number_input(key="c51.v_max").value == 12.0
    assert again.slider(key="c51.atom").value == 11
    assert spec(again)["data"] == spec(at)["data"]  # the same view, trace for trace
    assert "done: all mass on the two atoms around r" in checks(again)


def test_exact_hit_preset_shows_the_naive_projection_losing_everything():
    at = run_page(PAGE)
    at.button(key="c51._exact_hit").click().run()
    assert_healthy(at)
    assert dict(at.query_params) == {"r": "0", "gamma": "1", "naive": "1"}
    # Δz = 1 and r = 0, γ = 1: every atom lands on a support point, where ⌊b⌋ = ⌈b⌉.
    assert "keeps **0** of the mass and loses 1: 21 atom(s)" in at.warning[0].value
    assert "naive floor/ceil (keeps 0 of the mass)" in trace_names(at)
    assert "‖m − p‖∞ | 0 |" in checks(at) and badge_ok(at)


def test_naive_comparison_that_loses_nothing_says_so():
    at = run_page(PAGE, query={"naive": "1", "r": "0.37", "gamma": "0.73"})
    assert_healthy(at)
    assert "agrees with the correct one here" in at.info[0].value


def test_clipping_switches_the_mean_check_to_the_clipped_mean():
    at = run_page(PAGE, query={"r": "5"})
    assert_healthy(at)
    assert "atom(s) clipped, so r + γ·E[p] = 5.899 no longer holds" in checks(at)
    assert badge_ok(at)
    assert any(n.startswith("clipped (") for n in trace_names(at))
    assert metric(at, "Projected mean") != metric(at, "Target mean r + γ·E[p]")


def test_following_an_atom():
    at = run_page(PAGE, query={"atom": "0"})
    assert_healthy(at)
    text = " ".join(m.value for m in at.markdown)
    assert "**Atom 0** sits at z = -10" in text and "0.5 + 0.9 × -10 = -8.5" in text
    assert "atom 0" in trace_names(at)


def test_an_atom_beyond_the_support_in_the_link_falls_back_with_a_notice():
    at = run_page(PAGE, query={"atoms": "5", "atom": "30"})
    assert not at.exception and not at.error
    assert "`atom=30` was ignored" in at.warning[0].value
    assert at.slider(key="c51.atom").value <= 4


def test_custom_shape_uses_the_table_and_says_how_it_normalised():
    at = run_page(PAGE, query={"shape": "custom", "weights": "w=1,0,3,4"})
    assert_healthy(at)
    assert "Custom weights: 4 atoms; the weights summed to 8" in at.caption[0].value
    assert metric(at, "Mean of p") == "5.0000"  # z = -10, -10/3, 10/3, 10: (−10 + 10 + 40) / 8


def test_copying_a_shape_into_the_custom_table():
    at = run_page(PAGE, query={"shape": "bimodal", "atoms": "15"})
    before = metric(at, "Mean of p"), metric(at, "Variance of p")
    at.button(key="c51._to_custom").click().run()
    assert_healthy(at)
    assert at.selectbox(key="c51.shape").value == "custom"
    assert "Custom weights: 15 atoms" in at.caption[0].value
    assert (metric(at, "Mean of p"), metric(at, "Variance of p")) == before


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ({"v_min": "5", "v_max": "-5"}, "V_min (5) must be below V_max (-5)"),
        ({"v_min": "3", "v_max": "3"}, "V_min (3) must be below V_max (3)"),
        ({"shape": "custom", "weights": "w=1,-1,2"}, "Weights cannot be negative"),
        ({"shape": "custom", "weights": "w=0,0,0"}, "All weights are zero"),
        ({"shape": "custom", "weights": "w=1,nan,2"}, "Weight 1 is empty or not a finite"),
        ({"shape": "custom", "weights": "w=1"}, "at least two atoms (got 1)"),
    ],
)
def test_bad_input_is_a_clear_message(query, fragment):
    at = run_page(PAGE, query=query)
    assert not at.exception
    assert len(at.error) == 1 and fragment in at.error[0].value
    assert "Traceback" not in at.error[0].value
    assert at.slider(key="c51.r").value == 0.5  # the controls are still there


@pytest.mark.parametrize(
    ("query", "fragment"),
    [({"atoms": "1"}, "`atoms=1` was ignored"), ({"gamma": "1.5"}, "outside [0, 1]"),
     ({"shape": "triangle"}, "not one of the options"),
     ({"weights": "w=1,x"}, "column 'w' has a non-number")],
)
def test_bad_link_values_fall_back_with_a_notice(query, fragment):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert fragment in plain(" ".join(w.value for w in at.warning))
