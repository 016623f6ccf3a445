import string

import pytest

from rlviz.interview import DIFFICULTIES, TOPICS, for_page
from rlviz.interview import multistep_td as bank
from rlviz.ui.chrome import DECLARED
from tests.conftest import PAGES, run_page

SLUG = "multistep_td"
LINKS = [(q.id, link) for q in bank.QUESTIONS for link in q.links]


def test_the_bank_has_enough_distinct_questions():
    assert len(bank.QUESTIONS) >= 6
    assert len({q.id for q in bank.QUESTIONS}) == len(bank.QUESTIONS)
    assert len({q.question for q in bank.QUESTIONS}) == len(bank.QUESTIONS)
    assert [q.id for q in for_page(SLUG)] == [q.id for q in bank.QUESTIONS]
    for q in bank.QUESTIONS:
        assert q.id.startswith(f"{SLUG}.")
        assert q.topic in TOPICS and q.difficulty in DIFFICULTIES
        assert 3 <= len(q.answer) <= 6
        assert q.links and all(link.page == SLUG for link in q.links)
    assert any(q.whiteboard is not None for q in bank.QUESTIONS)
    assert sum(q.prediction is not None for q in bank.QUESTIONS) >= 3


@pytest.mark.slow
@pytest.mark.parametrize("q", bank.QUESTIONS, ids=lambda q: q.id)
def test_every_placeholder_is_filled_by_rlviz(q):
    names = {name for point in q.answer for _, name, _, _ in string.Formatter().parse(point)
             if name}
    if not names:
        assert q.numbers is None
        return
    points = q.answer_points()
    assert all("{" not in p for p in points)
    assert names <= set(q.numbers())


@pytest.mark.slow
@pytest.mark.parametrize(("qid", "link"), LINKS, ids=[f"{q}:{link.url}" for q, link in LINKS])
def test_every_link_opens_the_page_at_its_values(qid, link):
    at = run_page(PAGES / f"{SLUG}.py", query=dict(link.query))
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert not at.warning, [w.value for w in at.warning]
    controls = DECLARED[SLUG]
    for name, text in link.query.items():
        control = controls[name]
        assert control.encode(at.session_state[f"{SLUG}.{name}"]) == text, name
    assert {k: at.query_params.get(k) for k in link.query} == dict(link.query)
