"""`GET /api/control`: the dashboard's sections this caller may open, so the page shows
only what the server would not refuse (a tenant's key never sees an owner-only label)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from seam.apps.web.access import OWNER_PREFIXES
from seam.apps.web.auth import Principal
from seam.apps.web.control.deps import Control

# (id, visible label, the API prefix it is reached by): the navigation bar, in order.
SECTIONS: tuple[tuple[str, str, str], ...] = (
    ("chat", "Chat", "/api/sessions"),
    ("sessions", "Sessions", "/api/sessions"),
    ("cron", "Cron", "/api/cron"),
    ("memory", "Memory", "/api/memory"),
    ("personalities", "Personalities", "/api/personalities"),
    ("skills", "Skills", "/api/skills"),
    ("mcp", "MCP", "/api/mcp"),
    ("approvals", "Approvals", "/api/approvals"),
    ("usage", "Usage", "/api/usage"),
    ("logs", "Logs", "/api/logs"),
    ("channels", "Channels", "/api/channels"),
    ("keys", "Keys", "/api/keys"),
    ("settings", "Settings", "/api/settings"),
)
# What a `chat` key reaches: the conversation and its sessions, nothing else.
CHAT_SCOPE_SECTIONS = ("chat", "sessions")


def visible_sections(who: Principal) -> list[dict[str, Any]]:
    """The sections `who` may open, with whether each is the owner's alone."""
    shown = []
    for sid, label, prefix in SECTIONS:
        owners = prefix.startswith(tuple(OWNER_PREFIXES))
        if owners and not who.owner:
            continue
        if who.scope == "chat" and sid not in CHAT_SCOPE_SECTIONS:
            continue
        shown.append({"id": sid, "label": label, "owner_only": owners})
    return shown


def add_routes(api: APIRouter, control: Control) -> None:
    @api.get("/control", tags=["control"])
    async def sections(request: Request) -> dict[str, Any]:
        """The dashboard's sections this caller may open, and who the caller is."""
        who: Principal = request.state.principal
        return {
            "sections": visible_sections(who),
            "who": {"tenant": who.tenant, "owner": who.owner, "scope": who.scope},
            "read_only": who.scope == "read",
        }


__all__ = ["SECTIONS", "add_routes", "visible_sections"]
