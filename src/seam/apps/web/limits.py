"""Request bodies above the configured size are refused with 413 before they are read whole."""

from __future__ import annotations

import json
from typing import Any

Scope = dict[str, Any]
# Bytes of an over-long body read and dropped so the client sees its 413 (larger ones are
# answered at once, and the connection closed).
DRAIN_AT_MOST = 16 * 1024 * 1024


class BodyLimit:
    """Pure ASGI middleware: checks Content-Length, and counts chunked bodies as they come."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    size = int(value)
                except ValueError:
                    size = 0
                if size > self.max_bytes:
                    if size <= DRAIN_AT_MOST:
                        # Read it to the end first: a client still sending when the answer
                        # comes and the connection closes sees a reset, not the 413.
                        more = True
                        while more:
                            message = await receive()
                            more = message.get("more_body", False)
                    await _too_large(send, self.max_bytes)
                    return
        seen = 0
        refused = False
        started = False

        async def counted() -> Any:
            # Over the limit: answer 413 here, and tell the app the client went away.
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    refused = True
                    if not started:
                        await _too_large(send, self.max_bytes)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Any) -> None:
            nonlocal started
            if refused:
                return  # the 413 was the answer
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        await self.app(scope, counted, guarded_send)


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
