"""The outbox: messages on their way out of Seam (chat replies, cron deliveries, alerts),
kept in the execution store so a crash between an answer and its delivery neither loses
nor doubles it.

One row per outgoing platform message, keyed by an idempotency key the producer derives
from what it answers (e.g. `"<submission id>:reply:0"`), so producing the same message
twice (a resumed turn, a redelivered update) enqueues it once. A deliverer claims due rows
with a lease, sends them, and records the outcome; a row whose deliverer died is claimed
again when its lease runs out. The payload is opaque JSON text: the store never reads it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

OutboxStatus = Literal["pending", "sent", "failed"]


class OutboxItemNotFound(LookupError):
    """`mark_sent` / `mark_failed` named a key the outbox does not hold."""


@dataclass(frozen=True, slots=True)
class OutboxItem:
    key: str  # the idempotency key, unique in the store
    target: str  # "telegram:<chat>[:<thread>]", "slack:<channel>", "file:<path>", ...
    payload: str  # JSON text for the deliverer (text, buttons, the message to edit, ...)
    status: OutboxStatus
    created_at: float
    updated_at: float
    attempts: int = 0  # delivery attempts so far (each claim counts one)
    next_attempt_at: float = 0.0  # not claimable before this (back-off, quiet hours, a lease)
    last_error: str | None = None
    delivered_id: str | None = None  # the platform's id of the delivered message
    source: str | None = None  # what produced it: a submission id, a cron run id, ...


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A message to enqueue (under its idempotency key): where it goes, what the
    deliverer sends, what produced it, and not before when (None: at once)."""

    target: str
    payload: str
    source: str | None = None
    not_before: float | None = None

    def due(self, now: float) -> float:
        """The new item's first `next_attempt_at`."""
        return now if self.not_before is None else self.not_before


@dataclass(frozen=True, slots=True)
class OutboxQuery:
    """Which items `outbox_items` lists: each filter applies when given; at most `limit`."""

    source: str | None = None
    target_prefix: str | None = None
    status: OutboxStatus | None = None
    limit: int = 100

    def matches(self, item: OutboxItem) -> bool:
        """Whether `item` passes the filters (the limit aside)."""
        return (
            (self.source is None or item.source == self.source)
            and (self.target_prefix is None or item.target.startswith(self.target_prefix))
            and (self.status is None or item.status == self.status)
        )


ALL_ITEMS = OutboxQuery()


@runtime_checkable
class Outbox(Protocol):
    """Outgoing messages, each delivered once: producers (a turn's reply, a cron run's
    delivery, an alert) `enqueue`; a deliverer per platform claims, sends and marks them;
    the delivery ledger and `seam doctor` read them back."""

    async def enqueue(self, key: str, message: Outgoing) -> OutboxItem:
        """Add a pending item; idempotent by `key` (an existing item is returned unchanged,
        whatever its status)."""
        ...

    async def claim_due(
        self, target_prefix: str, owner: str, *, lease: float, limit: int = 50
    ) -> list[OutboxItem]:
        """Atomically take up to `limit` pending items whose target starts with
        `target_prefix` and whose `next_attempt_at` has come, oldest first: each gets one
        more attempt and `next_attempt_at = now + lease`, so no other deliverer takes it
        while this one sends it."""
        ...

    async def mark_sent(self, key: str, *, delivered_id: str | None = None) -> OutboxItem:
        """Record a delivery; marking a sent item again changes nothing."""
        ...

    async def mark_failed(self, key: str, error: str, *, retry_at: float | None) -> OutboxItem:
        """Record a failed attempt: pending again from `retry_at`, or `failed` for good
        when `retry_at` is None."""
        ...

    async def outbox_item(self, key: str) -> OutboxItem | None: ...

    async def outbox_items(self, query: OutboxQuery = ALL_ITEMS) -> Sequence[OutboxItem]:
        """Items oldest first, filtered by what is given (the ledger and `seam doctor`)."""
        ...


@runtime_checkable
class OutboxWaker(Protocol):
    """Optional on an `Outbox`: a deliverer that finds it waits here between rounds
    instead of polling blindly, and wakes as soon as something is enqueued (PostgreSQL:
    a NOTIFY on the work channel; in memory: an event; SQLite: a short poll of the file).
    Returns after `seconds` at the latest, whether or not anything arrived."""

    async def wait_for_outbox(self, seconds: float) -> None: ...
