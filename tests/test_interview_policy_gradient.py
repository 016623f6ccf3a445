"""The policy-gradient interview questions: well formed, numbers from rlviz, links that open."""

import string

import pytest

from rlviz.interview import DIFFICULTIES, TOPICS, for_page
from rlviz.interview import policy_gradient as bank
from rlviz.ui.chrome import DECLARED
from tests.conftest import PAGES, run_page

SLUG = "policy_gradient"
LINKS = [(q.id, link) for q in bank.QUESTIONS for link in q.links]


def placeholders(q):
    return {name for point in q.answer for _, name, _, _ in string.Formatter().parse(point)
            if name}


def test_the_bank():
    qs = bank.QUESTIONS
    assert len(qs) >= 6
    assert len({q.id for q in qs}) == len(qs) and len({q.question for q in qs}) == len(qs)
    assert [q.id for q in for_page(SLUG)] == [q.id for q in qs]
    for q in qs:
        assert q.id.startswith(f"{SLUG}.") and q.page == SLUG
        assert q.topic in TOPICS and q.difficulty in DIFFICULTIES
        assert 3 <= len(q.answer) <= 6
        assert q.links and all(link.page == SLUG for link in q.links)
        assert (q.numbers is None) == (not placeholders(q))
    assert {q.difficulty for q in qs} == set(DIFFICULTIES)
    assert sum(q.whiteboard is not None for q in qs) >= 2
    assert sum(q.prediction is not None for q in qs) >= 3


@pytest.mark.parametrize("q", [q for q in bank.QUESTIONS if q.numbers], ids=lambda q: q.id)
def test_every_number_comes_from_rlviz(q):
    values = q.numbers()
    assert placeholders(q) <= set(values)
    for point in q.answer_points():
        assert "{" not in point and "}" not in point and "nan" not in point


@pytest.mark.slow
@pytest.mark.parametrize(("qid", "link"), LINKS, ids=[f"{q}:{link.url}" for q, link in LINKS])
def test_every_link_opens_the_page_at_its_values(qid, link):
    at = run_page(PAGES / f"{SLUG}.py", query=dict(link.query))
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert not at.warning, [w.value for w in at.warning]
    for name, text in link.query.items():
        control = DECLARED[SLUG][name]
        assert control.encode(at.session_state[f"{SLUG}.{name}"]) == text, name
    assert {k: at.query_params.get(k) for k in link.query} == dict(link.query)


@pytest.mark.slow
def test_the_critic_answer_quotes_the_view_it_links_to():
    q = next(q for q in bank.QUESTIONS if q.id == "policy_gradient.critic-trade")
    at = run_page(PAGES / f"{SLUG}.py", query={"study_p": "0.9"})
    table = next(m.value for m in at.markdown if "| check |" in m.value)
    row = next(r for r in table.splitlines() if "One-value critic" in r)
    shown = float(row.split("|")[3])
    assert f"{shown:.2f}" == q.numbers()["one9"]
