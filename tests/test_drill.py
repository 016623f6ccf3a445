"""The drill's logic: filtering, progress as URL text, the summary and the handout."""

import re

import pytest

from rlviz import drill, interview
from rlviz.interview import TOPICS

BANK = interview.bank()


def plain_points(q):  # the handout tests do not need the numbers computed
    return q.answer


def test_tokens_are_short_url_safe_and_distinct():
    tokens = [drill.token(q.id) for q in BANK]
    assert len(set(tokens)) == len(tokens)
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{3}", t) for t in tokens)
    assert drill.token("cliff_td.three-targets") == drill.token("cliff_td.three-targets")


def test_progress_round_trips_through_the_url():
    progress = drill.Progress()
    for q in BANK[:7]:
        progress = progress.mark(q.id, knew=True)
    for q in BANK[7:10]:
        progress = progress.mark(q.id, knew=False)
    params = drill.encode(progress, BANK)
    assert set(params) == {"known", "missed"}
    assert len(params["known"]) == 7 * drill.TOKEN_LENGTH
    back, unknown = drill.decode(params, BANK)
    assert back == progress and unknown == 0
    assert drill.encode(drill.Progress(), BANK) == {}


def test_a_later_mark_replaces_an_earlier_one():
    qid = BANK[0].id
    progress = drill.Progress().mark(qid, knew=False).mark(qid, knew=True)
    assert progress.known == {qid} and not progress.missed


def test_bad_tokens_are_dropped_and_counted():
    good = drill.token(BANK[3].id)
    found, unknown = drill.decode({"known": good + "###ab", "missed": good}, BANK)
    assert found.known == {BANK[3].id} and not found.missed  # in both: known wins
    assert unknown == 2


def test_filters():
    some = drill.filter_questions(BANK, topics=["Bandits", "Offline RL"], difficulties=[1])
    assert some and all(q.topic in {"Bandits", "Offline RL"} and q.difficulty == 1 for q in some)
    assert drill.filter_questions(BANK) == BANK
    assert drill.filter_questions(BANK, page="c51") == interview.for_page("c51")


def test_next_question_skips_marked_ones_and_wraps():
    qs = BANK[:4]
    progress = drill.Progress().mark(qs[0].id, knew=True).mark(qs[2].id, knew=False)
    assert drill.next_question(qs, progress) == qs[1]
    assert drill.next_question(qs, progress, after=qs[1].id) == qs[3]
    assert drill.next_question(qs, progress, after=qs[3].id) == qs[1]
    done = progress.mark(qs[1].id, knew=True).mark(qs[3].id, knew=True)
    assert drill.next_question(qs, done) is None
    assert drill.next_question((), done) is None


def test_summary_counts_by_topic():
    progress = drill.Progress()
    for i, q in enumerate(BANK):
        if i % 3 == 0:
            progress = progress.mark(q.id, knew=i % 2 == 0)
    rows = drill.summary(BANK, progress)
    assert [r.topic for r in rows] == [t for t in TOPICS if any(q.topic == t for q in BANK)]
    assert sum(r.questions for r in rows) == len(BANK)
    assert sum(r.known + r.missed for r in rows) == len(progress.marked)
    assert all(r.unseen >= 0 for r in rows)


def test_markdown_handout_has_every_question_answer_and_link():
    chosen = drill.filter_questions(BANK, topics=["Distributional RL", "RLHF and LLMs"])
    text = drill.handout_markdown(chosen, base_url="https://rl.example.org", points=plain_points)
    for q in chosen:
        assert q.question in text
        assert all(f"https://rl.example.org{link.url}" in text for link in q.links)
    assert text.count("```python") == sum(q.whiteboard is not None for q in chosen)
    assert "## Distributional RL" in text and "## Bandits" not in text


def test_html_handout_is_self_contained_escaped_and_printable():
    text = drill.handout_html(BANK, points=plain_points)
    assert text.startswith("<!DOCTYPE html>") and "@media print" in text
    assert "break-inside: avoid" in text
    assert "<script" not in text and "http" not in text.split("<body>")[0]  # nothing fetched
    assert text.count("<section class='question'") == len(BANK)
    # Text with markup characters is shown, not interpreted.
    q = next(q for q in BANK if "<" in q.question or "<" in " ".join(q.answer))
    assert "&lt;" in text and q.id in text


@pytest.mark.slow
def test_handouts_with_every_number_filled():
    # Two topics whose numbers are quick; tests/test_interview_bank.py computes all of ours.
    chosen = drill.filter_questions(BANK, topics=["Dynamic programming", "Distributional RL"])
    points = {q.id: q.answer_points() for q in chosen}
    md = drill.handout_markdown(chosen)
    page = drill.handout_html(chosen, points=lambda q: points[q.id])
    for q in chosen:
        assert all(f"- {p}" in md for p in points[q.id])
    assert page.count("<section class='question'") == len(chosen)
