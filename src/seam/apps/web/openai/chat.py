"""`/v1/chat/completions` answers: one `chat.completion`, or a stream of
`chat.completion.chunk`s ending `data: [DONE]`.

A turn stopped by calls to the client's tools answers with those calls as `tool_calls`
and `finish_reason: "tool_calls"` (in a stream: one delta carrying them whole, after any
text). While the turn is quiet (a long tool call, an approval) the stream sends a
`: keep-alive` comment every `[web] heartbeat_seconds`, so proxies keep it open.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from seam.apps.web.errors import ApiError
from seam.apps.web.openai.answer import StopCut, cut
from seam.apps.web.openai.turn import OpenAITurn, Outcome
from seam.contracts.events import TextDelta
from seam.contracts.messages import ToolCall, Usage

KEEP_ALIVE = b": keep-alive\n\n"


def frame(turn: OpenAITurn, choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A `chat.completion.chunk` (or, with `object=`, the completion) of this turn."""
    return {
        "id": f"chatcmpl-{turn.submission_id}",
        "object": "chat.completion.chunk",
        "created": turn.created,
        "model": turn.asked.model,
        "choices": choices,
        **extra,
    }


def usage(used: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": used.input_tokens,
        "completion_tokens": used.output_tokens,
        "total_tokens": used.input_tokens + used.output_tokens,
    }


def wire_calls(calls: list[ToolCall]) -> list[dict[str, Any]]:
    return [
        {
            "index": i,
            "id": c.id,
            "type": "function",
            "function": {"name": c.name, "arguments": c.arguments},
        }
        for i, c in enumerate(calls)
    ]


def finished_text(turn: OpenAITurn, out: Outcome) -> tuple[str, str]:
    """The answer's text and finish reason after `stop` and `response_format`
    (a 502 for a failed turn or an answer not in the asked format)."""
    if out.error is not None:
        raise ApiError(502, out.error, "upstream_error")
    text, stopped = cut(out.text, turn.asked.stops)
    asked = turn.asked.format
    if asked is not None and not out.calls:
        try:
            text = asked.check(text)
        except ValueError as exc:
            raise ApiError(502, f"response_format: {exc}", "upstream_error") from None
    return text + turn.note(), "stop" if stopped else out.finish


async def completion(turn: OpenAITurn) -> dict[str, Any]:
    """The whole turn as one `chat.completion`."""
    async for _ in turn.events():
        pass
    out = turn.outcome
    text, finish = finished_text(turn, out)
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if out.calls:
        message["tool_calls"] = [
            {k: v for k, v in c.items() if k != "index"} for c in wire_calls(out.calls)
        ]
    elif not text:
        message["content"] = ""
    choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
    return frame(turn, [choice], object="chat.completion", usage=usage(out.usage))


async def chunks(turn: OpenAITurn) -> AsyncIterator[bytes]:
    """The turn as `chat.completion.chunk` events (see the module docstring)."""

    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return sse(frame(turn, [choice]))

    yield chunk({"role": "assistant", "content": ""})
    stop = StopCut(turn.asked.stops)
    async for event in turn.events():
        if event is None:
            yield KEEP_ALIVE
        elif isinstance(event, TextDelta) and event.text and (sent := stop.feed(event.text)):
            yield chunk({"content": sent})
    out = turn.outcome
    if out.error is None and (rest := stop.end()):
        yield chunk({"content": rest})
    problem = _problem(turn, out)
    if problem is not None:
        yield sse({"error": {"type": "upstream_error", "message": problem}})
        yield b"data: [DONE]\n\n"
        return
    if turn.note():
        yield chunk({"content": turn.note()})
    if out.calls:
        yield chunk({"tool_calls": wire_calls(out.calls)})
    yield chunk({}, "stop" if stop.stopped else out.finish)
    if turn.asked.usage_wanted:
        yield sse(frame(turn, [], usage=usage(out.usage)))
    yield b"data: [DONE]\n\n"


def _problem(turn: OpenAITurn, out: Outcome) -> str | None:
    """Why a streamed answer failed: the turn's error, or the format it missed."""
    if out.error is not None:
        return out.error
    asked = turn.asked.format
    if asked is None or out.calls:
        return None
    try:
        asked.check(cut(out.text, turn.asked.stops)[0])
    except ValueError as exc:
        return f"response_format: {exc}"
    return None


def sse(body: dict[str, Any], event: str | None = None) -> bytes:
    head = b"" if event is None else b"event: " + event.encode() + b"\n"
    return head + b"data: " + json.dumps(body, ensure_ascii=False).encode() + b"\n\n"


__all__ = ["KEEP_ALIVE", "chunks", "completion", "finished_text", "sse", "usage", "wire_calls"]
