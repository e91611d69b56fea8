"""The conversation store: sessions and their ordered transcripts.

Small on purpose (see openai-agents' `Session`): what the loop needs (create, read,
append) plus what surfaces need to find a past conversation (list, search, title).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from seam.contracts.messages import Message


class SessionNotFound(KeyError):
    pass


class DuplicateTitle(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class SessionInfo:
    key: str
    title: str | None
    personality: str | None
    created_at: float
    updated_at: float
    message_count: int
    parent_key: str | None = None
    ended: bool = False


@dataclass(frozen=True, slots=True)
class SearchHit:
    session_key: str
    message_index: int
    role: str
    snippet: str


@runtime_checkable
class SessionStore(Protocol):
    async def create(
        self,
        key: str,
        *,
        personality: str | None = None,
        title: str | None = None,
        parent_key: str | None = None,
    ) -> SessionInfo:
        """Create the session, or return the existing one unchanged (idempotent)."""
        ...

    async def get(self, key: str) -> SessionInfo | None: ...

    async def append(self, key: str, messages: Sequence[Message]) -> None:
        """Append in order, atomically. Raises SessionNotFound for an unknown key."""
        ...

    async def messages(self, key: str, start: int = 0, limit: int | None = None) -> list[Message]:
        """Messages `start`.. in order (negative start counts from the end)."""
        ...

    async def set_title(self, key: str, title: str) -> None:
        """Titles are unique across sessions: raises DuplicateTitle."""
        ...

    async def find_by_title(self, title: str) -> SessionInfo | None: ...

    async def list(self, limit: int = 50) -> list[SessionInfo]:
        """Most recently updated first."""
        ...

    async def search(self, query: str, limit: int = 20) -> builtins.list[SearchHit]:
        """Full-text search over message content; any user text is a valid query."""
        ...

    async def delete(self, key: str) -> bool: ...

    async def aclose(self) -> None: ...
