"""`GET /api/sessions/{name}/events`, the plain request, served outside the app
(`front.py`): the route's access check, start point, headers and wire format, with
none of the long way's layers. What is not plain goes on to FastAPI's route, which
answers it as it always has.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl

from starlette.types import Receive, Send

from seam.apps.web.access import refusal
from seam.apps.web.auth import Principal
from seam.apps.web.backend import WebBackend
from seam.apps.web.first_write import PrebuiltHead
from seam.apps.web.headers import secured
from seam.apps.web.streams import start_after, stream_events

Scope = dict[str, Any]

# The route as FastAPI declares it (what `refusal` is asked about) and as a path.
EVENTS_ROUTE = "/api/sessions/{name}/events"
_PATH = re.compile(r"/api/sessions/([^/]+)/events")
_DIGITS = re.compile(r"[0-9]+")
# `StreamingResponse(media_type="text/event-stream", headers=...)`'s headers, in its order
# (a tuple: every response shares it, so no layer may change it in place).
HEADERS = (
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
    (b"content-type", b"text/event-stream; charset=utf-8"),
)
# What the client gets: those, then the security headers, as `SecurityHeaders` adds them;
# encoded once, and written with the first event (`first_write.py`).
SECURED = PrebuiltHead(tuple(secured(HEADERS)))
# Headers of a request with a body: the body cap (`limits.py`) looks at those.
_BODY = frozenset({b"content-length", b"transfer-encoding"})


def plain_request(scope: Scope) -> str | None:
    """The session's name when this is a GET of the route without a body; None sends it
    the long way (the method is the caller's to check)."""
    match = _PATH.fullmatch(scope["path"])
    if match is None:
        return None
    for name, _ in scope["headers"]:
        if name in _BODY:
            return None
    return match.group(1)


async def serve(
    backend: WebBackend, scope: Scope, receive: Receive, send: Send, who: Principal, name: str
) -> Receive | None:
    """The stream, or `receive` back for FastAPI to answer what is not plain: a refused
    scope, a start point it words the error of, a session it does not find."""
    if refusal(who, "GET", EVENTS_ROUTE) is not None:
        return receive
    start = plain_start(scope)
    if start is None:
        return receive
    # The session's row and its log after `start` in one read (`opening`): the first
    # batch, written with the stream's head.
    try:
        key = backend.key_for(who.tenant, name)
    except Exception:
        return receive  # the route words the error (404, 400, 500) as it always has
    stream = backend.follow(key, start, opening=True)
    try:
        first = await anext(stream)
    except Exception:
        await stream.aclose()
        return receive
    await stream_events(stream, backend, key, scope, receive, send, SECURED, first)
    return None


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


__all__ = ["EVENTS_ROUTE", "HEADERS", "plain_request", "plain_start", "serve"]
