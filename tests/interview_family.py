"""The checks every page family's interview questions pass, shared by its test file.

Each ``tests/test_interview_<slug>.py`` calls these with its own bank module and adds what
only its family has (numbers against the library, whiteboard versions).
"""

from __future__ import annotations

import string

from rlviz.interview import DIFFICULTIES, TOPICS, Link, Question, for_page
from rlviz.ui.chrome import DECLARED
from tests.conftest import PAGES, run_page

__all__ = ["check_bank", "check_link_opens", "check_placeholders", "links_of"]


def links_of(questions) -> list[tuple[str, Link]]:
    """Every (question id, link) pair, for parametrising the link test."""
    return [(q.id, link) for q in questions for link in q.links]


def check_bank(questions, slug: str) -> None:
    """At least six distinct, well-formed questions, all this page's, with a whiteboard and
    at least three predictions."""
    assert len(questions) >= 6
    assert len({q.id for q in questions}) == len(questions)
    assert len({q.question for q in questions}) == len(questions)
    assert [q.id for q in for_page(slug)] == [q.id for q in questions]
    for q in questions:
        assert q.id.startswith(f"{slug}.")
        assert q.topic in TOPICS and q.difficulty in DIFFICULTIES
        assert 3 <= len(q.answer) <= 6
        assert q.links and all(link.page == slug for link in q.links)
    assert any(q.whiteboard is not None for q in questions)
    assert sum(q.prediction is not None for q in questions) >= 3


def check_placeholders(q: Question) -> None:
    """Every ``{name}`` in the answer is filled by the question's numbers from rlviz."""
    names = {name for point in q.answer for _, name, _, _ in string.Formatter().parse(point)
             if name}
    if not names:
        assert q.numbers is None
        return
    points = q.answer_points()
    assert all("{" not in p for p in points)
    assert names <= set(q.numbers())


def check_link_opens(slug: str, link: Link) -> None:
    """The link opens its page with no exception, error or notice, at the values it names."""
    at = run_page(PAGES / f"{slug}.py", query=dict(link.query))
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert not at.warning, [w.value for w in at.warning]
    controls = DECLARED[slug]
    for name, text in link.query.items():
        control = controls[name]
        assert control.encode(at.session_state[f"{slug}.{name}"]) == text, name
    assert {k: at.query_params.get(k) for k in link.query} == dict(link.query)
