"""Request bodies above the configured size are refused with 413 before they are read whole."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

Scope = dict[str, Any]
# Bytes of an over-long body read and dropped so the client sees its 413 (larger ones are
# answered at once, and the connection closed).
DRAIN_AT_MOST = 16 * 1024 * 1024


class BodyLimit:
    """Pure ASGI middleware: checks Content-Length, and counts chunked bodies as they come."""

    def __init__(
        self, app: Any, max_bytes: int, widen: Callable[[Scope, int], int] | None = None
    ) -> None:
        self.app = app
        self.max_bytes = max_bytes
        # A route's own cap from the configured one (the turn route's images).
        self.widen = widen

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.max_bytes if self.widen is None else self.widen(scope, self.max_bytes)
        size = _declared_size(scope)
        if size > limit:
            if size <= DRAIN_AT_MOST:
                # Read it to the end first: a client still sending when the answer comes
                # and the connection closes sees a reset, not the 413.
                more = True
                while more:
                    message = await receive()
                    more = message.get("more_body", False)
            await _too_large(send, limit)
            return
        counted = _CountedBody(receive, send, limit)
        await self.app(scope, counted.receive, counted.send)


def _declared_size(scope: Scope) -> int:
    """The largest Content-Length the request declares (0 if none, or unreadable)."""
    sizes = [0]
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            with contextlib.suppress(ValueError):
                sizes.append(int(value))
    return max(sizes)


class _CountedBody:
    """A body with no (or a false) Content-Length, counted as it comes: over the limit,
    the 413 is answered here and the app is told the client went away."""

    def __init__(self, receive: Any, send: Any, max_bytes: int) -> None:
        self._receive = receive
        self._send = send
        self._max_bytes = max_bytes
        self._seen = 0
        self._refused = False
        self._started = False

    async def receive(self) -> Any:
        if self._refused:
            return {"type": "http.disconnect"}
        message = await self._receive()
        if message["type"] == "http.request":
            self._seen += len(message.get("body", b""))
            if self._seen > self._max_bytes:
                self._refused = True
                if not self._started:
                    await _too_large(self._send, self._max_bytes)
                return {"type": "http.disconnect"}
        return message

    async def send(self, message: Any) -> None:
        if self._refused:
            return  # the 413 was the answer
        if message["type"] == "http.response.start":
            self._started = True
        await self._send(message)


async def _too_large(send: Any, limit: int) -> None:
    body = json.dumps(
        {"error": {"type": "payload_too_large", "message": f"the body is over {limit} bytes"}}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [(b"content-type", b"application/json"), (b"connection", b"close")],
        }
    )
    await send({"type": "http.response.body", "body": body})
