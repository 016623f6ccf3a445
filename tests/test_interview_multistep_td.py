import pytest

from rlviz.interview import multistep_td as bank
from tests.interview_family import check_bank, check_link_opens, check_placeholders, links_of

SLUG = "multistep_td"
LINKS = links_of(bank.QUESTIONS)


def test_the_bank_has_enough_distinct_questions():
    check_bank(bank.QUESTIONS, SLUG)


@pytest.mark.slow
@pytest.mark.parametrize("q", bank.QUESTIONS, ids=lambda q: q.id)
def test_every_placeholder_is_filled_by_rlviz(q):
    check_placeholders(q)


@pytest.mark.slow
@pytest.mark.parametrize(("qid", "link"), LINKS, ids=[f"{q}:{link.url}" for q, link in LINKS])
def test_every_link_opens_the_page_at_its_values(qid, link):
    check_link_opens(SLUG, link)
