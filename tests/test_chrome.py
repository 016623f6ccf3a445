"""The page chrome in a running script: URL binding, notices, error boundary, panels."""

import json

import pytest

from tests.conftest import assert_healthy, open_panels, open_share, panel_labels, plain, run_page


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def test_defaults_render_every_panel(demo):
    at = run_page(demo)
    assert_healthy(at)
    assert at.title[0].value == "Chrome demo"
    assert any(e.label == "Advanced" for e in at.expander)
    assert panel_labels(at) == {"The equations", "The code that ran", "Export",
                                "Make a teacher link"}
    assert not at.query_params  # defaults leave the link clean
    # The panels are drawn only once opened: closed, they cost a rerun nothing.
    assert not at.latex and not at.get("download_button")
    assert not any("def gridworld" in c.value for c in at.code)
    open_panels(at, "demo")
    assert_healthy(at)
    assert at.latex and "gamma" in at.latex[0].value
    assert any("def gridworld" in c.value for c in at.code)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"line.html", "table.csv", "raw.json", "settings.json"} <= labels


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
    assert metric(at, "states") == "5"
    assert not at.warning


def test_widgets_write_the_link_and_it_round_trips(demo):
    at = run_page(demo)
    at.slider(key="demo.gamma").set_value(0.5)
    at.selectbox(key="demo.algo").set_value("pi")
    at.multiselect(key="demo.racers").set_value(["ts"])
    at.run()
    link = dict(at.query_params)
    assert link == {"gamma": "0.5", "algo": "pi", "racers": "ts"}
    open_share(at, "demo")
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
        ({"racers": "ucb,nope"}, "item 2 is not one of the options"),
        ({"seed": "1e99"}, "not a whole number"),
        ({"layout": "x" * 500}, "longer than 200 characters"),
        ({"unknown": "1"}, "parameters this page does not use (`unknown`)"),
    ],
)
def test_bad_links_fall_back_with_a_visible_notice(demo, query, fragment):
    at = run_page(demo, query=query)
    assert not at.exception
    notes = plain(" ".join(w.value for w in at.warning))
    assert fragment in notes
    for name in query:
        assert name not in at.query_params  # the bad value does not stay in the link


def test_input_error_is_a_clear_message_and_not_logged(demo, caplog):
    at = run_page(demo, query={"fail": "value"})
    assert not at.exception
    assert [plain(e.value) for e in at.error] == ["gamma must be below 1 for this demo"]
    assert not [r for r in caplog.records if r.name == "rlviz.ui"]


def test_a_value_error_from_a_bug_is_logged_not_shown_as_the_users_mistake(demo, caplog):
    at = run_page(demo, query={"fail": "valueerror"})
    assert not at.exception
    (message,) = [e.value for e in at.error]
    assert "Something went wrong" in message
    assert "broadcast" not in message and "Traceback" not in message
    logged = [r for r in caplog.records if r.name == "rlviz.ui" and r.exc_info]
    assert logged and isinstance(logged[0].exc_info[1], ValueError)


def test_unexpected_error_is_friendly_and_logged(demo, caplog):
    at = run_page(demo, query={"fail": "bug"})
    assert not at.exception
    message = at.error[0].value
    assert "Something went wrong" in message
    assert "RuntimeError" not in message and "Traceback" not in message


def test_bad_layout_from_the_link_is_a_clear_message(demo):
    at = run_page(demo, query={"layout": "S.x"})
    assert not at.exception
    assert "row 1, column 3: unknown character 'x'" in plain(at.error[0].value)


def test_reset_returns_to_defaults_and_clears_the_link(demo):
    at = open_share(run_page(demo, query={"gamma": "0.3", "algo": "pi"}), "demo")
    at.button(key="demo._reset").click().run()
    assert at.slider(key="demo.gamma").value == 0.9
    assert at.selectbox(key="demo.algo").value == "vi"
    assert not at.query_params


def test_known_answer_badge_passes_and_fails(demo):
    ok = run_page(demo)
    table = next(m.value for m in ok.markdown if "| check |" in m.value)
    assert table.count("check_circle") == 2 and "cancel" not in table
    bad = run_page(demo, query={"gamma": "0.5"})
    table = next(m.value for m in bad.markdown if "| check |" in m.value)
    assert ":red[:material/cancel:] | γ echoes | 0.5 | 0.9 | ±1e-12" in table


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


