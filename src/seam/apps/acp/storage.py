"""The editor's files as the agent's storage: what `seam acp` reads and writes through
the client when it offers `fs/read_text_file` / `fs/write_text_file`, so the agent reads
unsaved buffers and its edits land in the editor.

Listing, existence and removal stay on the real filesystem (ACP has no calls for them),
opened beneath the reach root like every session's files (`BeneathStorage`). Which ACP
session a read belongs to is a context variable the agent sets around each turn: the
turn's tasks inherit it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from functools import partial
from typing import Protocol

from seam.contracts.storage import (
    BeneathStorage,
    NotFound,
    Storage,
    StorageEntry,
    StorageError,
)

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


__all__ = ["CURRENT_SESSION", "ClientFiles", "ClientStorage"]
