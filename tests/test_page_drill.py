"""The drill page under AppTest: filters, the quiz flow, progress kept only in the URL."""

import pytest

from rlviz import drill, interview
from rlviz.interview import TOPICS
from tests.conftest import PAGES, assert_healthy, run_page

PAGE = PAGES / "drill.py"
BANK = interview.bank()


def query_of(at) -> dict[str, str]:
    return {k: at.query_params[k][0] if isinstance(at.query_params[k], list)
            else at.query_params[k] for k in at.query_params}


def heading(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("#### "))[5:]


def test_defaults():
    at = run_page(PAGE)
    assert_healthy(at)
    assert at.title[0].value == "Interview drill"
    assert heading(at) == BANK[0].question
    assert {b.proto.label for b in at.get("download_button")} == {
        "Handout (Markdown)", "Handout (HTML, prints well)"}
    assert len(at.dataframe) == 1


def test_a_prediction_is_committed_revealed_and_marked():
    at = run_page(PAGE)
    first = BANK[0]
    assert first.prediction is not None
    assert at.button(key="drill.reveal").disabled  # commit to an option first
    wrong = (first.prediction.answer + 1) % len(first.prediction.options)
    at.radio(key=f"drill.choice.{first.id}").set_value(first.prediction.options[wrong]).run()
    at.button(key="drill.reveal").click().run()
    assert_healthy(at)
    assert at.warning and first.prediction.options[first.prediction.answer] in at.warning[0].value
    shown = " ".join(m.value for m in at.markdown)
    assert all(link.url in shown for link in first.links)
    assert all(p in shown for p in first.answer_points())

    at.button(key="drill.missed").click().run()
    assert_healthy(at)
    query = query_of(at)
    assert query["missed"] == drill.token(first.id) and "known" not in query
    assert heading(at) == BANK[1].question
    assert query["q"] == drill.token(BANK[1].id)


def test_free_text_whiteboard_and_knew_it():
    topic = "Dynamic programming"
    at = run_page(PAGE, query={"topic": str(TOPICS.index(topic))})
    chosen = drill.filter_questions(BANK, topics=[topic])
    q = chosen[0]
    assert q.prediction is None and q.whiteboard is not None
    assert heading(at) == q.question
    at.text_area(key=f"drill.answer.{q.id}").input("max over actions of r + γ P V").run()
    at.button(key="drill.reveal").click().run()
    assert_healthy(at)
    assert any("def " in c.value for c in at.code), "the whiteboard version"
    assert at.text_area(key=f"drill.answer.{q.id}").value == "max over actions of r + γ P V"
    at.button(key="drill.knew").click().run()
    assert query_of(at)["known"] == drill.token(q.id)
    assert heading(at) == chosen[1].question


def test_progress_survives_a_reload_through_the_url_alone():
    known = [q for q in BANK if q.topic == "Offline RL"][:2]
    missed = [q for q in BANK if q.topic == "Bandits"][:1]
    progress = drill.Progress()
    for q in known:
        progress = progress.mark(q.id, knew=True)
    for q in missed:
        progress = progress.mark(q.id, knew=False)
    query = drill.encode(progress, BANK)
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    table = at.dataframe[0].value.set_index("topic")
    assert table.loc["Offline RL", "knew it"] == 2
    assert table.loc["Bandits", "didn't"] == 1
    assert table["knew it"].sum() == 2 and table["didn't"].sum() == 1
    assert any(missed[0].question in m.value for m in at.markdown), "listed to revise"
    assert query_of(at)["known"] == query["known"]


def test_filters_come_from_and_go_to_the_url():
    at = run_page(PAGE, query={"topic": f"{TOPICS.index('Distributional RL')}", "level": "1"})
    assert_healthy(at)
    chosen = drill.filter_questions(BANK, topics=["Distributional RL"], difficulties=[1])
    assert heading(at) == chosen[0].question
    assert f"{len(chosen)} of {len(BANK)} questions selected." in [c.value for c in at.caption]
    at.multiselect(key="drill.topics").set_value([]).run()
    assert "topic" not in query_of(at)


def test_bad_links_fall_back_quietly():
    at = run_page(PAGE, query={"topic": "99,x", "level": "7", "known": "!!!abc", "q": "zzz"})
    assert_healthy(at)
    assert heading(at) == BANK[0].question
    assert any("no longer in the bank" in c.value for c in at.caption)


@pytest.mark.slow
def test_marking_every_question_of_a_selection_ends_with_a_summary():
    topic = "Bandits"
    at = run_page(PAGE, query={"topic": str(TOPICS.index(topic))})
    chosen = drill.filter_questions(BANK, topics=[topic])
    for q in chosen:
        assert heading(at) == q.question
        if q.prediction is not None:
            at.radio(key=f"drill.choice.{q.id}").set_value(q.prediction.options[0]).run()
        at.button(key="drill.reveal").click().run()
        at.button(key="drill.knew").click().run()
        assert_healthy(at)
    assert at.success and "Every question in this selection is marked" in at.success[-1].value
    at.button(key="drill.restart").click().run()
    assert "known" not in query_of(at)
    assert heading(at) == chosen[0].question
