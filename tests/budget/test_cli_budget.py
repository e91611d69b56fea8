"""`seam run` and `seam chat` stopped by a budget: a model that calls a tool forever is
stopped before the call that would pass the limit, no request of it reaches the provider,
and the person is told which limit, what was spent and how to raise it; `seam run` exits
with its own code (6, `budget`)."""

from __future__ import annotations

import asyncio
import json

from tests.cli.conftest import Cli, json_lines
from tests.support.openai_server import OpenAIServer, tool_call_reply

# Each reply is 20 prompt and 9 completion tokens: the fourth call reaches 116 of 100.
LOOP = [tool_call_reply([("list_dir", '{"path": "."}')]) for _ in range(10)]
MESSAGE = (
    "budget: this session has used 116 of 100 tokens ([budget] session_tokens);"
    " raise it in config.toml or start a new session"
)


def test_seam_run_stops_at_the_session_limit_with_its_exit_code(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    cli.write_config("[budget]\nsession_tokens = 100\n")
    openai_server.push(*LOOP)
    result = cli("run", "--session", "loop", "list the files, forever")
    assert result.returncode == 6, result.stderr
    assert result.stderr.strip().splitlines()[-1] == f"seam: {MESSAGE}"
    assert result.stdout == ""  # stdout is for an answer, and a refusal is none
    assert len(openai_server.chat_requests) == 4  # the fifth call was never sent
    # The next turn of the session is refused before any request.
    again = cli("run", "--json", "--session", "loop", "and again")
    assert again.returncode == 6 and len(openai_server.chat_requests) == 4
    exit_line = json_lines(again.stdout)[-1]
    assert (exit_line["code"], exit_line["outcome"], exit_line["message"]) == (6, "budget", MESSAGE)
    # Each stopped turn settled at once: completed as `budget`, never retried.
    shown = json.loads(cli("sessions", "show", "loop", "--json").stdout)["submissions"]
    assert [(s["outcome"], s["finish_reason"], s["attempts"]) for s in shown] == [
        ("completed", "budget", 1),
        ("completed", "budget", 1),
    ]
    # A new session starts with a fresh session allowance.
    openai_server.push(*LOOP)
    fresh = cli("run", "--session", "other", "once more")
    assert fresh.returncode == 6 and len(openai_server.chat_requests) == 8


async def delivered(cli: Cli, key: str) -> str:
    """What the outbox holds to deliver under `key` (a deliverer sends it later)."""
    from seam.services.sessions.sqlite import SQLiteSessionStore

    store = SQLiteSessionStore(str(cli.home / "sessions.db"))
    try:
        item = await store.outbox_item(key)
    finally:
        await store.aclose()
    assert item is not None
    return item.payload


def test_the_help_documents_the_budget_exit_code(cli: Cli) -> None:
    assert "  6  budget" in cli("run", "--help").stdout


def test_seam_chat_says_the_limit(cli: Cli, openai_server: OpenAIServer) -> None:
    cli.write_config("[budget]\nsession_tokens = 100\n")
    openai_server.push(*LOOP)
    result = cli("chat", "--session", "talk", stdin="list the files, forever\n/usage\n")
    assert MESSAGE in result.stdout + result.stderr, result.stdout + result.stderr
    assert len(openai_server.chat_requests) == 4


def test_a_bad_budget_is_a_one_line_error(cli: Cli) -> None:
    cli.write_config("[budget]\nsession_tokens = -5\n")
    result = cli("run", "hi")
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "session_tokens" in result.stderr
    cli.write_config('[budget]\ntz = "Mars/Olympus"\n')
    result = cli("run", "hi")
    assert result.returncode == 2 and "unknown time zone 'Mars/Olympus'" in result.stderr


def test_usage_shows_spend_against_the_limits(cli: Cli, openai_server: OpenAIServer) -> None:
    # A model with no known price: limited by tokens only, its cost shown as unknown.
    limits = "[budget]\nsession_tokens = 100\nday_tokens = 1000\nday_usd = 5\n"
    cli.write_config(f'[model]\nmodel = "mystery-1"\n{limits}')
    openai_server.push(*LOOP)
    assert cli("run", "--session", "loop", "list the files, forever").returncode == 6
    shown = cli("usage", "--session", "loop")
    assert shown.returncode == 0, shown.stderr
    expected = (
        "today: 4 model calls · 80 in · 36 out",
        "session: 116 of 100 tokens ([budget] session_tokens) - reached",
        "today: 116 of 1,000 tokens ([budget] day_tokens)",
        "today: $0.00 of $5.00 ([budget] day_usd), cost unknown for some calls",
    )
    assert [line for line in expected if line not in shown.stdout] == [], shown.stdout
    # No session named: the per-session limit is still said to exist, not "none".
    overall = cli("usage").stdout
    assert "session: 100 tokens each ([budget] session_tokens;" in overall, overall
    assert "limits: none" not in overall
    body = json.loads(cli("usage", "--json", "--days", "3").stdout)
    assert body["today"]["calls"] == 4 and len(body["per_day"]) == 3
    assert body["per_day"][-1]["input_tokens"] == 80
    assert [line["source"] for line in body["limits"]] == [
        "[budget] day_tokens",
        "[budget] day_usd",
    ]
    assert body["limits"][1]["cost_unknown"] is True


def test_usage_refuses_bad_input_in_one_line(cli: Cli) -> None:
    for args in (("--days", "0"), ("--personality", "nobody"), ("--session", "task:x")):
        result = cli("usage", *args)
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_chat_usage_shows_the_limits(cli: Cli, openai_server: OpenAIServer) -> None:
    cli.write_config("[budget]\nsession_tokens = 100\n")
    openai_server.push(*LOOP)
    result = cli("chat", "--session", "talk", stdin="list the files, forever\n/usage\n")
    assert "budget session: 116 of 100 tokens ([budget] session_tokens) - reached" in result.stdout


def test_a_cron_run_stops_at_the_jobs_own_limit_and_delivers_the_message(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(*LOOP)
    forever = ("--every", "1d", "list the files, forever", "--deliver", "file:budget.md")
    added = cli("cron", "add", *forever, "--max-tokens", "50")
    assert added.returncode == 0, added.stderr
    job = added.stdout.strip()
    assert "max 50 tokens a run" in cli("cron", "list").stdout
    ran = cli("cron", "run", job)
    message = (
        f"budget: this cron run has used 58 of 50 tokens (cron job {job} --max-tokens);"
        f" raise it with `seam cron edit {job} --max-tokens ...`"
    )
    assert message in ran.stdout, ran.stdout + ran.stderr
    assert len(openai_server.chat_requests) == 2
    runs = json.loads(cli("cron", "runs", job, "--json").stdout)
    assert runs[0]["delivery"] in ("queued", "sent")
    assert message in asyncio.run(delivered(cli, f"cron:{runs[0]['slot_key']}"))
    shown = json.loads(cli("sessions", "show", runs[0]["session"], "--json").stdout)
    (sub,) = shown["submissions"]
    assert (sub["finish_reason"], sub["result"]) == ("budget", message)
    # The limit is raised (or removed) with `seam cron edit`.
    edited = cli("cron", "edit", job, "--max-tokens", "0", "--max-usd", "0.5")
    assert edited.returncode == 0 and "max $0.5 a run" in edited.stdout, edited.stderr
    listed = json.loads(cli("cron", "list", "--json").stdout)[0]
    assert (listed["max_tokens"], listed["max_usd"]) == (0, 0.5)


def test_cron_limits_refuse_bad_values_in_one_line(cli: Cli) -> None:
    bad = cli("cron", "add", "--every", "1d", "x", "--deliver", "none", "--max-tokens", "-1")
    assert bad.returncode == 2 and "--max-tokens must be 0" in bad.stderr, bad.stderr
    job = cli("cron", "add", "--every", "1d", "x", "--deliver", "none").stdout.strip()
    for args in (("--max-usd", "-2"), ("--max-usd", "nan"), ()):
        result = cli("cron", "edit", job, *args)
        assert result.returncode == 2, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert cli("cron", "edit", "nope", "--max-tokens", "5").returncode == 2


def test_a_personalitys_own_limit_stops_seam_run_without_any_config(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    folder = cli.home / "personalities" / "frugal"
    folder.mkdir(parents=True)
    (folder / "SOUL.md").write_text("You are frugal.", encoding="utf-8")
    (folder / "config.toml").write_text("[budget]\nsession_tokens = 50\n", encoding="utf-8")
    openai_server.push(*LOOP)
    result = cli("run", "--personality", "frugal", "list the files, forever")
    assert result.returncode == 6, result.stderr
    assert "used 58 of 50 tokens (personality frugal [budget] session_tokens)" in result.stderr
    assert len(openai_server.chat_requests) == 2
