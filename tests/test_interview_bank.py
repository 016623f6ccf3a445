"""The whole question bank: well formed, distinct, enough per page, numbers and links that work.

The families' own test files check their details; this file holds every question to the same
rules, and opens every live link of the eight original pages' questions and the fundamentals.
"""

import importlib
import re
import string
from functools import cache

import pytest

from rlviz import drill, interview
from rlviz.interview import DIFFICULTIES, TOPICS
from rlviz.ui import catalog
from rlviz.ui.chrome import DECLARED
from tests.conftest import PAGES, assert_healthy, run_page

BANK = interview.bank()
WRITTEN = [p for p in catalog.PAGES if p.exists]
ORIGINAL = ("value_iteration", "cliff_td", "bandits", "ppo_clip", "gae", "mcts", "c51", "cql")
OWN = [q for q in BANK if q.id.split(".")[0] in (*ORIGINAL, "fundamentals")]
LINKS = sorted({link.url: link for q in OWN for link in q.links
                if catalog.page_info(link.page).exists}.items())
OPENED = [(url, link) for url, link in LINKS if link.query]  # defaults: tests/test_app.py


def normal(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def test_every_question_is_well_formed():
    slugs = {p.slug for p in catalog.PAGES}
    for q in BANK:
        family = q.id.split(".")[0]
        assert family in slugs | {"fundamentals"}, q.id
        assert q.topic in TOPICS and q.difficulty in DIFFICULTIES, q.id
        assert 3 <= len(q.answer) <= 6, q.id
        assert q.links and all(link.page in slugs for link in q.links), q.id
        assert q.page in slugs | {None}, q.id
        assert (q.page is None) == (family == "fundamentals"), q.id
        if q.whiteboard is not None:
            assert q.whiteboard.__module__ == f"rlviz.interview.whiteboard.{family}", q.id


def test_no_two_questions_are_the_same():
    assert len({q.id for q in BANK}) == len(BANK)
    assert len({normal(q.question) for q in BANK}) == len(BANK)
    assert len({drill.token(q.id) for q in BANK}) == len(BANK)


@pytest.mark.parametrize("info", WRITTEN, ids=lambda p: p.slug)
def test_every_written_page_has_at_least_six_questions(info):
    assert len(interview.for_page(info.slug)) >= 6


def test_the_bank_size():
    assert len([q for q in BANK if q.id.startswith("fundamentals.")]) >= 20
    for slug in ORIGINAL:
        assert len(interview.for_page(slug)) >= 7, slug
    if all(p.exists for p in catalog.PAGES):  # every family's questions are in
        assert len(BANK) >= 120


def test_every_original_family_has_a_whiteboard_and_predictions():
    for slug in ORIGINAL:
        questions = interview.for_page(slug)
        module = importlib.import_module(f"rlviz.interview.whiteboard.{slug}")
        assert any(q.whiteboard is not None and q.whiteboard.__module__ == module.__name__
                   for q in questions), slug
    assert sum(q.prediction is not None for q in OWN) >= 20


def test_placeholders_have_numbers():
    for q in BANK:
        names = {n for p in q.answer for _, n, _, _ in string.Formatter().parse(p) if n}
        assert bool(names) == (q.numbers is not None), q.id


@pytest.mark.slow
@pytest.mark.parametrize("q", [q for q in OWN if q.numbers], ids=lambda q: q.id)
def test_numbers_come_from_rlviz(q):
    names = {n for p in q.answer for _, n, _, _ in string.Formatter().parse(p) if n}
    values = q.numbers()
    assert names <= set(values)
    points = q.answer_points()
    assert all(re.search(r"\{\w+\}", p) is None for p in points)
    assert not any(re.search(r"\bnan\b|\binf\b", p) for p in points)


@cache
def declared(slug: str) -> dict:
    """The controls a page declares at its defaults (one run per page)."""
    at = run_page(PAGES / f"{slug}.py", timeout=300)
    assert_healthy(at)
    return dict(DECLARED[slug])


@pytest.mark.parametrize(("url", "link"), LINKS, ids=[u for u, _ in LINKS])
def test_every_link_names_real_controls_in_their_url_form(url, link):
    controls = declared(link.page)
    for name, text in link.query.items():
        assert name in controls, f"{link.page} has no control {name!r}"
        control = controls[name]
        assert control.encode(control.parse(text)) == text, (name, text)


@pytest.mark.slow
@pytest.mark.parametrize(("url", "link"), OPENED, ids=[u for u, _ in OPENED])
def test_every_link_opens_its_page_at_its_values(url, link):
    at = run_page(PAGES / f"{link.page}.py", query=dict(link.query), timeout=300)
    assert_healthy(at)
    notices = [w.value for w in at.warning if w.proto.icon == ":material/link_off:"]
    assert not notices, notices
    for name, text in link.query.items():
        control = DECLARED[link.page][name]
        assert control.encode(at.session_state[f"{link.page}.{name}"]) == text, name
