"""`/undo` over ACP: the editor's prompt `/undo` (advertised as an available command)
takes back the session's last turn that changed files, through the service every surface
shares (`Runtime.checkpoints`, docs/undo.md), and the editor sees the files restored.

ACP has no "a file changed on disk" notification, so the editor learns of a restore three
ways, each from the protocol (agentclientprotocol.com, "File System" and "Tool Calls"):

- each restored or recreated text file is written through `fs/write_text_file` when the
  client offers it, so an open buffer holds the restored text (the spec's way for an
  editor to track what the agent changed);
- one `tool_call` of kind `edit`, completed, whose content is a `diff` per text file (old:
  the file before the undo, new: restored) and whose `locations` name every file, so the
  editor can show and follow them;
- a message naming each file and what undo did to it (a file the turn created is deleted:
  ACP has no method to delete a file in the editor, so the message says so).

A file the person changed after the turn is not overwritten without `/undo yes`.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import acp
from acp.schema import ToolCallLocation

from seam.contracts.checkpoints import FileChange, NothingToUndo, UndoPlan
from seam.contracts.rewind import restore_verb
from seam.wiring.runtime import Runtime

# Files larger than this are named, never sent to the editor as text.
MAX_TEXT_BYTES = 1024 * 1024
COMMAND = ("undo", "take back the last turn that changed files (files and conversation)")


def is_undo(text: str) -> str | None:
    """The argument of an `/undo` prompt ("" or "yes"), None for any other prompt."""
    words = text.strip().split()
    if not words or words[0] != "/undo" or len(words) > 2:
        return None
    return words[1].lower() if len(words) == 2 else ""


async def undo_in_editor(
    runtime: Runtime, conn: Any, session_id: str, argument: str, *, can_write: bool
) -> None:
    """Undo the session's last changing turn and tell the editor (see the module)."""
    reply = await _undo(runtime, conn, session_id, argument, can_write=can_write)
    await conn.session_update(session_id=session_id, update=acp.update_agent_message_text(reply))


async def _undo(
    runtime: Runtime, conn: Any, session_id: str, argument: str, *, can_write: bool
) -> str:
    service = runtime.checkpoints
    if service is None:
        return "Undo is off: checkpoints are off in the agent's config ([checkpoints])."
    try:
        plan = await service.plan_undo(runtime.session_key_for(session_id))
    except NothingToUndo as exc:
        return str(exc)
    if plan.edited and argument != "yes":
        return (
            f"You changed {', '.join(plan.edited)} after turn {plan.turn}. Send /undo yes to"
            " overwrite it with the state before the turn (your version is kept)."
        )
    root = Path(plan.checkpoint.work_dir)
    before = {c.path: _text(root / c.path) for c in plan.changes}
    done = await service.undo(plan)
    await _show(conn, session_id, plan, root, before, can_write=can_write)
    lines = [f"Undid turn {plan.turn}; the conversation no longer holds it."]
    lines += [f"- {restore_verb(c)} {c.path}" for c in done.restored]
    return "\n".join(lines)


async def _show(
    conn: Any,
    session_id: str,
    plan: UndoPlan,
    root: Path,
    before: dict[str, str | None],
    *,
    can_write: bool,
) -> None:
    """The restored files, to the editor: buffers written, one `edit` tool call."""
    diffs: list[Any] = []
    for change in plan.changes:
        path = str(root / change.path)
        now = _text(root / change.path)
        if now is not None and can_write:
            await conn.write_text_file(session_id=session_id, path=path, content=now)
        if now is not None or before[change.path] is not None:
            diffs.append(acp.tool_diff_content(path, now or "", before[change.path]))
    update = acp.start_tool_call(
        f"undo-{secrets.token_hex(4)}",
        f"undo turn {plan.turn}: {_count(plan.changes)}",
        kind="edit",
        status="completed",
        content=diffs,
        locations=[ToolCallLocation(path=str(root / c.path)) for c in plan.changes],
    )
    await conn.session_update(session_id=session_id, update=update)


def _count(changes: tuple[FileChange, ...]) -> str:
    return f"{len(changes)} file" + ("" if len(changes) == 1 else "s")


def _text(path: Path) -> str | None:
    """The file's text, or None (gone, a directory, binary or too large)."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_TEXT_BYTES:
            return None
        return path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


__all__ = ["COMMAND", "is_undo", "undo_in_editor"]
