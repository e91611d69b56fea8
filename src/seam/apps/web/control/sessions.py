"""The dashboard's Sessions section: the caller's tenant's sessions (`GET /api/sessions`,
which lists each one's tokens and cost, and searches with `?q=`), renamed, deleted,
exported, forked and undone.

Its own routes: `PATCH /api/sessions/{name}` (rename, `sessions_rename.py`) and
`GET /api/sessions/{name}/export?format=markdown|json` (a download; the JSON is what
`seam sessions export NAME` prints, the markdown is made from it). Delete, fork and undo
are the existing `DELETE /api/sessions/{name}`, `POST .../fork` and `POST .../undo`.
Every route resolves names within the caller's tenant, so a tenant's key never reaches
another tenant's sessions.
"""

# No `from __future__ import annotations`: FastAPI reads the routes' annotations.
import json
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Depends, Query, Request, Response
from pydantic import BaseModel, ConfigDict, Field

from seam.apps.cli.sessions import named_export
from seam.apps.web.auth import Principal
from seam.apps.web.control.deps import Control
from seam.apps.web.control.sessions_export import to_markdown
from seam.apps.web.control.sessions_rename import rename_session

EXPORT_TYPES = {"json": "application/json", "markdown": "text/markdown; charset=utf-8"}
EXPORT_SUFFIXES = {"json": "json", "markdown": "md"}


class RenameBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=200)


async def _principal(request: Request) -> Principal:
    who: Principal = request.state.principal
    return who


Who = Annotated[Principal, Depends(_principal)]


def download_name(name: str, suffix: str) -> str:
    """A Content-Disposition value naming the file after the session: an ASCII fallback
    and the exact name (RFC 6266 `filename*`), so no name can break the header."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:100] or "session"
    return f"attachment; filename=\"{safe}.{suffix}\"; filename*=UTF-8''{quote(name)}.{suffix}"


def add_routes(api: APIRouter, control: Control) -> None:
    """Rename and export (the section's other actions use the sessions' existing routes)."""
    backend = control.backend

    @api.patch("/sessions/{name}", tags=["sessions"])
    async def rename(who: Who, name: str, body: RenameBody) -> dict[str, Any]:
        """Rename one of your sessions: 409 when the new name is taken or a turn is
        running, 400 for a name that is not allowed. `seam sessions list` shows the new
        name at once."""
        new_name = await rename_session(backend, who.tenant, name, body.name)
        return {"name": new_name, "previous": name}

    @api.get("/sessions/{name}/export", tags=["sessions"])
    async def export(
        who: Who,
        name: str,
        format: Annotated[Literal["markdown", "json"], Query()] = "json",
    ) -> Response:
        """Download one of your sessions as JSON (what `seam sessions export NAME` prints)
        or as a markdown transcript."""
        key = await backend.existing_key(who.tenant, name)
        exported = named_export(backend.runtime, await backend.runtime.sessions.export(key))
        if format == "markdown":
            text = to_markdown(exported)
        else:
            text = json.dumps(exported, ensure_ascii=False, indent=2) + "\n"
        disposition = download_name(name, EXPORT_SUFFIXES[format])
        return Response(
            text, media_type=EXPORT_TYPES[format], headers={"Content-Disposition": disposition}
        )


__all__ = ["RenameBody", "add_routes", "download_name"]
