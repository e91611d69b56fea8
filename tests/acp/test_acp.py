"""`seam acp` driven by the ACP SDK's client: sessions, streamed prompts, permissions,
files through the editor, cancel."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import acp
import pytest
from acp.schema import McpServerStdio

from tests.acp.conftest import Agent, EditorClient, open_editor, stalled_turn
from tests.cli.conftest import Cli, sent_messages, tool_messages
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

TURN = 60.0
# Tests taking `agent` share one `seam acp` per module (and worker), so they run in the
# module's event loop; each has its own sessions, project directory and model script.
SHARED_LOOP = pytest.mark.asyncio(loop_scope="module")
MCP_SERVER = Path(__file__).resolve().parents[1] / "support" / "mcp_server.py"
DELETE = json.dumps({"command": "rm -r build"})


def make_build_dir(cli: Cli) -> None:
    (cli.project / "build").mkdir()
    (cli.project / "build" / "a.o").write_text("x")


@SHARED_LOOP
async def test_a_prompt_streams_text_and_thoughts(agent: Agent) -> None:
    cli, openai_server = agent.cli, agent.model
    openai_server.push(text_reply("Hello from Seam.", reasoning="thinking it over"))
    client = EditorClient()
    async with agent.editor(client) as (conn, init):
        assert init.agent_capabilities.load_session is True
        assert init.agent_capabilities.prompt_capabilities.embedded_context is True
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        reply = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")]), TURN
        )
    assert reply.stop_reason == "end_turn"
    assert client.text() == "Hello from Seam."
    assert client.text("agent_thought_chunk") == "thinking it over"
    assert client.kinds().count("agent_message_chunk") > 1  # streamed, not one block


@SHARED_LOOP
async def test_a_granted_tool_call_runs(agent: Agent) -> None:
    cli, openai_server = agent.cli, agent.model
    make_build_dir(cli)
    openai_server.push(tool_call_reply([("terminal", DELETE)]), text_reply("Removed."))
    client = EditorClient(answer="allow_once")
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        reply = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("clean")]), TURN
        )
    assert reply.stop_reason == "end_turn"
    assert len(client.permissions) == 1
    tool_call, options = client.permissions[0]
    assert "rm -r build" in tool_call.title
    assert {o.kind for o in options} == {
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    }
    assert not (cli.project / "build").exists()
    starts = [u for u in client.updates if u.session_update == "tool_call"]
    ends = [u for u in client.updates if u.session_update == "tool_call_update"]
    assert starts[0].kind == "execute" and starts[0].title == "terminal: rm -r build"
    assert ends[-1].status == "completed"
    assert client.text() == "Removed."


@SHARED_LOOP
async def test_a_rejected_tool_call_keeps_the_files(agent: Agent) -> None:
    cli, openai_server = agent.cli, agent.model
    make_build_dir(cli)
    openai_server.push(tool_call_reply([("terminal", DELETE)]), text_reply("Kept."))
    client = EditorClient(answer="reject_once")
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("clean")]), TURN
        )
    assert (cli.project / "build" / "a.o").exists()
    refused = tool_messages(openai_server, 1)[0]["content"]
    assert refused.startswith("error:") and "den" in refused
    ends = [u for u in client.updates if u.session_update == "tool_call_update"]
    assert ends[-1].status == "failed"


@SHARED_LOOP
async def test_files_are_read_through_the_editor(agent: Agent) -> None:
    cli, openai_server = agent.cli, agent.model
    # The session's cwd, not the process's, is where relative paths point.
    repo = cli.project / "repo"
    repo.mkdir()
    path = repo / "notes.txt"
    path.write_text("saved on disk\n")
    openai_server.push(
        tool_call_reply([("read_file", json.dumps({"path": "notes.txt"}))]), text_reply("Read.")
    )
    client = EditorClient(buffers={str(path): "unsaved buffer text\n"})
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("read it")]), TURN
        )
    assert str(path) in client.reads
    seen = tool_messages(openai_server, 1)[0]["content"]
    assert "unsaved buffer text" in seen and "saved on disk" not in seen


@SHARED_LOOP
async def test_cancel_stops_the_turn(agent: Agent) -> None:
    openai_server = agent.model
    client = EditorClient()
    async with agent.editor(client) as (conn, _):
        sid, turn = await stalled_turn(agent, client, conn)
        await conn.cancel(session_id=sid)
        # The model is still stalled mid-answer: the cancel cuts the stream short.
        reply = await asyncio.wait_for(turn, TURN)
        openai_server.release()
    assert reply.stop_reason == "cancelled"
    assert "[halt]" not in client.text()


async def test_a_stored_session_is_replayed_on_load(cli: Cli, openai_server: OpenAIServer) -> None:
    openai_server.push(text_reply("Stored answer."))
    async with open_editor(cli, EditorClient()) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("remember")]), TURN
        )
    # A new editor process picks the session up again.
    openai_server.push(text_reply("Still here."))
    client = EditorClient()
    async with open_editor(cli, client) as (conn, _):
        await conn.load_session(cwd=str(cli.project), session_id=session.session_id)
        assert client.text("user_message_chunk") == "remember"
        assert client.text() == "Stored answer."
        reply = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("again")]), TURN
        )
    assert reply.stop_reason == "end_turn"
    assert [m["content"] for m in sent_messages(openai_server, 1) if m["role"] == "user"][-2:] == [
        "remember",
        "again",
    ]


@SHARED_LOOP
async def test_the_todo_list_is_shown_as_a_plan(agent: Agent) -> None:
    cli, openai_server = agent.cli, agent.model
    items = json.dumps({"action": "add", "items": ["read the code", "fix the bug"]})
    openai_server.push(tool_call_reply([("todo", items)]), text_reply("Planned."))
    client = EditorClient()
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("plan")]), TURN
        )
    plans = [u for u in client.updates if u.session_update == "plan"]
    assert [(e.content, e.status) for e in plans[-1].entries] == [
        ("read the code", "pending"),
        ("fix the bug", "pending"),
    ]


@SHARED_LOOP
async def test_files_are_written_through_the_editor(agent: Agent) -> None:
    cli, openai_server = agent.cli, agent.model
    path = cli.project / "out.txt"
    write = json.dumps({"path": "out.txt", "content": "from the agent\n"})
    openai_server.push(tool_call_reply([("write_file", write)]), text_reply("Written."))
    client = EditorClient()
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("write")]), TURN
        )
    assert client.writes == {str(path): "from the agent\n"}
    assert not path.exists()  # the editor owns the buffer; it saves it


@SHARED_LOOP
async def test_the_editors_mcp_servers_are_offered(agent: Agent) -> None:
    cli, openai_server = agent.cli, agent.model
    openai_server.push(
        tool_call_reply([("mcp__notes__add", json.dumps({"a": 2, "b": 3}))]), text_reply("5.")
    )
    server = McpServerStdio(name="notes", command=sys.executable, args=[str(MCP_SERVER)], env=[])
    client = EditorClient()
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[server])
        await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("add")]), TURN
        )
    offered = [t["function"]["name"] for t in openai_server.chat_requests[0].body["tools"]]
    assert "mcp__notes__add" in offered
    assert tool_messages(openai_server, 1)[0]["content"].strip() == "5"


@SHARED_LOOP
async def test_a_cancelled_permission_request_is_a_denial(agent: Agent) -> None:
    cli, openai_server = agent.cli, agent.model
    make_build_dir(cli)
    openai_server.push(tool_call_reply([("terminal", DELETE)]), text_reply("Kept."))
    client = EditorClient(answer=None)
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("clean")]), TURN
        )
    assert (cli.project / "build" / "a.o").exists()
    assert tool_messages(openai_server, 1)[0]["content"].startswith("error:")


@SHARED_LOOP
async def test_cancel_during_a_permission_request(agent: Agent) -> None:
    cli, openai_server = agent.cli, agent.model
    make_build_dir(cli)
    openai_server.push(tool_call_reply([("terminal", DELETE)]), text_reply("unused"))
    client = EditorClient(hold=asyncio.Event())
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("clean")])
        )
        await asyncio.wait_for(client.asked.wait(), TURN)
        await conn.cancel(session_id=session.session_id)
        assert client.hold is not None
        client.hold.set()  # the editor answers the open request "cancelled"
        reply = await asyncio.wait_for(turn, TURN)
    assert reply.stop_reason == "cancelled"
    assert (cli.project / "build" / "a.o").exists()


def test_stdout_is_only_the_protocol(cli: Cli) -> None:
    # The editor closes the connection at once: nothing at all may have been written.
    result = cli("acp", stdin="")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
