"""The exploration page's interview questions: well formed, numbers from rlviz, links that open."""

import re

import numpy as np
import pytest

from rlviz import exploration as ex
from rlviz.interview import DIFFICULTIES, TOPICS, for_page
from rlviz.interview import exploration as bank
from rlviz.interview.whiteboard import exploration as wb
from rlviz.ui.chrome import DECLARED
from tests.conftest import PAGES, assert_healthy, run_page

QUESTIONS = for_page("exploration")
LINKS = [(q.id, link) for q in QUESTIONS for link in q.links]


def test_the_bank_has_enough_distinct_questions():
    assert len(QUESTIONS) >= 6
    assert QUESTIONS == bank.QUESTIONS
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    assert len({q.question for q in QUESTIONS}) == len(QUESTIONS)
    for q in QUESTIONS:
        assert q.topic in TOPICS and q.difficulty in DIFFICULTIES
        assert 3 <= len(q.answer) <= 6 and q.links and q.page == "exploration"


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_answers_fill_every_number_from_rlviz(q):
    points = q.answer_points()
    assert all("{" not in p for p in points)
    if q.numbers is not None:
        values = q.numbers()
        assert all(re.fullmatch(r"[-0-9.,]+", v) for v in values.values()), values


def test_the_numbers_are_the_libraries():
    values = bank._deep_sea_numbers()
    assert values["e10"] == "1,024"
    assert float(values["v_star"]) == pytest.approx(0.99)
    river = bank._riverswim_numbers()
    plan = ex.finite_horizon_plan(ex.riverswim().mdp, 20)
    assert float(river["v_star"]) == pytest.approx(plan.start_values[0], abs=1e-4)


def test_whiteboard_answers_equal_rlviz():
    for n in (3, 9):
        assert wb.random_walker_episodes(n) == 1 / ex.first_reach_probability(ex.deep_sea(n))
    sea = ex.deep_sea(6)
    np.testing.assert_allclose(wb.backward_induction(sea.mdp.P, sea.mdp.R, 6),
                               ex.finite_horizon_plan(sea.mdp, 6).q, atol=1e-12)


@pytest.mark.parametrize(("qid", "link"), LINKS, ids=[f"{i}:{link.url}" for i, link in LINKS])
def test_every_link_opens_the_view_it_names(qid, link):
    assert link.page == "exploration"
    at = run_page(PAGES / "exploration.py", query=dict(link.query))
    assert_healthy(at)
    assert not at.warning, [w.value for w in at.warning]
    controls = DECLARED["exploration"]
    for name, text in link.query.items():
        assert name in controls, name
        value = at.session_state[f"exploration.{name}"]
        assert controls[name].encode(value) == text, (name, value)
