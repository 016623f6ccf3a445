"""The deadly-triad interview questions: well formed, computed numbers, links that open cleanly."""

import re
import string

import numpy as np
import pytest

from rlviz import approximation as ap
from rlviz.interview import deadly_triad
from rlviz.interview.whiteboard import deadly_triad as wb
from rlviz.ui.chrome import DECLARED
from tests.conftest import PAGES, assert_healthy, run_page
from tests.interview_family import check_bank

QUESTIONS = deadly_triad.QUESTIONS
LINKS = [(q.id, i, link) for q in QUESTIONS for i, link in enumerate(q.links)]


def test_the_bank_is_well_formed():
    check_bank(QUESTIONS, "deadly_triad")
    assert all(q.page == "deadly_triad" for q in QUESTIONS)


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_every_placeholder_is_filled_by_rlviz_and_no_number_is_typed(q):
    names = {f for point in q.answer for _, f, _, _ in string.Formatter().parse(point) if f}
    if names:
        assert q.numbers is not None
        values = dict(q.numbers())
        assert names <= set(values)
    points = q.answer_points()
    assert all("{" not in p or "_{" in p for p in points)
    # Digits in the raw text only where they are part of the notation or the settings shown.
    for point in q.answer:
        text = re.sub(r"\{[a-z_]+\}|eq\. \d+\.\d+", "", point)  # placeholders, citations
        for number in re.findall(r"(?<![\w.])\d+\.\d+", text):
            assert number in {"0.99", "0.01", "0.005", "0.4", "0.7"}, (q.id, number)


def test_numbers_match_the_library():
    values = deadly_triad._baird_numbers()
    assert values["growth"] == f"{ap.growth_per_sweep(ap.baird(), alpha=0.01):.6f}"
    assert values["n_star"] == "13"
    assert float(values["gamma_star"]) == pytest.approx(15 / 17, abs=1e-6)
    two = deadly_triad._two_state_numbers()
    assert two["factor"] == "1.0098"


@pytest.mark.parametrize(("qid", "i", "link"), LINKS, ids=lambda v: v if isinstance(v, str)
                         else str(v) if isinstance(v, int) else "")
def test_every_link_opens_the_page_at_the_named_values(qid, i, link):
    at = run_page(PAGES / "deadly_triad.py", query=dict(link.query))
    assert_healthy(at)
    assert not at.warning, [w.value for w in at.warning]
    controls = DECLARED["deadly_triad"]
    for name, text in link.query.items():
        value = at.session_state[f"deadly_triad.{name}"]
        assert controls[name].encode(value) == text, (qid, name)
    assert link.url.startswith("/deadly_triad")


@pytest.mark.parametrize("seed", range(5))
def test_the_whiteboard_equals_the_library_on_random_inputs(seed):
    rng = np.random.default_rng(seed)
    f = 6
    w, v, x, x_next = (rng.normal(size=f) for _ in range(4))
    r, rho = rng.normal(), rng.uniform(0, 5)
    np.testing.assert_allclose(
        wb.off_policy_td(w, x, x_next, r, rho, 0.9, 0.05),
        ap.semi_gradient_td_step(w, x, x_next, r, rho, gamma=0.9, alpha=0.05), rtol=1e-13)
    for got, want in zip(wb.tdc(w, v, x, x_next, r, rho, 0.9, 0.05, 0.2),
                         ap.tdc_step(w, v, x, x_next, r, rho, gamma=0.9, alpha=0.05, beta=0.2),
                         strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13)
    p = float(rng.uniform(0, 1))
    gamma = float(rng.uniform(0.5, 0.99))
    for tabular in (False, True):
        pb = ap.baird(gamma=gamma, target_solid=p, tabular=tabular)
        assert bool(wb.expected_td_diverges(pb.features, pb.behaviour_distribution,
                                            pb.target_matrix, gamma)) == (ap.drift(pb) > 1e-12)
