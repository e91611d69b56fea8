"""Headers that keep the page from leaking: every response says scripts, styles and
connections come from the page's own origin only, images from it or `data:` (so a
markdown image a prompt-injected model names is never fetched), the page is never framed,
types are never sniffed and no address is sent as a referrer."""

from __future__ import annotations

from typing import Any

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
]
_NAMES = {name for name, _ in HEADERS}


def secured(headers: Any) -> list[Any]:
    """A response's headers with `HEADERS` in place of any it set itself."""
    return [h for h in headers if h[0].lower() not in _NAMES] + HEADERS


def secure(send: Any) -> Any:
    """`send` adding `HEADERS` to the response it starts."""

    async def with_headers(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": secured(message.get("headers", []))}
        await send(message)

    return with_headers


class SecurityHeaders:
    """Pure ASGI middleware adding `HEADERS` to every HTTP response (JSON too: a response
    a browser is tricked into rendering gets the same policy as the page)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, secure(send))


__all__ = ["CSP", "HEADERS", "SecurityHeaders", "secure", "secured"]
