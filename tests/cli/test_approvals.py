"""Approval round trips through the real `seam` CLI: approve once, deny, always."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import Cli, tool_messages
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process

DELETE = json.dumps({"command": "rm -r build"})


def make_build_dir(cli: Cli) -> None:
    (cli.project / "build" / "obj").mkdir(parents=True)
    (cli.project / "build" / "obj" / "a.o").write_text("x")


def script_delete(server: OpenAIServer) -> None:
    server.push(tool_call_reply([("terminal", DELETE)]), text_reply("Done."))


def test_chat_approve_once_runs_the_command(cli: Cli, openai_server: OpenAIServer) -> None:
    make_build_dir(cli)
    script_delete(openai_server)
    result = cli("chat", stdin="remove the build directory\no\n/exit\n")
    assert result.returncode == 0, result.stderr
    assert "terminal wants to run: rm -r build" in result.stdout
    assert "approved (once)" in result.stdout
    assert not (cli.project / "build").exists()
    assert tool_messages(openai_server, 1)[0]["content"].startswith("exit code 0")


def test_chat_deny_keeps_the_files(cli: Cli, openai_server: OpenAIServer) -> None:
    make_build_dir(cli)
    script_delete(openai_server)
    result = cli("chat", stdin="remove the build directory\nd\n/exit\n")
    assert result.returncode == 0, result.stderr
    assert "denied (deny)" in result.stdout
    assert (cli.project / "build" / "obj" / "a.o").exists()
    refused = tool_messages(openai_server, 1)[0]["content"]
    assert refused.startswith("error:") and "den" in refused


def test_always_is_remembered_by_the_next_run(cli: Cli, openai_server: OpenAIServer) -> None:
    make_build_dir(cli)
    script_delete(openai_server)
    first = cli("chat", stdin="remove the build directory\na\n/exit\n")
    assert first.returncode == 0, first.stderr
    assert "approved (always)" in first.stdout
    assert not (cli.project / "build").exists()
    assert (cli.home / "approvals.json").is_file()

    # A one-shot run with nothing on stdin would deny if asked: it is not asked.
    make_build_dir(cli)
    script_delete(openai_server)
    second = cli("run", "remove the build directory again")
    assert second.returncode == 0, second.stderr
    assert "wants to run" not in second.stderr
    assert not (cli.project / "build").exists()


def test_forbidden_commands_are_refused_without_asking(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(
        tool_call_reply([("terminal", json.dumps({"command": "rm -rf /"}))]),
        text_reply("I cannot do that."),
    )
    result = cli("run", "wipe everything")
    assert result.returncode == 0, result.stderr
    assert "wants to run" not in result.stderr
    refused = tool_messages(openai_server, 1)[0]["content"]
    assert refused.startswith("error:") and "floor" in refused
