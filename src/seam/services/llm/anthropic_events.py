"""The state an Anthropic Messages stream keeps across events: open `tool_use` blocks,
usage counts, the stop reason, and what each content event yields. Kept apart from
`anthropic` so the provider reads as the request and its error handling, and each file
stays small.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from seam.contracts.messages import ToolCall, Usage, token_count
from seam.contracts.model import (
    FinishReason,
    ModelChunk,
    TextChunk,
    ThinkingChunk,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)

_STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "refusal": "content_filter",
}


class _ToolUse:
    __slots__ = ("id", "index", "input", "name", "parts")

    def __init__(self, index: int, tool_id: str, name: str, initial: Any) -> None:
        self.index = index
        self.id = tool_id
        self.name = name
        self.input = initial
        self.parts: list[str] = []


class ToolUses:
    """Open `tool_use` blocks by content-block index, with their JSON so far.

    The contract numbers tool calls among themselves (0, 1, ...), not among all content
    blocks, so a call after a text block is still call 0.
    """

    __slots__ = ("_count", "_open")

    def __init__(self) -> None:
        self._open: dict[int, _ToolUse] = {}
        self._count = 0

    def __bool__(self) -> bool:
        return self._count > 0

    def start(self, block_index: int, block: Mapping[str, Any]) -> ToolCallStart:
        use = _ToolUse(self._count, block["id"], block["name"], block.get("input"))
        self._open[block_index] = use
        self._count += 1
        return ToolCallStart(use.index, use.id, use.name)

    def delta(self, block_index: int, partial_json: str) -> ToolCallDelta | None:
        use = self._open[block_index]
        if not partial_json:
            return None
        use.parts.append(partial_json)
        return ToolCallDelta(use.index, partial_json)

    def stop(self, block_index: int) -> ToolCallEnd | None:
        """The finished call, or None when the block that stopped was not a tool use.

        The input streams as JSON text; a block that brought its input whole in
        `content_block_start` (some proxies) is serialised instead; no input is `{}`.
        """
        use = self._open.pop(block_index, None)
        if use is None:
            return None
        if use.parts:
            arguments = "".join(use.parts)
        elif use.input:
            arguments = json.dumps(use.input, ensure_ascii=False)
        else:
            arguments = "{}"
        return ToolCallEnd(use.index, ToolCall(use.id, use.name, arguments))


@dataclass
class MessageState:
    """What one streamed attempt has gathered so far: the tool calls, the usage counts
    (latest value of each field), the stop reason and whether `message_stop` came."""

    tool_uses: ToolUses = field(default_factory=ToolUses)
    counts: dict[str, Any] = field(default_factory=dict)
    stop_reason: str | None = None
    stopped: bool = False

    def note(self, kind: str, event: Any) -> None:
        """Record a message-level event (start, delta, stop); other kinds, including
        those added to the API after this was written, change nothing."""
        if kind == "message_start":
            _merge_usage(self.counts, event["message"].get("usage"))
        elif kind == "message_delta":
            self.stop_reason = event["delta"].get("stop_reason") or self.stop_reason
            _merge_usage(self.counts, event.get("usage"))
        elif kind == "message_stop":
            self.stopped = True


def content_chunks(kind: str, event: Any, state: MessageState) -> Iterator[ModelChunk]:
    """The chunks of one content-block event (start, delta, stop); a message-level event
    is recorded in `state` instead. A generator, so each chunk reaches the consumer as
    it is decoded; a malformed shape raises what the caller reports as malformed."""
    if kind == "content_block_delta":
        yield from _delta_chunks(event, state.tool_uses)
    elif kind == "content_block_start":
        yield from _start_chunks(event, state.tool_uses)
    elif kind == "content_block_stop":
        end = state.tool_uses.stop(event["index"])
        if end is not None:
            yield end
    else:
        state.note(kind, event)


def _delta_chunks(event: Any, tool_uses: ToolUses) -> Iterator[ModelChunk]:
    """Text, tool-input JSON and thinking deltas; signature and citation deltas have
    nothing to show."""
    delta = event["delta"]
    delta_kind = delta["type"]
    if delta_kind == "text_delta":
        if delta["text"]:
            yield TextChunk(delta["text"])
    elif delta_kind == "input_json_delta":
        arguments = tool_uses.delta(event["index"], delta["partial_json"])
        if arguments is not None:
            yield arguments
    elif delta_kind == "thinking_delta" and delta["thinking"]:
        yield ThinkingChunk(delta["thinking"])


def _start_chunks(event: Any, tool_uses: ToolUses) -> Iterator[ModelChunk]:
    """A block's start: a tool call opens, and a block that brings text or thinking
    whole (some proxies) shows it."""
    block = event["content_block"]
    block_kind = block["type"]
    if block_kind == "tool_use":
        yield tool_uses.start(event["index"], block)
    elif block_kind == "text" and block.get("text"):
        yield TextChunk(block["text"])
    elif block_kind == "thinking" and block.get("thinking"):
        yield ThinkingChunk(block["thinking"])


def _merge_usage(counts: dict[str, Any], raw: Any) -> None:
    """Keep the latest value of each usage field: `message_delta` counts are cumulative
    and may repeat or complete those of `message_start`."""
    if raw:
        for key, value in raw.items():
            if value is not None:
                counts[key] = value


def usage_of(counts: Mapping[str, Any]) -> Usage:
    """Anthropic's `input_tokens` excludes cached tokens; the contract's includes them."""
    read = token_count(counts.get("cache_read_input_tokens"))
    write = token_count(counts.get("cache_creation_input_tokens"))
    return Usage(
        input_tokens=token_count(token_count(counts.get("input_tokens")) + read + write),
        output_tokens=token_count(counts.get("output_tokens")),
        cache_read_tokens=read,
        cache_write_tokens=write,
    )


def finish_reason(raw: str | None, had_tool_calls: bool) -> FinishReason:
    reason = _STOP_REASONS.get(raw, "stop") if raw else "stop"
    # A proxy that loses the stop reason still delivered the calls the loop must run.
    if had_tool_calls and reason == "stop":
        return "tool_calls"
    return reason
