"""What `seam acp` needs from the composition root: a runtime whose file tools can read and
write through the editor, a per-session working directory, and editor-supplied MCP servers.

The ACP surface (apps/acp) only speaks the protocol; everything here is wiring. Files go
through the client when it offers `fs/read_text_file` / `fs/write_text_file`, so the agent
reads unsaved buffers and its edits land in the editor; listing, existence and removal stay
on the real filesystem (ACP has no calls for them), opened beneath the reach root like
every session's files (`BeneathStorage`). Which ACP session a read belongs to is a
context variable the surface sets around each turn: the turn's tasks inherit it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal, Protocol

from seam.contracts.messages import Message
from seam.contracts.storage import (
    BeneathStorage,
    NotFound,
    Storage,
    StorageEntry,
    StorageError,
)
from seam.wiring.configure import create_runtime
from seam.wiring.runtime import Runtime
from seam.wiring.settings import load_settings

# The ACP session whose turn is running in this task (None outside an ACP turn).
CURRENT_SESSION: ContextVar[str | None] = ContextVar("seam_acp_session", default=None)


class ClientFiles(Protocol):
    """The editor's filesystem, as ACP offers it (absolute paths)."""

    async def read(self, session_id: str, path: str) -> str: ...

    async def write(self, session_id: str, path: str, text: str) -> None: ...


class ClientStorage:
    """A `Storage` that reads and writes through the editor when it can, else the disk.

    `ScopedStorage` decorates this (it checks reach and hands in absolute resolved paths),
    so the editor only ever sees paths the session may touch. It is a `BeneathStorage`
    too: what the editor does not serve (listing, existence, removal, and reads or writes
    when the editor does not offer them) is opened beneath the reach root by the inner
    storage, so a symlink swapped in after the check is never followed. What the editor
    serves, it opens itself: it owns those buffers and files."""

    def __init__(self, inner: Storage) -> None:
        self._inner = inner
        self._beneath = inner if isinstance(inner, BeneathStorage) else None
        self.files: ClientFiles | None = None
        self.can_read = False
        self.can_write = False

    def use_client(self, files: ClientFiles, *, read: bool, write: bool) -> None:
        self.files, self.can_read, self.can_write = files, read, write

    def resolve(self, path: str) -> str:
        return self._inner.resolve(path)

    def _editor(self, serves: bool) -> tuple[ClientFiles, str] | None:
        """The editor and the ACP session, when the editor serves this operation now."""
        session = CURRENT_SESSION.get()
        if self.files is None or not serves or session is None:
            return None
        return self.files, session

    async def _editor_read(
        self, editor: tuple[ClientFiles, str], path: str, exists: Callable[[], Awaitable[bool]]
    ) -> str:
        files, session = editor
        try:
            return await files.read(session, path)
        except StorageError:
            raise
        except Exception as exc:  # the editor's error, as the tools understand them
            if not await exists():
                raise NotFound(f"no such file or directory: {path}") from None
            raise StorageError(f"{path}: the editor could not read it ({exc})") from None

    async def _editor_write(self, editor: tuple[ClientFiles, str], path: str, text: str) -> None:
        files, session = editor
        try:
            await files.write(session, path, text)
        except StorageError:
            raise
        except Exception as exc:
            raise StorageError(f"{path}: the editor could not write it ({exc})") from None

    async def read_text(self, path: str) -> str:
        editor = self._editor(self.can_read)
        if editor is not None:
            return await self._editor_read(editor, path, partial(self._inner.exists, path))
        return await self._inner.read_text(path)

    async def write_text(self, path: str, text: str) -> None:
        editor = self._editor(self.can_write)
        if editor is not None:
            await self._editor_write(editor, path, text)
            return
        await self._inner.write_text(path, text)

    async def list_dir(self, path: str) -> list[StorageEntry]:
        return await self._inner.list_dir(path)

    async def exists(self, path: str) -> bool:
        return await self._inner.exists(path)

    async def remove(self, path: str) -> None:
        await self._inner.remove(path)

    async def read_beneath(self, root: str, rel: str) -> str:
        editor = self._editor(self.can_read)
        if editor is not None:
            return await self._editor_read(
                editor, _joined(root, rel), partial(self.exists_beneath, root, rel)
            )
        if self._beneath is None:
            return await self._inner.read_text(_joined(root, rel))
        return await self._beneath.read_beneath(root, rel)

    async def write_beneath(self, root: str, rel: str, text: str) -> None:
        editor = self._editor(self.can_write)
        if editor is not None:
            await self._editor_write(editor, _joined(root, rel), text)
        elif self._beneath is None:
            await self._inner.write_text(_joined(root, rel), text)
        else:
            await self._beneath.write_beneath(root, rel, text)

    async def list_beneath(self, root: str, rel: str) -> list[StorageEntry]:
        if self._beneath is None:
            return await self._inner.list_dir(_joined(root, rel))
        return await self._beneath.list_beneath(root, rel)

    async def exists_beneath(self, root: str, rel: str) -> bool:
        if self._beneath is None:
            return await self._inner.exists(_joined(root, rel))
        return await self._beneath.exists_beneath(root, rel)

    async def remove_beneath(self, root: str, rel: str) -> None:
        if self._beneath is None:
            await self._inner.remove(_joined(root, rel))
        else:
            await self._beneath.remove_beneath(root, rel)


def _joined(root: str, rel: str) -> str:
    return f"{root.rstrip('/')}/{rel}".rstrip("/") or "/"


