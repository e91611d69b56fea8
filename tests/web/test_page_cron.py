"""The dashboard's Cron section in a real browser (Chromium, driven by Playwright) against a
real `seam serve` subprocess, checked against the real `seam cron` CLI on the same home:
what the page adds or pauses, the CLI sees, and the reverse after a reload of the section.
A run started from the page is answered by the scripted model, and its reply is delivered
to the `file:` target."""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from tests.support.openai_server import text_reply
from tests.support.shared_model import SharedModel
from tests.web.page_support import *  # noqa: F403  (the fixtures: `browser`, `pages`, …)
from tests.web.page_support import SEAM, Pages, Served, keep_shot, screenshots_on_failure

INBOX = "Summarise my inbox and flag anything urgent"
PLANTS = "Remind me to water the plants"
REPLY = "Inbox: 3 new mails, none urgent. The invoice from ACME is due Friday."


def seam_cron(served: Served, model: SharedModel, *args: str) -> str:
    """`seam cron ARGS` on the served home, as a person at a terminal runs it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SEAM_"))}
    env.update(
        SEAM_HOME=str(served.home),
        HOME=str(served.home.parent),
        OPENAI_BASE_URL=model.base_url,
        OPENAI_API_KEY="test-key",
    )
    done = subprocess.run(
        [str(SEAM), "cron", *args],
        env=env,
        cwd=served.project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def cli_jobs(served: Served, model: SharedModel) -> dict[str, dict[str, Any]]:
    jobs = json.loads(seam_cron(served, model, "list", "--json"))
    return {job["prompt"]: job for job in jobs}


def open_cron(page: Any) -> Any:
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Cron").click()
    section = page.locator("#view-cron")
    section.locator("form.cron-job-form").wait_for()
    return section


def add_in_form(section: Any, prompt: str, schedule: str, tz: str, deliver: str) -> None:
    form = section.locator("form.cron-job-form")
    form.get_by_label("Prompt").fill(prompt)
    form.get_by_label("Time zone").fill(tz)
    form.get_by_label("Schedule").fill(schedule)
    form.get_by_label("Deliver to").fill(deliver)
    form.get_by_role("button", name="Add job").click()
    section.locator("tr", has_text=prompt).wait_for()


@screenshots_on_failure
def test_a_job_added_and_paused_in_the_page_is_the_clis_and_back(
    pages: Pages, served: Served, model: SharedModel
) -> None:
    page = pages.open()
    section = open_cron(page)
    form = section.locator("form.cron-job-form")
    # The preview follows the schedule as it is typed: wrong first, then five runs.
    form.get_by_label("Time zone").fill("Europe/Berlin")
    form.get_by_label("Schedule").fill("0 9 * *")
    section.locator(".cron-preview .danger", has_text="5-field cron expression").wait_for()
    form.get_by_label("Schedule").fill("0 9 * * 1-5")
    section.locator(".cron-next li").nth(4).wait_for()
    assert " 09:00 " in section.locator(".cron-next li").first.inner_text()
    add_in_form(section, INBOX, "0 9 * * 1-5", "Europe/Berlin", "file:inbox.md")

    job = cli_jobs(served, model)[INBOX]
    assert (job["schedule"], job["tz"], job["paused"]) == ("0 9 * * 1-5", "Europe/Berlin", False)
    assert job["deliver"].endswith("/deliveries/inbox.md")
    section.locator("tr", has_text=INBOX).locator("td", has_text="file:inbox.md").wait_for()

    row = section.locator("tr", has_text=INBOX)
    row.get_by_role("button", name="Pause").click()
    row.locator(".cron-state", has_text="paused").wait_for()
    assert cli_jobs(served, model)[INBOX]["paused"] is True

    # Added and paused with the CLI: the page shows it once the section is read again.
    plants = seam_cron(
        served, model, "add", "--cron", "0 7 * * *", PLANTS, "--deliver", "none"
    ).strip()
    seam_cron(served, model, "pause", plants)
    page.get_by_role("navigation", name="Sections").get_by_role("link", name="Chat").click()
    open_cron(page)
    section.locator("tr", has_text=PLANTS).locator(".cron-state", has_text="paused").wait_for()

    # Run now: answered at once; the run, its reply and its delivery show in its runs.
    model.push(text_reply(REPLY))
    row.get_by_role("button", name="Run now").click()
    runs = section.locator(".cron-runs")
    runs.locator("pre.cron-message", has_text="The invoice from ACME").wait_for()
    runs.locator("td", has_text="sent").wait_for()
    row.locator("td", has_text="completed, sent").wait_for()
    section.locator(".control-status", has_text="ran: completed, delivery sent").wait_for()
    delivered = (served.home / "deliveries" / "inbox.md").read_text(encoding="utf-8")
    assert REPLY in delivered
    keep_shot(page, "control-cron")


@screenshots_on_failure
def test_edit_and_delete_a_job_in_the_page(
    pages: Pages, served: Served, model: SharedModel
) -> None:
    prompt = "Weekly review of my calendar"
    section = open_cron(pages.open())
    add_in_form(section, prompt, "1d", "UTC", "none")
    row = section.locator("tr", has_text=prompt)
    row.get_by_role("button", name="Edit").click()
    form = section.locator("form.cron-job-form")
    form.locator("h2", has_text="Edit job").wait_for()
    form.get_by_label("Prompt").fill(prompt + " and my todo list")
    form.get_by_label("Schedule").fill("0 8 * * 1")
    section.locator(".cron-next li").nth(4).wait_for()
    form.get_by_role("button", name="Save changes").click()
    edited = section.locator("tr", has_text="and my todo list")
    edited.locator("td", has_text="0 8 * * 1").wait_for()
    job = cli_jobs(served, model)[prompt + " and my todo list"]
    assert (job["schedule"], job["schedule_kind"], job["deliver"]) == ("0 8 * * 1", "cron", "none")

    row = section.locator("tr", has_text="and my todo list")
    row.get_by_role("button", name="Delete").click()
    row.get_by_role("button", name="Yes, delete").click()
    section.locator("tr", has_text="and my todo list").wait_for(state="detached")
    assert prompt + " and my todo list" not in cli_jobs(served, model)
