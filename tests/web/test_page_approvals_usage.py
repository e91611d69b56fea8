"""The dashboard's Approvals and Usage sections in a real browser against a real
`seam serve` (fixtures: `page_support.py`): a command waiting in the chat is answered
from the Approvals section and the turn goes on; a remembered "always" is removed there
and the next identical command is asked about again; the Usage chart draws a bar for the
day with usage, beside its table; a page reopened while a command waits shows it once."""

from __future__ import annotations

import datetime
import json
from pathlib import Path
from typing import Any

from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply
from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import (
    Pages,
    Served,
    answers,
    keep_shot,
    screenshots_on_failure,
    send,
    settled,
    sync_api,
)


def script(model: OpenAIServer, command: str, after: str) -> None:
    model.push(tool_call_reply([("terminal", json.dumps({"command": command}))]), text_reply(after))


def make_dir(project: Path, name: str) -> Path:
    target = project / name / "obj"
    target.mkdir(parents=True)
    (target / "a.o").write_text("x")
    return project / name


def section(page: Any, label: str) -> Any:
    page.get_by_role("navigation", name="Sections").get_by_role("link", name=label).click()
    return page.locator(f"#view-{label.lower()}")


def ask(page: Any, model: OpenAIServer, command: str, after: str) -> None:
    """From the chat: a message whose command waits for an answer."""
    section(page, "Chat")
    script(model, command, after)
    send(page, f"please run {command}")
    page.locator("#log details.tool .question", has_text=command).last.wait_for()


def remembered(served: Served) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((served.home / "approvals.json").read_text())
    return data


@screenshots_on_failure
def test_approvals_are_answered_and_forgotten_from_the_dashboard(
    pages: Pages, served: Served, model: OpenAIServer
) -> None:
    page = pages.open()
    build = make_dir(served.project, "build")
    ask(page, model, "rm -r build", "Removed it.")
    view = section(page, "Approvals")
    row = view.locator("tr", has_text="rm -r build")
    row.get_by_role("button", name="Always allow").click()
    answers(page).last.locator(".body", has_text="Removed it.").wait_for(state="attached")
    assert not build.exists()
    allowed = view.locator("table", has=page.locator("caption", has_text="Always allowed"))
    allowed.locator("code", has_text="rm -r build").wait_for()
    assert remembered(served)["always"] == ["rm -r build"]

    dist = make_dir(served.project, "dist")
    ask(page, model, "rm -r dist", "Left it alone.")
    view = section(page, "Approvals")
    waiting = view.locator(".approvals-pending tr", has_text="rm -r dist")
    waiting.wait_for()
    keep_shot(page, "control-approvals")
    waiting.get_by_role("button", name="Deny").click()
    answers(page).last.locator(".body", has_text="Left it alone.").wait_for(state="attached")
    assert (dist / "obj" / "a.o").exists()
    view.get_by_text("Nothing is waiting for an answer.").wait_for()

    allowed.get_by_role("button", name="Remove rm -r build from always allowed").click()
    view.get_by_text("Nothing is always allowed.").wait_for()
    assert remembered(served)["always"] == []
    # The running server's gate asks again about the same command.
    build = make_dir(served.project, "build")
    ask(page, model, "rm -r build", "Kept it.")
    page.locator("#log .msg.assistant.live details.tool button[data-decision=deny]").click()
    answers(page).last.locator(".body", has_text="Kept it.").wait_for()
    assert build.exists()


@screenshots_on_failure
def test_the_usage_chart_draws_the_days_with_usage(pages: Pages, model: OpenAIServer) -> None:
    page = pages.open()
    model.push(text_reply("Counted."))
    send(page, "count my tokens")
    answers(page).last.locator(".body", has_text="Counted.").wait_for()
    settled(page)  # the answer stored, and its usage with it: the section reads it once
    view = section(page, "Usage")
    today = page.evaluate("() => new Date().toLocaleDateString('sv')")  # YYYY-MM-DD, local
    bars = view.locator(f"svg.bar-chart rect.bar[data-label='{today}']")
    bars.first.wait_for()
    assert view.locator("svg.bar-chart rect.bar").count() == bars.count()
    days = view.locator("table", has=page.locator("caption", has_text="Usage per day"))
    assert days.locator("tbody tr").first.locator("td").first.inner_text() == today
    assert view.locator("table", has=page.locator("caption", has_text="Usage per model")).count()
    assert "tokens before any message" in view.locator(".overhead").inner_text()
    keep_shot(page, "control-usage")
    view.get_by_label("Period").select_option("7")
    view.get_by_text("Tokens per day, last 7 days").wait_for()
    assert datetime.date.fromisoformat(today)


# The most tool blocks the log has held at once since the page loaded, and how many reads
# of the session (`/api/sessions/<name>`) have come back.
COUNT_TOOL_BLOCKS = """
window.seamMostTools = 0;
window.seamSessionReads = 0;
new MutationObserver(() => {
  const shown = document.querySelectorAll('#log details.tool').length;
  window.seamMostTools = Math.max(window.seamMostTools, shown);
}).observe(document, { childList: true, subtree: true });
const fetchFirst = window.fetch;
window.fetch = async (...args) => {
  const response = await fetchFirst(...args);
  if (/^\\/api\\/sessions\\/[^/]+$/.test(new URL(String(args[0]), location.href).pathname)) {
    window.seamSessionReads += 1;
  }
  return response;
};
"""


@screenshots_on_failure
def test_a_turn_waiting_for_an_answer_shows_its_command_once_when_the_page_is_reopened(
    pages: Pages, served: Served, model: OpenAIServer
) -> None:
    page = pages.open()
    make_dir(served.project, "cache")
    ask(page, model, "rm -r cache", "Removed it.")
    # Reopened while the turn waits, its stored call is shown by the replayed turn only,
    # from the first frame: the history drawn before the replay stops at the turn's input.
    page.add_init_script(COUNT_TOOL_BLOCKS)
    page.reload()
    page.locator("body[data-ready=true]").wait_for()
    page.locator("#log details.tool .question", has_text="rm -r cache").wait_for()
    page.wait_for_function("() => window.seamSessionReads >= 2")  # the read at run_start
    page.evaluate("() => new Promise((done) => requestAnimationFrame(() => done()))")
    sync_api.expect(page.locator("#log details.tool")).to_have_count(1)
    assert page.evaluate("() => window.seamMostTools") == 1
    page.locator("#log details.tool").get_by_role("button", name="Allow once").click()
    answers(page).last.locator(".body", has_text="Removed it.").wait_for(state="attached")
    settled(page)
    sync_api.expect(page.locator("#log details.tool")).to_have_count(1)
