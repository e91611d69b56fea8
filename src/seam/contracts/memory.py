"""Memory the agent carries between sessions (markdown files in the real backend).

`MemoryProvider` is what every turn needs (a snapshot for the prompt, a sync after).
`EditableMemory` adds the entry edits the `memory` tool, reflection and the CLI make, so
those meet the backend through this contract and never through its class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from seam.contracts.messages import Message

MemoryTarget = Literal["memory", "user"]
# "memory": what the agent learned; "user": about the person.
MEMORY_TARGETS: tuple[MemoryTarget, ...] = ("memory", "user")


class MemoryEntryError(ValueError):
    """A memory write was refused; the message says why and is meant for the model."""


@dataclass(frozen=True, slots=True)
class MemoryUsage:
    """How full one target is after an edit (shown to the model and the person)."""

    file: str
    chars: int
    limit: int

    @property
    def percent(self) -> int:
        return self.chars * 100 // self.limit

    def __str__(self) -> str:
        return f"{self.file}: {self.chars:,}/{self.limit:,} chars ({self.percent}%)"


@runtime_checkable
class MemoryProvider(Protocol):
    async def prefetch(self, session_key: str) -> str | None:
        """A snapshot for the system prompt, frozen for the session (None: no memory)."""
        ...

    async def sync(self, session_key: str, messages: Sequence[Message]) -> None:
        """Called after a turn with that turn's new messages."""
        ...


@runtime_checkable
class EditableMemory(MemoryProvider, Protocol):
    """A memory whose entries can be edited. Every edit follows the backend's rules
    (limits, duplicates, refusing injections and secrets) and raises `MemoryEntryError`
    with a message for the model when it refuses."""

    def add(self, target: MemoryTarget, content: str) -> MemoryUsage: ...

    def replace(self, target: MemoryTarget, match: str, content: str) -> MemoryUsage:
        """Replace the one entry containing `match`."""
        ...

    def remove(self, target: MemoryTarget, match: str) -> MemoryUsage:
        """Remove the one entry containing `match`."""
        ...

    def snapshot(self) -> str | None:
        """The current entries as a system-prompt block (not frozen, unlike `prefetch`)."""
        ...
