"""The editor's thread list and what it shows of each thread: `session/list` (the
tenant's stored sessions, newest first, in pages), a thread's title as the runtime names
it (`session_info_update`), and its model as a session config option (category "model").

Titles come from the runtime's title hook after a thread's first exchange (the first
message cut short, or a side model's few words, written in the background); a thread is
told its title once it has one, and again whenever it changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime
from typing import Any

from acp.schema import (
    ListSessionsResponse,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfo,
    SessionInfoUpdate,
)

from seam.contracts.sessions import SessionInfo as StoredSession
from seam.wiring.runtime import Runtime

log = logging.getLogger("seam.acp")

PAGE = 50  # threads in one `session/list` answer
MODEL_OPTION = "model"  # the config option's id


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _own_name(runtime: Runtime, key: str) -> str | None:
    """The public name of a session of this runtime's tenant (None: someone else's, or a
    reserved name)."""
    name = runtime.session_name_of(key)
    try:
        return name if runtime.session_key_for(name) == key else None
    except ValueError:
        return None


async def list_threads(
    runtime: Runtime, cwd: str | None, cursor: str | None
) -> ListSessionsResponse:
    """One page of the tenant's sessions (those working in `cwd` when given), newest
    first; `cursor` is where the page starts (from the previous page's `next_cursor`)."""
    try:
        start = int(cursor or 0)
    except ValueError:
        start = -1
    if start < 0:
        raise ValueError(f"not a cursor this agent gave: {cursor!r}")
    await runtime.open()
    default = runtime.working_dir
    wanted = start + PAGE + 1
    fetch = wanted
    while True:  # other tenants' and other projects' sessions are skipped: read more
        infos = await runtime.list_sessions(fetch)
        rows = [_row(runtime, info, default) for info in infos]
        kept = [r for r in rows if r is not None and (cwd is None or r.cwd == cwd)]
        if len(kept) >= wanted or len(infos) < fetch:
            break
        fetch *= 4
    page = kept[start : start + PAGE]
    more = len(kept) > start + PAGE
    return ListSessionsResponse(sessions=page, next_cursor=str(start + PAGE) if more else None)


def _row(runtime: Runtime, info: StoredSession, default: str) -> SessionInfo | None:
    name = _own_name(runtime, info.key)
    if name is None:
        return None
    return SessionInfo(
        session_id=name,
        cwd=info.working_dir or default,
        title=info.title or None,
        updated_at=_iso(info.updated_at),
    )


def model_option(choices: list[str], current: str) -> list[Any]:
    """The session's model as ACP config options (none when there is nothing to pick)."""
    if not choices:
        return []
    option = SessionConfigOptionSelect(
        id=MODEL_OPTION,
        name="Model",
        category="model",
        type="select",
        current_value=current or choices[0],
        options=[SessionConfigSelectOption(value=ref, name=ref) for ref in choices],
    )
    return [option]


class Titles:
    """Tells each thread its title when the runtime has named it (or renamed it)."""

    def __init__(self, runtime: Runtime, conn: Any) -> None:
        self.runtime = runtime
        self.conn = conn
        self.told: dict[str, str] = {}
        self._waiting: set[asyncio.Task[None]] = set()

    async def after_turn(self, name: str) -> None:
        """After a turn: the title if it is there now, else once the title hook's
        background work (a side model's title) is done."""
        if await self.tell(name):
            return
        titles = self.runtime.titles
        if titles is None or not titles.pending:
            return
        task = asyncio.ensure_future(self._later(name))
        self._waiting.add(task)
        task.add_done_callback(self._waiting.discard)

    async def _later(self, name: str) -> None:
        with contextlib.suppress(Exception):
            titles = self.runtime.titles
            if titles is not None:
                await titles.drain()
            await self.tell(name)

    async def tell(self, name: str) -> bool:
        """Send `session_info_update` when the stored title is new; whether there is one."""
        try:
            info = await self.runtime.store.get(self.runtime.session_key_for(name))
        except Exception:
            log.warning("could not read the title of %s", name, exc_info=True)
            return False
        title = info.title if info is not None else None
        if not title:
            return False
        if self.told.get(name) != title:
            self.told[name] = title
            update = SessionInfoUpdate(
                session_update="session_info_update",
                title=title,
                updated_at=_iso(info.updated_at) if info is not None else None,
            )
            await self.conn.session_update(session_id=name, update=update)
        return True

    def cancel(self) -> None:
        for task in list(self._waiting):
            task.cancel()


__all__ = ["MODEL_OPTION", "PAGE", "Titles", "list_threads", "model_option"]
