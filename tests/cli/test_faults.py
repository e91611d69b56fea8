"""Hostile or broken endpoints: every fault ends `seam run` in bounded time, non-zero,
with one `seam:` line (no traceback), retries shown as they happen, and a transcript
that says what happened.

Each test drives the real console script against a loopback server scripted for the
fault (or a closed port), and measures the wall-clock time the command took.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import time
from typing import Any

import pytest

from tests.cli.conftest import SEAM, Cli, make_cli
from tests.cli.test_terminal import Terminal
from tests.support.anthropic_server import AnthropicServer, keep_alive_reply
from tests.support.openai_server import (
    OpenAIServer,
    closed_port,
    error_reply,
    html_reply,
    json_reply,
    text_reply,
    unanswered_port,
)

pytestmark = pytest.mark.in_process

SESSION = "faults"
RETRY_LINE = re.compile(r"retrying in \d+(\.\d)? s \(attempt (\d) of (\d)\): (.+)")
# Small limits keep the stall tests short; the defaults are tested where they matter.
FAST = "[model]\nidle_timeout = 1.5\n"


def run(cli: Cli, *args: str, timeout: float = 60.0) -> tuple[Any, float]:
    started = time.monotonic()
    result = cli("run", "--session", SESSION, *args, timeout=timeout)
    return result, time.monotonic() - started


def failure_line(stderr: str) -> str:
    """The one `seam:` line; everything else on stderr must be a retry line."""
    assert "Traceback" not in stderr, stderr
    lines = stderr.splitlines()
    others = [line for line in lines if not RETRY_LINE.fullmatch(line)]
    assert len(others) == 1, stderr
    assert others[0].startswith("seam: "), stderr
    return others[0]


def retry_lines(stderr: str) -> list[tuple[int, int, str]]:
    found = [RETRY_LINE.fullmatch(line) for line in stderr.splitlines()]
    return [(int(m[2]), int(m[3]), m[4]) for m in found if m]


def stored(cli: Cli) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    shown = cli("sessions", "show", SESSION, "--json")
    assert shown.returncode == 0, shown.stderr
    body = json.loads(shown.stdout)
    return body["messages"], body["submissions"]


def assert_failed_once(cli: Cli, error: str) -> list[dict[str, Any]]:
    """The prompt is stored, the submission settled failed on its one attempt (nothing
    left for `seam resume` to retry), and returns the stored messages."""
    messages, [sub] = stored(cli)
    assert messages[0]["role"] == "user" and messages[0]["content"] == "hi"
    assert (sub["state"], sub["outcome"], sub["attempts"]) == ("settled", "failed", 1)
    assert error in sub["error"]
    again = cli("resume", "--json")
    assert again.returncode == 0 and again.stdout == ""
    return messages


def test_unreachable_endpoint_fails_within_seconds_showing_each_retry(tmp_path: Any) -> None:
    # Default settings: about six minutes of silence before these bounds.
    cli = make_cli(
        tmp_path,
        {"OPENAI_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1", "OPENAI_API_KEY": "k"},
        in_process=True,
    )

    result, elapsed = run(cli, "hi")

    assert result.returncode == 3  # provider_error
    assert elapsed < 30.0
    assert result.stdout == ""
    line = failure_line(result.stderr)
    assert "connection refused" in line
    assert retry_lines(result.stderr) == [
        (2, 4, "connection refused"),
        (3, 4, "connection refused"),
        (4, 4, "connection refused"),
    ]
    messages = assert_failed_once(cli, "connection refused")
    assert [m["role"] for m in messages] == ["user"]


def test_a_host_that_never_answers_the_connect_fails_within_the_connect_timeouts(
    tmp_path: Any,
) -> None:
    with unanswered_port() as port:
        cli = make_cli(
            tmp_path,
            {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "k"},
            in_process=True,
        )
        cli.write_config("[model]\nconnect_timeout = 1\nmax_retries = 1\n")

        result, elapsed = run(cli, "hi")

    assert result.returncode == 3  # provider_error
    assert 2.0 <= elapsed < 10.0  # two 1 s connects and one back-off of at most 1 s
    assert "connect timed out after 1 s" in failure_line(result.stderr)
    assert retry_lines(result.stderr) == [(2, 2, "connect timed out after 1 s")]
    assert_failed_once(cli, "connect timed out")


def test_accept_then_silence_fails_within_the_idle_timeout(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    cli.write_config(FAST)
    openai_server.push(text_reply("never").silent(), text_reply("x"))

    result, elapsed = run(cli, "hi")

    assert result.returncode == 3  # provider_error
    assert 1.5 <= elapsed < 10.0
    line = failure_line(result.stderr)
    assert "no event from the server for 1.5 s" in line
    assert retry_lines(result.stderr) == []  # a server that hung is not asked again
    assert len(openai_server.chat_requests) == 1
    assert_failed_once(cli, "no event from the server")


def test_a_one_byte_a_second_trickle_fails_within_the_idle_timeout(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    # Bytes keep coming, so no socket read ever times out; no event ever completes.
    cli.write_config("[model]\nidle_timeout = 2.5\n")
    openai_server.push(text_reply("slowly").trickled(1.0))

    result, elapsed = run(cli, "hi")

    assert result.returncode == 3  # provider_error
    assert 2.5 <= elapsed < 10.0
    assert "no event from the server for 2.5 s" in failure_line(result.stderr)
    assert_failed_once(cli, "stalled")


def test_anthropic_pings_without_an_answer_fail_within_the_idle_timeout(
    tmp_path: Any,
) -> None:
    with AnthropicServer() as server:
        cli = make_cli(tmp_path, {"ANTHROPIC_API_KEY": "sk-ant-test"}, in_process=True)
        cli.write_config(f'[anthropic]\nbase_url = "{server.base_url}"\nidle_timeout = 1.5\n')
        server.push(keep_alive_reply(pings=100, interval=0.2))

        result, elapsed = run(cli, "hi")

    assert result.returncode == 3  # provider_error
    assert 1.5 <= elapsed < 10.0
    assert "anthropic: retryable: stream stalled: no event from the server for 1.5 s" in (
        failure_line(result.stderr)
    )
    assert len(server.message_requests) == 1
    assert_failed_once(cli, "no event from the server")


def test_an_html_page_with_status_200_fails_at_once_quoting_it(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(html_reply("Welcome to the hotel Wi-Fi"), text_reply("x"))

    result, elapsed = run(cli, "hi")

    assert result.returncode == 3  # provider_error
    assert elapsed < 10.0
    line = failure_line(result.stderr)
    assert "fatal" in line and "not an event stream (text/html)" in line
    assert "Welcome to the hotel Wi-Fi" in line
    assert retry_lines(result.stderr) == []
    assert len(openai_server.chat_requests) == 1
    assert_failed_once(cli, "Welcome to the hotel Wi-Fi")


def test_a_json_error_with_status_200_fails_at_once_with_its_message(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    body = {"error": {"message": "upstream model is unavailable", "type": "server_error"}}
    openai_server.push(json_reply(body), text_reply("x"))

    result, elapsed = run(cli, "hi")

    assert result.returncode == 3  # provider_error
    assert elapsed < 10.0
    line = failure_line(result.stderr)
    assert line.endswith("fatal: upstream model is unavailable")
    assert retry_lines(result.stderr) == []
    assert len(openai_server.chat_requests) == 1
    assert_failed_once(cli, "upstream model is unavailable")


def test_the_whole_request_has_a_deadline(cli: Cli, openai_server: OpenAIServer) -> None:
    # Each event arrives within the idle limit, but the answer never completes.
    cli.write_config("[model]\ntimeout = 2\nidle_timeout = 1.5\n")
    openai_server.push(text_reply("a" * 300, chunk_size=1).trickled(0.002))  # ~0.5 s an event

    result, elapsed = run(cli, "hi")

    assert result.returncode == 3  # provider_error
    assert 2.0 <= elapsed < 10.0
    assert "no complete answer within 2 s" in failure_line(result.stderr)
    messages = assert_failed_once(cli, "no complete answer within 2 s")
    # What streamed before the deadline is kept, marked interrupted.
    [partial] = [m for m in messages if m["role"] == "assistant"]
    assert partial["interrupted"] is True and set(partial["content"]) == {"a"}


def test_the_turn_deadline_stops_a_turn_and_keeps_its_partial_text(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(text_reply("Partial answer then more", chunk_size=8).stalled(after=3))

    result, elapsed = run(cli, "--timeout", "1.5", "hi")

    assert result.returncode == 124  # timed_out
    assert 1.5 <= elapsed < 10.0
    line = failure_line(result.stderr)
    assert line.startswith("seam: timed out: the turn took longer than 1.5 s")
    assert "--timeout" in line
    messages, [sub] = stored(cli)
    assert messages[-1]["role"] == "assistant" and messages[-1]["interrupted"] is True
    assert messages[-1]["content"].startswith("Partial ")
    assert sub["state"] == "settled"  # never run again by `seam resume`


def test_a_turn_stopped_by_its_deadline_ends_the_json_stream_as_timed_out(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(text_reply("Partial answer then more", chunk_size=8).stalled(after=3))

    result, elapsed = run(cli, "--json", "--timeout", "1", "hi")

    assert result.returncode == 124
    assert elapsed < 10.0
    last = json.loads(result.stdout.splitlines()[-1])
    assert (last["type"], last["code"], last["outcome"]) == ("exit", 124, "timed_out")
    assert last["message"].startswith("timed out: the turn took longer than 1 s")
    _, [sub] = stored(cli)
    assert (sub["state"], sub["outcome"]) == ("settled", "aborted")


def test_an_unreachable_endpoint_ends_the_json_stream_as_a_provider_error(
    tmp_path: Any,
) -> None:
    cli = make_cli(
        tmp_path,
        {"OPENAI_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1", "OPENAI_API_KEY": "k"},
        in_process=True,
    )
    cli.write_config("[model]\nmax_retries = 0\n")

    result, _ = run(cli, "--json", "hi")

    assert result.returncode == 3
    last = json.loads(result.stdout.splitlines()[-1])
    assert (last["type"], last["code"], last["outcome"]) == ("exit", 3, "provider_error")
    assert "connection refused" in last["message"]


def test_a_transient_error_is_retried_visibly_then_answers(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(error_reply(503), text_reply("Recovered."))

    result, _ = run(cli, "hi")

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Recovered.\n"
    assert retry_lines(result.stderr) == [(2, 4, "HTTP 503: scripted HTTP 503")]
    messages, [sub] = stored(cli)
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert (sub["outcome"], sub["attempts"]) == ("completed", 1)


def test_chat_shows_retries_inline(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(error_reply(503), text_reply("Back again."))

    result = cli("chat", stdin="hi\n")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    [retry] = [line for line in lines if line.startswith("retrying in ")]
    assert RETRY_LINE.fullmatch(retry)
    assert retry.endswith("(attempt 2 of 4): HTTP 503: scripted HTTP 503")
    assert lines.index(retry) < next(i for i, ln in enumerate(lines) if "Back again." in ln)


def test_chat_turn_deadline_ends_the_turn_not_the_chat(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(text_reply("never").stalled(after=1), text_reply("Second turn."))

    result = cli("chat", "--timeout", "1", stdin="first\nsecond\n")

    assert result.returncode == 0, result.stderr
    assert "error: timed out: the turn took longer than 1 s" in result.stdout
    assert "Second turn." in result.stdout


def test_run_help_lists_the_timeout_option(cli: Cli) -> None:
    result = cli("run", "--help")
    assert result.returncode == 0
    assert "--timeout SECONDS" in result.stdout
    assert re.search(r"124\s+timed_out\s+the turn ran past its deadline", result.stdout)


def test_on_a_terminal_a_spinner_counts_the_back_off_down(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(error_reply(429, headers={"Retry-After": "2"}), text_reply("Done waiting."))
    master, slave = pty.openpty()
    try:
        process = subprocess.Popen(
            [str(SEAM), "run", "hi"],
            cwd=cli.project,
            env={**cli.env, "TERM": "xterm"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=slave,
            encoding="utf-8",
        )
        os.close(slave)
        slave = -1
        terminal = Terminal(master)
        at = terminal.wait_for("retrying in 2 s (attempt 2 of 4): HTTP 429")
        terminal.wait_for("waiting 2 s before attempt 2 of 4…", after=at)
        stdout, _ = process.communicate(timeout=30)
    finally:
        os.close(master)
        if slave >= 0:
            os.close(slave)
    assert process.returncode == 0
    assert stdout == "Done waiting.\n"


def test_a_timeout_that_is_not_positive_is_a_config_error(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    path = cli.write_config("[model]\nidle_timeout = 0\n")

    result = cli("run", "hi")

    assert result.returncode == 2
    assert result.stderr.startswith(f"seam: {path}: model.idle_timeout")
    assert len(result.stderr.splitlines()) == 1
    assert openai_server.chat_requests == []
