"""A scriptable Anthropic Messages API server on 127.0.0.1, speaking the real wire format.

Tests queue replies (`server.push(text_reply("Hello"))`), point a provider at
`server.base_url`, and assert on what the client shows and on `server.requests`. Streams
are the real event sequence (`message_start`, `content_block_start`, `content_block_delta`,
`content_block_stop`, `message_delta`, `message_stop`, with `ping` and `error` events),
each an `event:` line plus a `data: {json}` line, flushed one event at a time.

The HTTP transport (chunked streaming, the `STALL` and `DROP` delivery markers, request
recording, clean teardown) is the OpenAI test server's: only the script and the wire
format differ, so `Reply.stalled` and `Reply.dropped` work here the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import pytest

from tests.support.openai_server import RecordedRequest, Reply, ScriptedServer

MESSAGES_PATH = "/v1/messages"
MODELS_PATH = "/v1/models"
DEFAULT_MODEL = "claude-test"


# -- events ------------------------------------------------------------------------------


def event(name: str, payload: Mapping[str, Any]) -> bytes:
    """One server-sent event as Anthropic sends it: an `event:` line naming the type."""
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()


def message_start(
    input_tokens: int = 12,
    *,
    cache_read: int = 0,
    cache_write: int = 0,
    model: str = DEFAULT_MODEL,
) -> bytes:
    return event(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": "msg_seam_test",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": input_tokens,
                    "cache_creation_input_tokens": cache_write,
                    "cache_read_input_tokens": cache_read,
                    "output_tokens": 1,
                },
            },
        },
    )


def block_start(index: int, block: Mapping[str, Any]) -> bytes:
    return event(
        "content_block_start",
        {"type": "content_block_start", "index": index, "content_block": dict(block)},
    )


def text_start(index: int) -> bytes:
    return block_start(index, {"type": "text", "text": ""})


def thinking_start(index: int) -> bytes:
    return block_start(index, {"type": "thinking", "thinking": "", "signature": ""})


def tool_use_start(index: int, tool_id: str, name: str) -> bytes:
    return block_start(index, {"type": "tool_use", "id": tool_id, "name": name, "input": {}})


def block_delta(index: int, delta: Mapping[str, Any]) -> bytes:
    return event(
        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": dict(delta)}
    )


def text_delta(index: int, text: str) -> bytes:
    return block_delta(index, {"type": "text_delta", "text": text})


def thinking_delta(index: int, thinking: str) -> bytes:
    return block_delta(index, {"type": "thinking_delta", "thinking": thinking})


def signature_delta(index: int, signature: str) -> bytes:
    return block_delta(index, {"type": "signature_delta", "signature": signature})


def input_json_delta(index: int, partial_json: str) -> bytes:
    return block_delta(index, {"type": "input_json_delta", "partial_json": partial_json})


def block_stop(index: int) -> bytes:
    return event("content_block_stop", {"type": "content_block_stop", "index": index})


def message_delta(stop_reason: str | None, output_tokens: int) -> bytes:
    return event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
    )


def message_stop() -> bytes:
    return event("message_stop", {"type": "message_stop"})


def ping() -> bytes:
    return event("ping", {"type": "ping"})


def error_event(error_type: str, message: str) -> bytes:
    """An error sent inside a 200 stream (Anthropic does this for overload mid-response)."""
    return event("error", {"type": "error", "error": {"type": error_type, "message": message}})


# -- reply builders ----------------------------------------------------------------------


def stream_reply(events: Iterable[bytes]) -> Reply:
    return Reply(parts=tuple(events))


def text_reply(
    text: str,
    chunk_size: int = 3,
    *,
    thinking: str = "",
    signature: str = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds",
    stop_reason: str = "end_turn",
    input_tokens: int = 12,
    output_tokens: int | None = None,
    cache_read: int = 0,
    cache_write: int = 0,
    model: str = DEFAULT_MODEL,
) -> Reply:
    """A streamed answer: an optional thinking block (its text in `chunk_size` pieces, then
    a signature), a text block in `chunk_size` pieces, a ping, the stop reason and usage
    (default: one output token per text piece)."""
    events = [
        message_start(input_tokens, cache_read=cache_read, cache_write=cache_write, model=model)
    ]
    index = 0
    if thinking:
        events.append(thinking_start(index))
        events += [thinking_delta(index, piece) for piece in _pieces(thinking, chunk_size)]
        events += [signature_delta(index, signature), block_stop(index)]
        index += 1
    pieces = _pieces(text, chunk_size)
    events.append(text_start(index))
    events.append(ping())
    events += [text_delta(index, piece) for piece in pieces]
    events.append(block_stop(index))
    events.append(
        message_delta(stop_reason, len(pieces) if output_tokens is None else output_tokens)
    )
    events.append(message_stop())
    return stream_reply(events)


def keep_alive_reply(pings: int, interval: float) -> Reply:
    """`message_start`, then only `ping` events, one every `interval` seconds: a server
    that keeps the connection busy but never answers."""
    return stream_reply([message_start(), *(ping() for _ in range(pings))]).paced(interval)


def tool_use_reply(
    calls: Sequence[tuple[str, str]],
    split_every: int = 5,
    *,
    text: str = "",
    stop_reason: str = "tool_use",
    input_tokens: int = 20,
    output_tokens: int = 9,
) -> Reply:
    """Tool calls `(name, input_json)` streamed the way Anthropic does it.

    An optional text block comes first; each call is its own `tool_use` block, with id
    `toolu_<n>_<name>`, whose input arrives as `input_json_delta` fragments of
    `split_every` characters (Anthropic starts with an empty fragment, so do we).
    """
    events = [message_start(input_tokens)]
    index = 0
    if text:
        events.append(text_start(index))
        events += [text_delta(index, piece) for piece in _pieces(text, 3)]
        events.append(block_stop(index))
        index += 1
    for number, (name, arguments) in enumerate(calls):
        events.append(tool_use_start(index, f"toolu_{number}_{name}", name))
        events.append(input_json_delta(index, ""))
        events += [input_json_delta(index, piece) for piece in _pieces(arguments, split_every)]
        events.append(block_stop(index))
        index += 1
    events += [message_delta(stop_reason, output_tokens), message_stop()]
    return stream_reply(events)


def error_reply(
    status: int,
    error_type: str = "api_error",
    message: str | None = None,
    *,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """A JSON error response in Anthropic's shape: `{"type": "error", "error": {...}}`."""
    body = {
        "type": "error",
        "error": {"type": error_type, "message": message or f"scripted HTTP {status}"},
        "request_id": "req_seam_test",
    }
    return Reply(
        status=status,
        headers={"request-id": "req_seam_test", **(headers or {})},
        parts=(json.dumps(body).encode(),),
        content_type="application/json",
    )


