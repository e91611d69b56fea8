"""Memory the agent carries between sessions (markdown files in the real backend)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from seam.contracts.messages import Message


@runtime_checkable
class MemoryProvider(Protocol):
    async def prefetch(self, session_key: str) -> str | None:
        """A snapshot for the system prompt, frozen for the session (None: no memory)."""
        ...

    async def sync(self, session_key: str, messages: Sequence[Message]) -> None:
        """Called after a turn with that turn's new messages."""
        ...
