"""A session's events as Server-Sent Events: the event log (resumable by its sequence
numbers) merged with the model's retries as they happen (live only).

Each event's `event:` line is its type, but for one: a turn's `error` is sent as
`turn_error`. A browser's EventSource hands an event named `error` to the same listener
as a failed connection, so a model's error read as "connection lost" and the page
reconnected. The JSON payload keeps `"type": "error"`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from starlette.responses import StreamingResponse
from starlette.types import Message, Receive, Send

from seam.apps.web.cycle import WHEN_GONE
from seam.apps.web.retries import RetryPayload
from seam.contracts.events import AgentEvent, event_to_dict

if TYPE_CHECKING:
    from seam.apps.web.backend import WebBackend

# The `event:` name of the types a browser would mistake for its own events.
EVENT_NAMES = {"error": "turn_error"}
# Sent first: how long a browser waits before reconnecting (ms).
PREAMBLE = b"retry: 1000\n\n"
HEARTBEAT = b": heartbeat\n\n"

Scope = dict[str, Any]
Batches = AsyncGenerator[list[AgentEvent | None], None]
Headers = list[tuple[bytes, bytes]] | tuple[tuple[bytes, bytes], ...]
_END: Message = {"type": "http.response.body", "body": b"", "more_body": False}


def start_after(after: int | None, last_event_id: str | None) -> int:
    """The sequence number a stream starts after: `Last-Event-ID` when sent (a browser's
    EventSource resuming), else `?after=N`, else 0. ValueError when the header is not a
    number."""
    if last_event_id is not None and last_event_id.strip():
        return max(0, int(last_event_id))
    return after or 0


def sse(event: AgentEvent) -> bytes:
    data = json.dumps(event_to_dict(event), ensure_ascii=False, separators=(",", ":"))
    name = EVENT_NAMES.get(event.type, event.type)
    return f"id: {event.seq}\nevent: {name}\ndata: {data}\n\n".encode()


def retry_sse(payload: RetryPayload) -> bytes:
    """A retry: no `id:` line, so it moves no one's `Last-Event-ID` (it is not stored)."""
    data = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return f"event: retry\ndata: {data}\n\n".encode()


def encode(batch: list[AgentEvent | None]) -> bytes:
    return b"".join(HEARTBEAT if e is None else sse(e) for e in batch)


def chunk(body: bytes) -> Message:
    return {"type": "http.response.body", "body": body, "more_body": True}


async def stream_events(
    stream: Batches,
    backend: WebBackend,
    key: str,
    scope: Scope,
    receive: Receive,
    send: Send,
    headers: Headers,
    first: list[AgentEvent | None] | None = None,
) -> None:
    """A 200 event stream: the preamble (with `first`, a batch the caller took from the
    stream already), the retry session `key` waits on (if any), then the stream's
    batches and the session's retries, each as soon as it comes, until the stream ends
    or the client disconnects.

    One task carries it all (this one, uvicorn's task for the request): it writes each
    batch as the stream yields it, with no task or `asyncio.wait` per batch. A client's
    disconnection is only seen by `receive` (uvicorn speaks ASGI 2.3: a send to a closed
    connection is dropped silently), so it cancels this task: from `seam serve`'s
    protocol when the connection is lost (`cycle.WHEN_GONE`), else from a watcher task
    awaiting `receive` (`_follow`). A retry, rare, is written by a task of its own
    (`_Retries`). The stream counts in `backend.metrics.open_streams` while followed."""
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send(chunk(PREAMBLE + encode(first) if first else PREAMBLE))
    # Listening starts as the preamble is written, with no wait in between: a client that
    # has read it misses no retry.
    writer = _Retries(send)
    backend.metrics.open_streams += 1
    try:
        with backend.retries.listen(key, writer.send) as pending:
            try:
                if pending is not None:
                    await send(chunk(retry_sse(pending)))
                await _follow(stream, scope, receive, send)
            finally:
                await writer.close()
    finally:
        backend.metrics.open_streams -= 1
    await send(_END)


async def _follow(stream: Batches, scope: Scope, receive: Receive, send: Send) -> None:
    """Each batch of `stream` written as it comes, until it ends or the client goes away:
    the server (`WHEN_GONE`) or a watcher task awaiting the disconnection cancels this
    task, and the cancellation is taken back (`uncancel`) so the stream ends like any
    other; a cancellation from elsewhere (the server stopping) still propagates."""
    task = asyncio.current_task()
    assert task is not None
    state = {"watching": True, "cancelled": False}

    def on_gone(*_: object) -> None:
        if state["watching"]:
            state["cancelled"] = True
            task.cancel()

    when_gone = scope.get(WHEN_GONE)
    gone = None
    if when_gone is not None:
        when_gone(on_gone)
    else:
        gone = asyncio.get_running_loop().create_task(_disconnected(receive))
        gone.add_done_callback(on_gone)
    try:
        async for batch in stream:
            await send(chunk(encode(batch)))
    except asyncio.CancelledError:
        if not state["cancelled"] or task.uncancel() > 0:
            raise
    finally:
        state["watching"] = False
        if gone is not None:
            gone.cancel()
        await stream.aclose()


async def _disconnected(receive: Receive) -> None:
    """Returns when the client has gone (the request's own empty body is read first)."""
    while (await receive())["type"] != "http.disconnect":
        pass


class EventStreamResponse(StreamingResponse):
    """What the events route answers with when it serves the stream itself (a request
    that went the long way, `event_streams.py`): `StreamingResponse`'s status and headers
    (the route declares it), written by `stream_events`."""

    def __init__(self, stream: Batches, backend: WebBackend, key: str) -> None:
        self.status_code = 200
        self.media_type = "text/event-stream"
        self.background = None
        self.init_headers({"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        self._events = stream, backend, key

    async def __call__(self, scope: Any, receive: Receive, send: Send) -> None:
        stream, backend, key = self._events
        await stream_events(stream, backend, key, scope, receive, send, self.raw_headers)
        if self.background is not None:
            await self.background()


class _Retries:
    """Writes each retry notice as it comes (called by `RetryBoard`, outside any task),
    each by a short task; `close` waits for those in flight, so none is written after
    the response's end."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self._open = True
        self._writing: set[asyncio.Task[None]] = set()

    def send(self, payload: RetryPayload) -> None:
        if self._open:
            task = asyncio.ensure_future(self._write(retry_sse(payload)))
            self._writing.add(task)
            task.add_done_callback(self._writing.discard)

    async def _write(self, body: bytes) -> None:
        if self._open:
            await self._send(chunk(body))

    async def close(self) -> None:
        self._open = False
        if self._writing:
            await asyncio.gather(*self._writing, return_exceptions=True)


__all__ = [
    "EVENT_NAMES",
    "Batches",
    "EventStreamResponse",
    "chunk",
    "encode",
    "retry_sse",
    "sse",
    "start_after",
    "stream_events",
]
