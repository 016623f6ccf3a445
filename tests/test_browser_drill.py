"""The interview drill in headless Chromium: answer, reveal, mark, reload: the progress stays."""

import re

import pytest

from tests.conftest import ARTIFACTS, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_quiz_flow_survives_a_reload(server, browser_page):
    page = browser_page
    page.goto(f"{server}/drill")
    settle(page, timeout_ms=120_000)
    main = page.locator('[data-testid="stMain"]')
    assert main.get_by_text("0 of", exact=False).count() >= 1
    question = main.locator("h4").first.inner_text()

    # The first question in bank order has a prediction: commit to an option first.
    radio = main.locator('[data-testid="stRadio"]').first
    radio.locator("label").nth(1).click()
    settle(page)
    main.get_by_role("button", name="Commit and reveal the answer").click()
    main.get_by_text("The answer", exact=True).wait_for(timeout=60_000)
    settle(page)
    assert main.locator('[data-testid="stException"]').count() == 0
    assert main.get_by_text("See it live:", exact=False).count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "drill-revealed.png"), full_page=True)

    main.get_by_role("button", name="I knew it").click()
    page.wait_for_url(re.compile(r"known="))
    settle(page)
    assert main.locator("h4").first.inner_text() != question  # on to the next question
    url = page.url

    page.goto(url)  # a reload: a new session, only the URL carries the progress
    settle(page, timeout_ms=120_000)
    assert main.get_by_text(re.compile(r"^1 of \d+ questions in this selection marked")).count()
    assert re.search(r"known=", page.url)


def test_the_handout_downloads_as_printable_html(server, browser_page):
    page = browser_page
    topic = "Distributional RL"
    from rlviz.interview import TOPICS

    page.goto(f"{server}/drill?topic={TOPICS.index(topic)}")
    settle(page, timeout_ms=120_000)
    with page.expect_download(timeout=120_000) as download:
        page.get_by_role("button", name="Handout (HTML, prints well)").click()
    text = open(download.value.path(), encoding="utf-8").read()
    assert text.startswith("<!DOCTYPE html>") and "@media print" in text
    assert f"<h2>{topic}</h2>" in text and "<script" not in text
    assert not re.search(r"\{[a-z_0-9]+\}", text.split("</style>", 1)[1])  # numbers filled in
