"""The model seam: what the loop asks of any LLM provider, and what comes back.

Providers stream small typed chunks. They accumulate partial tool-call JSON themselves
and hand the loop a complete `ToolCall` in `ToolCallEnd`, so the loop never re-parses
wire fragments; `ToolCallStart`/`ToolCallDelta` exist for surfaces that show progress.
Errors are raised as `ModelError` with a `kind`, classified once, in the provider, so the
caller decides what to do (retry, rotate a key, fall back, compress) without string
matching.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from seam.contracts.messages import Message, ToolCall, Usage

FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "error"]
ErrorKind = Literal[
    "retryable",  # 5xx, overloaded, timeout, connection reset, malformed stream
    "rate_limited",  # 429: honour retry_after
    "auth",  # 401/403: bad or missing key
    "billing",  # quota or billing exhausted
    "context_overflow",  # prompt too long: compress and retry
    "refused",  # content refused by the provider
    "fatal",  # anything a retry cannot fix (bad request, unknown model)
]
RETRYABLE_KINDS: frozenset[str] = frozenset({"retryable", "rate_limited"})


class ModelError(Exception):
    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        provider: str = "",
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.provider = provider

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS

    def restated(self, message: str, *, provider: str | None = None) -> ModelError:
        """The same failure (kind, status, retry_after) in other words, or said by another
        provider: how a chain or a pool sums up the failures behind it."""
        return ModelError(
            self.kind,
            message,
            status=self.status,
            retry_after=self.retry_after,
            provider=self.provider if provider is None else provider,
        )

    def __str__(self) -> str:
        where = f"{self.provider}: " if self.provider else ""
        code = f" (HTTP {self.status})" if self.status else ""
        return f"{where}{self.kind}{code}: {self.message}"


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """A provider is about to wait `delay` seconds and send a failed request again.

    Handed to the `on_retry` callback a surface injects when it builds providers, so a
    person waiting sees the wait instead of silence. `attempt` is the attempt about to be
    made (2: the first retry) of at most `attempts`; `reason` is short ("connection
    refused", "HTTP 503: overloaded").
    """

    attempt: int
    attempts: int
    delay: float
    reason: str
    provider: str = ""

    def line(self) -> str:
        """`retrying in 4 s (attempt 2 of 5): connection refused`"""
        delay = self.delay
        seconds = f"{delay:.1f}" if delay < 0.95 else f"{round(delay)}"
        return f"retrying in {seconds} s (attempt {self.attempt} of {self.attempts}): {self.reason}"


OnRetry = Callable[[RetryNotice], None]


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    name: str
    description: str
    parameters: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    system: str
    messages: Sequence[Message]
    tools: Sequence[ToolDefinition] = ()
    # "auto" (model decides), "none" (answer only), "required" (some tool), or a tool name.
    tool_choice: str = "auto"
    model: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None


# The stream's chunks are not frozen: a provider builds one per token, and a frozen
# dataclass sets each field through `object.__setattr__` (a text chunk: 200 ns to build
# against 110). Nothing keeps or hashes them; the loop reads each once.
@dataclass(slots=True)
class TextChunk:
    kind: ClassVar[str] = "text"
    text: str


@dataclass(slots=True)
class ThinkingChunk:
    kind: ClassVar[str] = "thinking"
    text: str


@dataclass(slots=True)
class ToolCallStart:
    kind: ClassVar[str] = "tool_call_start"
    index: int
    id: str
    name: str


@dataclass(slots=True)
class ToolCallDelta:
    kind: ClassVar[str] = "tool_call_delta"
    index: int
    arguments: str


@dataclass(slots=True)
class ToolCallEnd:
    kind: ClassVar[str] = "tool_call_end"
    index: int
    call: ToolCall


@dataclass(slots=True)
class UsageChunk:
    kind: ClassVar[str] = "usage"
    usage: Usage


@dataclass(slots=True)
class WarningChunk:
    kind: ClassVar[str] = "warning"
    message: str


@dataclass(slots=True)
class RouteChunk:
    """Sent first by providers that choose among others (fallback chains, key pools), so
    the turn reports the provider and model that actually answered."""

    kind: ClassVar[str] = "route"
    provider: str
    model: str


@dataclass(slots=True)
class DoneChunk:
    kind: ClassVar[str] = "done"
    finish_reason: FinishReason


ModelChunk = (
    TextChunk
    | ThinkingChunk
    | ToolCallStart
    | ToolCallDelta
    | ToolCallEnd
    | UsageChunk
    | WarningChunk
    | RouteChunk
    | DoneChunk
)


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    tools: bool = True
    streaming: bool = True
    thinking: bool = False
    # True when the provider constrains tool arguments to the schema while decoding,
    # so they are always well-formed (the local llama.cpp provider does this).
    constrained_tool_calls: bool = False


@runtime_checkable
class ModelProvider(Protocol):
    """An LLM endpoint. `stream` raises `ModelError` for every failure it can classify."""

    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def max_context_tokens(self) -> int: ...

    @property
    def capabilities(self) -> ModelCapabilities: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]: ...

    def count_tokens(self, text: str) -> int: ...

    async def aclose(self) -> None: ...
