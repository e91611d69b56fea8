"""The pieces of an OpenAI-compatible stream's decoding that keep state across chunks:
text held back while it may be a tool call, tool-call fragments by index, and what one
`choices[0]` entry yields. Kept apart from `openai_compat` so the provider reads as the
request and its error handling, and each file stays small.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from seam.contracts.messages import ToolCall, Usage, token_count
from seam.contracts.model import (
    FinishReason,
    ModelChunk,
    ModelError,
    TextChunk,
    ThinkingChunk,
    ToolCallDelta,
    ToolCallEnd,
    ToolCallStart,
)
from seam.services.llm.text_tool_calls import starts_like_call

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}
EMPTY: Mapping[str, Any] = {}


class HeldText:
    """The answer's text, held back while it may still turn out to be a tool call.

    Deltas pass straight through once the text cannot be a call; until then (and for
    good once it surely opens like one) they wait for the end of the stream.
    """

    __slots__ = ("_held", "_parts", "_sure")

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._held: list[str] | None = []
        self._sure = False

    def add(self, content: str) -> str | None:
        """Take a delta; return the text to show now, if any."""
        held = self._held
        if held is None:
            self._parts.append(content)
            return content
        held.append(content)
        if self._sure:
            return None
        verdict = starts_like_call("".join(held))
        if verdict is None:
            return None
        if verdict:
            self._sure = True
            return None
        shown = "".join(held)
        self._held = None
        self._parts.append(shown)
        return shown

    def held_text(self) -> str | None:
        """The text not shown yet, or None when it has been shown as it came."""
        return None if self._held is None else "".join(self._held)

    def shown_text(self) -> str:
        return "".join(self._parts)


class _Call:
    __slots__ = ("id", "name", "parts")

    def __init__(self, call_id: str | None, name: str) -> None:
        # Servers are stateless about ids (they only pair calls with results in the next
        # request), so a synthesised one is as good as theirs, and it never changes
        # between ToolCallStart and ToolCallEnd.
        self.id = call_id or f"call_{uuid.uuid4().hex[:24]}"
        self.name = name
        self.parts: list[str] = []


class ToolCalls:
    """Tool-call fragments accumulated by index until the stream ends.

    The id and name usually arrive in a call's first fragment only and the arguments are
    split anywhere; several calls may interleave. Fragments without an index (a few
    servers) continue the last call unless they bring a new id.
    """

    __slots__ = ("_calls", "_last")

    def __init__(self) -> None:
        self._calls: dict[int, _Call] = {}
        self._last = 0

    def __bool__(self) -> bool:
        return bool(self._calls)

    def add(self, fragment: Any) -> tuple[ToolCallStart | None, ToolCallDelta | None]:
        call_id = fragment.get("id")
        function = fragment.get("function") or EMPTY
        index = fragment.get("index")
        if index is None:
            index = self._index_for(call_id)
        self._last = index
        start = None
        call = self._calls.get(index)
        if call is None:
            call = self._calls[index] = _Call(call_id, function.get("name") or "")
            start = ToolCallStart(index, call.id, call.name)
        elif not call.name and function.get("name"):
            call.name = function["name"]
        arguments = function.get("arguments")
        if not arguments:
            return start, None
        if type(arguments) is not str:  # a few servers send the object itself
            arguments = json.dumps(arguments, ensure_ascii=False)
        call.parts.append(arguments)
        return start, ToolCallDelta(index, arguments)

    def _index_for(self, call_id: str | None) -> int:
        if not self._calls:
            return 0
        if call_id and all(call.id != call_id for call in self._calls.values()):
            return max(self._calls) + 1
        return self._last

    def ends(self, provider: str) -> list[ToolCallEnd]:
        """One complete call per index, in index order; no arguments means `{}`."""
        ends = []
        for index in sorted(self._calls):
            call = self._calls[index]
            if not call.name:
                raise ModelError(
                    "retryable",
                    f"malformed stream: tool call {index} never received a name",
                    provider=provider,
                )
            arguments = "".join(call.parts) or "{}"
            ends.append(ToolCallEnd(index, ToolCall(call.id, call.name, arguments)))
        return ends


def _details_text(details: Any) -> str:
    """The readable text of OpenRouter's `reasoning_details` (encrypted parts have none)."""
    if not isinstance(details, list):
        return ""
    return "".join(
        part.get("text") or part.get("summary") or ""
        for part in details
        if isinstance(part, dict) and part.get("type") != "reasoning.encrypted"
    )


def usage_of(raw: Mapping[str, Any]) -> Usage:
    prompt_details = raw.get("prompt_tokens_details") or EMPTY
    completion_details = raw.get("completion_tokens_details") or EMPTY
    return Usage(
        input_tokens=token_count(raw.get("prompt_tokens")),
        output_tokens=token_count(raw.get("completion_tokens")),
        cache_read_tokens=token_count(prompt_details.get("cached_tokens")),
        reasoning_tokens=token_count(completion_details.get("reasoning_tokens")),
    )


def finish_reason(raw: str | None, had_tool_calls: bool) -> FinishReason:
    reason = _FINISH_REASONS.get(raw, "stop") if raw else "stop"
    # Some local servers say "stop" after tool calls; the calls are what the loop needs.
    if had_tool_calls and reason == "stop":
        return "tool_calls"
    return reason


@dataclass
class StreamState:
    """What one streamed attempt has gathered so far: the tool calls, the held-back text
    (None without tools), the last finish reason and the usage the server reported."""

    text: HeldText | None
    calls: ToolCalls = field(default_factory=ToolCalls)
    finish: str | None = None
    usage: Usage | None = None


def choice_chunks(choice: Any, state: StreamState) -> Iterator[ModelChunk]:
    """The chunks of one `choices[0]` entry, recording its finish reason in `state`.

    A generator, so each chunk reaches the consumer as it is decoded, as before; a
    malformed shape raises the AttributeError/TypeError/KeyError the caller reports.
    """
    delta = choice.get("delta")
    if delta:
        yield from _delta_chunks(delta, state)
    reason = choice.get("finish_reason")
    if reason:
        state.finish = reason


def _delta_chunks(delta: Any, state: StreamState) -> Iterator[ModelChunk]:
    """Reasoning (under any of its three names), text (held back while it may be a tool
    call) and tool-call fragments, in that order."""
    reasoning = delta.get("reasoning_content") or delta.get("reasoning")
    if not reasoning and delta.get("reasoning_details"):
        reasoning = _details_text(delta["reasoning_details"])
    if reasoning:
        yield ThinkingChunk(reasoning)
    content = delta.get("content")
    if content:
        if state.text is None:
            yield TextChunk(content)
        else:
            shown = state.text.add(content)
            if shown:
                yield TextChunk(shown)
    fragments = delta.get("tool_calls")
    if fragments:
        for fragment in fragments:
            start, arguments = state.calls.add(fragment)
            if start is not None:
                yield start
            if arguments is not None:
                yield arguments
