"""The conversation store: sessions and their ordered transcripts.

Small on purpose (see openai-agents' `Session`): what the loop needs (create, read,
append) plus what surfaces need to find a past conversation (list, search, title).
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from seam.contracts.messages import EMPTY_USAGE, Message, Usage


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


@dataclass(frozen=True, slots=True)
class UsageRecord:
    """Tokens (and cost, when the model's price is known) of one model call."""

    provider: str
    model: str
    usage: Usage
    cost_usd: float | None = None
    turn_id: str = ""


@dataclass(frozen=True, slots=True)
class UsageTotals:
    calls: int = 0
    usage: Usage = EMPTY_USAGE
    cost_usd: float = 0.0
    # Calls whose price was unknown (their cost is not in cost_usd).
    unpriced_calls: int = 0


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

    async def record_usage(self, key: str, record: UsageRecord) -> None:
        """Add one model call's usage to the session. Raises SessionNotFound."""
        ...

    async def usage_totals(self, key: str) -> UsageTotals:
        """Summed over every recorded call of the session. Raises SessionNotFound."""
        ...

    async def delete(self, key: str) -> bool: ...

    async def aclose(self) -> None: ...
