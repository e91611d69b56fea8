"""`POST /api/sessions/{name}/undo`, `GET /api/sessions/{name}/changes?turn=N` and
`POST /api/sessions/{name}/fork`: undo, changes and fork (docs/undo.md) over the services
every surface shares (`Runtime.checkpoints`, `seam.wiring.rewind.rewinder`).

Codes say what happened: 404 an unknown session (or another tenant's: a tenant reaches
only its own), 409 nothing to undo, a turn still running, checkpoints off, a taken name,
or files the person changed since the agent's turn (send `"force": true` to overwrite
them; their newer content is kept in a checkpoint first), 422 bad input. Each success
names the files restored. The key scopes apply as on every route (`access.py`): a `read`
key may GET changes, never undo or fork.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations, and
# `Who` is local to `add_undo_routes`.
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel, ConfigDict, Field

from seam.apps.web.auth import Principal
from seam.apps.web.errors import ApiError
from seam.apps.web.problems import Conflict, Invalid
from seam.contracts.checkpoints import CheckpointService, FileChange, NothingToUndo
from seam.contracts.execution import UNSETTLED
from seam.contracts.rewind import SessionExists, TurnOutOfRange, restore_verb

if TYPE_CHECKING:
    from seam.apps.web.backend import WebBackend


class UndoBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Overwrite files the person changed after the turn (kept in a checkpoint first).
    force: bool = False


class ForkBody(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    at: int = Field(ge=1)
    as_: str | None = Field(None, alias="as", min_length=1, max_length=200)
    restore: bool = False
    force: bool = False


def files(changes: tuple[FileChange, ...]) -> list[dict[str, str]]:
    """Each file a restore touched: its path, what the turn had done to it (A, M, D) and
    what the restore did (deleted, restored, recreated)."""
    return [{"path": c.path, "kind": c.kind, "action": restore_verb(c)} for c in changes]


def add_undo_routes(
    api: APIRouter, backend: "WebBackend", principal: Callable[..., Awaitable[Principal]]
) -> None:
    """The three routes, on the `/api` router (each scoped to the caller's tenant, the
    `principal` dependency's)."""
    Who = Annotated[Principal, Depends(principal)]

    @api.post("/sessions/{name}/undo")
    async def undo(who: Who, name: str, body: UndoBody | None = None) -> dict[str, Any]:
        key = await _idle_key(backend, who.tenant, name)
        service = _service(backend)
        try:
            plan = await service.plan_undo(key)
        except NothingToUndo as exc:
            raise Conflict(str(exc)) from None
        if plan.edited and not (body and body.force):
            raise Conflict(_edited(plan.edited, plan.turn))
        done = await service.undo(plan)
        return {
            "session": name,
            "turn": plan.turn,
            "restored": files(done.restored),
            "removed_messages": done.removed_messages,
            "kept": done.kept,
        }

    @api.get("/sessions/{name}/changes")
    async def changes(
        who: Who, name: str, turn: Annotated[int | None, Query(ge=1)] = None
    ) -> dict[str, Any]:
        key = await backend.existing_key(who.tenant, name)
        found = await _service(backend).changes(key, turn)
        if found is None:
            return {"session": name, "turn": turn, "files": [], "diff": ""}
        listed = [{"path": c.path, "kind": c.kind} for c in found.diff.changes]
        return {"session": name, "turn": found.turn, "files": listed, "diff": found.diff.text}

    @api.post("/sessions/{name}/fork", status_code=201)
    async def fork(who: Who, name: str, body: ForkBody) -> dict[str, Any]:
        return await _fork(backend, who.tenant, name, body)


async def _fork(backend: "WebBackend", tenant: str, name: str, body: ForkBody) -> dict[str, Any]:
    from seam.apps.web.sessions import new_session_name
    from seam.wiring.rewind import rewinder

    key = await backend.existing_key(tenant, name)
    new_name = body.as_ or new_session_name()
    try:
        new_key = backend.key_for(tenant, new_name)
    except Invalid as exc:
        raise ApiError(422, str(exc)) from None
    service = rewinder(backend.runtime)
    try:
        plan = await service.plan(key, body.at, fork=True)
    except TurnOutOfRange as exc:
        raise ApiError(422, str(exc)) from None
    if body.restore:
        await _check_idle(backend, key)
        if plan.edited and not body.force:
            raise Conflict(_edited(plan.edited, plan.turn))
    try:
        made = await service.fork(plan, new_key, restore=body.restore)
    except SessionExists:
        raise Conflict(f"a session named {new_name!r} exists") from None
    return {
        "session": new_name,
        "source": name,
        "at": body.at,
        "copied_messages": made.copied_messages,
        "restored": files(made.restored),
        "files_tracked": plan.files_tracked,
    }


def _service(backend: "WebBackend") -> CheckpointService:
    service = backend.runtime.checkpoints
    if service is None:
        raise Conflict("checkpoints are off on this server ([checkpoints] enabled = false)")
    return service


async def _idle_key(backend: "WebBackend", tenant: str, name: str) -> str:
    key = await backend.existing_key(tenant, name)
    await _check_idle(backend, key)
    return key


async def _check_idle(backend: "WebBackend", key: str) -> None:
    """Files are not restored under a running turn: cancel it first."""
    running = await backend.runtime.store.submissions(key, UNSETTLED)
    if running:
        raise Conflict("a turn of this session is running: cancel it first (POST .../cancel)")


def _edited(paths: tuple[str, ...], turn: int) -> str:
    return (
        f'you changed {", ".join(paths)} after turn {turn}; send "force": true to overwrite'
        " (your version is kept in a checkpoint first)"
    )


__all__ = ["ForkBody", "UndoBody", "add_undo_routes"]
