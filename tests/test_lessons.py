"""Lessons and teacher links as data: JSON and link round trips, validation, the ready lessons."""

import ast
import base64
import json
import zlib
from dataclasses import replace

import pytest

from rlviz import lessons
from rlviz.errors import InputError
from rlviz.lessons import LESSONS, RESERVED, Lesson, Step, TeacherView
from rlviz.ui import catalog
from tests.conftest import PAGES

READY = {item.id: item for item in LESSONS}


def _lesson() -> Lesson:
    return Lesson(title="Two steps", summary="s", minutes=10, steps=(
        Step("cliff_td", (("epsilon", "0.2"), ("_lock", "epsilon")), "Predict: a?", "b"),
        Step("gae", (("lam", "0.5"),), "Predict: c?"),
    ))


def test_the_ready_lessons():
    titles = {item.title for item in LESSONS}
    assert len(LESSONS) >= 5
    assert {"On-policy vs off-policy in 20 minutes", "From TD(0) to GAE", "Exploration",
            "From PPO to GRPO", "Why the deadly triad"} <= titles
    assert len(READY) == len(LESSONS), "ids are unique"
    slugs = {p.slug for p in catalog.PAGES}
    for item in LESSONS:
        assert len(item.steps) >= 2, item.id
        for step in item.steps:
            assert step.slug in slugs, (item.id, step.slug)
            assert step.prompt.startswith("Predict") and step.reveal, (item.id, step.slug)
            view, problems = TeacherView.from_query(step.params)
            assert not problems


def test_the_on_off_policy_lesson_runs_cliff_then_max_bias_then_importance_sampling():
    order = [s.slug for s in lessons.lesson("on-off-policy").steps]
    assert list(dict.fromkeys(order)) == ["cliff_td", "max_bias", "importance_sampling"]


@pytest.mark.parametrize("item", LESSONS, ids=lambda x: x.id)
def test_a_lesson_round_trips_through_json_and_its_link(item):
    plain = replace(item, id="")  # a ready lesson's id is its own link, not part of its data
    assert Lesson.from_json(item.to_json()) == plain
    word = lessons.encode(item)
    assert lessons.decode(word) == plain
    assert len(word) < 2000 and word.replace("-", "").replace("_", "").isalnum()


def test_an_edited_lesson_round_trips():
    lesson = _lesson().moved(1, -1).edited(0, prompt="Predict: é ∞ “quotes” & = ?")
    assert [s.slug for s in lesson.steps] == ["gae", "cliff_td"]
    assert Lesson.from_json(lesson.to_json()) == lesson
    assert lessons.decode(lessons.encode(lesson)) == lesson
    assert lesson.without(0).steps == lesson.steps[1:]
    assert lesson.moved(0, -5).steps == lesson.steps  # clamped at the ends


def test_a_step_is_a_page_view():
    step = _lesson().steps[0]
    assert step.path == "cliff_td?epsilon=0.2&_lock=epsilon"
    assert step.teacher == TeacherView(lock=("epsilon",))
    assert Step.from_dict({"page": "cliff_td", "query": "?epsilon=0.2&_lock=epsilon",
                           "prompt": "Predict: a?", "reveal": "b"}) == step


@pytest.mark.parametrize(("text", "reason"), [
    ("not json", "not JSON"),
    ("[]", "JSON object"),
    ('{"title": ""}', "title is empty"),
    ('{"title": "t", "steps": {}}', "should be a list"),
    ('{"title": "t", "steps": [{"page": "../etc"}]}', "step 1: step page"),
    ('{"title": "t", "steps": [{"page": "gae", "query": {"a b": "1"}}]}', "not a control name"),
    ('{"title": "t", "steps": [{"page": "gae", "prompt": 3}]}', "should be text"),
    ('{"title": "t", "minutes": "ten"}', "minutes"),
    ('{"title": "t", "rlviz_lesson": 99}', "format"),
    (json.dumps({"title": "t", "steps": [{"page": "gae"}] * 41}), "at most 40 steps"),
    (json.dumps({"title": "x" * 3000}), "longer than"),
])
def test_bad_lesson_json_is_a_clear_input_error(text, reason):
    with pytest.raises(InputError, match=reason):
        Lesson.from_json(text)


def test_a_damaged_or_oversized_link_is_a_clear_input_error():
    word = lessons.encode(_lesson())
    for bad in (word[: len(word) // 2], "%%%", word[:-3] + "AAA"):
        with pytest.raises(InputError, match="damaged|cut short"):
            lessons.decode(bad)
    bomb = base64.urlsafe_b64encode(zlib.compress(b" " * 10_000_000)).decode()
    with pytest.raises(InputError, match="too large|longer than"):
        lessons.decode(bomb)
    with pytest.raises(InputError, match="longer than"):
        lessons.decode("A" * 20_000)


def test_teacher_view_round_trips_through_its_query():
    view = TeacherView(hide=("seed", "rows"), lock=("eps",), text=False, present=True, slide=3)
    query = view.query()
    assert query == {"_hide": "seed,rows", "_lock": "eps", "_text": "0", "_present": "1",
                     "_slide": "3"}
    assert set(query) <= RESERVED
    assert TeacherView.from_query(query) == (view, [])
    assert TeacherView().query() == {} and not TeacherView().active
    assert view.pinned == ("seed", "rows", "eps")


def test_bad_teacher_parameters_are_reported_and_the_rest_applies():
    view, problems = TeacherView.from_query(
        {"_text": "maybe", "_slide": "0", "_hide": "seed,<b>", "_lock": "eps,,eps"})
    assert view == TeacherView(hide=("seed",), lock=("eps",))
    assert len(problems) == 3 and any("_text=maybe" in p for p in problems)


def test_no_page_control_is_named_like_a_teacher_parameter():
    """Teacher parameters start with an underscore; no control name on any page does."""
    for path in PAGES.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                        assert not str(kw.value.value).startswith("_"), (path.name, kw.value.value)
                    if kw.arg == "name" and isinstance(kw.value, ast.JoinedStr):
                        first = kw.value.values[0]
                        assert not (isinstance(first, ast.Constant)
                                    and str(first.value).startswith("_")), path.name