def test_table_control_round_trips_through_the_link(demo):
    at = run_page(demo, query={"traj": "r=1,2,3,4;done=0,0,0,1"})
    assert_healthy(at)
    assert metric(at, "reward sum") == "10.0"
    edited = at.get("arrow_data_frame") or at.get("data_editor")
    assert edited
    # A bad table in the link falls back to the default with a notice.
    bad = run_page(demo, query={"traj": "r=1,x;done=0,1"})
    assert "`traj=r=1,x;done=0,1` was ignored" in plain(" ".join(w.value for w in bad.warning))
    assert metric(bad, "reward sum") == "3.0"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("r=1,2", "missing column"),
        ("r=1,2;done=1", "different lengths"),
        ("r=1;done=maybe", "takes 1 or 0"),
        ("q=1;r=1;done=1", r"a part is not one of the columns \(r, done\)"),
        ("r=" + ",".join(["1"] * 11) + ";done=" + ",".join(["0"] * 11), "more than 10 rows"),
    ],
)
def test_table_parse_errors(raw, reason):
    from rlviz import ui

    control = ui.Table(name="traj", label="", columns=[
        ui.TableColumn("r", "reward"), ui.TableColumn("done", "done", kind="bool")],
        value={"r": [1.0], "done": [False]}, max_rows=10)
    with pytest.raises(ValueError, match=reason):
        control.parse(raw)
    assert control.parse(control.encode(control.default)) == control.default


@pytest.mark.parametrize(
    "raw",
    ["`![x](http://evil.example/p.png)`", "[click](http://evil.example)", "$x^2$ **b**"],
)
def test_link_text_cannot_inject_markdown(demo, raw):
    at = run_page(demo, query={"algo": raw, raw[:10]: "1"})
    assert len(at.warning) == 2
    for note in at.warning:
        # Untrusted text only ever appears inside a single code span.
        spans = note.value.split("`")
        outside = "".join(spans[0::2])
        assert "http" not in outside and "$" not in outside and "**b" not in outside


def test_escape_markdown_neutralises_links_and_latex():
    from rlviz.ui.chrome import escape_markdown

    assert escape_markdown("[a](b) ![i](u) $x$ in [0, 1]") == r"[a]\(b) !\[i]\(u) \$x\$ in [0, 1]"
    assert escape_markdown("see http://evil.example") == "see http:\u200b//evil.example"


def _scrubber_page():
    from rlviz import ui
    from rlviz.ui.catalog import PageInfo

    info = PageInfo(slug="scrub", title="Scrub", section="", icon=":material/science:",
                    teaches="")
    with ui.Page("scrub", info=info) as page:
        n = page.controls([ui.IntSlider(name="n", label="Items", min=2, max=50, value=10)]).n
        page.controls([ui.IntSlider(name="i", label="Item", min=0, max=n - 1, value=0)])


def test_a_control_whose_range_changes_keeps_its_value():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_scrubber_page, default_timeout=30).run()
    at.slider(key="scrub.i").set_value(7).run()
    at.slider(key="scrub.n").set_value(20).run()  # a new range: Streamlit sees a new widget
    assert not at.exception
    assert at.slider(key="scrub.i").value == 7
    assert at.query_params["i"] == "7"
    at.slider(key="scrub.n").set_value(5).run()  # 7 is out of range now: back to the default
    assert at.slider(key="scrub.i").value == 0
    assert "i" not in at.query_params


def _preset_app():
    import streamlit as st

    from rlviz import ui
    from rlviz.ui.catalog import PageInfo

    def preset():
        st.session_state["demo.gamma"] = 0.5 if st.session_state["demo.env"] == "b" else 0.9

    info = PageInfo(slug="demo", title="Preset", section="", icon=":material/science:",
                    teaches="")
    with ui.Page("demo", info=info) as page:
        page.controls([
            ui.Choice(name="env", label="Env", options=["a", "b"], value="a", on_change=preset),
            ui.FloatSlider(name="gamma", label="γ", min=0.0, max=1.0, value=0.9),
        ])


def test_choice_on_change_can_set_other_controls_but_links_win():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_preset_app, default_timeout=30).run()
    at.selectbox(key="demo.env").set_value("b").run()
    assert at.slider(key="demo.gamma").value == 0.5
    assert dict(at.query_params) == {"env": "b", "gamma": "0.5"}
    # A link never triggers the callback: its values are restored as written.
    linked = AppTest.from_function(_preset_app, default_timeout=30)
    linked.query_params["env"] = "b"
    linked.query_params["gamma"] = "0.75"
    linked.run()
    assert linked.slider(key="demo.gamma").value == 0.75


