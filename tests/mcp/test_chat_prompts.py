"""`seam chat` with server-everything from the config: a prompt as a slash command, the
prompts in `/mcp`, a bad prompt line as a one-line error, and a tool's progress notes."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import Cli, sent_messages
from tests.mcp.installed import EVERYTHING, need
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process


def config() -> str:
    need(EVERYTHING)
    return f"[mcp.servers.everything]\ncommand = {json.dumps([str(EVERYTHING), 'stdio'])}\n"


def test_a_prompt_runs_as_a_turn_and_mcp_lists_the_prompts(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    cli.write_config(config())
    openai_server.push(text_reply("Sunny."))
    lines = "/everything:args-prompt city=Paris\n/everything:args-prompt\n/mcp\n/exit\n"

    result = cli("chat", stdin=lines, timeout=90)

    assert result.returncode == 0, result.stderr
    assert sent_messages(openai_server, 0)[-1] == {
        "role": "user",
        "content": "What's weather in Paris?",
    }
    assert "Sunny." in result.stdout
    assert "error: missing city; usage: /everything:args-prompt city=… [state=…]" in result.stdout
    assert "  prompt: /everything:args-prompt city=… [state=…]" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_progress_notes_are_printed(cli: Cli, openai_server: OpenAIServer) -> None:
    cli.write_config(config())
    arguments = '{"duration": 0.2, "steps": 2}'
    openai_server.push(
        tool_call_reply([("mcp__everything__trigger-long-running-operation", arguments)])
    )
    openai_server.push(text_reply("Done."))

    result = cli("chat", stdin="run it\n/exit\n", timeout=90)

    assert result.returncode == 0, result.stderr
    assert "… mcp__everything__trigger-long-running-operation: 1/2" in result.stdout
    assert "… mcp__everything__trigger-long-running-operation: 2/2" in result.stdout
