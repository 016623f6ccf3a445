"""The preference-learning questions: well formed, and every link opens the page as it says."""

import numpy as np
import pytest

from rlviz import interview
from rlviz import preferences as pref
from rlviz.interview import rlhf
from rlviz.interview.whiteboard import rlhf as wb
from rlviz.ui.chrome import DECLARED
from tests.conftest import PAGES, assert_healthy, run_page

QUESTIONS = rlhf.QUESTIONS
LINKS = [(q.id, link) for q in QUESTIONS for link in q.links]


def test_at_least_six_distinct_questions_in_the_bank():
    assert len(QUESTIONS) >= 6
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    assert len({q.question for q in QUESTIONS}) == len(QUESTIONS)
    assert [q.id for q in interview.for_page("rlhf")] == [q.id for q in QUESTIONS]


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_each_question_is_well_formed(q):
    assert q.id.startswith("rlhf.")
    assert q.topic in interview.TOPICS
    assert q.difficulty in interview.DIFFICULTIES
    assert 3 <= len(q.answer) <= 6
    assert q.page == "rlhf" and q.links
    assert all(link.page == "rlhf" for link in q.links)
    points = q.answer_points()  # every placeholder is filled
    assert not any("{" in p for p in points)


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q.numbers], ids=lambda q: q.id)
def test_numbers_come_from_rlviz(q):
    values = q.numbers()
    assert values and all(isinstance(v, str) and v for v in values.values())
    assert not any("nan" in v.lower() or "inf" in v.lower() for v in values.values())


def test_the_quoted_numbers_match_the_library():
    values = rlhf._best_of_n_numbers()
    data = pref.preference_data()
    bon = pref.best_of_n_stats(data.space, data.proxy, 1024)
    assert values["kl"] == f"{bon.kl:.3f}" and float(values["kl"]) < float(values["bound"])
    assert rlhf._dpo_numbers()["loss"] == f"{-np.log(1 / (1 + np.exp(-0.1))):.4f}"


@pytest.mark.parametrize(("qid", "link"), LINKS, ids=lambda x: x if isinstance(x, str) else
                         x.url)
def test_every_link_opens_the_page_at_its_values(qid, link):
    at = run_page(PAGES / "rlhf.py", query=dict(link.query))
    assert_healthy(at)
    assert not at.warning, [w.value for w in at.warning]
    controls = DECLARED["rlhf"]
    for name, text in link.query.items():
        assert at.session_state[f"rlhf.{name}"] == controls[name].parse(text), (qid, name)
    assert all("check_circle" in r for r in next(
        m.value for m in at.markdown if "| check |" in m.value).splitlines()[2:])


def test_predictions_point_at_a_real_option():
    for q in QUESTIONS:
        if q.prediction is not None:
            assert 0 <= q.prediction.answer < len(q.prediction.options)


@pytest.mark.parametrize("seed", range(8))
def test_the_whiteboard_versions_equal_rlviz_on_random_inputs(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 80))
    p_ref, r = rng.dirichlet(np.ones(k)), rng.normal(size=k) * 3
    beta, n = float(rng.uniform(0.01, 3)), int(rng.integers(1, 1025))
    np.testing.assert_allclose(wb.optimal_policy(p_ref, r, beta),
                               np.exp(pref.kl_optimal_policy(np.log(p_ref), r, beta)), atol=1e-12)
    np.testing.assert_allclose(wb.best_of_n(p_ref, r, n), pref.best_of_n(p_ref, r, n),
                               atol=1e-12)
    args = rng.normal(size=(4, 9)) * 2
    np.testing.assert_allclose(wb.dpo_loss(*args, beta), pref.dpo_loss(*args, beta=beta),
                               rtol=1e-13)


def test_questions_reference_the_whiteboard_where_it_answers_them():
    boards = {q.id: q.whiteboard for q in QUESTIONS if q.whiteboard is not None}
    assert boards["rlhf.dpo-derivation"] is wb.dpo_loss
    assert boards["rlhf.closed-form"] is wb.optimal_policy
    assert boards["rlhf.best-of-n"] is wb.best_of_n
