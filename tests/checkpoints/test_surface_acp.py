"""`/undo` over ACP: `seam acp` spawned by the SDK's client, an editor that saves what the
agent writes through it (as Zed does); the prompt `/undo` restores the files on disk and
the editor is told: the buffers rewritten through `fs/write_text_file`, one `edit` tool
call with a diff per file and their locations, and a message naming each file."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import acp
from acp.schema import WriteTextFileResponse

from tests.acp.conftest import EditorClient, open_editor
from tests.checkpoints.surface_support import write_call
from tests.cli.conftest import Cli, sent_messages
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

TURN = 60.0


@dataclass
class SavingEditor(EditorClient):
    """Saves each write to disk, as an editor does with the agent's edits."""

    saved: list[str] = field(default_factory=list)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.saved.append(path)
        Path(path).write_text(content, encoding="utf-8")
        return await super().write_text_file(session_id, path, content, **kwargs)


async def test_undo_in_the_editor_restores_and_shows_the_files(
    cli: Cli, openai_server: OpenAIServer
) -> None:
    notes, new = cli.project / "notes.txt", cli.project / "new.txt"
    notes.write_text("first version\n")
    openai_server.push(
        tool_call_reply(
            [write_call("notes.txt", "UNDONE-EDIT\n"), write_call("new.txt", "made\n")]
        ),
        text_reply("Edited."),
        text_reply("Fresh answer."),
    )
    client = SavingEditor()
    async with open_editor(cli, client) as (conn, _):
        session = await conn.new_session(cwd=str(cli.project), mcp_servers=[])
        sid = session.session_id

        async def prompt(text: str) -> Any:
            return await asyncio.wait_for(
                conn.prompt(session_id=sid, prompt=[acp.text_block(text)]), TURN
            )

        await prompt("edit the notes")
        assert notes.read_text() == "UNDONE-EDIT\n" and new.exists()
        client.updates.clear()
        reply = await prompt("/undo")
        assert reply.stop_reason == "end_turn"
        assert notes.read_text() == "first version\n" and not new.exists()
        assert client.writes[str(notes)] == "first version\n"
        [shown] = [u for u in client.updates if u.session_update == "tool_call"]
        assert shown.kind == "edit" and shown.status == "completed"
        assert {loc.path for loc in shown.locations} == {str(notes), str(new)}
        diffs = {c.path: (c.old_text, c.new_text) for c in shown.content}
        assert diffs[str(notes)] == ("UNDONE-EDIT\n", "first version\n")
        said = client.text()
        assert "Undid turn 1" in said and "deleted new.txt" in said
        assert "restored notes.txt" in said
        await prompt("what now?")
        nothing = await prompt("/undo")
    assert nothing.stop_reason == "end_turn" and "nothing to undo" in client.text()
    assert len(openai_server.chat_requests) == 3
    sent = json.dumps(sent_messages(openai_server, 2))
    assert "edit the notes" not in sent and "UNDONE-EDIT" not in sent
