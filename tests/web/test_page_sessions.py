"""The dashboard's Sessions section in a real browser (Chromium, a real `seam serve`
subprocess, the scripted loopback model): reached by its navigation label, it lists the
sessions with their tokens and cost, searches them, renames, forks, undoes, exports and
deletes, each change checked with `seam sessions` (the CLI) on the same home; a tenant's
key sees only its own sessions."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply
from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import (
    SEAM,
    Pages,
    Served,
    answers,
    keep_shot,
    screenshots_on_failure,
    send,
    settled,
)
from tests.web.test_page_nav import keyed_page


def seam(served: Served, *args: str) -> str:
    """Run the CLI on the server's home, as the person would in a terminal."""
    env = {**os.environ, "SEAM_HOME": str(served.home), "HOME": str(served.home.parent)}
    done = subprocess.run(
        [str(SEAM), *args], env=env, cwd=served.project, capture_output=True, text=True, check=True
    )
    return done.stdout


def cli_names(served: Served) -> str:
    return seam(served, "sessions", "list", "--limit", "100")


def chat_in(
    page: Any, served: Served, name: str, text: str, model: OpenAIServer, writes: str = ""
) -> None:
    """One finished turn in the session `name`, typed in the Chat section; with `writes`,
    the agent writes that file of the project first (a turn undo can take back)."""
    if writes:
        arguments = json.dumps({"path": writes, "content": f"{text}\n"})
        model.push(tool_call_reply([("write_file", arguments)]))
    model.push(text_reply(f"Noted: {text}"))
    # A fresh load: going from `/#a` to `/#b` is only a hash change, and a message typed
    # while the page is still switching sessions is a race of the test, not of a person.
    page.goto("about:blank")
    page.goto(f"{served.url}/#{name}")
    page.locator("body[data-ready=true]").wait_for()
    send(page, text)
    answers(page).filter(has_text=f"Noted: {text}").wait_for()  # the turn's last answer
    settled(page)


def open_sessions(page: Any) -> Any:
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Sessions").click()
    section = page.locator("#view-sessions")
    section.get_by_role("heading", name="Sessions", level=1).wait_for()
    return section


def row(section: Any, name: str) -> Any:
    return section.locator("tbody tr").filter(
        has=section.page.get_by_role("button", name=f"Open {name} in Chat", exact=True)
    )


@screenshots_on_failure
def test_sessions_are_listed_searched_renamed_forked_exported_and_deleted(
    pages: Pages, served: Served, model: OpenAIServer, tmp_path: Path
) -> None:
    page = pages.open()
    for name, text in [
        ("trip-planning", "plan a trip to the lighthouse"),
        ("tax-return", "list the receipts for 2026"),
    ]:
        chat_in(page, served, name, text, model)
    chat_in(page, served, "garden", "which tomatoes grow in shade", model, writes="garden.md")
    assert (served.project / "garden.md").exists()
    section = open_sessions(page)
    trip = row(section, "trip-planning")
    trip.wait_for()
    cells = trip.locator("td")
    assert cells.nth(4).inner_text() == "2"  # messages
    assert int(cells.nth(5).inner_text().replace(",", "")) > 0  # tokens in
    assert cells.nth(7).inner_text().startswith("$")
    keep_shot(page, "control-sessions")

    # Full-text search: only the session whose transcript has the word.
    search = section.get_by_label("Search sessions")
    search.fill("tomatoes")
    search.press("Enter")
    section.get_by_role("table", name="Sessions mentioning “tomatoes”").wait_for()
    assert section.locator("tbody tr").count() == 1
    assert row(section, "garden").count() == 1
    search.fill("")
    search.press("Enter")
    trip.wait_for()

    # Rename: the CLI lists the new name, not the old one.
    section.get_by_role("button", name="Rename trip-planning").click()
    new_name = section.get_by_label("New name")
    new_name.fill("lighthouse-trip")
    new_name.press("Enter")
    section.get_by_text("Renamed “trip-planning” to “lighthouse-trip”.").wait_for()
    listed = cli_names(served)
    assert "lighthouse-trip" in listed and "trip-planning" not in listed

    # Export: downloads named after the session, the JSON the CLI's own export.
    with page.expect_download() as got:
        section.get_by_role("link", name="Export lighthouse-trip as Markdown").click()
    assert got.value.suggested_filename == "lighthouse-trip.md"
    markdown = Path(got.value.path()).read_text(encoding="utf-8")
    assert "## You\n\nplan a trip to the lighthouse" in markdown
    with page.expect_download() as got:
        section.get_by_role("link", name="Export lighthouse-trip as JSON").click()
    exported = json.loads(Path(got.value.path()).read_text(encoding="utf-8"))
    assert exported == json.loads(seam(served, "sessions", "export", "lighthouse-trip"))

    # Fork: a new session with the first turn, seen by the CLI.
    section.get_by_role("button", name="Fork lighthouse-trip").click()
    section.get_by_label("New session's name").fill("trip-copy")
    section.get_by_label("Turns to keep").press("Enter")
    section.get_by_text("Forked “lighthouse-trip” into “trip-copy” (2 messages).").wait_for()
    assert "trip-copy" in cli_names(served)

    # Undo reaches a turn taken before a rename: the checkpoints moved with the session.
    section.get_by_role("button", name="Rename garden").click()
    section.get_by_label("New name").fill("shade-garden")
    section.get_by_label("New name").press("Enter")
    section.get_by_text("Renamed “garden” to “shade-garden”.").wait_for()
    section.get_by_role("button", name="Undo shade-garden").click()
    section.get_by_role("region", name="Session action").get_by_role(
        "button", name="Undo", exact=True
    ).click()
    section.get_by_text("Undid turn 1 of “shade-garden”: 4 messages removed").wait_for()
    shown = json.loads(seam(served, "sessions", "show", "shade-garden", "--json"))
    assert shown["messages"] == []
    assert not (served.project / "garden.md").exists()

    # Delete asks first, then the CLI no longer lists it.
    section.get_by_role("button", name="Delete tax-return").click()
    section.get_by_role("heading", name="Delete “tax-return”?").wait_for()
    section.get_by_role("region", name="Session action").get_by_role(
        "button", name="Delete", exact=True
    ).click()
    section.get_by_text("Deleted “tax-return”.").wait_for()
    assert "tax-return" not in cli_names(served)
    assert row(section, "tax-return").count() == 0

    # A session's name opens it in Chat.
    section.get_by_role("button", name="Open lighthouse-trip in Chat").click()
    page.locator("#view-chat").wait_for(state="visible")
    page.locator("#session-title", has_text="lighthouse-trip").wait_for()
    answers(page).first.wait_for()
    # The chat's own list shows the rename too.
    page.locator("#sessions button.session[data-name='lighthouse-trip']").wait_for()


