"""The empty stack's outbox: outgoing messages in process memory.

The reference semantics for the durable stores' outboxes (the conformance suite runs
against all of them). Every method finishes without awaiting, so each is atomic here,
which is what makes `claim_due` hand an item to one claimer only. `wait_for_outbox` wakes
on an `asyncio.Event` set by `enqueue`, the in-process stand-in for PostgreSQL's NOTIFY.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from seam.contracts.outbox import ALL_ITEMS, OutboxItem, OutboxItemNotFound, OutboxQuery, Outgoing


class InMemoryOutbox:
    """An `Outbox` in a dict; mixed into `InMemoryExecutionStore`, usable on its own."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        # Insertion order is enqueue order: the tie-break of "oldest first".
        self._outbox: dict[str, OutboxItem] = {}
        self._outbox_wake = asyncio.Event()

    async def enqueue(self, key: str, message: Outgoing) -> OutboxItem:
        existing = self._outbox.get(key)
        if existing is not None:
            return existing
        now = self._clock()
        item = OutboxItem(
            key=key,
            target=message.target,
            payload=message.payload,
            status="pending",
            created_at=now,
            updated_at=now,
            next_attempt_at=message.due(now),
            source=message.source,
        )
        self._outbox[key] = item
        self._outbox_wake.set()
        return item

    async def claim_due(
        self, target_prefix: str, owner: str, *, lease: float, limit: int = 50
    ) -> list[OutboxItem]:
        now = self._clock()
        due = [
            item
            for item in self._outbox.values()
            if item.status == "pending"
            and item.target.startswith(target_prefix)
            and item.next_attempt_at <= now
        ]
        due.sort(key=lambda item: item.created_at)  # stable: enqueue order breaks ties
        claimed = []
        for item in due[: max(limit, 0)]:
            claimed.append(
                self._put_outbox(item, attempts=item.attempts + 1, next_attempt_at=now + lease)
            )
        return claimed

    async def mark_sent(self, key: str, *, delivered_id: str | None = None) -> OutboxItem:
        item = self._outbox_row(key)
        if item.status == "sent":
            return item
        return self._put_outbox(item, status="sent", delivered_id=delivered_id)

    async def mark_failed(self, key: str, error: str, *, retry_at: float | None) -> OutboxItem:
        item = self._outbox_row(key)
        if item.status == "sent":
            # A late report from a deliverer whose lease ran out while another delivered.
            return item
        if retry_at is None:
            return self._put_outbox(item, status="failed", last_error=error)
        return self._put_outbox(item, status="pending", last_error=error, next_attempt_at=retry_at)

    async def outbox_item(self, key: str) -> OutboxItem | None:
        return self._outbox.get(key)

    async def outbox_items(self, query: OutboxQuery = ALL_ITEMS) -> Sequence[OutboxItem]:
        found = [item for item in self._outbox.values() if query.matches(item)]
        found.sort(key=lambda item: item.created_at)
        return found[: max(query.limit, 0)]

    async def wait_for_outbox(self, seconds: float) -> None:
        await wait_and_clear(self._outbox_wake, seconds)

    def _outbox_row(self, key: str) -> OutboxItem:
        try:
            return self._outbox[key]
        except KeyError:
            raise OutboxItemNotFound(f"no outbox item {key!r}") from None

    def _put_outbox(self, item: OutboxItem, **changes: object) -> OutboxItem:
        updated = replace(item, updated_at=self._clock(), **changes)  # type: ignore[arg-type]
        self._outbox[item.key] = updated
        return updated


async def wait_and_clear(event: asyncio.Event, seconds: float) -> None:
    """Wait up to `seconds` for `event`, then clear it for the next wait: an in-process
    wake-up (work admitted, an item enqueued) that a waiter consumes."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()
    event.clear()
