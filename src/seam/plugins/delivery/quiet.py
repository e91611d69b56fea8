"""What `seam dnd on` and `seam dnd off` do to deliveries already in the outbox.

A delivery made while quiet is enqueued held (`router.py`): until the window ends, or at
`HELD_FOREVER` under the indefinite toggle, which has no end to wait for. Turning the
toggle off *releases* those items: each is made claimable at once, or at the end of a
rule window still in force. Turning it on *holds* the router's non-urgent items that were
queued but not yet claimed. Both move an item's `next_attempt_at` with the outbox
contract's own rescheduling call, `mark_failed(key, note, retry_at=...)` ("pending again
from `retry_at`"): it adds no attempt, works on every backend, and leaves a note in
`last_error` saying why the item waited. Only the router's items are touched (their
payload says `urgent`); chat replies and urgent deliveries are never held.
"""

from __future__ import annotations

import math

from seam.contracts.dnd import DndChecker
from seam.contracts.outbox import Outbox, OutboxQuery
from seam.plugins.delivery.router import HELD_FOREVER, is_held, payload_of

# Pending items scanned per call; the outbox lists oldest first.
SCAN_LIMIT = 100_000
RELEASED_NOTE = "held for quiet hours; released by seam dnd off"
HELD_NOTE = "held: do not disturb is on (seam dnd off sends it)"


async def release_held(outbox: Outbox, dnd: DndChecker, now: float) -> int:
    """Make held deliveries due when quiet hours allow (now, or when a rule window in
    force ends); returns how many were moved. Nothing moves while still indefinitely quiet."""
    until = await dnd.quiet_until(now)
    if until is not None and math.isinf(until):
        return 0
    at = now if until is None else until
    moved = 0
    for item in await outbox.outbox_items(OutboxQuery(status="pending", limit=SCAN_LIMIT)):
        if is_held(item, now) and item.next_attempt_at > at:
            await outbox.mark_failed(item.key, RELEASED_NOTE, retry_at=at)
            moved += 1
    return moved


async def hold_queued(outbox: Outbox, now: float) -> int:
    """Hold the router's non-urgent items that are due and unclaimed (the toggle went on
    while they waited for a deliverer); returns how many."""
    held = 0
    for item in await outbox.outbox_items(OutboxQuery(status="pending", limit=SCAN_LIMIT)):
        data = payload_of(item)
        if data is None or data.get("urgent") or item.next_attempt_at > now:
            continue  # not ours, urgent, already held, or claimed by a deliverer now
        await outbox.mark_failed(item.key, HELD_NOTE, retry_at=HELD_FOREVER)
        held += 1
    return held


async def held_count(outbox: Outbox, now: float) -> int:
    """Deliveries waiting for quiet hours to end (for `seam dnd status`)."""
    items = await outbox.outbox_items(OutboxQuery(status="pending", limit=SCAN_LIMIT))
    return sum(1 for item in items if is_held(item, now))