@screenshots_on_failure
def test_bad_input_gets_one_line_and_a_taken_name_is_refused(
    pages: Pages, served: Served, model: OpenAIServer
) -> None:
    page = pages.open()
    chat_in(page, served, "alpha-one", "first", model)
    chat_in(page, served, "alpha-two", "second", model)
    section = open_sessions(page)
    section.get_by_role("button", name="Rename alpha-one").click()
    field = section.get_by_label("New name")
    field.fill("alpha-two")
    field.press("Enter")
    status = page.locator("#view-sessions .control-status.error")
    status.filter(has_text="a session named 'alpha-two' exists").wait_for()
    section.get_by_role("button", name="Fork alpha-one").click()
    section.get_by_label("Turns to keep").fill("9")
    section.get_by_label("Turns to keep").press("Enter")
    status.filter(has_text="turn 9 is out of range").wait_for()
    assert "\n" not in status.inner_text()
    section.get_by_role("button", name="Cancel").click()
    assert section.get_by_role("region", name="Session action").count() == 0
    # By keyboard: Escape closes the form and the focus goes back to the row's button.
    rename = section.get_by_role("button", name="Rename alpha-two")
    rename.focus()
    rename.press("Enter")
    section.get_by_label("New name").press("Escape")
    assert section.get_by_role("region", name="Session action").count() == 0
    page.wait_for_function(
        "() => document.activeElement?.getAttribute('aria-label') === 'Rename alpha-two'"
    )


@screenshots_on_failure
def test_other_keys_see_only_what_they_may(
    pages: Pages, served: Served, browser: Any, model: OpenAIServer
) -> None:
    owner = pages.open()
    chat_in(owner, served, "read-only-notes", "something to read", model)
    # A read key (the owner's tenant): the sessions and their exports, no changing action.
    with keyed_page(browser, served, "local", scope="read") as page:
        section = open_sessions(page)
        found = row(section, "read-only-notes")
        found.wait_for()
        assert found.get_by_role("link", name="Export read-only-notes as JSON").count() == 1
        for action in ("Rename", "Fork", "Undo", "Delete"):
            assert found.get_by_role("button", name=f"{action} read-only-notes").count() == 0
    # A tenant's key: its own sessions only.
    with keyed_page(browser, served, "alpha") as page:
        page.locator("body[data-ready=true]").wait_for()
        chat_in(page, served, "alpha-notes", "alpha's own", model)
        section = open_sessions(page)
        row(section, "alpha-notes").wait_for()
        assert section.locator("tbody tr").count() == 1
        assert row(section, "read-only-notes").count() == 0
