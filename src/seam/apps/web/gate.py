"""Who may come in: the key or cookie a request carries, and its rate limits.

`Gate.admit` decides it from the ASGI scope alone (no `Request` object: the event
streams' fast path, `event_streams.py`, asks it for every stream it opens). `AuthGate` is
the middleware that asks it for every other request.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import cookie_parser
from starlette.responses import JSONResponse

from seam.apps.web.auth import Authenticator, Principal, RateLimiter, cookie_name
from seam.apps.web.errors import error_response

Scope = dict[str, Any]
# Set in the scope by a layer that has already admitted the request (and counted it):
# `AuthGate` then lets it through as it is, so no request is counted or limited twice.
ADMITTED = "seam.admitted"
UNAUTHORIZED = (
    "missing or invalid credentials: send Authorization: Bearer <key> "
    "(seam keys create NAME) or open the login URL seam serve printed"
)


def credentials(scope: Scope) -> tuple[str | None, str | None]:
    """The request's `Authorization` header (the first, as Starlette's `Headers.get`) and
    the page's cookie for this server's port (every `Cookie` header merged, as Starlette's
    `Request.cookies`), without building a `Request`."""
    authorization: str | None = None
    cookies: list[bytes] = []
    for name, value in scope["headers"]:
        if name == b"authorization":
            if authorization is None:
                authorization = value.decode("latin-1")
        elif name == b"cookie":
            cookies.append(value)
    if authorization or not cookies:
        return authorization, None  # the cookie is read only without a key
    merged: dict[str, str] = {}
    for value in cookies:
        merged.update(cookie_parser(value.decode("latin-1")))
    port = (scope.get("server") or (None, None))[1]
    return authorization, merged.get(cookie_name(port))


@dataclass(eq=False)
class Gate:
    """Every principal is rate-limited, and so is its tenant as a whole (many keys of one
    tenant do not add up to many limits)."""

    auth: Authenticator
    limiter: RateLimiter
    tenant_limiter: RateLimiter | None = None

    def admit(self, scope: Scope) -> Principal | JSONResponse:
        """The caller, or the 401 or 429 that answers it (a refusal is counted: it takes
        a token from the caller's bucket, as an admission does)."""
        who = self.auth.from_headers(*credentials(scope))
        if who is None:
            return error_response(401, UNAUTHORIZED, headers={"WWW-Authenticate": "Bearer"})
        wait, whose = self.limiter.allow(who.id), ""
        if not wait and self.tenant_limiter is not None:
            wait, whose = self.tenant_limiter.allow(who.tenant), f" for tenant {who.tenant}"
        if wait:
            return error_response(
                429,
                f"too many requests{whose}; try again in {wait:.1f} s",
                headers={"Retry-After": str(max(1, round(wait)))},
            )
        return who


def is_open(scope: Scope) -> bool:
    """The requests that need no principal: `GET /healthz` (probes) and the login link."""
    path = scope["path"]
    return path == "/healthz" or (path == "/" and b"token=" in scope.get("query_string", b""))


@dataclass(eq=False)
class AuthGate:
    """Pure ASGI middleware: every request but the open ones (`is_open`) needs a
    principal (`Gate.admit`), which the routes read from `scope["state"]`."""

    app: Any
    gate: Gate
    metrics: Any

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get(ADMITTED):
            await self.app(scope, receive, send)
            return
        self.metrics.requests += 1
        if is_open(scope):
            await self.app(scope, receive, send)
            return
        who = self.gate.admit(scope)
        if isinstance(who, JSONResponse):
            await who(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = who
        await self.app(scope, receive, send)


__all__ = ["ADMITTED", "AuthGate", "Gate", "credentials", "is_open"]
