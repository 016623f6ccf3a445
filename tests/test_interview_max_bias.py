"""The maximization-bias interview questions: well formed, computed numbers, links that open."""

import re
import string

import numpy as np
import pytest

from rlviz import max_bias as mb
from rlviz.interview import max_bias
from rlviz.interview.whiteboard import max_bias as wb
from rlviz.ui.chrome import DECLARED
from tests.conftest import PAGES, assert_healthy, run_page
from tests.interview_family import check_bank

QUESTIONS = max_bias.QUESTIONS
LINKS = [(q.id, i, link) for q in QUESTIONS for i, link in enumerate(q.links)]


def test_the_bank_is_well_formed():
    check_bank(QUESTIONS, "max_bias")
    assert all(q.page == "max_bias" for q in QUESTIONS)


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_every_placeholder_is_filled_by_rlviz_and_no_number_is_typed(q):
    names = {f for point in q.answer for _, f, _, _ in string.Formatter().parse(point) if f}
    if names:
        assert q.numbers is not None
        assert names <= set(q.numbers())
    assert all("{" not in p for p in q.answer_points())
    for point in q.answer:  # decimals only where they are settings of the view linked
        text = re.sub(r"\{[a-z_0-9]+\}", "", point)
        for number in re.findall(r"(?<![\w.])\d+\.\d+", text):
            assert number in {"0.1", "0.5", "6.7", "6.5"}, (q.id, number)


def test_numbers_match_the_library():
    values = max_bias._size_numbers()
    assert values["e10"] == f"{mb.expected_max_of_normals(10):.4f}" == "1.5388"
    assert values["ratio"] == "1.4142"
    curve = max_bias._curve_numbers()
    assert curve["opt"] == "5.0"
    assert float(curve["q_peak"]) > float(curve["es_peak"]) > float(curve["dq_peak"])
    gap = max_bias._gap_numbers()
    assert gap["d_gap"].startswith("−") and gap["s_gap"].startswith("+")


@pytest.mark.parametrize(("qid", "i", "link"), LINKS, ids=lambda v: v if isinstance(v, str)
                         else str(v) if isinstance(v, int) else "")
def test_every_link_opens_the_page_at_the_named_values(qid, i, link):
    at = run_page(PAGES / "max_bias.py", query=dict(link.query))
    assert_healthy(at)
    assert not at.warning, [w.value for w in at.warning]
    controls = DECLARED["max_bias"]
    for name, text in link.query.items():
        value = at.session_state[f"max_bias.{name}"]
        assert controls[name].encode(value) == text, (qid, name)
    assert link.url.startswith("/max_bias")


@pytest.mark.parametrize("seed", range(4))
def test_the_whiteboard_double_q_replays_the_library_run(seed):
    rng = np.random.default_rng(seed)
    mdp = mb.MaxBiasMDP(n_actions=int(rng.integers(1, 15)), sigma=float(rng.uniform(0, 2)))
    eps, alpha, gamma = float(rng.uniform(0, 0.5)), float(rng.uniform(0.05, 1)), 0.9
    res = mb.run(mdp, algorithms=("double_q",), runs=4, episodes=45, epsilon=eps, alpha=alpha,
                 gamma=gamma, seed=seed)
    assert mb.whiteboard_replay(res) == 0.0


@pytest.mark.parametrize("seed", range(4))
def test_the_whiteboard_estimators_equal_the_library_on_random_samples(seed):
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 30)), 2 * int(rng.integers(1, 20))
    samples = rng.normal(rng.normal(size=(m, 1)), 1.0, size=(m, n))
    halves = samples.reshape(m, 2, n // 2).mean(axis=-1)
    single, double = mb.max_estimators(halves[:, 0], halves[:, 1])
    w_single, w_double = wb.max_estimators(samples)
    assert w_single == pytest.approx(float(single), abs=1e-12)
    assert w_double == pytest.approx(float(double), abs=1e-12)


def test_the_whiteboard_choice_is_the_librarys():
    rng = np.random.default_rng(0)
    for _ in range(500):
        q = rng.integers(0, 3, size=int(rng.integers(1, 8))).astype(float)
        eu, pu, eps = rng.random(), rng.random(), rng.uniform(0, 1)
        assert wb.choose(q, eps, eu, pu) == int(mb.epsilon_greedy(q, eu, pu, eps))
