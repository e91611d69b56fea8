"""The dashboard's Approvals section: pending approvals across sessions; the remembered always-
allow and always-deny lists, with removal.

Owner-only (`access.py`): a lasting answer or a removal changes the rules for every
session. Pending requests are read from the event log on each request (whichever process
runs the turn), and answered the way the chat answers them (`apps/web/approvals.py`);
the remembered lists are `$SEAM_HOME/approvals.json`, read fresh each time, and a removal
is seen by every running gate on its next command (the gate re-reads a changed file).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from seam.apps.web.approvals import answer, chosen_decision
from seam.apps.web.control.deps import Control
from seam.apps.web.errors import ApiError
from seam.wiring.dashboard import (
    ApprovalCache,
    ApprovalFileError,
    WaitingApproval,
    parse_session_storage_key,
    remembered_approvals,
    waiting_approvals,
)
from seam.wiring.settings import Settings

RememberedKind = Literal["always", "always_deny"]
MAX_COMMAND = 100_000


class PendingAnswer(BaseModel):
    """One waiting request, named as `GET /api/approvals/pending` lists it, and the answer."""

    model_config = ConfigDict(extra="forbid")
    tenant: str = Field(min_length=1, max_length=200)
    session: str = Field(min_length=1, max_length=500)
    call_id: str = Field(min_length=1, max_length=500)
    decision: Literal["once", "session", "always", "deny", "never"]


def pending_entry(waiting: WaitingApproval) -> dict[str, Any]:
    """A waiting request as the page lists it: whose session, which call, what it runs."""
    tenant, _, name = parse_session_storage_key(waiting.session_key)
    return {
        "tenant": tenant,
        "session": name,
        "call_id": waiting.call_id,
        "tool": waiting.tool,
        "command": waiting.command,
        "reason": waiting.reason,
        "since": waiting.since,
    }


def _cache(settings: Settings) -> ApprovalCache:
    try:
        return remembered_approvals(settings)
    except ApprovalFileError as exc:
        raise ApiError(409, str(exc)) from None


def add_routes(api: APIRouter, control: Control) -> None:
    runtime = control.backend.runtime

    async def waiting() -> list[WaitingApproval]:
        """From the log, and this process's turns from the stream hub (not stored yet)."""
        return await waiting_approvals(runtime.store, control.backend.hub.current)

    @api.get("/approvals/pending", tags=["control"])
    async def pending() -> dict[str, Any]:
        """The approval requests waiting for a person across every session and tenant
        (session, tool, command, reason, and `since`: when the waiting turn began)."""
        return {"pending": [pending_entry(w) for w in await waiting()]}

    @api.post("/approvals/pending", tags=["control"])
    async def answer_pending(body: PendingAnswer) -> dict[str, Any]:
        """Answer one waiting request (once, session, always, deny, never), as the chat's
        buttons do; 409 when it is no longer waiting."""
        chosen = chosen_decision(body.decision)
        for one in await waiting():
            entry = pending_entry(one)
            if (entry["tenant"], entry["session"], entry["call_id"]) == (
                body.tenant,
                body.session,
                body.call_id,
            ):
                await answer(runtime, one.session_key, body.session, body.call_id, chosen)
                return {**entry, "decision": body.decision}
        raise ApiError(409, f"no tool call {body.call_id!r} of session {body.session!r} is waiting")

    @api.get("/approvals/remembered", tags=["control"])
    async def remembered() -> dict[str, Any]:
        """The commands (and MCP tools) the person always allows and always denies, as
        every gate of this home reads them now."""
        cache = _cache(control.need_settings())
        try:
            lists = cache.remembered()
        except ApprovalFileError as exc:
            raise ApiError(409, str(exc)) from None
        return {**lists, "path": str(cache.path)}

    @api.delete("/approvals/remembered/{kind}", tags=["control"])
    async def forget(kind: RememberedKind, command: str) -> dict[str, Any]:
        """Remove `command` from the always-allow (`always`) or always-deny
        (`always_deny`) list; the next identical command is asked about again."""
        if len(command) > MAX_COMMAND:
            raise ApiError(400, f"command is longer than {MAX_COMMAND} characters")
        cache = _cache(control.need_settings())
        try:
            removed = cache.forget(kind, command)
        except ApprovalFileError as exc:
            raise ApiError(409, str(exc)) from None
        if not removed:
            raise ApiError(404, f"{command!r} is not in the {kind} list")
        return {"kind": kind, "command": command, "removed": True}


__all__ = ["add_routes", "pending_entry"]
