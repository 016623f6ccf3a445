import numpy as np
import pytest

from rlviz import planning as pl
from rlviz.interview import dyna as bank
from rlviz.interview.whiteboard import dyna as wb
from tests.interview_family import check_bank, check_link_opens, check_placeholders, links_of

SLUG = "dyna"
LINKS = links_of(bank.QUESTIONS)


def test_the_bank_has_enough_distinct_questions():
    check_bank(bank.QUESTIONS, SLUG)


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
    check_placeholders(q)


@pytest.mark.slow
@pytest.mark.parametrize(("qid", "link"), LINKS, ids=[f"{q}:{link.url}" for q, link in LINKS])
def test_every_link_opens_the_page_at_its_values(qid, link):
    check_link_opens(SLUG, link)


@pytest.mark.slow  # four sweeping studies, a few seconds
def test_the_sweeping_answers_hold_on_the_library():
    by_id = {q.id: q for q in bank.QUESTIONS}
    nums = bank._sweeping_numbers()
    ratio = float(nums["ratio_2"].replace(",", ""))
    prediction = by_id["dyna.prioritized_sweeping"].prediction
    assert prediction.options[prediction.answer] == "About 40" and 25 <= ratio <= 80
    theta = bank._theta_numbers()
    assert " and " not in theta["ps_095"]  # θ = 10⁻² leaves every count as at θ = 0
    assert float(theta["start_095"]) > 1e-2  # the reason: the start's priority is above θ
    assert theta["reached_05"] == "0%" and theta["reached_0"] != "0%"
    # A θ above the start's priority γ^far stops the backups short of the start.
    assert float(theta["start_095"]) < 0.3 and theta["reached_03"] == "0%"
