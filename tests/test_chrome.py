"""The page chrome in a running script: URL binding, notices, error boundary, panels."""

import pytest

from tests.conftest import assert_healthy, run_page


def test_defaults_render_every_panel(demo):
    at = run_page(demo)
    assert_healthy(at)
    assert at.title[0].value == "Chrome demo"
    assert {e.label for e in at.expander} >= {"Advanced", "The equations", "The code that ran",
                                             "Export"}
    assert at.latex and "gamma" in at.latex[0].value
    assert any("def gridworld" in c.value for c in at.code)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"line.html", "table.csv", "raw.json", "settings.json"} <= labels
    assert not at.query_params  # defaults leave the link clean


def test_link_values_set_the_widgets(demo):
    at = run_page(demo, query={"gamma": "0.25", "episodes": "7", "algo": "pi", "theta": "1e-08",
                               "racers": "eps,ucb", "in_place": "1", "seed": "42",
                               "alpha": "2.5", "layout": "S.#\n..G"})
    assert_healthy(at)
    assert at.slider(key="demo.gamma").value == 0.25
    assert at.slider(key="demo.episodes").value == 7
    assert at.selectbox(key="demo.algo").value == "pi"
    assert at.select_slider(key="demo.theta").value == 1e-8
    assert at.multiselect(key="demo.racers").value == ["eps", "ucb"]
    assert at.toggle(key="demo.in_place").value is True
    assert at.number_input(key="demo.seed").value == 42
    assert at.number_input(key="demo.alpha").value == 2.5
    assert at.text_area(key="demo.layout").value == "S.#\n..G"
    assert at.metric[0].value == "5"
    assert not at.warning


def test_widgets_write_the_link_and_it_round_trips(demo):
    at = run_page(demo)
    at.slider(key="demo.gamma").set_value(0.5)
    at.selectbox(key="demo.algo").set_value("pi")
    at.multiselect(key="demo.racers").set_value(["ts"])
    at.run()
    link = dict(at.query_params)
    assert link == {"gamma": "0.5", "algo": "pi", "racers": "ts"}
    assert any("/demo?gamma=0.5&algo=pi&racers=ts" in c.value for c in at.code)
    # Opening that link in a new session restores the same view.
    again = run_page(demo, query=link)
    assert again.slider(key="demo.gamma").value == 0.5
    assert again.selectbox(key="demo.algo").value == "pi"
    assert again.multiselect(key="demo.racers").value == ["ts"]
    # Back to a default value: the parameter leaves the link.
    again.slider(key="demo.gamma").set_value(0.9).run()
    assert "gamma" not in again.query_params


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ({"gamma": "banana"}, "`gamma=banana` was ignored (not a number"),
        ({"gamma": "7"}, "outside [0, 1]"),
        ({"episodes": "-3"}, "`episodes=-3` was ignored"),
        ({"algo": "<script>"}, "not one of the options"),
        ({"racers": "ucb,nope"}, "'nope' is not one of the options"),
        ({"seed": "1e99"}, "not a whole number"),
        ({"layout": "x" * 500}, "longer than 200 characters"),
        ({"unknown": "1"}, "parameters this page does not use (`unknown`)"),
    ],
)
def test_bad_links_fall_back_with_a_visible_notice(demo, query, fragment):
    at = run_page(demo, query=query)
    assert not at.exception
    notes = " ".join(w.value for w in at.warning)
    assert fragment in notes
    for name in query:
        assert name not in at.query_params  # the bad value does not stay in the link


def test_library_value_error_is_a_clear_message(demo):
    at = run_page(demo, query={"fail": "value"})
    assert not at.exception
    assert [e.value for e in at.error] == ["gamma must be below 1 for this demo"]


def test_unexpected_error_is_friendly_and_logged(demo, caplog):
    at = run_page(demo, query={"fail": "bug"})
    assert not at.exception
    message = at.error[0].value
    assert "Something went wrong" in message
    assert "RuntimeError" not in message and "Traceback" not in message


def test_bad_layout_from_the_link_is_a_clear_message(demo):
    at = run_page(demo, query={"layout": "S.x"})
    assert not at.exception
    assert "row 1, column 3: unknown character 'x'" in at.error[0].value


def test_reset_returns_to_defaults_and_clears_the_link(demo):
    at = run_page(demo, query={"gamma": "0.3", "algo": "pi"})
    at.button(key="demo._reset").click().run()
    assert at.slider(key="demo.gamma").value == 0.9
    assert at.selectbox(key="demo.algo").value == "vi"
    assert not at.query_params


def test_known_answer_badge_passes_and_fails(demo):
    ok = run_page(demo)
    assert "✅" in ok.markdown[-1].value or any("✅" in m.value for m in ok.markdown)
    bad = run_page(demo, query={"gamma": "0.5"})
    table = next(m.value for m in bad.markdown if "| check |" in m.value)
    assert "❌ | γ echoes | 0.5 | 0.9 | ±1e-12" in table


def test_seed_button_draws_a_new_seed(demo):
    at = run_page(demo)
    for _ in range(3):
        before = at.number_input(key="demo.seed").value
        at.button(key="demo.seed.reroll").click().run()
        after = at.number_input(key="demo.seed").value
        assert after != before and 0 <= after < 10_000
        assert at.query_params.get("seed") == str(after)


def test_export_payloads():
    import json

    import numpy as np

    from rlviz.ui.chrome import _data_bytes, _json_bytes

    assert json.loads(_json_bytes({"a": np.arange(2), "b": float("nan")})) == {"a": [0, 1],
                                                                              "b": None}
    import pandas as pd

    assert _data_bytes(pd.DataFrame({"x": [1]})).decode().splitlines() == ["x", "1"]
