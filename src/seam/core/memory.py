"""The empty stack's memory: remembers nothing, which is a valid memory."""

from __future__ import annotations

from collections.abc import Sequence

from seam.contracts.messages import Message


class NoopMemory:
    async def prefetch(self, session_key: str) -> str | None:
        return None

    async def sync(self, session_key: str, messages: Sequence[Message]) -> None:
        return None
