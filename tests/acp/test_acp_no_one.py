"""ACP: an editor that cannot answer a permission request is no one, not a person's "no".

A scripted model asks to delete a directory; the editor's `session/request_permission`
fails. Nothing runs, and the model is told no one was available to approve it."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import acp
import pytest
from acp.schema import RequestPermissionResponse

from tests.acp.conftest import Agent, EditorClient
from tests.cli.conftest import tool_messages
from tests.support.openai_server import text_reply, tool_call_reply

SHARED_LOOP = pytest.mark.asyncio(loop_scope="module")
DELETE = json.dumps({"command": "rm -r build"})


@dataclass
class BrokenEditor(EditorClient):
    """An editor whose permission prompt fails (a client without one, a crash in it)."""

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((tool_call, options))
        raise acp.RequestError.internal_error({"details": "no permission prompt here"})


@SHARED_LOOP
async def test_a_failed_permission_request_is_no_one_there(agent: Agent) -> None:
    cli, openai_server = agent.cli, agent.model
    (cli.project / "build").mkdir()
    openai_server.push(tool_call_reply([("terminal", DELETE)]), text_reply("Kept it."))
    client = BrokenEditor()
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("clean")]), 60
        )
    assert client.permissions, "the editor was asked"
    assert (cli.project / "build").is_dir()
    told = tool_messages(openai_server, 1)[0]["content"]
    assert "no one was available to approve 'rm -r build'" in told, told
    assert "denied" not in told
