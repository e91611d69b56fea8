"""The owner's markdown memory, which hands every other tenant's sessions to that
tenant's own memory: prefetch, sync and the `memory` tool (through `for_session`) of a
tenant's session never touch the owner's files.

Which sessions belong to another tenant, and which memory is theirs, is decided outside
(`others`, built by wiring over core's `TenantMemories`): this class only routes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from seam.contracts.memory import MemoryProvider
from seam.contracts.messages import Message
from seam.contracts.scanning import NO_INJECTION_SCANNER, NO_REDACTOR, InjectionScanner, Redactor
from seam.plugins.memory.markdown import MEMORY_LIMIT, USER_LIMIT, MarkdownMemory


def _owners(session_key: str) -> MemoryProvider | None:
    return None


class OwnerMemory(MarkdownMemory):
    """`MarkdownMemory` over the owner's folder; `others(session_key)` names the memory
    of a session that is not the owner's (None: the owner's own)."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        others: Callable[[str], MemoryProvider | None] = _owners,
        memory_limit: int = MEMORY_LIMIT,
        user_limit: int = USER_LIMIT,
        scanner: InjectionScanner = NO_INJECTION_SCANNER,
        redactor: Redactor = NO_REDACTOR,
    ) -> None:
        super().__init__(
            folder,
            memory_limit=memory_limit,
            user_limit=user_limit,
            scanner=scanner,
            redactor=redactor,
        )
        self.others = others

    def for_session(self, session_key: str) -> MemoryProvider:
        """The memory `session_key`'s turns and tools use."""
        other = self.others(session_key)
        return self if other is None else other

    async def prefetch(self, session_key: str) -> str | None:
        other = self.others(session_key)
        if other is None:
            return await super().prefetch(session_key)
        return await other.prefetch(session_key)

    async def sync(self, session_key: str, messages: Sequence[Message]) -> None:
        other = self.others(session_key)
        if other is None:
            return await super().sync(session_key, messages)
        return await other.sync(session_key, messages)


__all__ = ["OwnerMemory"]