def open_acp_runtime(model: str | None = None) -> tuple[Runtime, ClientStorage]:
    """The configured runtime over a `ClientStorage` (the real filesystem until the client
    says it offers its own); use the runtime as `async with`."""
    from seam.services.storage.fs import FsStorage

    storage = ClientStorage(FsStorage())
    runtime = create_runtime(settings=load_settings(model=model), storage=storage, interactive=True)
    return runtime, storage


async def set_working_dir(runtime: Runtime, session: str, cwd: str) -> None:
    """Run the ACP session's turns in `cwd`, the editor's project: its tools, sandbox
    view, AGENTS.md and `.agents/skills` are there, whatever other sessions use, so
    sessions in different projects run their turns side by side."""
    from seam.wiring.skills import offer_skills_in

    await runtime.set_working_dir(session, cwd)
    await offer_skills_in(runtime, cwd)


@dataclass(frozen=True, slots=True)
class EditorServer:
    """An MCP server the editor passed in `session/new` (stdio or HTTP)."""

    name: str
    command: Sequence[str] = ()
    url: str = ""
    env: Mapping[str, str] | None = None
    headers: Mapping[str, str] | None = None


async def add_mcp_servers(
    runtime: Runtime, servers: Sequence[EditorServer], cwd: str | None = None
) -> list[str]:
    """Offer the editor's MCP servers like configured ones (started on first use, a
    stdio one in `cwd`, the session's project); returns their names."""
    if not servers:
        return []
    from seam.plugins.mcp.spec import ServerSpec
    from seam.wiring.default_tools import DefaultGets
    from seam.wiring.mcp import MCP_TOOLS, build_mcp, default_gets_mcp

    if runtime.mcp is None:
        # None configured and a tool registry handed in: give it a set (closed with the runtime).
        runtime.mcp = build_mcp(runtime.settings, configured=False)
        add_source = getattr(runtime.tools, "add_source", None)
        if add_source is not None:
            add_source(runtime.mcp)
    current = runtime.loop.personalities
    if not (isinstance(current, DefaultGets) and MCP_TOOLS in current.names):
        # The default personality gets every MCP tool; it was not wrapped at start-up when
        # no server was configured.
        runtime.loop.personalities = default_gets_mcp(current)
        runtime.personalities = runtime.loop.personalities
    names = []
    for server in servers:
        spec = ServerSpec(
            name=_server_name(server.name),
            command=tuple(server.command),
            url=server.url,
            env=dict(server.env or {}),
            headers=dict(server.headers or {}),
            cwd=cwd,
        )
        await runtime.mcp.add(spec)
        names.append(spec.name)
    return names


def _server_name(name: str) -> str:
    """A tool-name-safe server name (`mcp__<server>__<tool>`)."""
    return re.sub(r"[^A-Za-z0-9_-]+", "_", name).strip("_") or "editor"


async def stored_messages(runtime: Runtime, session: str) -> list[Message] | None:
    """The transcript of a stored session (a public name), or None if there is none."""
    await runtime.open()
    try:
        key = runtime.session_key_for(session)
    except ValueError:  # a reserved name is never an editor's session
        return None
    if await runtime.store.get(key) is None:
        return None
    return await runtime.store.messages(key)


_SKILL_COMMAND = re.compile(r"/(?P<name>[a-z0-9][a-z0-9-]*)(?:\s+(?P<rest>.*))?", re.DOTALL)


def skill_commands(runtime: Runtime, cwd: str) -> list[tuple[str, str]]:
    """(name, description) of the skills offered in `cwd`: the `/<skill-name>` commands
    the editor lists for a session there (none when skills are not configured)."""
    if runtime.settings is None or runtime.skills is None:
        return []
    from seam.wiring.skills import skill_commands as offered

    try:
        return offered(runtime.settings, Path(cwd))
    except OSError:
        return []


def skill_prompt(runtime: Runtime, cwd: str, text: str) -> tuple[str, str]:
    """A prompt as the turn runs it, and a problem to show instead ("" if none): as in
    `seam chat`, `/<skill-name> rest` is the skill's instructions, then `rest`; a
    `/word` that names no skill is sent as it is."""
    match = _SKILL_COMMAND.fullmatch(text.strip())
    if match is None or runtime.settings is None or runtime.skills is None:
        return text, ""
    from seam.wiring.skills import SkillError, UnknownSkill, skill_turn_text

    try:
        return skill_turn_text(runtime.settings, match["name"], match["rest"] or "", Path(cwd)), ""
    except UnknownSkill:
        return text, ""
    except (SkillError, OSError) as exc:
        return text, str(exc)


_TODO_LINE = re.compile(r"^\d+\. \[(?P<mark>[ x>])\] (?P<text>.*)$")
# ACP's plan entry statuses (`acp.schema.PlanEntryStatus`), by the todo tool's marks.
PlanStatus = Literal["pending", "in_progress", "completed"]
_TODO_STATUS: dict[str, PlanStatus] = {" ": "pending", ">": "in_progress", "x": "completed"}


def plan_from_todo(result: str) -> list[tuple[str, PlanStatus]] | None:
    """(text, ACP status) per item of a `todo` tool result, or None if it is not a list."""
    if result.strip() == "todo list is empty":
        return []
    lines = result.strip().splitlines()
    if not lines or not lines[0].startswith("todo ("):
        return None
    entries: list[tuple[str, PlanStatus]] = []
    for line in lines[1:]:
        match = _TODO_LINE.match(line)
        if match:
            entries.append((match["text"], _TODO_STATUS[match["mark"]]))
    return entries


__all__ = [
    "CURRENT_SESSION",
    "ClientFiles",
    "ClientStorage",
    "EditorServer",
    "add_mcp_servers",
    "open_acp_runtime",
    "plan_from_todo",
    "set_working_dir",
    "skill_commands",
    "skill_prompt",
    "stored_messages",
]
