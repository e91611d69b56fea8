"""An ACP turn is a durable submission: killed mid-tool, `seam resume` (another process, in
another directory) finishes it in the editor's project, where the session works."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import acp
from acp.schema import ClientCapabilities, FileSystemCapabilities

from tests.acp.test_acp_sessions import HoldingClient
from tests.cli.conftest import SEAM, Cli
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

TURN = 60.0
CAPS = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=False, write_text_file=False))


async def start_blocked_turn(cli: Cli, project: Path) -> str:
    """Run `seam acp`, start a turn in `project` whose tool waits on its permission
    request, and SIGKILL the agent there. Returns the ACP session id."""
    client = HoldingClient()  # never releases: the turn stays inside its tool
    spawned = acp.spawn_agent_process(client, str(SEAM), "acp", env=cli.env, cwd=cli.project)
    async with spawned as (conn, process):
        await asyncio.wait_for(
            conn.initialize(protocol_version=acp.PROTOCOL_VERSION, client_capabilities=CAPS),
            TURN,
        )
        session = await asyncio.wait_for(conn.new_session(cwd=str(project), mcp_servers=[]), TURN)
        prompt = asyncio.ensure_future(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("clean up")])
        )
        await asyncio.wait_for(client.asked.wait(), TURN)
        process.send_signal(signal.SIGKILL)
        await asyncio.wait_for(process.wait(), TURN)
        prompt.cancel()
    return session.session_id


async def test_seam_resume_finishes_a_killed_acp_turn_in_the_editors_project(
    cli: Cli, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    project = tmp_path / "editor-project"
    project.mkdir()
    openai_server.push(tool_call_reply([("terminal", json.dumps({"command": "rm -r build"}))]))
    session_id = await start_blocked_turn(cli, project)

    openai_server.push(
        tool_call_reply([("write_file", json.dumps({"path": "out.txt", "content": "resumed\n"}))]),
        text_reply("Written."),
    )
    resumed = await asyncio.to_thread(cli, "resume", "--json")  # runs in cli.project
    assert resumed.returncode == 0, resumed.stderr
    [line] = [json.loads(x) for x in resumed.stdout.splitlines()]
    assert (line["session"], line["outcome"], line["result"]) == (
        session_id,
        "completed",
        "Written.",
    )
    assert (project / "out.txt").read_text(encoding="utf-8") == "resumed\n"
    assert not (cli.project / "out.txt").exists()


async def test_seam_resume_fails_a_killed_acp_turn_whose_project_is_gone(
    cli: Cli, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    project = tmp_path / "editor-project"
    project.mkdir()
    openai_server.push(tool_call_reply([("terminal", json.dumps({"command": "rm -r build"}))]))
    await start_blocked_turn(cli, project)
    project.rmdir()

    resumed = await asyncio.to_thread(cli, "resume", "--json")
    assert resumed.returncode != 0
    [line] = [json.loads(x) for x in resumed.stdout.splitlines()]
    assert line["outcome"] == "failed"
    assert f"working directory {project} no longer exists" in line["error"]
    assert openai_server.pending == 0  # no model call: nothing ran anywhere else
