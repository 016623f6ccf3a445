"""The classroom in the app (AppTest): teacher links, presentation mode, lessons."""

import json

import pytest
from streamlit.testing.v1 import AppTest

from rlviz import lessons
from rlviz.lessons import LESSONS, RESERVED, Lesson, Step
from rlviz.ui import catalog, classroom
from rlviz.ui.chrome import DECLARED
from tests.conftest import ROOT, assert_healthy, open_panel, open_share, panel_labels, run_page

SLIDES = ROOT / "tests" / "apps" / "slides_demo.py"
LESSON_PAGE = catalog.LESSONS.file
STEPS = [
    pytest.param(item, k, id=f"{item.id}-{k + 1}-{step.slug}",
                 marks=[] if catalog.page_info(step.slug).exists else [pytest.mark.skip(
                     reason=f"pages/{step.slug}.py is not written yet")])
    for item in LESSONS for k, step in enumerate(item.steps)
]


def widgets(at: AppTest) -> dict[str, object]:
    """Every keyed element on the page (main area and sidebar), by key."""
    found: dict[str, object] = {}

    def walk(node):
        for child in getattr(node, "children", {}).values():
            key = getattr(child, "key", None)
            if key is not None:
                found[key] = child
            walk(child)

    walk(at.main)
    walk(at.sidebar)
    return found


def disabled(element) -> bool:
    return bool(getattr(element.proto, "disabled", False))


