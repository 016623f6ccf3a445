"""The GRPO page's interview questions: well formed, their links open the view they promise, and
the whiteboard version equals rlviz."""

import numpy as np
import pytest
import torch

from rlviz import interview, llm
from rlviz.interview import grpo as bank
from rlviz.interview.whiteboard import grpo as wb
from rlviz.ui.chrome import DECLARED
from tests.conftest import PAGES, assert_healthy, run_page

QUESTIONS = bank.QUESTIONS
LINKS = [(q.id, i, link) for q in QUESTIONS for i, link in enumerate(q.links)]


def test_the_bank_is_well_formed():
    assert len(QUESTIONS) >= 6
    assert len({q.id for q in QUESTIONS}) == len(QUESTIONS)
    assert interview.for_page("grpo") == QUESTIONS
    for q in QUESTIONS:
        assert q.id.startswith("grpo.") and q.page == "grpo"
        assert q.topic in interview.TOPICS and q.difficulty in interview.DIFFICULTIES
        assert 3 <= len(q.answer) <= 6 and q.links
        assert all(link.page == "grpo" for link in q.links)
        points = q.answer_points()  # every placeholder is filled
        assert not any("{" in p for p in points)
    assert any(q.prediction for q in QUESTIONS)
    assert any(q.whiteboard is wb.grpo_advantages for q in QUESTIONS)


def test_numbers_come_from_the_library():
    q = next(q for q in QUESTIONS if q.id == "grpo.group-advantage")
    values = q.numbers()
    assert float(values["a"]) == pytest.approx(float(llm.worked_group([1, 0, 0, 1])
                                                     .advantages["grpo"][0]), abs=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize(("qid", "i", "link"), LINKS, ids=lambda x: x if isinstance(x, str)
                         else str(x) if isinstance(x, int) else "")
def test_every_link_opens_the_page_at_its_values(qid, i, link):
    at = run_page(PAGES / "grpo.py", query=dict(link.query), timeout=300)
    assert_healthy(at)
    assert not at.warning, [w.value for w in at.warning]
    declared = DECLARED["grpo"]
    for name, text in link.query.items():
        control = declared[name]
        assert control.encode(at.session_state[f"grpo.{name}"]) == text, name


@pytest.mark.parametrize("seed", range(5))
def test_the_whiteboard_equals_rlviz_on_random_inputs(seed):
    rng = np.random.default_rng(seed)
    g, t = int(rng.integers(2, 9)), 7
    rewards = rng.integers(0, 2, g).astype(float) if seed % 2 else rng.normal(size=g)
    logp = np.log(rng.random((g, t)))
    old = logp + 0.2 * rng.standard_normal((g, t))
    ref = np.log(rng.random((g, t)))
    mask = rng.random((g, t)) < 0.7
    mask[:, 2] = True
    np.testing.assert_allclose(wb.grpo_advantages(rewards),
                               llm.grpo_advantages(rewards).numpy(), atol=1e-12)
    lib = float(llm.grpo_loss(logp, old, ref, rewards, mask, epsilon=0.2, beta=0.04))
    assert wb.grpo_loss(logp, old, ref, rewards, mask, clip=0.2, beta=0.04) == pytest.approx(
        lib, abs=1e-12)


def test_the_whiteboard_loss_is_what_train_step_minimises_for_grpo():
    """One GRPO run's training loss on its first batch equals the whiteboard's, group by group."""
    res = llm.compare(["grpo"], steps=1, seeds=1, settings=llm.Settings(beta=0.04))
    task = res.task
    views = [llm.replay_group(res, "grpo", 0, p) for p in range(len(task.prompts))]
    board = np.mean([wb.grpo_loss(v.logp, v.logp, v.logp_ref, v.rewards, v.is_response)
                     for v in views])
    # The same loss through the library's training pieces, on the whole batch at once.
    logp = torch.tensor(np.stack([v.logp for v in views]))[None]
    mask = torch.tensor(np.stack([v.is_response for v in views]))[None]
    w = llm.token_weights(mask.flatten(1, 2), "sequence_mean").view(logp.shape)
    adv = llm.grpo_advantages(torch.tensor(np.stack([v.rewards for v in views]))[None])
    ref = torch.tensor(np.stack([v.logp_ref for v in views]))[None]
    loss = (llm.policy_loss(logp, logp, adv[..., None].expand(logp.shape), w, epsilon=0.2)
            + 0.04 * (w * llm.kl_estimates(logp, ref).k3).sum())
    assert float(loss) == pytest.approx(board, abs=1e-12)
