"""What a caller may reach, decided in one place: the app-wide dependency `authorize`.

A route is refused (403, one line saying why) when the caller's key scope does not reach
it (`read`: GET routes only; `chat`: sessions, messages and the OpenAI endpoint only) or
when it is the owner's alone (the server's metrics). What a tenant may change *inside* a
route it reaches (its own personality overrides, its own memory, never safety settings) is
checked where the change is made (`tenant_files.py`, `backend.py`).
"""

from __future__ import annotations

from fastapi import Request

from seam.apps.web.auth import Principal
from seam.apps.web.errors import ApiError

READ_METHODS = frozenset({"GET", "HEAD"})
# Route paths (as declared) a `chat` key reaches, by prefix.
CHAT_PREFIXES = ("/api/sessions", "/api/control", "/v1/")
# Route paths only the owner reaches, with why.
OWNER_ONLY = {"/metrics": "only the owner sees the server's metrics"}
# The dashboard's owner-only sections, by route prefix, with why: they change or show the
# agent itself (its jobs, tools, keys, configuration), not one tenant's conversations.
OWNER_PREFIXES = {
    "/api/cron": "only the owner manages the agent's cron jobs",
    "/api/skills": "only the owner manages the agent's skills",
    "/api/mcp": "only the owner manages the agent's MCP servers",
    "/api/approvals": "only the owner sees and changes the remembered approvals",
    "/api/logs": "only the owner reads the server's log",
    "/api/channels": "only the owner manages the chat channels and pairing",
    "/api/keys": "only the owner manages API keys",
    "/api/settings": "only the owner sees and changes the configuration",
    "/api/doctor": "only the owner runs the server's checks",
}
# Routes of the API (everything else is the page and its static files).
API_PREFIXES = ("/api/", "/v1/", "/metrics")


def refusal(who: Principal, method: str, route: str) -> str | None:
    """Why `who` may not call `method route`, or None when it may."""
    if not route.startswith(API_PREFIXES):
        return None
    if route in OWNER_ONLY and not who.owner:
        return OWNER_ONLY[route]
    if not who.owner:
        for prefix, why in OWNER_PREFIXES.items():
            if route == prefix or route.startswith(prefix + "/"):
                return why
    if who.scope == "read" and method not in READ_METHODS:
        return "this key may only read (scope read): GET routes only"
    if who.scope == "chat" and not route.startswith(CHAT_PREFIXES):
        return "this key reaches sessions and messages only (scope chat)"
    if who.scope not in ("full", "chat", "read"):
        return f"this key's scope {who.scope!r} is unknown; create a new key"
    return None


async def authorize(request: Request) -> None:
    """The app-wide dependency: refuse a route the caller's key does not reach. Requests
    without a principal are the open ones (`/healthz`, the login link): `AuthGate` let them
    through."""
    who: Principal | None = getattr(request.state, "principal", None)
    route = request.scope.get("route")
    if who is None or route is None:
        return
    problem = refusal(who, request.method, getattr(route, "path", request.url.path))
    if problem is not None:
        raise ApiError(403, problem)


__all__ = ["OWNER_PREFIXES", "authorize", "refusal"]
