"""A tenant's key in the dashboard (Chromium against a real `seam serve`): it sees its own
sessions, memory and usage and nothing of the owner's, and no owner-only section."""

from __future__ import annotations

from typing import Any

from tests.support.openai_server import OpenAIServer
from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import Pages, Served, screenshots_on_failure
from tests.web.test_page_nav import keyed_page
from tests.web.test_page_sessions import chat_in, seam

OWNER_ONLY = ("Cron", "Skills", "MCP", "Approvals", "Logs", "Channels", "Keys", "Settings")


def visit(page: Any, label: str) -> Any:
    page.get_by_role("navigation", name="Sections").get_by_role("link", name=label).click()
    view = page.locator(f"#view-{label.lower()}")
    view.get_by_role("heading", name=label, level=1).wait_for()
    return view


@screenshots_on_failure
def test_a_tenant_sees_only_its_own_sessions_memory_and_usage(
    pages: Pages, served: Served, browser: Any, model: OpenAIServer
) -> None:
    owner = pages.open()
    chat_in(owner, served, "owner-ledger", "the owner's ledger", model)
    seam(served, "memory", "add", "The owner keeps the ledger in the red box.")
    with keyed_page(browser, served, "alpha") as page:
        chat_in(page, served, "alpha-garden", "alpha's garden", model)
        bar = page.get_by_role("navigation", name="Sections")
        bar.get_by_role("link", name="Sessions", exact=True).wait_for()  # the links drawn
        for label in OWNER_ONLY:
            assert bar.get_by_role("link", name=label, exact=True).count() == 0
        # Sessions: its own, not the owner's.
        sessions = visit(page, "Sessions")
        sessions.get_by_role("button", name="Open alpha-garden in Chat").wait_for()
        assert sessions.get_by_text("owner-ledger").count() == 0
        # Memory: empty for it; what it adds stays out of the owner's memory.
        memory = visit(page, "Memory")
        memory.get_by_text("MEMORY.md has no entries yet.").wait_for()
        assert "red box" not in memory.inner_text()
        memory.get_by_label("New entry in MEMORY.md").fill("Alpha waters the garden on Sundays.")
        memory.get_by_role("button", name="Add to MEMORY.md").click()
        memory.get_by_role("textbox", name="MEMORY.md entry 1").wait_for()
        # Usage: its own session only.
        usage = visit(page, "Usage")
        per_session = usage.get_by_role("table", name="Usage per session")
        per_session.get_by_text("alpha-garden").wait_for()
        assert per_session.get_by_text("owner-ledger").count() == 0
    shown = seam(served, "memory", "show")
    assert "red box" in shown and "Sundays" not in shown
