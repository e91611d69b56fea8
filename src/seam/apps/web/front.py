"""The two routes a busy server serves most, answered outside the whole app.

A thousand browsers reconnect at once after a restart or a network blip, and each posts
its next message: `GET /api/sessions/{name}/events` and `POST /api/sessions/{name}/messages`.
The long way costs each request Starlette's error and body-limit layers, our own
middleware (each wrapping `send`, so every event of a stream paid for them again), a
`Request` to read the key, and FastAPI's routing over every route and its dependency
solving; profiled, that was most of a stream's opening and most of a message's posting.
`Front` sits outside all of them and serves the plain requests itself, with the same
parts: the same key check and rate limits (`Gate`, counted once in the metrics), the
same access check (`access.refusal`), the same handling (`event_streams.py`,
`message_posts.py`), the same headers and bodies.

Anything else goes the long way, untouched: other routes, and a request these do not
call plain (with CORS origins configured, any request with an `Origin`, which the CORS
layer answers; a body where none belongs or one over the cap, which the body cap
answers). A request admitted here that a handler then passes on goes on marked as
admitted (`ADMITTED`, so it is not counted or limited twice), with its body replayed
when one was read, and FastAPI, which still declares both routes (their OpenAPI entries
are unchanged), answers it: a refused scope (403), a body or query it does not accept
(422), a bad `Last-Event-ID` (400), an unknown session (404). Each error therefore reads
exactly as it always has.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import Receive, Send

from seam.apps.web import event_streams, message_posts
from seam.apps.web.auth import Principal
from seam.apps.web.backend import WebBackend
from seam.apps.web.gate import ADMITTED, Gate
from seam.apps.web.headers import secure

log = logging.getLogger("seam.web")

Scope = dict[str, Any]
# Serves an admitted request: None when answered, else the `receive` the long way reads
# (the body replayed when the handler read it).
Handler = Callable[[WebBackend, Scope, Receive, Send, Principal, str], Awaitable[Receive | None]]


@dataclass(eq=False)
class Front:
    """Pure ASGI layer outside the whole app (see the module docstring). `app`: the whole
    app's middleware stack; `cors`: whether CORS origins are configured."""

    app: Any
    backend: WebBackend
    gate: Gate
    cors: bool = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        routed = self._route(scope)
        if routed is None:
            await self.app(scope, receive, send)
            return
        handler, name = routed
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
        try:
            rest = await handler(self.backend, scope, receive, send, who, name)
        except Exception:
            log.exception("request failed")  # as the app's error handler logs it
            raise
        if rest is not None:  # the routes read the principal `AuthGate` would have set
            scope.setdefault("state", {})["principal"] = who
            await self.app(scope, rest, send)

    def _route(self, scope: Scope) -> tuple[Handler, str] | None:
        """The handler and session name of a plain request of the two routes, or None."""
        if scope["type"] != "http":
            return None
        method = scope["method"]
        if method == "GET":
            name = event_streams.plain_request(scope)
            handler: Handler = event_streams.serve
        elif method == "POST":
            name = message_posts.plain_request(scope, self.backend.config.max_body_bytes)
            handler = message_posts.serve
        else:
            return None
        if name is None or (self.cors and _has_origin(scope)):
            return None
        return handler, name


def _has_origin(scope: Scope) -> bool:
    return any(name == b"origin" for name, _ in scope["headers"])


__all__ = ["Front", "Handler"]
