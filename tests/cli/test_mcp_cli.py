"""`seam mcp list` and `/mcp` in chat, against a real stdio MCP server from the config."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Cli, tool_messages
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.in_process

SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"


def config(*, with_broken: bool = True) -> str:
    text = f"""
[mcp.servers.notes]
command = [{str(sys.executable)!r}, {str(SERVER)!r}]
env = {{ NOTES_TOKEN = "$SEAM_TEST_NOTES_TOKEN" }}
tools = {{ allow = ["add", "search", "delete_*"], deny = [] }}
"""
    if with_broken:
        text += """
[mcp.servers.broken]
command = ["seam-no-such-mcp-server"]
headers = {}
env = { TOKEN = "$SEAM_TEST_UNSET_TOKEN" }
"""
    return text


def test_mcp_list_shows_servers_states_and_tools(cli: Cli) -> None:
    cli.write_config(config())
    cli.env["SEAM_TEST_NOTES_TOKEN"] = "abc"
    cli.env.pop("SEAM_TEST_UNSET_TOKEN", None)

    result = cli("mcp", "list", timeout=60)

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("notes  ready  stdio") for line in lines)
    assert "  mcp__notes__add" in lines
    assert "  mcp__notes__delete_note  (asks for approval)" in lines
    assert any("not offered" in line and "picture" in line for line in lines)
    assert any(line.startswith("broken  failed") for line in lines)
    assert "  error: not set in Seam's environment: env TOKEN: $SEAM_TEST_UNSET_TOKEN" in lines


def test_a_bad_mcp_section_is_a_config_error(cli: Cli) -> None:
    cli.write_config('[mcp.servers.x]\nurl = "ftp://nowhere"\n')
    result = cli("mcp", "list")
    assert result.returncode == 2
    assert "mcp.servers.x.url" in result.stderr


def test_chat_calls_an_mcp_tool_and_shows_mcp(cli: Cli, openai_server: OpenAIServer) -> None:
    cli.write_config(config(with_broken=False))
    cli.env["SEAM_TEST_NOTES_TOKEN"] = "abc"
    openai_server.push(tool_call_reply([("mcp__notes__add", '{"a": 20, "b": 22}')]))
    openai_server.push(text_reply("It is 42."))

    result = cli("chat", stdin="add them\n/mcp\n/mcp reload\n/exit\n", timeout=90)

    assert result.returncode == 0, result.stderr
    assert "It is 42." in result.stdout
    assert [m["content"] for m in tool_messages(openai_server, 1)] == ["42"]
    assert "notes  ready  stdio" in result.stdout
    assert "no changes" in result.stdout
