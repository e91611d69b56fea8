"""MCP prompts over ACP (issue 26), with the ACP SDK's client as the editor, npm's
server-everything from the config and an editor's own server (the MCP SDK's
`MCPServer`): the prompts are offered in `available_commands_update` (with their
arguments as the hint), `/server:prompt arg=value` sent as a prompt runs a turn with the
prompt's text, and a bad line is one line in the session, no turn."""

from __future__ import annotations

import asyncio
import json
import sys
from dataclasses import dataclass
from typing import Any

import acp
from acp.schema import McpServerStdio

from tests.acp.conftest import WatchingClient, open_editor
from tests.cli.conftest import Cli, sent_messages
from tests.mcp.installed import EVERYTHING, need
from tests.support.openai_server import OpenAIServer, text_reply

TURN = 90.0
# An editor's own MCP server with one prompt, built with the MCP SDK.
NOTES_SERVER = """
from mcp.server import MCPServer

srv = MCPServer("notes")


@srv.prompt()
def review(path: str, focus: str = "bugs") -> str:
    \"\"\"Review a file.\"\"\"
    return f"Review {path} for {focus}."


srv.run("stdio")
"""


@dataclass
class PromptsClient(WatchingClient):
    """`seen` is set by the `available_commands_update` that offers MCP prompts (Seam's
    own commands come first, in an update of their own)."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        if update.session_update == "available_commands_update" and any(
            ":" in c.name for c in update.available_commands
        ):
            self.seen.set()


def offered(client: WatchingClient) -> dict[str, object]:
    """The commands of the last `available_commands_update`: name -> its input hint."""
    listed = [u for u in client.updates if u.session_update == "available_commands_update"][-1]
    return {
        c.name: (c.input.root.hint if c.input is not None else None)
        for c in listed.available_commands
    }


async def test_mcp_prompts_are_offered_and_run(cli: Cli, openai_server: OpenAIServer) -> None:
    need(EVERYTHING)
    cli.write_config(
        f"[mcp.servers.everything]\ncommand = {json.dumps([str(EVERYTHING), 'stdio'])}\n"
    )
    openai_server.push(text_reply("Sunny in Paris."))
    client = PromptsClient()
    async with open_editor(cli, client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        await asyncio.wait_for(client.seen.wait(), TURN)
        commands = offered(client)

        async def send(text: str) -> str:
            prompt = [acp.text_block(text)]
            reply = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=prompt), TURN
            )
            return str(reply.stop_reason)

        ran = await send("/everything:args-prompt city=Paris")
        missing = await send("/everything:args-prompt")
        unknown = await send("/everything:nope")
    assert commands["everything:args-prompt"] == "city=… [state=…]"
    assert "everything:simple-prompt" in commands
    assert "undo" in commands  # Seam's own stay in the list
    assert ran == missing == unknown == "end_turn"
    assert sent_messages(openai_server, 0)[-1] == {
        "role": "user",
        "content": "What's weather in Paris?",
    }
    assert len(openai_server.chat_requests) == 1  # the bad lines ran no turn
    shown = client.text()
    missing_city = "missing city; usage: /everything:args-prompt city=… [state=…]"
    for part in ("Sunny in Paris.", missing_city, "has no prompt 'nope'"):
        assert part in shown, part


async def test_an_editors_server_prompt_is_offered_and_runs(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    openai_server.push(text_reply("Looks fine."))
    server = McpServerStdio(name="notes", command=sys.executable, args=["-c", NOTES_SERVER], env=[])
    client = PromptsClient()
    async with open_editor(cli, client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[server])
        await asyncio.wait_for(client.seen.wait(), TURN)
        prompt = [acp.text_block('/notes:review "src/a b.py"')]
        await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=prompt), TURN)
    assert offered(client)["notes:review"] == "path=… [focus=…]"
    assert sent_messages(openai_server, 0)[-1]["content"] == "Review src/a b.py for bugs."
