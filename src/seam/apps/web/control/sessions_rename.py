"""Renaming a tenant's session: its public name is part of its durable key
(`agent-session:["<tenant>","<harness>","<name>"]`), so a rename moves the session to the
key of the new name, where `seam sessions list`, the chat page and every other surface
find it at once.

The SQLite and PostgreSQL stores move the session in one transaction with everything
keyed by it (`SessionRenamer`: transcript, usage records, submissions, event log,
compaction summaries, approval answers, checkpoints), so undo, usage and the event stream
see one session. A store without that operation (the in-memory one) gets a copy through
the public operations instead: the spec, title, ended mark, transcript and usage totals
(as one record); the old turns' history stays behind there. A running turn refuses the
rename (409): cancel it first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from seam.apps.web.problems import Conflict
from seam.contracts.checkpoints import RenamesCheckpoints
from seam.contracts.execution import UNSETTLED
from seam.contracts.sessions import (
    NewSession,
    SessionInfo,
    SessionRenamer,
    UsageRecord,
    UsageTotals,
)

if TYPE_CHECKING:
    from seam.apps.web.backend import WebBackend

# The usage record a rename carries the old key's totals in.
MOVED_PROVIDER = "seam"
MOVED_MODEL = "renamed-session"


async def rename_session(backend: WebBackend, tenant: str, name: str, new_name: str) -> str:
    """Move `tenant`'s session `name` to `new_name`; returns the new name. Raises NotFound
    (no such session), Invalid (a bad new name), Conflict (taken, or a turn running)."""
    old_key = await backend.existing_key(tenant, name)
    new_key = backend.key_for(tenant, new_name)
    if new_key == old_key:
        return name
    store = backend.runtime.sessions
    if await store.get(new_key) is not None:
        raise Conflict(f"a session named {new_name!r} exists")
    if await backend.runtime.store.submissions(old_key, UNSETTLED):
        raise Conflict("a turn of this session is running: cancel it first, then rename")
    if isinstance(store, SessionRenamer):
        if not await _rename(backend, store, old_key, new_key):
            raise Conflict(f"session {name!r} was deleted meanwhile")
        backend.runtime.drop_session(old_key)
        return new_name
    info = await store.get(old_key)
    if info is None:  # deleted meanwhile
        raise Conflict(f"session {name!r} was deleted meanwhile")
    await _copy(backend, info, new_key)
    backend.runtime.drop_session(old_key)
    await store.delete(old_key)
    if info.title:  # titles are unique: set once the old session has let go of it
        await store.set_title(new_key, info.title)
    if info.ended:
        await store.end(new_key)
    return new_name


async def _rename(backend: WebBackend, store: SessionRenamer, old: str, new: str) -> bool:
    """The store's rename, with the session's checkpoints carried to the new key around it
    when undo is on (so undo reaches the turns before the rename)."""
    checkpoints = backend.runtime.checkpoints
    if isinstance(checkpoints, RenamesCheckpoints):
        return await checkpoints.rename_session(old, new, lambda: store.rename(old, new))
    return await store.rename(old, new)


async def _copy(backend: WebBackend, info: SessionInfo, new_key: str) -> None:
    """The new key's session: the old one's spec, transcript and usage totals."""
    store = backend.runtime.sessions
    spec = NewSession(
        personality=info.personality, tenant=info.tenant, tools=info.tools, model=info.model
    )
    await store.create(new_key, spec)
    if info.working_dir is not None:
        await store.set_working_dir(new_key, info.working_dir)
    messages = await store.messages(info.key)
    if messages:
        await store.append(new_key, messages)
    record = moved_usage(await store.usage_totals(info.key))
    if record is not None:
        await store.record_usage(new_key, record)


def moved_usage(totals: UsageTotals) -> UsageRecord | None:
    """The old key's totals as one record (None when it made no model call); its cost is
    unknown only when none of its calls had a price."""
    if not totals.calls:
        return None
    priced = totals.calls > totals.unpriced_calls
    return UsageRecord(
        MOVED_PROVIDER, MOVED_MODEL, totals.usage, totals.cost_usd if priced else None
    )


__all__ = ["moved_usage", "rename_session"]
