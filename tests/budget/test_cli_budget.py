"""`seam run` and `seam chat` stopped by a budget: a model that calls a tool forever is
stopped before the call that would pass the limit, no request of it reaches the provider,
and the person is told which limit, what was spent and how to raise it; `seam run` exits
with its own code (6, `budget`)."""

from __future__ import annotations

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
    assert len(openai_server.chat_requests) == 4  # the fifth call was never sent
    # The next turn of the session is refused before any request.
    again = cli("run", "--json", "--session", "loop", "and again")
    assert again.returncode == 6 and len(openai_server.chat_requests) == 4
    exit_line = json_lines(again.stdout)[-1]
    assert (exit_line["code"], exit_line["outcome"], exit_line["message"]) == (6, "budget", MESSAGE)
    # A new session starts with a fresh session allowance.
    openai_server.push(*LOOP)
    fresh = cli("run", "--session", "other", "once more")
    assert fresh.returncode == 6 and len(openai_server.chat_requests) == 8


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
    out = shown.stdout
    assert "today: 4 model calls · 80 in · 36 out" in out
    assert "session: 116 of 100 tokens ([budget] session_tokens) - reached" in out
    assert "today: 116 of 1,000 tokens ([budget] day_tokens)" in out
    assert "today: $0.00 of $5.00 ([budget] day_usd), cost unknown for some calls" in out
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
