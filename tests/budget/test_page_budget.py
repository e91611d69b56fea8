"""The page in a real browser against a real `seam serve` (fixtures: tests/web/
page_support.py): a personality's own session limit stops a model that calls a tool
forever, the conversation shows the message naming the limit (live, and in the history
once the turn has settled), no request past the limit reaches the provider, and the
Usage section lists the limit with where it is set."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.openai_server import OpenAIServer, tool_call_reply
from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import Pages, Served, screenshots_on_failure, send

MESSAGE = (
    "budget: this session has used 116 of 100 tokens (personality default [budget]"
    " session_tokens); raise it in personalities/default/config.toml or start a new session"
)


@pytest.fixture(name="frugal")
def frugal_fixture(served: Served) -> Iterator[None]:
    """The default personality limited to 100 tokens a session (read on the next turn)."""
    config = served.home / "personalities" / "default" / "config.toml"
    before = config.read_text(encoding="utf-8")
    config.write_text(before + "\n[budget]\nsession_tokens = 100\n", encoding="utf-8")
    yield
    config.write_text(before, encoding="utf-8")


def section(page: Any, label: str) -> Any:
    page.get_by_role("navigation", name="Sections").get_by_role("link", name=label).click()
    return page.locator(f"#view-{label.lower()}")


@screenshots_on_failure
def test_a_session_limit_stops_the_loop_and_the_page_says_so(
    pages: Pages, served: Served, model: OpenAIServer, frugal: None
) -> None:
    model.push(*[tool_call_reply([("list_dir", '{"path": "."}')]) for _ in range(10)])
    page = pages.open()
    send(page, "list the files, forever")
    page.locator("#log", has_text=MESSAGE).wait_for()
    assert len(model.chat_requests) == 4  # the fifth call was never sent
    page.reload()  # the settled turn, from the history: the message stays
    page.locator("body[data-ready=true]").wait_for()
    page.locator("#log .msg.assistant.failed", has_text=MESSAGE).wait_for()
    view = section(page, "Usage")
    limits = view.locator("table", has=page.locator("caption", has_text="Spending limits"))
    row = limits.locator("tr", has_text="personality default [budget] session_tokens")
    row.get_by_text("at most 100 tokens").wait_for()
