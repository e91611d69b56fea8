"""`GET /api/sessions/{name}/events` served ahead of FastAPI's router.

A server holding a thousand streams opens them all at once when it restarts or a network
blip drops every browser: profiled, about 60% of a stream's opening was FastAPI's routing,
dependency solving and `StreamingResponse`'s task group, for a route whose only inputs are
a path segment, one query number and one header. This pure ASGI middleware sits just inside
`AuthGate` (so the key, its rate limits and the metrics count as before) and serves the
plain case itself: the same access check (`access.refusal`), the same start point, the
same wire format (`streams.sse_body`) and headers.

Anything else goes on to FastAPI, which still declares the route (its OpenAPI entry is
unchanged) and answers what this does not: a refused scope (403), an unparsable `after`
(422), a bad `Last-Event-ID` (400), an unknown session (404) or a store that failed; each
error therefore reads exactly as it always has.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from seam.apps.web.access import refusal
from seam.apps.web.auth import Principal
from seam.apps.web.backend import WebBackend
from seam.apps.web.streams import Batches, sse_body, start_after

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

# The route as FastAPI declares it (what `refusal` is asked about) and as a path.
EVENTS_ROUTE = "/api/sessions/{name}/events"
_PATH = re.compile(r"/api/sessions/([^/]+)/events")
_DIGITS = re.compile(r"[0-9]+")
# `StreamingResponse(media_type="text/event-stream", headers=...)`'s headers, in its order
# (a tuple: every response shares it, so no middleware may change it in place).
HEADERS = (
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
    (b"content-type", b"text/event-stream; charset=utf-8"),
)
_END = {"type": "http.response.body", "body": b"", "more_body": False}


@dataclass(eq=False)
class EventStreams:
    """Pure ASGI middleware serving a session's event stream (see the module docstring)."""

    app: Any
    backend: WebBackend

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        opened = await self._open(scope) if scope["type"] == "http" else None
        if opened is None:
            await self.app(scope, receive, send)
            return
        stream, key = opened
        await respond(stream, self.backend, key, receive, send)

    async def _open(self, scope: Scope) -> tuple[Batches, str] | None:
        """The stream for a plain request, or None to let FastAPI answer it."""
        if scope["method"] != "GET":
            return None
        match = _PATH.fullmatch(scope["path"])
        who: Principal | None = scope.get("state", {}).get("principal")
        if match is None or who is None or refusal(who, "GET", EVENTS_ROUTE) is not None:
            return None
        start = plain_start(scope)
        if start is None:
            return None
        name = match.group(1)
        try:
            key = await self.backend.existing_key(who.tenant, name)
        except Exception:
            return None  # the route words the error (404, 400, 500) as it always has
        return self.backend.event_batches(who.tenant, name, start, key=key), key


def plain_start(scope: Scope) -> int | None:
    """Where the stream starts, from `?after=N` and `Last-Event-ID` as the route reads them
    (the last `after`, the first header), or None when either is not plain."""
    after: int | None = None
    query = scope.get("query_string", b"")
    if query:
        for field, value in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
            if field == "after":
                if not _DIGITS.fullmatch(value):
                    return None
                after = int(value)
    last_event_id = next(
        (v.decode("latin-1") for k, v in scope["headers"] if k == b"last-event-id"), None
    )
    try:
        return start_after(after, last_event_id)
    except ValueError:
        return None


async def _disconnected(receive: Receive) -> None:
    """Returns when the client has gone (the request's own empty body is read first)."""
    while (await receive())["type"] != "http.disconnect":
        pass


async def respond(
    stream: Batches, backend: WebBackend, key: str, receive: Receive, send: Send
) -> None:
    """A 200 event stream: `sse_body`'s chunks as they come, until the stream ends or the
    client disconnects (uvicorn speaks ASGI 2.3: a send to a closed connection is dropped
    silently, so only `receive` tells)."""
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    gone = asyncio.ensure_future(_disconnected(receive))
    body = sse_body(stream, backend.retries, key, gone)
    try:
        async for chunk in body:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
    finally:
        gone.cancel()
        await body.aclose()
    await send(_END)


__all__ = ["EVENTS_ROUTE", "HEADERS", "EventStreams", "plain_start"]
