"""The context window: estimating tokens, building the system prompt, compressing history.

A long conversation outgrows any model's window. The loop estimates each request's size
(`TokenEstimator`), warns when usage crosses a threshold and, past a second one, compacts
the history: old tool results are cleared first, then the middle of the conversation is
summarised by a model. The transcript stays append-only: a compaction is stored as a
marker message (see `seam.core.history`) and, where the store keeps them, a
`CompactionRecord` with its figures (`CompactionLog`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from seam.contracts.messages import Message
from seam.contracts.model import ModelProvider, ToolDefinition
from seam.contracts.storage import Storage

CompactionReason = Literal["threshold", "overflow", "manual"]


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """Estimated tokens of a request against the model's context window."""

    tokens: int
    window: int

    @property
    def fraction(self) -> float:
        return self.tokens / self.window if self.window > 0 else 0.0

    @property
    def percent(self) -> int:
        return int(self.fraction * 100)


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    """What one compaction did, kept in the store for `/usage`, audits and tuning."""

    # Transcript index of the stored marker message that carries the summary.
    marker_index: int
    # First transcript index sent verbatim after the summary.
    tail_start: int
    # Messages and estimated tokens of the request before and after.
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    duration_ms: float
    reason: CompactionReason = "threshold"
    # False when clearing old tool results was enough and no summary was written.
    summarised: bool = True
    created_at: float = 0.0


@runtime_checkable
class TokenEstimator(Protocol):
    """A fast, provider-free estimate; used to decide, never to bill."""

    def text(self, text: str) -> int: ...

    def message(self, message: Message) -> int: ...

    def messages(self, messages: Sequence[Message]) -> int: ...

    def tools(self, definitions: Sequence[ToolDefinition]) -> int: ...


@dataclass(frozen=True, slots=True)
class BuiltPrompt:
    system: str
    # (kind, message) of `notice` events to stream with this turn (e.g. a project file
    # left out as a likely prompt injection); each is returned once per session.
    notices: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class PromptInputs:
    """What one turn's system prompt is built from: the personality's SOUL.md, the names
    of the tools it offers, the memory snapshot, the session's storage (its project files)
    and working directory (where its project files and skills are looked for; None: the
    builder's own default)."""

    soul: str
    tool_names: Sequence[str]
    memory: str | None
    storage: Storage
    working_dir: str | None = None


@dataclass(frozen=True, slots=True)
class CompactionGoal:
    """What one compaction aims at: a request of at most `target` tokens, of which
    `overhead` (the system prompt and tool schemas) is fixed; `protect_first` and
    `protect_last` messages are never replaced; `model` is the session's (the summariser
    when the compressor has none of its own); `reason` is recorded."""

    model: ModelProvider
    overhead: int
    target: int
    protect_first: int = 3
    protect_last: int = 20
    reason: CompactionReason = "threshold"


@runtime_checkable
class ContextBuilder(Protocol):
    """Assembles the system prompt; byte-identical across a session's turns unless an
    input changes on purpose (SOUL.md, the toolset) or `invalidate` is called."""

    async def build(self, session_key: str, inputs: PromptInputs) -> BuiltPrompt:
        """`working_dir`: the session's working directory (where its project files and
        skills are looked for); None: the builder's own default."""
        ...

    def invalidate(self, session_key: str) -> None:
        """Called after a compaction: cached per-session inputs may be read again."""
        ...


@dataclass(frozen=True, slots=True)
class Compaction:
    """One compaction, ready to store: the marker message and its figures."""

    marker: Message
    record: CompactionRecord
    # Set when the summary failed but clearing old tool results still freed some room.
    error: str | None = None


@runtime_checkable
class ContextCompressor(Protocol):
    """Compacts a transcript; keeps its own per-session back-off after failures."""

    def ready(self, key: str) -> bool:
        """False while the session backs off after a failed or futile compaction."""
        ...

    def note_failure(self, key: str) -> float:
        """Start or lengthen the session's back-off; returns its length in seconds."""
        ...

    async def compact(
        self, key: str, transcript: Sequence[Message], goal: CompactionGoal
    ) -> Compaction | None:
        """None: nothing to compact. Raises an exception whose text says why it failed
        when nothing could be freed."""
        ...


@runtime_checkable
class CompactionLog(Protocol):
    """Implemented by session stores that keep compaction figures (both built-in ones)."""

    async def record_compaction(self, key: str, record: CompactionRecord) -> None:
        """Raises SessionNotFound for an unknown key."""
        ...

    async def compactions(self, key: str) -> list[CompactionRecord]:
        """Oldest first. Raises SessionNotFound for an unknown key."""
        ...
