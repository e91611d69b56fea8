"""`seam acp --tenant T`: an editor handed to someone else runs T's sessions and cannot
loosen safety for anyone (MCP servers, lasting approval answers, session modes), each
refused in one line; the owner's `seam acp` keeps all of them. Driven by the ACP SDK's
own client against the real console script, as an editor does."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import acp
import pytest
from acp.schema import ClientCapabilities, McpServerStdio

from seam.apps.acp.access import LASTING_REFUSAL
from tests.acp.conftest import Agent, EditorClient
from tests.cli.conftest import SEAM, Cli, tool_messages
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

TURN = 60.0
SHARED_LOOP = pytest.mark.asyncio(loop_scope="module")
MCP_SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"
DELETE = json.dumps({"command": "rm -r build"})


@asynccontextmanager
async def tenant_editor(cli: Cli, client: EditorClient, tenant: str) -> AsyncIterator[Any]:
    """`seam acp --tenant <tenant>` spawned by the SDK and initialized."""
    async with acp.spawn_agent_process(
        client, str(SEAM), "acp", "--tenant", tenant, env=cli.env, cwd=cli.project
    ) as (conn, _proc):
        await asyncio.wait_for(
            conn.initialize(
                protocol_version=acp.PROTOCOL_VERSION, client_capabilities=ClientCapabilities()
            ),
            30,
        )
        yield conn


def notes_server() -> McpServerStdio:
    return McpServerStdio(name="notes", command=sys.executable, args=[str(MCP_SERVER)], env=[])


def deleting(cli: Cli, model: Any, answer: str) -> EditorClient:
    """A build directory, a model that asks to delete it, and an editor that answers
    `answer` to the permission request."""
    (cli.project / "build").mkdir()
    (cli.project / "build" / "a.o").write_text("x")
    model.push(tool_call_reply([("terminal", DELETE)]), text_reply("Done."))
    return EditorClient(answer=answer)


async def ask(conn: Any, session_id: str, text: str) -> Any:
    prompt = conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])
    return await asyncio.wait_for(prompt, TURN)


async def test_a_tenants_editor_cannot_loosen_safety(cli: Cli, openai_server: OpenAIServer) -> None:
    client = deleting(cli, openai_server, "allow_always")  # an option it was not offered
    async with tenant_editor(cli, client, "bob") as conn:
        with pytest.raises(acp.RequestError) as refused:
            await conn.new_session(cwd=str(cli.project), mcp_servers=[notes_server()])
        assert "MCP servers are the owner's to add" in str(refused.value.data)
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        with pytest.raises(acp.RequestError) as no_mode:
            await conn.set_session_mode(session_id=session.session_id, mode_id="bypass")
        assert "session modes are the owner's to set" in str(no_mode.value.data)
        reply = await ask(conn, session.session_id, "clean")
    assert reply.stop_reason == "end_turn"
    [(_, options)] = client.permissions
    assert [o.kind for o in options] == ["allow_once", "reject_once"]
    assert (cli.project / "build" / "a.o").exists()  # the lasting answer was a denial
    assert tool_messages(openai_server, 1)[0]["content"].startswith("error:")
    assert LASTING_REFUSAL in client.text()
    assert len(LASTING_REFUSAL.splitlines()) == 1


async def test_a_tenants_sessions_are_its_own(cli: Cli, openai_server: OpenAIServer) -> None:
    """A session made by the tenant's editor is stored under the tenant: its id names no
        session of the owner's (`seam sessions show`), nor of another tenant's editor; the
    tenant's own editor loads it."""
    openai_server.push(text_reply("hi bob"))
    client = EditorClient()
    async with tenant_editor(cli, client, "bob") as conn:
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        await ask(conn, session.session_id, "hi")
    async with tenant_editor(cli, EditorClient(), "eve") as conn:
        with pytest.raises(acp.RequestError):
            await conn.load_session(
                cwd=str(cli.project), session_id=session.session_id, mcp_servers=[]
            )
    again = EditorClient()
    async with tenant_editor(cli, again, "bob") as conn:
        await conn.load_session(cwd=str(cli.project), session_id=session.session_id, mcp_servers=[])
    assert "hi bob" in again.text()  # its own editor finds it
    shown = cli("sessions", "show", session.session_id)
    assert shown.returncode != 0 and "hi bob" not in shown.stdout


def test_a_bad_tenant_name_is_a_one_line_error(cli: Cli) -> None:
    done = cli.spawn("acp", "--tenant", "../x")
    assert done.returncode == 2
    assert "is not a tenant name" in done.stderr and "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1


@SHARED_LOOP
async def test_the_owners_editor_keeps_lasting_answers_and_modes(agent: Agent) -> None:
    client = deleting(agent.cli, agent.model, "allow_always")
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(agent.cli.project), mcp_servers=[])
        await conn.set_session_mode(session_id=session.session_id, mode_id="default")
        await ask(conn, session.session_id, "clean")
    [(_, options)] = client.permissions
    assert "allow_always" in [o.kind for o in options]
    assert not (agent.cli.project / "build").exists()
    assert LASTING_REFUSAL not in client.text()