def _editor_next_to_a_table():
    import numpy as np
    import pandas as pd
    import streamlit as st

    st.data_editor(pd.DataFrame({"typed": [1.0, np.nan]}), key="editor")
    st.dataframe(pd.DataFrame({"computed": [np.nan]}))


def test_shown_text_reads_tables_but_not_the_cells_a_user_left_blank():
    from streamlit.testing.v1 import AppTest

    from tests.conftest import shown_text

    text = shown_text(AppTest.from_function(_editor_next_to_a_table).run())
    assert any("computed" in t and "NaN" in t for t in text)
    assert not any("typed" in t for t in text)


def _table_with_a_blank_cell():
    import math

    import streamlit as st

    from rlviz import ui
    from rlviz.ui.catalog import PageInfo

    info = PageInfo(slug="blank", title="Blank", section="", icon=":material/science:",
                    teaches="")
    with ui.Page("blank", info=info) as page:
        q = page.controls([ui.Table(name="t", label="", columns=[ui.TableColumn("x", "x")],
                                    value={"x": [1.0, math.nan]})], container=st.container())
        st.metric("cells", len(q.t["x"]))


def test_a_table_with_blank_cells_at_its_default_leaves_the_link_clean():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_table_with_a_blank_cell).run()
    assert not at.exception
    assert metric(at, "cells") == "2"
    assert "t" not in at.query_params


def test_an_empty_table_from_the_link_still_draws(demo):
    at = run_page(demo, query={"traj": "r=;done="})
    assert not at.exception
    assert metric(at, "reward sum") == "0.0"


def test_source_panel_reads_each_object_once():
    import inspect

    from rlviz.envs import gridworld
    from rlviz.ui import chrome

    chrome._source_of.cache_clear()
    name, code = chrome._source_of(gridworld)
    assert name == f"{gridworld.__module__}.{gridworld.__qualname__}"
    assert code == inspect.getsource(gridworld)
    chrome._source_of(gridworld)
    assert chrome._source_of.cache_info().hits == 1


def test_torch_threads_are_left_alone_while_torch_is_still_importing(monkeypatch):
    import sys
    import types
    from importlib.machinery import ModuleSpec

    from rlviz.ui import chrome
    from rlviz.ui.chrome import _one_torch_thread

    monkeypatch.setattr(chrome, "_torch_threads_set", False)
    half = types.ModuleType("torch")  # what another thread's unfinished import leaves behind
    half.__spec__ = ModuleSpec("torch", None)
    half.__spec__._initializing = True
    monkeypatch.setitem(sys.modules, "torch", half)
    _one_torch_thread()  # must not touch the half-made module

    calls = []
    done = types.ModuleType("torch")
    done.__spec__ = ModuleSpec("torch", None)
    done.get_num_threads = lambda: 2
    done.set_num_threads = calls.append
    monkeypatch.setitem(sys.modules, "torch", done)
    _one_torch_thread()
    assert calls == [1]
    _one_torch_thread()
    assert calls == [1], "set once per process"


def _on_a_page_with_a_moved_slider():
    """The app at its first written page, its first slider moved off the default."""
    from streamlit.testing.v1 import AppTest

    from rlviz import ui
    from rlviz.ui.catalog import PAGES
    from rlviz.ui.chrome import DECLARED
    from tests.conftest import ROOT

    info = next(p for p in PAGES if p.exists)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.switch_page(str(info.file)).run()
    name, control = next((n, c) for n, c in DECLARED[info.slug].items()
                         if isinstance(c, ui.FloatSlider | ui.IntSlider))
    value = control.max if control.default != control.max else control.min
    at.slider(key=f"{info.slug}.{name}").set_value(value).run()
    return at, info, f"{info.slug}.{name}", control, value


def _away_and_back(at, info, query=None):
    from rlviz.ui.catalog import HOME

    at.switch_page(str(HOME.file)).run()
    at.query_params.clear()  # as the navigation does
    at.query_params.update(query or {})
    return at.switch_page(str(info.file)).run()