def markdown_text(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def assert_view(at: AppTest, slug: str, step: Step) -> None:
    """The page shows the settings the step names: values, hidden and locked controls."""
    declared = DECLARED[slug]
    shown = widgets(at)
    view = step.teacher
    for name, raw in step.params.items():
        if name in RESERVED:
            continue
        control = declared[name]
        value = at.session_state[f"{slug}.{name}"]
        assert control.encode(value) == control.encode(control.parse(raw)), name
    for name in view.pinned:
        assert name in declared, f"the step names {name!r}, which {slug} does not have"
    for name in view.hide:
        assert f"{slug}.{name}" not in shown, f"{name} is hidden"
    for name in view.lock:
        if name not in view.hide:
            assert disabled(shown[f"{slug}.{name}"]), f"{name} is locked"
    if not view.text:
        text = markdown_text(at)
        assert "**Read it like this**" not in text and "**Try this**" not in text


@pytest.mark.slow  # every step of every lesson opened: a page run each
@pytest.mark.parametrize(("item", "k"), STEPS)
def test_every_ready_lesson_step_opens_cleanly(item, k):
    step = item.steps[k]
    info = catalog.page_info(step.slug)
    at = run_page(info.file, query=step.params, timeout=300)
    assert_healthy(at)
    assert not [w.value for w in at.warning], "no notice"
    assert_view(at, step.slug, step)
    assert {q: v for q, v in at.query_params.items() if q in RESERVED} == {
        q: v for q, v in step.params.items() if q in RESERVED}


# ---------------------------------------------------------------- teacher links
TEACHER_LINK = {"gamma": "0.5", "_hide": "n,seed", "_lock": "gamma,algo", "_text": "0"}


def test_hidden_and_locked_controls_stay_so_after_reruns():
    at = run_page(SLIDES, query=TEACHER_LINK)
    assert_healthy(at)
    for _ in range(3):
        shown = widgets(at)
        assert "slides.n" not in shown and "slides.seed" not in shown
        assert disabled(shown["slides.gamma"]) and disabled(shown["slides.algo"])
        assert at.slider(key="slides.gamma").value == 0.5
        assert not any(e.label == "Advanced" for e in at.expander), "an empty section is hidden"
        assert "Three figures." not in markdown_text(at)
        assert dict(at.query_params) == TEACHER_LINK
        # a preset's callback (or anything else) writing a locked value does not move it
        at.session_state["slides.gamma"] = 0.1
        at.run()
    assert at.slider(key="slides.gamma").value == 0.5
    # a hidden control's value still applies: n = 5 points by default
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert len(spec["data"][0]["x"]) == 5


def test_hidden_controls_take_the_links_value():
    at = run_page(SLIDES, query={"n": "7", "_hide": "n"})
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert len(spec["data"][0]["x"]) == 7 and "slides.n" not in widgets(at)


def test_teacher_parameters_are_not_flagged_as_unknown():
    at = run_page(SLIDES, query={**TEACHER_LINK, "_present": "1", "_slide": "2", "bogus": "1"})
    assert_healthy(at)
    notes = [w.value for w in at.warning]
    assert len(notes) == 1 and "bogus" in notes[0] and "_hide" not in notes[0]
    assert "bogus" not in at.query_params
    assert {k: v for k, v in at.query_params.items() if k in RESERVED} == {
        "_hide": "n,seed", "_lock": "gamma,algo", "_text": "0", "_present": "1", "_slide": "2"}


def test_a_teacher_link_naming_a_missing_control_says_so_once():
    at = run_page(SLIDES, query={"_lock": "gamma,nope"})
    notes = [w.value for w in at.warning]
    assert len(notes) == 1 and "nope" in notes[0]
    assert disabled(widgets(at)["slides.gamma"])
    at.run()
    assert not at.warning


def test_a_bad_teacher_parameter_is_a_notice_and_the_rest_applies():
    at = run_page(SLIDES, query={"_text": "maybe", "_lock": "gamma"})
    assert_healthy(at)
    assert any("_text=maybe" in w.value for w in at.warning)
    assert disabled(widgets(at)["slides.gamma"])


def test_hidden_text_hides_the_intro_read_it_and_try_this():
    plain = markdown_text(run_page(SLIDES))
    assert "Three figures." in plain and "**Read it like this**" in plain
    assert "**Try this**" in plain
    quiet = markdown_text(run_page(SLIDES, query={"_text": "0"}))
    assert "Three figures." not in quiet and "Read it like this" not in quiet
    assert "Try this" not in quiet


def test_teacher_view_survives_navigation_away_and_back():
    info = next(p for p in catalog.PAGES if p.exists)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    name = next(n for n, c in DECLARED[_first_run(info)].items() if c.label)
    at.query_params.update({"_lock": name, "_text": "0"})
    at.switch_page(str(info.file)).run()
    assert disabled(widgets(at)[f"{info.slug}.{name}"])
    at.switch_page(str(catalog.HOME.file)).run()
    at.query_params.clear()  # as the navigation does
    at.switch_page(str(info.file)).run()
    assert_healthy(at)
    assert disabled(widgets(at)[f"{info.slug}.{name}"])
    assert at.query_params["_lock"] == name and at.query_params["_text"] == "0"


def _first_run(info) -> str:
    run_page(info.file, timeout=300)
    return info.slug


# ---------------------------------------------------------------- the teacher panel
def _with_panel(query=None) -> AppTest:
    at = AppTest.from_file(str(SLIDES), default_timeout=60)
    for key, value in (query or {}).items():
        at.query_params[key] = value
    open_panel(at, "slides", "teacher")
    return at.run()


def test_the_teacher_panel_makes_the_link_and_the_share_box_shows_it():
    at = _with_panel({"gamma": "0.4"})
    assert_healthy(at)
    assert "Make a teacher link" in panel_labels(at)
    at.checkbox(key="slides._teach.hide.seed").check()
    at.checkbox(key="slides._teach.lock.gamma").check()
    at.toggle(key="slides._teach.text").set_value(False)
    at.toggle(key="slides._teach.present").set_value(True).run()
    open_share(at, "slides")
    link = "slides?gamma=0.4&_hide=seed&_lock=gamma&_text=0&_present=1"
    assert sum(c.value.endswith(link) for c in at.code) == 2, "in the panel and the share box"
    assert "slides.seed" in widgets(at), "making a link does not change the teacher's view"
    at.button(key="slides._teach.apply").click().run()
    assert_healthy(at)
    assert "slides.seed" not in widgets(at) and disabled(widgets(at)["slides.gamma"])
    assert len(at.get("plotly_chart")) == 1, "presentation mode"
    at.button(key="slides._teach.clear").click().run()
    assert "slides.seed" in widgets(at) and len(at.get("plotly_chart")) == 3
    assert not RESERVED & set(at.query_params)


def test_add_this_view_to_my_lesson():
    at = _with_panel({"gamma": "0.4"})
    at.checkbox(key="slides._teach.lock.gamma").check()
    at.text_input(key="slides._teach.prompt").input("Predict: what does γ do?")
    at.text_area(key="slides._teach.reveal").input("It scales the lines.").run()
    at.button(key="slides._teach.add").click().run()
    assert_healthy(at)
    lesson = at.session_state[classroom.MY_LESSON]
    assert lesson.steps == (Step("slides", (("gamma", "0.4"), ("_lock", "gamma")),
                                 "Predict: what does γ do?", "It scales the lines."),)
    assert any("Step 1 of" in s.value for s in at.success)


# ---------------------------------------------------------------- presentation mode
def _slide_title(at: AppTest) -> str:
    (chart,) = at.get("plotly_chart")
    return json.loads(chart.proto.spec)["layout"]["title"]["text"]


def test_presentation_mode_shows_one_figure_at_a_time():
    at = run_page(SLIDES, query={"_present": "1"})
    assert_healthy(at)
    assert _slide_title(at) == "line 1"
    assert "**1 of 3**" in markdown_text(at)
    assert [h.value for h in at.subheader] == ["Lines"]
    assert widgets(at)["slides._slide.prev"].proto.disabled
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert spec["layout"]["height"] == classroom.SLIDE_HEIGHT
    assert spec["layout"]["font"]["size"] >= classroom.SLIDE_FONT
    at.button(key="slides._slide.next").click().run()
    assert _slide_title(at) == "line 2" and at.query_params["_slide"] == "2"
    at.button(key="slides._slide.next").click().run()
    assert _slide_title(at) == "bars" and [h.value for h in at.subheader] == ["Bars"]
    assert widgets(at)["slides._slide.next"].proto.disabled
    at.slider(key="slides.gamma").set_value(0.3).run()  # moving a control keeps the slide
    assert _slide_title(at) == "bars" and at.query_params["_slide"] == "3"
    at.button(key="slides._slide.prev").click().run()
    assert _slide_title(at) == "line 2"
    at.button(key="slides._slide.leave").click().run()
    assert len(at.get("plotly_chart")) == 3
    assert not RESERVED & set(at.query_params) and at.query_params["gamma"] == "0.3"


def test_a_slide_past_the_last_figure_shows_the_last():
    at = run_page(SLIDES, query={"_present": "1", "_slide": "9"})
    assert_healthy(at)
    assert _slide_title(at) == "bars" and at.query_params["_slide"] == "3"


# ---------------------------------------------------------------- the lessons page
def test_the_lessons_page_plays_a_ready_lesson():
    at = run_page(LESSON_PAGE)
    assert_healthy(at)
    first = LESSONS[0]
    assert at.selectbox(key="lessons.choice").value == f"ready:{first.id}"
    assert first.steps[0].prompt[:20] in at.subheader[0].value
    assert at.query_params["lesson"] == first.id and at.query_params["step"] == "1"
    at.button(key="lessons.next").click().run()
    assert at.query_params["step"] == "2"
    assert first.steps[1].prompt[:20] in at.subheader[0].value
    at.toggle(key=f"lessons.reveal.ready:{first.id}.1").set_value(True).run()
    assert any(first.steps[1].reveal[:20] in s.value for s in at.success)
    at.button(key="lessons.prev").click().run()
    assert at.query_params["step"] == "1"
    assert [b.proto.label for b in at.get("download_button")] == ["lesson.json"]


def test_a_lesson_link_opens_its_lesson_at_its_step():
    item = lessons.lesson("deadly-triad")
    at = run_page(LESSON_PAGE, query={"lesson": item.id, "step": "3"})
    assert_healthy(at)
    assert item.steps[2].prompt[:20] in at.subheader[0].value
    custom = Lesson(title="Mine", steps=item.steps[:2])
    at = run_page(LESSON_PAGE, query={"lesson": lessons.encode(custom), "step": "2"})
    assert_healthy(at)
    assert at.selectbox(key="lessons.choice").value == "link"
    assert item.steps[1].prompt[:20] in at.subheader[0].value
    shared = next(c.value for c in at.code if "lesson=" in c.value)
    assert lessons.decode(shared.split("lesson=")[1].split("&")[0]) == custom


def test_a_damaged_lesson_link_is_a_notice():
    at = run_page(LESSON_PAGE, query={"lesson": "not-a-lesson!"})
    assert not at.exception
    assert any("lesson was ignored" in w.value for w in at.warning)
    assert at.selectbox(key="lessons.choice").value == f"ready:{LESSONS[0].id}"


def _with_my_lesson(lesson: Lesson) -> AppTest:
    at = AppTest.from_file(str(LESSON_PAGE), default_timeout=60)
    at.session_state[classroom.MY_LESSON] = lesson
    return at.run()


def test_the_builder_reorders_deletes_and_edits_steps():
    steps = lessons.lesson("td-to-gae").steps
    at = _with_my_lesson(Lesson(title="Mine", steps=steps[:3]))
    assert_healthy(at)
    at.button(key="lessons.v0.down.0").click().run()
    mine = at.session_state[classroom.MY_LESSON]
    assert mine.steps == (steps[1], steps[0], steps[2])
    at.button(key="lessons.v1.del.2").click().run()
    assert at.session_state[classroom.MY_LESSON].steps == (steps[1], steps[0])
    at.text_input(key="lessons.v2.prompt.1").input("Predict: anything?").run()
    at.text_input(key="lessons.v2.title").input("Renamed").run()
    mine = at.session_state[classroom.MY_LESSON]
    assert mine.steps[1].prompt == "Predict: anything?" and mine.title == "Renamed"
    at.button(key="lessons.play_mine").click().run()
    assert at.selectbox(key="lessons.choice").value == "mine"
    assert "anything" not in at.subheader[0].value and at.query_params["step"] == "1"
    assert lessons.decode(at.query_params["lesson"]) == mine


def test_a_lesson_is_imported_from_its_json_or_its_link():
    item = lessons.lesson("exploration")
    at = run_page(LESSON_PAGE)
    at.text_area(key="lessons.import").input(item.to_json()).run()
    at.button(key="lessons.load").click().run()
    assert_healthy(at)
    assert at.session_state[classroom.MY_LESSON].steps == item.steps
    link = f"http://host/lessons?lesson={lessons.encode(lessons.lesson('deadly-triad'))}&step=2"
    at.text_area(key="lessons.import").input(link).run()
    at.button(key="lessons.load").click().run()
    assert at.session_state[classroom.MY_LESSON].title == "Why the deadly triad"
    at.text_area(key="lessons.import").input('{"title": 3}').run()
    at.button(key="lessons.load").click().run()
    assert any("should be text" in e.value for e in at.error) and not at.exception


def test_copying_a_ready_lesson_into_my_lesson():
    at = run_page(LESSON_PAGE)
    at.button(key="lessons.copy").click().run()
    assert at.session_state[classroom.MY_LESSON].steps == LESSONS[0].steps


def _app_at_lessons(query=None) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    at.query_params.update(query or {})
    return at.switch_page(str(LESSON_PAGE)).run()


def test_open_a_step_then_the_next_from_the_page():
    item = next(i for i in LESSONS
                if all(catalog.page_info(s.slug).exists for s in i.steps[:2]))
    at = _app_at_lessons({"lesson": item.id})
    assert_healthy(at)
    at.button(key="lessons.open").click().run()
    assert_healthy(at)
    step = item.steps[0]
    assert dict(at.query_params).items() <= step.params.items()  # defaults are left out
    assert_view(at, step.slug, step)
    assert any(step.prompt[:20] in m.value for m in at.markdown), "the prompt on the page"
    # AppTest reruns the page it was last sent to, not the one st.switch_page went to
    here = str(catalog.page_info(step.slug).file)
    at.toggle(key=f"{step.slug}._lesson.reveal.0").set_value(True)
    at.switch_page(here).run()
    assert any(step.reveal[:20] in s.value for s in at.success)
    assert_view(at, step.slug, step)
    at.button(key=f"{step.slug}._lesson.next").click()
    at.switch_page(here).run()
    assert_healthy(at)
    second = item.steps[1]
    assert dict(at.query_params).items() <= second.params.items()
    assert_view(at, second.slug, second)
    at.button(key=f"{second.slug}._lesson.back").click()
    at.switch_page(str(catalog.page_info(second.slug).file)).run()
    assert_healthy(at)
    assert at.query_params["step"] == "2"


def _every_control_locked():
    import streamlit as st

    from rlviz import ui

    controls = [
        ui.FloatSlider(name="f", label="f", min=0.0, max=1.0, value=0.5),
        ui.IntSlider(name="i", label="i", min=0, max=9, value=3),
        ui.Number(name="x", label="x", min=0.0, max=9.0, value=1.0),
        ui.Seed(),
        ui.Choice(name="c", label="c", options=["a", "b"], value="a"),
        ui.Choice(name="r", label="r", options=["a", "b"], value="a", widget="radio"),
        ui.Choice(name="g", label="g", options=["a", "b"], value="a", widget="segmented"),
        ui.SelectSlider(name="s", label="s", options=[1, 2, 3], value=2),
        ui.MultiChoice(name="m", label="m", options=["a", "b"], value=["a"]),
        ui.Toggle(name="t", label="t"),
        ui.Text(name="ta", label="ta", value="x"),
        ui.Text(name="ti", label="ti", value="x", area=False),
    ]
    for control in controls:
        key = f"locked.{control.name}"
        st.session_state.setdefault(key, control.default)
        assert control.locked().render(key) == control.default
        assert not control.disabled  # the control itself is unchanged


def test_every_kind_of_control_can_be_drawn_locked():
    at = AppTest.from_function(_every_control_locked, default_timeout=30).run()
    assert not at.exception, [e.message for e in at.exception]
    shown = widgets(at)
    assert len([k for k in shown if k.startswith("locked.")]) == 13  # and the seed's dice
    assert all(disabled(el) for el in shown.values()), [k for k, el in shown.items()
                                                          if not disabled(el)]


def test_a_projected_figure_is_a_copy_made_once():
    """Figures may be shared by every session (``cached_figures``): presenting one changes
    nothing in it, and the same figure gets the same copy."""
    import plotly.graph_objects as go

    fig = go.Figure(go.Bar(x=[1], y=[1])).add_annotation(text="a", font_size=9)
    shown = classroom.projected(fig)
    assert shown is not fig and fig.layout.height is None
    assert shown.layout.height == classroom.SLIDE_HEIGHT
    assert shown.layout.annotations[0].font.size == 12
    assert classroom.projected(fig) is shown
    assert classroom.projected(go.Figure(fig)) is not shown


def test_a_step_whose_page_is_not_in_this_app_says_so():
    lesson = Lesson(title="Later", steps=(Step("not_a_page", (("x", "1"),), "Predict: ?"),))
    at = run_page(LESSON_PAGE, query={"lesson": lessons.encode(lesson)})
    assert not at.exception
    assert any("not_a_page" in w.value for w in at.warning)
    assert at.button(key="lessons.open").disabled


def test_lesson_text_from_a_link_cannot_inject_markdown():
    evil = "Predict: ![x](http://example.org/pixel.png) [click](http://example.org) $x$ <b>b</b>"
    lesson = Lesson(title="t", steps=(Step("gae", (), evil, evil),))
    at = run_page(LESSON_PAGE, query={"lesson": lessons.encode(lesson)})
    shown = at.subheader[0].value
    assert "](" not in shown and "\\$" in shown and "\\<" in shown
