"""`/v1/responses` answers: one `response` object, or its stream of typed events.

The output is a `message` item with one `output_text` part (when the model said
anything) and a `function_call` item per call to the client's tools. A stream sends
`response.created`, `response.in_progress`, the message item's added / part added /
`response.output_text.delta`... / done events, each function call's added /
`response.function_call_arguments.delta` / `.done` / done events, then
`response.completed` (or `response.failed`), each with its `sequence_number`; quiet
stretches get `: keep-alive` comments. A stream's text is cut at nothing (`stop` is a
chat field) but held to `text.format` like the whole answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from seam.apps.web.errors import ApiError
from seam.apps.web.openai.chat import KEEP_ALIVE, finished_text, sse
from seam.apps.web.openai.turn import OpenAITurn
from seam.contracts.events import TextDelta
from seam.contracts.messages import ToolCall, Usage


def _usage(used: Usage) -> dict[str, Any]:
    return {
        "input_tokens": used.input_tokens,
        "input_tokens_details": {"cached_tokens": used.cache_read_tokens},
        "output_tokens": used.output_tokens,
        "output_tokens_details": {"reasoning_tokens": used.reasoning_tokens},
        "total_tokens": used.input_tokens + used.output_tokens,
    }


def _message(turn: OpenAITurn, text: str, status: str = "completed") -> dict[str, Any]:
    parts = [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]
    return {
        "type": "message",
        "id": f"msg_{turn.submission_id}",
        "status": status,
        "role": "assistant",
        "content": parts if status == "completed" else [],
    }


def _call(call: ToolCall) -> dict[str, Any]:
    return {
        "type": "function_call",
        "id": f"fc_{call.id}",
        "call_id": call.id,
        "name": call.name,
        "arguments": call.arguments,
        "status": "completed",
    }


def _response(turn: OpenAITurn, status: str, output: list[dict[str, Any]]) -> dict[str, Any]:
    asked = turn.asked
    done = status == "completed"
    return {
        "id": f"resp_{turn.submission_id}",
        "object": "response",
        "created_at": turn.created,
        "status": status,
        "model": asked.model,
        "output": output,
        "usage": _usage(turn.outcome.usage) if done else None,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "metadata": {},
        "parallel_tool_calls": True,
        "temperature": asked.extras.sampling.temperature,
        "top_p": None,
        "max_output_tokens": asked.extras.sampling.max_tokens,
        "tool_choice": asked.extras.sampling.tool_choice,
        "tools": [
            {
                "type": "function",
                "name": d.name,
                "description": d.description,
                "parameters": d.parameters,
                "strict": False,
            }
            for d in asked.extras.external
        ],
        "text": {"format": {"type": "text"}},
        "truncation": "disabled",
    }


def _output(turn: OpenAITurn, text: str) -> list[dict[str, Any]]:
    items = [_message(turn, text)] if text or not turn.outcome.calls else []
    return items + [_call(c) for c in turn.outcome.calls]


async def response(turn: OpenAITurn) -> dict[str, Any]:
    """The whole turn as one `response` object (a 502 if it failed)."""
    async for _ in turn.events():
        pass
    text, _ = finished_text(turn, turn.outcome)
    return _response(turn, "completed", _output(turn, text))


class _Events:
    """Numbers the stream's events (`sequence_number`) as they are made."""

    def __init__(self) -> None:
        self.seq = 0

    def __call__(self, kind: str, **body: Any) -> bytes:
        self.seq += 1
        return sse({"type": kind, "sequence_number": self.seq, **body}, kind)


async def response_events(turn: OpenAITurn) -> AsyncIterator[bytes]:
    """The turn as the Responses API's stream (see the module docstring)."""
    event = _Events()
    yield event("response.created", response=_response(turn, "in_progress", []))
    yield event("response.in_progress", response=_response(turn, "in_progress", []))
    item_id, opened = f"msg_{turn.submission_id}", False
    where = {"item_id": item_id, "output_index": 0, "content_index": 0}
    async for happened in turn.events():
        if happened is None:
            yield KEEP_ALIVE
        elif isinstance(happened, TextDelta) and happened.text:
            if not opened:
                opened = True
                for opening in _open_message(turn, event):
                    yield opening
            yield event("response.output_text.delta", delta=happened.text, logprobs=[], **where)
    note = turn.note() if turn.outcome.error is None else ""
    if note:  # what was not run for want of an approver, as the chat stream says it
        if not opened:
            opened = True
            for opening in _open_message(turn, event):
                yield opening
        yield event("response.output_text.delta", delta=note, logprobs=[], **where)
    try:
        text, _ = finished_text(turn, turn.outcome)
    except ApiError as exc:
        failed = _response(turn, "failed", [])
        failed["error"] = {"code": "server_error", "message": exc.message}
        yield event("response.failed", response=failed)
        return
    for closing in _close(turn, event, text if opened else None):
        yield closing
    yield event("response.completed", response=_response(turn, "completed", _output(turn, text)))


def _open_message(turn: OpenAITurn, event: _Events) -> Iterator[bytes]:
    yield event(
        "response.output_item.added", output_index=0, item=_message(turn, "", "in_progress")
    )
    part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
    yield event(
        "response.content_part.added",
        item_id=f"msg_{turn.submission_id}",
        output_index=0,
        content_index=0,
        part=part,
    )


def _close(turn: OpenAITurn, event: _Events, text: str | None) -> Iterator[bytes]:
    """The done events of the message (when one was opened) and each function call."""
    index = 0
    if text is not None:
        where = {"item_id": f"msg_{turn.submission_id}", "output_index": 0, "content_index": 0}
        part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
        yield event("response.output_text.done", text=text, logprobs=[], **where)
        yield event("response.content_part.done", part=part, **where)
        yield event("response.output_item.done", output_index=0, item=_message(turn, text))
        index = 1
    for call in turn.outcome.calls:
        item = _call(call)
        added = {**item, "arguments": "", "status": "in_progress"}
        yield event("response.output_item.added", output_index=index, item=added)
        where = {"item_id": item["id"], "output_index": index}
        yield event("response.function_call_arguments.delta", delta=call.arguments, **where)
        yield event(
            "response.function_call_arguments.done",
            arguments=call.arguments,
            name=call.name,
            **where,
        )
        yield event("response.output_item.done", output_index=index, item=item)
        index += 1


__all__ = ["response", "response_events"]