def test_a_page_keeps_its_values_after_a_visit_to_another_page():
    """Streamlit forgets the widgets a run did not draw; the chrome keeps each page's values
    for the session, and its URL shows them again."""
    from rlviz.ui.catalog import HOME

    at, info, key, _, value = _on_a_page_with_a_moved_slider()
    link = dict(at.query_params)
    assert link
    at.switch_page(str(HOME.file)).run()
    assert key not in at.session_state  # Streamlit forgot the widget
    _away_and_back(at, info)
    assert at.slider(key=key).value == value
    assert dict(at.query_params) == link


def test_a_link_wins_over_the_kept_values():
    at, info, key, control, value = _on_a_page_with_a_moved_slider()
    name = key.split(".", 1)[1]
    _away_and_back(at, info, {name: control.encode(control.default)})
    assert at.slider(key=key).value == control.default


def test_reset_forgets_the_kept_values():
    at, info, key, control, _ = _on_a_page_with_a_moved_slider()
    open_share(at, info.slug).button(key=f"{info.slug}._reset").click().run()
    _away_and_back(at, info)
    assert at.slider(key=key).value == control.default
    assert not at.query_params


def test_share_link_uses_the_configured_public_address(demo, monkeypatch):
    monkeypatch.setenv("RLVIZ_PUBLIC_URL", "https://rl.example.org/class/")
    at = open_share(run_page(demo, query={"gamma": "0.5"}), "demo")
    links = [c.value for c in at.code if "example.org" in c.value]
    assert links == ["https://rl.example.org/class/demo?gamma=0.5"]


def test_share_box_sits_beside_the_title_and_is_drawn_only_while_open(demo):
    def share_box(at):
        return next(b for b in at.get("popover") if b.proto.popover.label == "Share this view")

    at = run_page(demo)
    assert not share_box(at).children, "closed, a rerun sends nothing inside it"
    open_share(at, "demo")
    assert share_box(at).button(key="demo._reset") is not None
    assert any("/demo" in c.value for c in share_box(at).code)


def test_charts_have_no_floating_toolbar(demo):
    at = run_page(demo)
    config = json.loads(at.get("plotly_chart")[0].proto.config)
    assert config["displayModeBar"] is False


def test_home_card_images_link_to_their_pages():
    from rlviz.ui.catalog import PAGES
    from tests.conftest import ROOT

    at = run_page(ROOT / "app.py")
    links = [img.proto.link for img in at.get("image")]
    assert links == [p.url_path for p in PAGES if p.exists and p.thumbnail.is_file()]


def test_the_router_runs_the_navigation_and_lands_on_home():
    """``app.py`` serves this script through ``st.App``; its folder has no ``pages/``, so
    Streamlit's automatic file-name navigation can never switch on."""
    from streamlit.testing.v1 import AppTest

    from rlviz.ui import launch

    assert not (launch.ROUTER.parent / "pages").exists()
    at = AppTest.from_file(str(launch.ROUTER), default_timeout=120).run()
    assert_healthy(at)
    assert at.title[0].value == "rlviz"


def test_app_py_serves_the_router_with_the_warm_up_and_the_splash():
    import ast

    from tests.conftest import ROOT

    tree = ast.parse((ROOT / "app.py").read_text())
    apps = [node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
            and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["app"]]
    assert len(apps) == 1 and ast.unparse(apps[0].func) == "st.App"
    assert ast.unparse(apps[0].args[0]) == "launch.ROUTER"
    assert {k.arg: ast.unparse(k.value) for k in apps[0].keywords} == {
        "lifespan": "launch.lifespan", "middleware": "launch.MIDDLEWARE"}
    from rlviz.ui import launch
    from rlviz.ui.splash import Splash

    assert [m.cls for m in launch.MIDDLEWARE] == [Splash]


def test_warm_up_imports_every_module_the_pages_import():
    import sys

    from rlviz.ui import launch
    from rlviz.ui.catalog import DRILL, HOME, available_pages

    launch.warm_up()
    for info in (HOME, DRILL, *available_pages()):
        for name in launch.page_imports(info.file):
            assert name in sys.modules or hasattr(sys.modules[name.rsplit(".", 1)[0]],
                                                  name.rsplit(".", 1)[1])
    assert "rlviz.ui.boot" in launch.page_imports(HOME.file)


