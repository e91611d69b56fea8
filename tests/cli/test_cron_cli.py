"""`seam cron`: adding (each schedule kind, bad input as one line and exit 2), listing,
the run ledger, pause/resume/rm, and `seam cron run` delivering one run now."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import Cli
from tests.support.openai_server import OpenAIServer, text_reply

pytestmark = pytest.mark.in_process


def add(cli: Cli, *args: str) -> str:
    result = cli("cron", "add", *args)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--every", "5s", "x"], "shorter than a minute"),
        (["--every", "soon", "x"], "not an interval"),
        (["--cron", "0 9 * *", "x"], "5-field cron"),
        (["--cron", "0 9 * * 1-5", "--tz", "Mars/Base", "x"], "unknown time zone"),
        (["--at", "christmas", "x"], "not an ISO timestamp"),
        (["x"], "exactly one schedule"),
        (["--every", "1h", "--at", "2026-12-24T18:00", "x"], "exactly one schedule"),
        (["--every", "1h", "--missed", "always", "x"], "--missed must be"),
        (["--every", "1h", "--deliver", "carrier-pigeon:home", "x"], "carrier-pigeon"),
        (["--every", "1h", "--personality", "nobody", "x"], "no personality 'nobody'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(cli: Cli, args: list[str], problem: str) -> None:
    result = cli("cron", "add", *args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert problem in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert cli("cron", "list", "--json").stdout.strip() == "[]"


def test_jobs_are_added_listed_paused_resumed_and_removed(cli: Cli) -> None:
    every = add(cli, "--every", "2h", "check the inbox", "--deliver", "file:inbox.md")
    daily = add(
        cli, "--cron", "0 9 * * 1-5", "--tz", "Europe/Berlin", "standup", "--deliver", "none"
    )
    once = add(
        cli,
        "--at",
        "2026-12-24T18:00",
        "--tz",
        "Europe/Berlin",
        "greet",
        "--deliver",
        "none",
        "--missed",
        "catch_up_once",
        "--continue",
        "--urgent",
    )
    jobs = {j["id"]: j for j in json.loads(cli("cron", "list", "--json").stdout)}
    assert set(jobs) == {every, daily, once}
    assert jobs[every]["schedule_kind"] == "interval" and jobs[every]["missed"] == "skip"
    assert jobs[daily]["schedule"] == "0 9 * * 1-5" and jobs[daily]["tz"] == "Europe/Berlin"
    assert jobs[once]["schedule_kind"] == "once"
    assert jobs[once]["continue_session"] and jobs[once]["urgent"]
    assert jobs[once]["missed"] == "catch_up_once"
    listed = cli("cron", "list").stdout
    assert "standup" in listed and "2026-12-24 18:00 CET" in listed
    assert cli("cron", "pause", daily).returncode == 0
    assert json.loads(cli("cron", "list", "--json").stdout)[1]["paused"] is True
    assert cli("cron", "resume", daily).returncode == 0
    assert cli("cron", "rm", once).returncode == 0
    assert {j["id"] for j in json.loads(cli("cron", "list", "--json").stdout)} == {every, daily}
    for command in ("pause", "resume", "rm", "runs", "run"):
        missing = cli("cron", command, "nope")
        assert missing.returncode == 2 and "no cron job 'nope'" in missing.stderr


def test_cron_run_runs_now_and_delivers(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply("Three new messages."))
    job = add(cli, "--cron", "0 9 * * *", "check the inbox", "--deliver", "file:inbox.md")
    result = cli("cron", "run", job)
    assert result.returncode == 0, result.stderr
    assert "Three new messages." in result.stdout
    runs = json.loads(cli("cron", "runs", job, "--json").stdout)
    assert [(r["outcome"], r["note"]) for r in runs] == [("completed", "manual")]
    assert runs[0]["delivery"] in ("queued", "sent")
    assert runs[0]["session"].startswith(f"cron:{job}:")
    text = cli("cron", "runs", job).stdout
    assert "completed" in text and "manual" in text


def test_chat_lists_cron_jobs(cli: Cli) -> None:
    import asyncio

    from seam.wiring import create_runtime
    from seam.wiring.cron import CronAdmin, ScheduleSpec, cron_store_of
    from seam.wiring.settings import load_settings

    empty = cli("chat", stdin="/cron\n/exit\n", timeout=60)
    assert empty.returncode == 0 and "no cron jobs" in empty.stdout

    async def go() -> str:
        settings = load_settings(cli.env, home=cli.home, working_dir=cli.project)
        async with create_runtime(settings=settings) as runtime:
            admin = CronAdmin(cron_store_of(runtime.store))
            job = await admin.add("water the plants", ScheduleSpec(every="1d"), deliver="none")
            return job.id

    job_id = asyncio.run(go())
    listed = cli("chat", stdin="/cron\n/exit\n", timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert job_id in listed.stdout and "water the plants" in listed.stdout
