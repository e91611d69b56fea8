"""Several ACP sessions in one `seam acp`: each works in its own `cwd`, and a turn blocked
in one session does not hold up the others."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp
from acp.schema import AllowedOutcome, RequestPermissionResponse

from tests.acp.conftest import EditorClient, WatchingClient, open_editor
from tests.cli.conftest import Cli, sent_messages, tool_messages
from tests.plugins.test_skills import write_skill
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

TURN = 60.0
DELETE = json.dumps({"command": "rm -r build"})


@dataclass
class HoldingClient(EditorClient):
    """Permission requests wait for `release`, then are allowed once: the turn that asked
    is blocked inside its tool until then."""

    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.permissions.append((session_id, tool_call))
        self.asked.set()
        await self.release.wait()
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id="allow_once")
        )


def project(root: Path, name: str) -> Path:
    folder = root / name
    (folder / "build").mkdir(parents=True)
    (folder / "build" / "a.o").write_text("x")
    (folder / "which.txt").write_text(f"this is project {name}\n")
    return folder


async def test_two_sessions_run_turns_concurrently_each_in_its_own_cwd(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    a, b = project(cli.project, "a"), project(cli.project, "b")
    openai_server.push(
        tool_call_reply([("terminal", DELETE)]),  # session A: blocks on its permission
        tool_call_reply([("read_file", json.dumps({"path": "which.txt"}))]),  # session B
        text_reply("B done."),
        text_reply("A done."),
    )
    client = HoldingClient()
    async with open_editor(cli, client) as (conn, _):
        first = await conn.new_session(cwd=str(a), mcp_servers=[])
        second = await conn.new_session(cwd=str(b), mcp_servers=[])
        blocked = asyncio.ensure_future(
            conn.prompt(session_id=first.session_id, prompt=[acp.text_block("clean")])
        )
        await asyncio.wait_for(client.asked.wait(), TURN)
        # While A waits inside its tool, B's whole turn (a tool call and an answer) runs.
        reply = await asyncio.wait_for(
            conn.prompt(session_id=second.session_id, prompt=[acp.text_block("read")]), TURN
        )
        assert reply.stop_reason == "end_turn"
        assert not blocked.done()
        client.release.set()
        assert (await asyncio.wait_for(blocked, TURN)).stop_reason == "end_turn"
    [(asked_in, tool_call)] = client.permissions
    assert asked_in == first.session_id and "rm -r build" in tool_call.title
    # Each tool ran in its own session's directory.
    assert str(b / "which.txt") in client.reads
    assert "this is project b" in tool_messages(openai_server, 2)[0]["content"]
    assert not (a / "build").exists()
    assert (b / "build" / "a.o").exists()
    assert "B done." in client.text() and "A done." in client.text()


async def test_a_sessions_skills_are_its_slash_commands(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    repo = cli.project / "repo"
    write_skill(repo / ".agents" / "skills", "release-notes", "Write release notes.", body="Tag.")
    write_skill(repo / ".agents" / "skills", "unreviewed", "Not trusted yet.")
    trusted = cli("skills", "trust", str(repo / ".agents" / "skills" / "release-notes"))
    assert trusted.returncode == 0, trusted.stderr
    openai_server.push(text_reply("Notes written."))
    client = WatchingClient(watch="available_commands_update")
    async with open_editor(cli, client) as (conn, _):
        session = await conn.new_session(cwd=str(repo), mcp_servers=[])
        await asyncio.wait_for(client.seen.wait(), TURN)
        [listed] = [u for u in client.updates if u.session_update == "available_commands_update"]
        assert [(c.name, c.description) for c in listed.available_commands] == [
            ("release-notes", "Write release notes."),
            ("undo", "take back the last turn that changed files (files and conversation)"),
        ]
        reply = await asyncio.wait_for(
            conn.prompt(
                session_id=session.session_id, prompt=[acp.text_block("/release-notes v2.0")]
            ),
            TURN,
        )
        # An untrusted skill runs no turn: the editor is told why.
        refused = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[acp.text_block("/unreviewed")]),
            TURN,
        )
    assert reply.stop_reason == refused.stop_reason == "end_turn"
    [sent] = [m["content"] for m in sent_messages(openai_server, 0) if m["role"] == "user"]
    assert sent.startswith('<skill name="release-notes">') and "Tag." in sent
    assert sent.endswith("v2.0")
    assert len(openai_server.chat_requests) == 1
    assert "untrusted" in client.text()