def test_progress_is_only_drawn_for_a_page():
    from rlviz.ui import caching

    with caching._progress("Working…"):  # no page in this thread: nothing to draw, no error
        pass


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_png_export_keeps_one_browser_open_between_files():
    import plotly.graph_objects as go

    from rlviz.ui import export

    if not export.available():
        pytest.skip("chromium is not installed")
    fig = go.Figure(go.Scatter(x=[0, 1, 2], y=[1, 3, 2]))
    try:
        first, second = export.figure_png(fig), export.figure_png(fig, scale=1)
        assert first.startswith(PNG_MAGIC) and second.startswith(PNG_MAGIC)
        assert len(second) < len(first)  # half the pixels each way
        assert export._RENDERER._running()
    finally:
        export._RENDERER.stop()
    assert not export._RENDERER._running()


@pytest.mark.slow
def test_png_export_falls_back_to_a_one_off_browser(monkeypatch):
    import plotly.graph_objects as go

    from rlviz.ui import export

    if not export.available():
        pytest.skip("chromium is not installed")

    def broken(fig, scale):
        raise RuntimeError("the renderer is gone")

    monkeypatch.setattr(export._RENDERER, "png", broken)
    png = export.figure_png(go.Figure(go.Bar(x=["a", "b"], y=[1, 2])))
    assert png.startswith(PNG_MAGIC)


def test_cached_figures_are_kept_in_the_form_they_are_sent_in():
    """A shared figure is sent as the same JSON, made into a dict once, not per rerun."""
    import copy

    import numpy as np
    import plotly.graph_objects as go
    import plotly.io as pio
    import plotly.tools

    from rlviz.ui.caching import SentFigure, _Handover, _sendable

    rng = np.random.default_rng(0)
    fig = go.Figure([go.Heatmap(z=rng.normal(size=(4, 5))),
                     go.Scatter(x=np.arange(6), y=rng.normal(size=6), text=["a"] * 6)])
    fig.frames = [go.Frame(data=[go.Scatter(y=rng.normal(size=6))], name="1")]

    def sent(f):  # what st.plotly_chart puts on the wire
        return pio.to_json(plotly.tools.return_figure_from_figure_or_data(f, True),
                           validate=False)

    one, (two, three), named = _sendable(fig), _sendable((fig, fig)), _sendable({"f": fig})
    assert all(isinstance(f, SentFigure) for f in (one, two, three, named["f"]))
    assert sent(one) == sent(two) == sent(three) == sent(named["f"]) == sent(fig)
    assert isinstance(fig.data[0].z, np.ndarray)  # the builder's own figure is left as it was
    assert _sendable(3) == 3 and _sendable(("a", fig))[0] == "a"

    # What ui.chart hands Streamlit: the same JSON from the kept dict, which sending leaves as
    # it was; everyone else who asks the figure for a dict gets a copy of their own.
    kept = copy.deepcopy(one._sent)
    handed = _Handover(one._sent)
    assert plotly.tools.return_figure_from_figure_or_data(handed, True) is one._sent
    assert sent(handed) == sent(fig)
    assert one._sent.to_plotly_json() is one._sent.to_plotly_json(), "its text is made once"
    assert pio.to_json(one._sent, validate=False, engine="json") == sent(fig)
    assert one._sent == kept
    assert one.to_dict() is not one._sent and one.to_dict() == one._sent
    assert sent(go.Figure(one).update_layout(height=300)) != sent(fig)
    assert one._sent == kept


def test_chart_hands_streamlit_the_kept_dict_of_a_shared_figure(monkeypatch):
    """ui.chart sends a SentFigure's kept dict; a resized copy or a plain figure goes as it is."""
    import plotly.graph_objects as go

    from rlviz.ui import caching, chrome

    got = []
    monkeypatch.setattr(chrome.st, "plotly_chart", lambda fig, **kw: got.append(fig))
    plain = go.Figure(go.Scatter(y=[1, 2]))
    shared = caching.SentFigure(plain)
    chrome.chart(shared)
    chrome.chart(plain)
    chrome.chart(shared, height=300)
    assert isinstance(got[0], caching._Handover) and got[0].to_dict() is shared._sent
    assert got[1] is plain
    assert not isinstance(got[2], caching._Handover) and got[2].layout.height == 300


