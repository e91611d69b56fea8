"""The dashboard's Logs section: the structured log (`$SEAM_HOME/logs/seam.jsonl`), live,
filtered by level, session and surface. Owner-only (`access.OWNER_PREFIXES`).

`GET /api/logs` answers the last lines that pass the filter; `GET /api/logs/stream` sends
the new ones as Server-Sent Events while the page listens (logs_read.py). Both read the
files fresh on every request, as `seam logs` does, so what any process writes is seen.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from seam.apps.cli.logs import LEVELS, LogFilter
from seam.apps.web.control.deps import Control
from seam.apps.web.control.logs_read import last_lines, shown, stream_lines
from seam.apps.web.errors import ApiError
from seam.wiring.logs import JSON_LOG_NAME
from seam.wiring.secrets import secret_redactor

DEFAULT_LIMIT = 200
MAX_LIMIT = 1000

Level = Annotated[str, Query(max_length=20, description="The lowest level: debug ... critical.")]
Session = Annotated[str | None, Query(max_length=200, description="Only this session's lines.")]
Surface = Annotated[
    str | None,
    Query(max_length=40, description="Only lines this surface wrote: cli, web, gateway, ..."),
]


def log_filter(level: str, session: str | None, surface: str | None) -> LogFilter:
    """The filter the query asks for; an unknown level is a 400 naming the known ones."""
    wanted = LEVELS.get(level.strip().lower() or "debug")
    if wanted is None:
        raise ApiError(400, f"level must be one of {', '.join(LEVELS)}, not {level!r}")
    return LogFilter(session=session or None, level=wanted, surface=surface or None)


def add_routes(api: APIRouter, control: Control) -> None:
    """`GET /api/logs` and `GET /api/logs/stream`."""

    def log_path() -> Path:
        return control.need_settings().home / "logs" / JSON_LOG_NAME

    @api.get("/logs", tags=["control"])
    async def logs(
        level: Level = "debug",
        session: Session = None,
        surface: Surface = None,
        limit: Annotated[int, Query(ge=1, le=MAX_LIMIT)] = DEFAULT_LIMIT,
    ) -> dict[str, Any]:
        """The last `limit` lines of the structured log (rotated files too) at `level` or
        above, of `session` and `surface` when given; oldest first, secrets redacted."""
        keep = log_filter(level, session, surface)
        path = log_path()
        scrub = secret_redactor(control.settings)
        found = await asyncio.to_thread(last_lines, path, keep, limit)
        return {"lines": [shown(line, scrub) for line in found], "levels": list(LEVELS)}

    @api.get(
        "/logs/stream",
        tags=["control"],
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def stream(
        request: Request, level: Level = "debug", session: Session = None, surface: Surface = None
    ) -> StreamingResponse:
        """New lines of the structured log as they are written, as Server-Sent Events:
        `ready` once listening, then `lines` (a list of records) for each batch that
        passes the filter, and a heartbeat comment when idle. Follows rotation. It never
        ends by itself, so it answers only a client that asks for a stream (`Accept:
        text/event-stream`, as EventSource does); anything else gets a 406."""
        if "text/event-stream" not in request.headers.get("accept", ""):
            raise ApiError(406, "this route is an event stream: ask with Accept: text/event-stream")
        keep = log_filter(level, session, surface)
        body = stream_lines(log_path(), keep, secret_redactor(control.settings))
        return StreamingResponse(
            body,
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )


__all__ = ["add_routes", "log_filter"]
