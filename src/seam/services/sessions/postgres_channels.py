"""The PostgreSQL store's NOTIFY channels, their payloads and the local wake-up they
set, in one leaf module.

The store, its listener and its mixins (outbox, approvals) all send or listen on these;
naming them here, below every one of them, keeps those modules from importing each other
for a constant (they used to, which made an import circle).
"""

from __future__ import annotations

import asyncio
import contextlib

# One channel for every Seam schema; the payload names the schema the work is in.
CHANNEL = "seam_submissions"
# Approval answers: payload the schema; each waiter of it reads its own row.
APPROVALS_CHANNEL = "seam_approvals"
# A notification on `CHANNEL` (the payload second) in a transaction whose commit does not
# wait for the WAL flush: `set_config(..., true)` lasts until the statement's own
# transaction ends, its commit.
NOTIFY_RELAXED = "SELECT set_config('synchronous_commit', 'off', true), pg_notify(%s, %s)"
# Seconds to wait for a connection, the pool's and the listener's alike.
CONNECT_TIMEOUT = 10.0


def outbox_note(schema: str) -> str:
    """The NOTIFY payload on the store's channel that means "an item was enqueued"."""
    return f"{schema}:outbox"


async def wait_and_clear(event: asyncio.Event, seconds: float) -> None:
    """Wait up to `seconds` for the local wake-up a notification sets (work admitted, an
    item enqueued), then clear it for the next wait."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()
    event.clear()


__all__ = [
    "APPROVALS_CHANNEL",
    "CHANNEL",
    "CONNECT_TIMEOUT",
    "NOTIFY_RELAXED",
    "outbox_note",
    "wait_and_clear",
]
