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
from typing import Any

from seam.apps.web.retries import RetryBoard, RetryPayload
from seam.contracts.events import AgentEvent, event_to_dict

# The `event:` name of the types a browser would mistake for its own events.
EVENT_NAMES = {"error": "turn_error"}
# Sent first: how long a browser waits before reconnecting (ms).
PREAMBLE = b"retry: 1000\n\n"
HEARTBEAT = b": heartbeat\n\n"

Batches = AsyncGenerator[list[AgentEvent | None], None]


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


async def sse_body(
    stream: Batches, retries: RetryBoard, key: str, gone: asyncio.Future[Any] | None = None
) -> AsyncGenerator[bytes, None]:
    """The stream's batches and session `key`'s retries, each as soon as it comes, until
    the stream ends or `gone` (the client's disconnection) is done."""
    with retries.subscribe(key) as notices:
        yield PREAMBLE  # subscribed first: a client that has read it misses no retry
        batch: asyncio.Future[Any] = asyncio.ensure_future(anext(stream))
        notice: asyncio.Future[Any] = asyncio.ensure_future(notices.get())
        try:
            while True:
                pending = (batch, notice) if gone is None else (batch, notice, gone)
                await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                if gone is not None and gone.done():
                    return
                if notice.done():
                    yield retry_sse(notice.result())
                    notice = asyncio.ensure_future(notices.get())
                if batch.done():
                    try:
                        ready = batch.result()
                    except StopAsyncIteration:
                        return
                    yield encode(ready)
                    batch = asyncio.ensure_future(anext(stream))
        finally:
            for waiting in (batch, notice):
                waiting.cancel()
            await asyncio.gather(batch, notice, return_exceptions=True)
            await stream.aclose()


__all__ = ["EVENT_NAMES", "Batches", "retry_sse", "sse", "sse_body", "start_after"]
