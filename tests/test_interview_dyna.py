import string

import numpy as np
import pytest

from rlviz import planning as pl
from rlviz.interview import DIFFICULTIES, TOPICS, for_page
from rlviz.interview import dyna as bank
from rlviz.interview.whiteboard import dyna as wb
from rlviz.ui.chrome import DECLARED
from tests.conftest import PAGES, run_page

SLUG = "dyna"
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


@pytest.mark.parametrize("seed", range(5))
def test_the_whiteboard_step_equals_rlviz_on_random_inputs(seed):
    rng = np.random.default_rng(seed)
    n_states, n_actions, replays = 9, 4, 12
    q0 = rng.normal(size=(n_states, n_actions))
    model = {(int(s), int(a)): (float(rng.normal()), int(rng.integers(n_states)))
             for s, a in rng.integers([n_states, n_actions], size=(20, 2))}
    s, a, r, s2 = 3, 1, float(rng.normal()), 5
    pairs = list(model) + [(s, a)]
    chosen = [pairs[i] for i in rng.integers(len(pairs), size=replays)]
    alpha, gamma = float(rng.uniform(0.05, 1)), float(rng.uniform(0.5, 1))
    board = wb.dyna_q_step(q0.copy(), dict(model), s, a, r, s2, chosen, alpha, gamma)

    mine = q0.copy()
    mine[s, a] = pl.q_update(mine[s, a], r, mine[s2], alpha=alpha, gamma=gamma)
    model[(s, a)] = (r, s2)
    ps = np.array([[p[0] for p in chosen]])
    pa = np.array([[p[1] for p in chosen]])
    pr = np.array([[model[p][0] for p in chosen]])
    pn = np.array([[model[p][1] for p in chosen]])
    mine = pl.plan(mine[None], ps, pa, pr, pn, alpha=alpha, gamma=gamma)[0]
    np.testing.assert_array_equal(board, mine)


def test_the_whiteboard_bonus_equals_rlviz():
    rng = np.random.default_rng(0)
    r, tau = rng.normal(size=50), rng.integers(0, 5000, size=50)
    np.testing.assert_array_equal(wb.dyna_q_plus_reward(r, tau, 1e-3),
                                  pl.exploration_bonus(r, tau, 1e-3))


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