def models_reply(model_ids: Iterable[str]) -> Reply:
    data = [
        {
            "type": "model",
            "id": model_id,
            "display_name": model_id,
            "created_at": "2025-09-29T00:00:00Z",
        }
        for model_id in model_ids
    ]
    body = {
        "data": data,
        "has_more": False,
        "first_id": data[0]["id"] if data else None,
        "last_id": data[-1]["id"] if data else None,
    }
    return Reply(parts=(json.dumps(body).encode(),), content_type="application/json")


def _pieces(text: str, size: int) -> list[str]:
    if size < 1:
        raise ValueError(f"chunk size must be >= 1, got {size}")
    return [text[i : i + size] for i in range(0, len(text), size)]


# -- the server ---------------------------------------------------------------------------


class AnthropicServer(ScriptedServer):
    """The Anthropic Messages server."""

    main_path = MESSAGES_PATH
    url_suffix = ""
    thread_name = "anthropic-test-server"

    def __init__(self, models: Sequence[str] = (DEFAULT_MODEL,)) -> None:
        super().__init__(models)

    @property
    def message_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == MESSAGES_PATH]

    def _models(self) -> Reply:
        return models_reply(self.models)

    def _exhausted(self, count: int) -> Reply:
        return error_reply(
            500,
            "api_error",
            f"anthropic test server: the script ran out of replies (request #{count} "
            f"to {MESSAGES_PATH}); push() more",
        )

    def _not_found(self, method: str, path: str) -> Reply:
        return error_reply(404, "not_found_error", f"no route for {method} {path}")


@pytest.fixture(name="anthropic_server")
def anthropic_server_fixture() -> Iterator[AnthropicServer]:
    """A running server as `anthropic_server`; stalls released, threads joined at teardown.

    Import it into a test module to use it:
    `from tests.support.anthropic_server import anthropic_server_fixture  # noqa: F401`.
    """
    with AnthropicServer() as server:
        yield server
