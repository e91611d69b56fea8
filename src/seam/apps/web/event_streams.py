"""`GET /api/sessions/{name}/events` served ahead of the whole app.

A server holding a thousand streams opens them all at once when it restarts or a network
blip drops every browser. The route's only inputs are a path segment, one query number
and one header, yet the long way costs a stream Starlette's error and body-limit layers,
our own middleware (each wrapping `send`, so every event paid for them again), a
`Request` to read the key, and FastAPI's routing and dependency solving. This ASGI layer
sits outside all of them and serves the plain request itself, with the same parts: the
same key check and rate limits (`Gate`, counted once in the metrics), the same access
check (`access.refusal`), the same start point (`plain_start`), the same headers (the
route's and the security headers) and wire format (`streams.stream_events`).

Anything else goes the long way, untouched: another route, a request with a body or (when
CORS origins are configured) an `Origin`, which the body cap and CORS layers answer. A
request admitted here that it does not serve goes on marked as admitted (`ADMITTED`), and
FastAPI, which still declares the route (its OpenAPI entry is unchanged), answers it: a
refused scope (403), an unparsable `after` (422), a bad `Last-Event-ID` (400), an unknown
session (404) or a store that failed; each error therefore reads exactly as it always has.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from starlette.responses import JSONResponse
from starlette.types import Receive, Send

from seam.apps.web.access import refusal
from seam.apps.web.auth import Principal
from seam.apps.web.backend import WebBackend
from seam.apps.web.gate import ADMITTED, Gate
from seam.apps.web.headers import secure, secured
from seam.apps.web.streams import Batches, start_after, stream_events

log = logging.getLogger("seam.web")

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
# What the client gets: those, then the security headers, as `SecurityHeaders` adds them.
SECURED = tuple(secured(HEADERS))
# Headers of a request with a body: the body cap (`limits.py`) looks at those.
_BODY = frozenset({b"content-length", b"transfer-encoding"})


@dataclass(eq=False)
class EventStreams:
    """Pure ASGI layer serving a session's event stream (see the module docstring).
    `app`: the whole app's middleware stack; `cors`: whether CORS origins are configured
    (then a request with an `Origin` goes the long way, through the CORS layer)."""

    app: Any
    backend: WebBackend
    gate: Gate
    cors: bool = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = self._plain(scope)
        if name is None:
            await self.app(scope, receive, send)
            return
        try:
            who = self.gate.admit(scope)
        except Exception:  # a broken keys file: the long way words the 500, as always
            await self.app(scope, receive, send)
            return
        self.backend.metrics.requests += 1
        scope[ADMITTED] = True
        if isinstance(who, JSONResponse):  # the 401 or 429 `AuthGate` would send
            await who(scope, receive, secure(send))
            return
        scope.setdefault("state", {})["principal"] = who
        opened = await self._open(scope, who, name)
        if opened is None:
            await self.app(scope, receive, send)
            return
        stream, key = opened
        try:
            await stream_events(stream, self.backend.retries, key, receive, send, SECURED)
        except Exception:
            log.exception("request failed")  # as the app's error handler logs it
            raise

    def _plain(self, scope: Scope) -> str | None:
        """The session's name when this is a GET of the route without a body (or, with
        CORS configured, an `Origin`); None sends it the long way."""
        if scope["type"] != "http" or scope["method"] != "GET":
            return None
        match = _PATH.fullmatch(scope["path"])
        if match is None:
            return None
        for name, _ in scope["headers"]:
            if name in _BODY or (self.cors and name == b"origin"):
                return None
        return match.group(1)

    async def _open(self, scope: Scope, who: Principal, name: str) -> tuple[Batches, str] | None:
        """The stream for a plain request, or None to let FastAPI answer it."""
        if refusal(who, "GET", EVENTS_ROUTE) is not None:
            return None
        start = plain_start(scope)
        if start is None:
            return None
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


__all__ = ["EVENTS_ROUTE", "HEADERS", "EventStreams", "plain_start"]
