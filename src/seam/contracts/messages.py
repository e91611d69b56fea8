"""Messages, tool calls and usage: the transcript vocabulary every layer shares."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A model's request to run one tool.

    `arguments` stays the raw JSON text the model produced: it is what goes back to the
    provider in the next request, and parsing it is the loop's job (bad JSON becomes a
    tool error the model can read, not a crash).
    """

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ImagePart:
    """An image a tool returned (an MCP server's screenshot, say), for a model that can
    see images. `data` is base64 as it came; `sha256` (of the decoded bytes) names it in
    the text placeholder that every model reads, so a log or a later turn can tell which
    image it was. Kept in memory for the turn's next model step, not in the transcript."""

    mime_type: str
    data: str
    sha256: str
    size: int  # decoded bytes


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    # Marks assistant text that was cut off (cancellation, crash, timeout), so a resumed
    # turn can tell the model its previous answer was interrupted.
    interrupted: bool = False
    # A tool result's images, for providers whose model can see them (the text holds a
    # placeholder for each, for the others).
    images: tuple[ImagePart, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolResult:
    call_id: str
    name: str
    content: str
    is_error: bool = False


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts of model calls.

    `input_tokens` counts every prompt token, cached or not; `cache_read_tokens` and
    `cache_write_tokens` are the parts of it served from or written to a prompt cache
    (providers that report them separately, like Anthropic, are normalised to this).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens


EMPTY_USAGE = Usage()

# The largest count a store's 64-bit integer column holds.
_MOST_TOKENS = 2**63 - 1


def token_count(value: object) -> int:
    """A token count as a provider's response gave it, as the `Usage` int: a whole
    number sent as a float or a string of digits is taken, anything else a broken or
    hostile server might send (a negative, a fraction's excess, a word, a bool, null)
    counts what it plainly says or 0, and nothing exceeds what a store can hold."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, float):
        value = int(value) if value == value and abs(value) != float("inf") else 0
    elif isinstance(value, str):
        value = int(value) if value.strip().isdecimal() else 0
    if not isinstance(value, int):
        return 0
    return min(max(value, 0), _MOST_TOKENS)


__all__ = [
    "EMPTY_USAGE",
    "ImagePart",
    "Message",
    "Role",
    "ToolCall",
    "ToolResult",
    "Usage",
    "token_count",
]
