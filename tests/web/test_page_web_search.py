"""`web_search` in the chat page: Playwright drives Debian's Chromium against a real
`seam serve` subprocess configured with a SearXNG provider (the fake service on
loopback); the scripted model searches, the call and its numbered results show in the
page, and the answer cites the result."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.support.fake_search import FakeSearch, Hit, serve_fake_search
from tests.support.openai_server import text_reply, tool_call_reply
from tests.support.shared_model import SharedModel
from tests.web import page_support as support
from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import Pages, Served

RESULT = "https://93.184.216.34/cabin"
ANSWER = f"It is in the blue notebook, says [Cabin notes]({RESULT})."


@pytest.fixture(scope="module", name="search")
def search_fixture() -> Iterator[FakeSearch]:
    yield from serve_fake_search()


@pytest.fixture(scope="module", name="served")
def served_fixture(
    tmp_path_factory: pytest.TempPathFactory, shared_model: SharedModel, search: FakeSearch
) -> Iterator[Served]:
    """`seam serve` with `[web_search]` pointing at the module's fake SearXNG."""
    config = f'[web_search]\nprovider = "searxng"\nurl = "{search.url}"\n'
    with support.serving_seam(tmp_path_factory.mktemp("served"), shared_model, config) as served:
        yield served


@support.screenshots_on_failure
def test_a_search_shows_in_the_page_and_the_answer_cites_it(
    pages: Pages, model: SharedModel, search: FakeSearch
) -> None:
    search.hits = [
        Hit("Cabin notes", RESULT, "The wifi login is in the <b>blue notebook</b>"),
        Hit("<img src=x onerror=window.pwned=1>Trap", "https://93.184.216.34/trap", "x"),
    ]
    model.push(
        tool_call_reply([("web_search", json.dumps({"query": "cabin wifi login"}))]),
        text_reply(ANSWER),
    )
    page = pages.open()
    support.send(page, "where is the cabin wifi login written down?")

    # The streamed block (the last; the history may hold the stored call for a moment).
    tool = page.locator("#log details.tool", has_text="web_search").last
    tool.locator(".tool-state", has_text="done").wait_for()
    assert "cabin wifi login" in tool.locator(".tool-args").text_content()
    result = tool.locator(".tool-result").text_content()
    assert "1 result" not in result and "2 results for" in result
    assert "1. Cabin notes" in result and RESULT in result
    assert "The wifi login is in the blue notebook" in result
    answer = support.answers(page).last
    link = answer.locator("a", has_text="Cabin notes")
    link.wait_for()
    assert link.get_attribute("href") == RESULT
    support.settled(page)
    assert page.evaluate("window.pwned === undefined")
    assert [r.query["q"] for r in search.searches()] == ["cabin wifi login"]
    offered = [t["function"]["name"] for t in model.chat_requests[0].body["tools"]]
    assert "web_search" in offered
    support.keep_shot(page, "desktop-web-search")
