"""The editor's threads, driven by the ACP SDK's client: `session/list`, `session/close`,
titles (`session_info_update`), the model as a session config option, and the editor's
cancel stopping a turn that is running a command."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from pathlib import Path
from typing import Any

import acp
import pytest

from tests.acp.conftest import Agent, EditorClient, WatchingClient, open_editor, stalled_turn
from tests.cli.conftest import Cli, tool_messages
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

TURN = 60.0
SKILL = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "webapp-testing"
SHARED_LOOP = pytest.mark.asyncio(loop_scope="module")


def titles(client: EditorClient) -> list[str]:
    return [u.title for u in client.updates if u.session_update == "session_info_update"]


@SHARED_LOOP
async def test_threads_are_titled_and_listed_by_project(agent: Agent) -> None:
    cli, model = agent.cli, agent.model
    other = cli.project / "other"
    other.mkdir()
    model.push(text_reply("Looking."), text_reply("Elsewhere."))
    client = EditorClient()
    async with agent.editor(client) as (conn, init):
        assert init.agent_capabilities.session_capabilities.list is not None
        assert init.agent_capabilities.session_capabilities.close is not None
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        elsewhere = await conn.new_session(cwd=str(other), mcp_servers=[])
        reply = await asyncio.wait_for(
            conn.prompt(
                session_id=session.session_id,
                prompt=[acp.text_block("Fix the flaky login test in CI")],
            ),
            TURN,
        )
        await asyncio.wait_for(
            conn.prompt(session_id=elsewhere.session_id, prompt=[acp.text_block("hello")]), TURN
        )
        here = await conn.list_sessions(cwd=str(cli.project))
        everywhere = await conn.list_sessions()
    assert reply.stop_reason == "end_turn"
    [title, _] = titles(client)  # one each, after its first exchange
    assert "flaky login test" in title.lower()
    [row] = here.sessions
    assert (row.session_id, row.cwd, row.title) == (session.session_id, str(cli.project), title)
    assert row.updated_at is not None and row.updated_at.endswith("Z")
    listed = [r.session_id for r in everywhere.sessions]
    # Newest first: the other project's thread answered last.
    assert listed.index(elsewhere.session_id) < listed.index(session.session_id)


@SHARED_LOOP
async def test_a_cursor_that_was_never_given_is_a_one_line_error(agent: Agent) -> None:
    async with agent.editor(EditorClient()) as (conn, _):
        with pytest.raises(acp.RequestError) as caught:
            await conn.list_sessions(cursor="page-two")
    assert "not a cursor" in str(caught.value.data)


@SHARED_LOOP
async def test_closing_a_thread_stops_its_turn_and_load_opens_it_again(agent: Agent) -> None:
    cli, model = agent.cli, agent.model
    client = EditorClient()
    async with agent.editor(client) as (conn, _):
        sid, turn = await stalled_turn(agent, client, conn)
        await asyncio.wait_for(conn.close_session(session_id=sid), TURN)
        reply = await asyncio.wait_for(turn, TURN)
        model.release()
        with pytest.raises(acp.RequestError) as caught:
            await conn.prompt(session_id=sid, prompt=[acp.text_block("again")])
        assert "unknown session" in str(caught.value.data)
        with pytest.raises(acp.RequestError):
            await conn.close_session(session_id=sid)
        await conn.load_session(cwd=str(cli.project), session_id=sid, mcp_servers=[])
        model.push(text_reply("Back."))
        again = await asyncio.wait_for(
            conn.prompt(session_id=sid, prompt=[acp.text_block("again")]), TURN
        )
    assert reply.stop_reason == "cancelled"
    assert again.stop_reason == "end_turn" and "Back." in client.text()


@SHARED_LOOP
async def test_cancel_stops_a_turn_running_a_command(agent: Agent) -> None:
    cli, model = agent.cli, agent.model
    command = json.dumps({"command": "sleep 30; echo slept-through"})
    model.push(tool_call_reply([("terminal", command)]), text_reply("Stopped."))
    client = WatchingClient()
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        turn = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("wait")])
        )
        await asyncio.wait_for(client.seen.wait(), TURN)
        started = time.monotonic()
        await conn.cancel(session_id=session.session_id)
        reply = await asyncio.wait_for(turn, TURN)
    assert reply.stop_reason == "cancelled"
    assert time.monotonic() - started < 20  # the command was stopped, not waited for
    ended = [u for u in client.updates if u.session_update == "tool_call_update"]
    assert ended and "slept-through" not in repr(ended)
    assert len(model.chat_requests) == 1  # no model call after the cancel


async def test_the_editor_picks_a_threads_model(cli: Cli, openai_server: OpenAIServer) -> None:
    cli.home.mkdir(parents=True, exist_ok=True)
    (cli.home / "config.toml").write_text('[model]\nfallback = ["openai:other-model"]\n')
    openai_server.push(text_reply("From the main model."), text_reply("From the other one."))
    async with open_editor(cli, EditorClient()) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        sid = session.session_id
        [option] = session.config_options
        choice = option.root if hasattr(option, "root") else option
        values = [o.value for o in choice.options]
        assert (choice.id, choice.category) == ("model", "model")
        assert choice.current_value == values[0] and values[1:] == ["openai:other-model"]
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("a")]), TURN)
        changed = await conn.set_config_option(
            config_id="model", session_id=sid, value="openai:other-model"
        )
        assert _current(changed.config_options) == "openai:other-model"
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[acp.text_block("b")]), TURN)
        for config_id, value, problem in (
            ("model", "openai:nonexistent", "no model 'openai:nonexistent'"),
            ("mode", "fast", "no option 'mode'"),
        ):
            with pytest.raises(acp.RequestError) as caught:
                await conn.set_config_option(config_id=config_id, session_id=sid, value=value)
            assert problem in json.dumps(caught.value.data)
    first, second = (r.body for r in openai_server.chat_requests)
    assert isinstance(first, dict) and isinstance(second, dict)
    assert first["model"] == values[0].partition(":")[2]
    assert second["model"] == "other-model"


def _current(options: list[Any]) -> str:
    [option] = options
    return str((option.root if hasattr(option, "root") else option).current_value)


@SHARED_LOOP
async def test_each_thread_reads_its_own_projects_context(agent: Agent) -> None:
    cli, model = agent.cli, agent.model
    projects = []
    for name in ("alpha", "beta"):
        folder = cli.project / name
        folder.mkdir()
        (folder / "AGENTS.md").write_text(f"Project {name} uses tabs-{name}.\n")
        projects.append(folder)
    model.push(text_reply("A."), text_reply("B."))
    async with agent.editor(EditorClient()) as (conn, _):
        for folder in projects:
            session = await conn.new_session(cwd=str(folder), mcp_servers=[])
            await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[acp.text_block("hi")]), TURN
            )
    systems = [
        next(m["content"] for m in r.body["messages"] if m["role"] == "system")
        for r in model.chat_requests
        if isinstance(r.body, dict)
    ]
    assert "tabs-alpha" in systems[0] and "tabs-beta" not in systems[0]
    assert "tabs-beta" in systems[1] and "tabs-alpha" not in systems[1]


@SHARED_LOOP
async def test_a_trusted_project_skills_script_runs_in_its_threads_sandbox(agent: Agent) -> None:
    cli, model = agent.cli, agent.model
    repo = cli.project / "webapp"
    folder = repo / ".agents" / "skills" / "webapp-testing"
    shutil.copytree(SKILL, folder)
    trusted = cli("skills", "trust", str(folder))
    assert trusted.returncode == 0, trusted.stderr
    run = json.dumps({"command": "python3 /skills/webapp-testing/scripts/with_server.py --help"})
    model.push(
        tool_call_reply([("skill_view", json.dumps({"name": "webapp-testing"}))]),
        tool_call_reply([("terminal", run)]),
        text_reply("It takes --server and --port."),
    )
    client = EditorClient()
    async with agent.editor(client) as (conn, _):
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        reply = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("test it")]), TURN
        )
    assert reply.stop_reason == "end_turn"
    assert not client.permissions  # trusted: it ran without asking
    viewed, ran = (m["content"] for m in tool_messages(model, 2))
    assert "Folder: /skills/webapp-testing" in viewed
    assert "usage: with_server.py" in ran
