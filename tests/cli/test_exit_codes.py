"""`seam run` exits with one code per way a turn can end, says why in one line, and the
`--json` stream ends with an `exit` line carrying the same outcome.

Each test drives the real console script against the loopback server, and checks the
time it took, the exit code, the stderr line and what the session store kept.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from seam.apps.cli.exits import EXIT_CODES
from tests.cli.conftest import Cli, json_lines, make_cli, tool_messages
from tests.support.openai_server import (
    OpenAIServer,
    closed_port,
    error_reply,
    text_reply,
    tool_call_reply,
)

pytestmark = pytest.mark.in_process

DELETE = ("terminal", json.dumps({"command": "rm -r build"}))
# Each case must end well inside this (no retries, no waiting for an answer).
QUICK = 15.0
# No retries in the process nor across attempts: a failure fails at once.
NO_RETRIES = "[model]\nmax_retries = 0\n[store]\nmax_attempts = 1\n"


def shown(cli: Cli, session: str) -> dict[str, Any]:
    result = cli("sessions", "show", session, "--json")
    assert result.returncode == 0, result.stderr
    body: dict[str, Any] = json.loads(result.stdout)
    return body


def timed(cli: Cli, *args: str, stdin: str | None = None) -> tuple[Any, float]:
    started = time.monotonic()
    result = cli(*args, stdin=stdin)
    return result, time.monotonic() - started


def test_the_help_lists_every_exit_code(cli: Cli) -> None:
    result = cli("run", "--help")
    assert result.returncode == 0
    for code, outcome, _ in EXIT_CODES:
        assert f"{code:>3}  {outcome}" in result.stdout


def test_completed_is_0_with_a_completed_exit_line(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply("Hello."))
    result, took = timed(cli, "run", "--json", "--session", "fine", "hi")
    assert took < QUICK
    assert result.returncode == 0, result.stderr
    last = json_lines(result.stdout)[-1]
    assert (last["type"], last["code"], last["outcome"]) == ("exit", 0, "completed")
    [sub] = shown(cli, "fine")["submissions"]
    assert (sub["outcome"], sub["result"]) == ("completed", "Hello.")


def test_circuit_breaker_halt_is_4_and_says_why(cli: Cli, openai_server: OpenAIServer) -> None:
    # The same failing call again and again: the breaker halts the turn at the fifth.
    missing = ("read_file", json.dumps({"path": "missing.txt"}))
    openai_server.push(*[tool_call_reply([missing]) for _ in range(6)])

    result, took = timed(cli, "run", "--session", "loop", "read missing.txt")

    assert took < QUICK
    assert result.returncode == 4, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("seam: halted: "), result.stderr
    body = shown(cli, "loop")
    [sub] = body["submissions"]
    assert (sub["outcome"], sub["finish_reason"]) == ("completed", "halted")
    assert body["messages"][-1]["role"] == "tool"  # every call answered


def test_max_iterations_is_4_with_a_halted_exit_line(cli: Cli, openai_server: OpenAIServer) -> None:
    cli.write_config("[agent]\nmax_iterations = 2\n")
    (cli.project / "note.txt").write_text("x")
    read = ("read_file", json.dumps({"path": "note.txt"}))
    openai_server.push(tool_call_reply([read]), tool_call_reply([read]))

    result, took = timed(cli, "run", "--json", "--session", "long", "read it twice")

    assert took < QUICK
    assert result.returncode == 4, result.stderr
    assert result.stderr.startswith("seam: halted: stopped after 2 model calls")
    last = json_lines(result.stdout)[-1]
    assert (last["type"], last["code"], last["outcome"]) == ("exit", 4, "halted")
    assert last["message"].startswith("halted: ")
    [sub] = shown(cli, "long")["submissions"]
    assert sub["finish_reason"] == "max_iterations"
    assert len(openai_server.chat_requests) == 2


def test_approval_nobody_can_give_is_5_names_the_command_and_tells_the_model(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    (cli.project / "build").mkdir()
    openai_server.push(tool_call_reply([DELETE]), text_reply("I could not delete it."))

    # stdin is empty: asked, nobody answers (end of input), so nobody could approve.
    result, took = timed(cli, "run", "--session", "ask", "remove the build directory", stdin="")

    assert took < QUICK
    assert result.returncode == 5, result.stderr
    assert result.stdout == "I could not delete it.\n"
    lines = [line for line in result.stderr.splitlines() if line.startswith("seam: ")]
    assert len(lines) == 1, result.stderr
    assert "'rm -r build'" in lines[0] and "no one was available to approve" in lines[0]
    assert '[guard] allow = ["rm -r build"]' in lines[0] and "--yes" in lines[0]
    assert "denied" not in lines[0] and "refused: refused" not in result.stderr
    assert (cli.project / "build").is_dir()
    [told] = tool_messages(openai_server, 1)
    assert "no one was available to approve" in told["content"]
    assert "denied" not in told["content"]
    stored = [m for m in shown(cli, "ask")["messages"] if m["role"] == "tool"]
    assert "no one was available" in stored[0]["content"]


def test_approval_with_the_prompt_on_stdin_is_5_in_json_too(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(tool_call_reply([DELETE]), text_reply("Not deleted."))

    result, took = timed(cli, "run", "--json", "-", stdin="remove the build directory")

    assert took < QUICK
    assert result.returncode == 5, result.stderr
    events = json_lines(result.stdout)
    assert [e["type"] for e in events][-2:] == ["done", "exit"]
    responses = [e for e in events if e["type"] == "tool_approval_response"]
    assert [e["decision"] for e in responses] == ["unavailable"]
    last = events[-1]
    assert (last["code"], last["outcome"]) == (5, "approval_unavailable")
    assert "rm -r build" in last["message"]


def test_provider_auth_failure_is_3(cli: Cli, openai_server: OpenAIServer) -> None:
    cli.write_config(NO_RETRIES)
    openai_server.push(error_reply(401, {"error": {"message": "bad key", "type": "auth"}}))

    result, took = timed(cli, "run", "--json", "--session", "auth", "hi")

    assert took < QUICK
    assert result.returncode == 3
    assert len(result.stderr.splitlines()) == 1 and "OPENAI_API_KEY" in result.stderr
    last = json_lines(result.stdout)[-1]
    assert (last["code"], last["outcome"]) == (3, "provider_error")
    [sub] = shown(cli, "auth")["submissions"]
    assert sub["outcome"] == "failed" and sub["error"].startswith("auth")
    assert [m["role"] for m in shown(cli, "auth")["messages"]] == ["user"]


def test_unreachable_provider_is_3(tmp_path: Path) -> None:
    # A port nothing listens on: the connection is refused at once.
    port = closed_port()
    cli = make_cli(
        tmp_path,
        {"OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1", "OPENAI_API_KEY": "k"},
        in_process=True,
    )
    cli.write_config(NO_RETRIES)
    result, took = timed(cli, "run", "--session", "down", "hi")

    assert took < QUICK
    assert result.returncode == 3, result.stderr
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("seam: ")
    [sub] = shown(cli, "down")["submissions"]
    assert sub["outcome"] == "failed"


def test_bad_input_is_2_with_an_exit_line(cli: Cli, openai_server: OpenAIServer) -> None:
    result = cli("run", "--json", "--personality", "pirate", "hi")
    assert result.returncode == 2
    [line] = json_lines(result.stdout)
    assert (line["type"], line["code"], line["outcome"]) == ("exit", 2, "usage")
    assert "pirate" in line["message"]
    assert openai_server.chat_requests == []


def test_unknown_tools_in_a_toolset_are_named(cli: Cli, openai_server: OpenAIServer) -> None:
    folder = cli.home / "personalities" / "picky"
    folder.mkdir(parents=True)
    (folder / "SOUL.md").write_text("You are picky.")
    (folder / "config.toml").write_text('toolset = ["read_file", "raed_file", "teleport"]\n')

    result = cli("run", "--personality", "picky", "hi")

    assert result.returncode == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "'raed_file', 'teleport'" in lines[0] and "picky" in lines[0]
    assert "read_file" in lines[0]  # among the known ones
    assert openai_server.chat_requests == []


def test_the_cli_guide_table_matches_the_codes() -> None:
    readme = (Path(__file__).parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    rows = {
        int(cells[1]): cells[2].strip("`")
        for line in readme.splitlines()
        if line.startswith("| ") and (cells := [c.strip() for c in line.split("|")])[1].isdigit()
    }
    assert rows == {code: outcome for code, outcome, _ in EXIT_CODES}


def test_chat_at_end_of_input_tells_the_model_no_one_could_approve(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    (cli.project / "build").mkdir()
    openai_server.push(tool_call_reply([DELETE]), text_reply("Left it alone."))

    # The approval prompt meets the end of the piped input: nobody is there to answer.
    result, took = timed(cli, "chat", "--session", "piped", stdin="remove the build directory\n")

    assert took < QUICK
    assert result.returncode == 0, result.stderr
    assert "not run (no one was available to approve it)" in result.stdout
    assert "'rm -r build'" in result.stdout and "[guard] allow" in result.stdout
    assert (cli.project / "build").is_dir()
    [told] = tool_messages(openai_server, 1)
    assert "no one was available to approve" in told["content"]


def test_resume_tells_the_model_no_one_could_approve(cli: Cli, openai_server: OpenAIServer) -> None:
    import asyncio

    from seam.wiring import create_runtime
    from seam.wiring.settings import load_settings

    async def queue() -> None:
        settings = load_settings(cli.env, home=cli.home, working_dir=cli.project)
        async with create_runtime(settings=settings) as runtime:
            await runtime.submit("later", "remove the build directory")

    (cli.project / "build").mkdir()
    asyncio.run(queue())
    openai_server.push(tool_call_reply([DELETE]), text_reply("Nobody approved, so no."))

    result, took = timed(cli, "resume")

    assert took < QUICK
    assert result.returncode == 0, result.stderr
    assert "Nobody approved, so no." in result.stdout
    assert (cli.project / "build").is_dir()
    [told] = tool_messages(openai_server, 1)
    assert "no one was available to approve" in told["content"]


def test_resume_warns_about_unknown_tools(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply("hi"))
    assert cli("run", "hi").returncode == 0  # seeds the default personality
    folder = cli.home / "personalities" / "picky"
    folder.mkdir(parents=True)
    (folder / "SOUL.md").write_text("You are picky.")
    (folder / "config.toml").write_text('toolset = ["read_file", "teleport"]\n')

    result = cli("resume")

    assert result.returncode == 0
    assert "seam: warning: personality 'picky' names unknown tools in its toolset: 'teleport'" in (
        result.stderr
    )