def test_a_cached_function_is_decorated_once_and_computes_with_this_runs_function():
    from rlviz.ui.caching import _reused

    made = []

    def make(fn):
        made.append(fn)
        return fn

    def page_run(offset):  # a page script's run: its function, defined afresh
        def compute(x):
            return x + offset

        return _reused(compute, ("test",), make)

    first = page_run(1)
    again = page_run(10)
    assert again is first and len(made) == 1  # the wrapper is made once
    assert again(1) == 11  # and calls the function of the latest run on this thread


def test_a_cached_call_passes_its_arguments_by_name_and_hits_the_same_entry():
    """Streamlit looks up each positional argument's name in the signature on every call;
    ui.cached names them instead, in the function's order, so the cache key is the same."""
    import streamlit as st

    from rlviz.ui.caching import _by_name

    seen = []

    def compute(a, b, c=3):
        seen.append((a, b, c))
        return a + b + c

    calls = []
    call = _by_name(compute, lambda *args, **kwargs: calls.append((args, kwargs)))
    call(1, 2)
    call(1, b=2, c=4)
    assert calls == [((), {"a": 1, "b": 2}), ((), {"a": 1, "b": 2, "c": 4})]
    with pytest.raises(TypeError):
        _by_name(compute, compute)(1, 2, 3, 4)

    cached = _by_name(compute, st.cache_data(compute))
    assert cached(1, 2) == cached(a=1, b=2) == cached(1, b=2) == 6
    assert st.cache_data(compute)(1, 2) == 6, "a plain positional call, for comparison"
    assert seen == [(1, 2, 3)], "one entry, whichever way the arguments came"


def test_a_shared_result_is_one_object_with_read_only_arrays():
    """ui.cached hands every caller the same result, and no caller can change the arrays in it
    for the others; with copy=True each caller gets a copy of its own."""
    from dataclasses import dataclass

    import numpy as np

    from rlviz.ui.caching import cached, read_only

    @dataclass(frozen=True)
    class Result:
        curve: np.ndarray
        by_name: dict
        pair: tuple

    calls = []

    def compute(n):
        calls.append(n)
        return Result(np.zeros(n), {"a": np.ones(n)}, (np.arange(n), "label"))

    def compute_plain(n):  # the same, in types a copy can be pickled from
        calls.append(n)
        return {"curve": np.zeros(n)}

    shared, copied = cached()(compute), cached(copy=True)(compute_plain)
    one, two = shared(3), shared(3)
    assert one is two and calls == [3]
    for array in (one.curve, one.by_name["a"], one.pair[0]):
        with pytest.raises(ValueError, match="read-only"):
            array[0] = 5.0
    mine, theirs = copied(4), copied(4)
    assert mine is not theirs and calls == [3, 4]
    mine["curve"][0] = 5.0  # a copy of one's own may be changed
    assert copied(4)["curve"][0] == 0.0
    assert read_only(7) == 7 and read_only([np.ones(2)])[0].flags.writeable is False


def test_shared_figures_are_kept_in_front_of_streamlits_cache_and_cleared_with_it():
    """A cached_figures call with hashable settings is answered from the dict in front of
    Streamlit's cache (no argument hashing); clearing Streamlit's caches empties it too; an
    unhashable argument, an argument left out of the key and a wrong call behave as before."""
    import streamlit as st

    from rlviz.ui.caching import _in_front

    built, asked = [], []

    def build(n, scale=1.0, _payload=None):
        built.append((n, scale))
        return {"n": n, "scale": scale}

    def streamlit_cache(*args, **kwargs):  # stands in for Streamlit's cached function
        asked.append((args, kwargs))
        return build(*args, **kwargs)

    call = _in_front(build, streamlit_cache, max_entries=2)
    first = call(3)
    assert call(3) is first and call(n=3) is first and len(asked) == 1
    assert call(3, _payload=object()) is first, "underscore arguments are not part of the key"
    assert call(1) is not call(1.0) and call(True)["n"] is True, "1, 1.0 and True differ"
    call([1, 2])  # unhashable: straight to Streamlit, every time
    call([1, 2])
    assert asked[-2:] == [(([1, 2],), {}), (([1, 2],), {})]
    with pytest.raises(TypeError):
        call(1, 2, 3, 4)
    with pytest.raises(TypeError):
        call(1, bogus=2)
    before = len(asked)
    call(9)
    call(8)
    call(7)  # bounded: 9 has left the front
    call(9)
    assert len(asked) == before + 4
    st.cache_resource.clear()  # a new epoch: the front holds nothing any more
    call(7)
    assert len(asked) == before + 5
