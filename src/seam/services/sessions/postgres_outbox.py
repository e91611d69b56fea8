"""The outbox on PostgreSQL: outgoing messages in the shared database, a mixin of
`PostgresStore` (see `seam.contracts.outbox` for the promises).

`claim_due` leases its batch in one statement whose rows are picked `FOR UPDATE SKIP
LOCKED`: concurrent deliverers, on any machine, never wait on each other and never take
the same item (a row another claimer leased meanwhile fails the re-checked `WHERE` once
its lease is committed). `enqueue` NOTIFYs the store's work channel with an outbox
payload, so a deliverer waiting in `wait_for_outbox` wakes at once; back-off and lease
expiry are found by its periodic look (the wait's timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from psycopg import AsyncConnection

from seam.contracts.outbox import ALL_ITEMS, OutboxItem, OutboxItemNotFound, OutboxQuery, Outgoing
from seam.services.sessions.outbox_rows import (
    OUTBOX_COLUMNS,
    ItemsDialect,
    items_query,
    outbox_from_row,
)
from seam.services.sessions.postgres_channels import CHANNEL, outbox_note, wait_and_clear
from seam.services.sessions.postgres_rows import Params, encode

# The migration `postgres_schema` appends: one row per outgoing message. Idempotent, so a
# schema whose version was wound back (a test of an older migration) runs it again.
OUTBOX_MIGRATION: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS outbox (
        key text PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        target text NOT NULL,
        payload bytea NOT NULL,
        status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
        created_at double precision NOT NULL,
        updated_at double precision NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at double precision NOT NULL,
        last_error bytea,
        delivered_id text,
        source text
    )""",
    "CREATE INDEX IF NOT EXISTS outbox_due ON outbox (status, next_attempt_at)",
    "CREATE INDEX IF NOT EXISTS outbox_source ON outbox (source) WHERE source IS NOT NULL",
)

_ITEMS = ItemsDialect(
    named=lambda name: f"%({name})s", starts_with="starts_with(target, %(prefix)s)", tie_break="seq"
)
_COLUMNS = ", ".join(f"o.{name.strip()}" for name in OUTBOX_COLUMNS.split(","))


class PostgresOutbox:
    """Mixed into `PostgresStore`, which provides the pool, clock and listener."""

    _clock: Callable[[], float]
    _schema: str
    _outbox_wake: asyncio.Event

    if TYPE_CHECKING:

        def _tx(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        async def _one(self, query: Any, params: Params = None) -> Any: ...

        async def _all(self, query: Any, params: Params = None) -> list[Any]: ...

        async def _ensure_listening(self) -> None: ...

    async def enqueue(self, key: str, message: Outgoing) -> OutboxItem:
        now = self._clock()
        async with self._tx() as conn:
            cur = await conn.execute(
                "INSERT INTO outbox (key, target, payload, status, created_at, updated_at,"
                " next_attempt_at, source) VALUES (%s, %s, %s, 'pending', %s, %s, %s, %s)"
                f" ON CONFLICT (key) DO NOTHING RETURNING {OUTBOX_COLUMNS}",
                (
                    key,
                    message.target,
                    encode(message.payload),
                    now,
                    now,
                    message.due(now),
                    message.source,
                ),
            )
            row = await cur.fetchone()
            if row is not None:
                # Delivered when the transaction commits.
                await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, outbox_note(self._schema)))
        if row is None:
            return await self._must(key)
        self._outbox_wake.set()
        return outbox_from_row(row)

    async def claim_due(
        self, target_prefix: str, owner: str, *, lease: float, limit: int = 50
    ) -> list[OutboxItem]:
        now = self._clock()
        rows = await self._all(
            "WITH picked AS ("
            "  SELECT key FROM outbox"
            "  WHERE status = 'pending' AND next_attempt_at <= %(now)s"
            "  AND starts_with(target, %(prefix)s)"
            "  ORDER BY created_at, seq LIMIT %(limit)s FOR UPDATE SKIP LOCKED)"
            " UPDATE outbox AS o SET attempts = o.attempts + 1,"
            " next_attempt_at = %(until)s, updated_at = %(now)s"
            f" FROM picked WHERE o.key = picked.key RETURNING {_COLUMNS}, o.seq",
            {"now": now, "prefix": target_prefix, "limit": max(limit, 0), "until": now + lease},
        )
        rows.sort(key=lambda row: (row[4], row[-1]))  # created_at, seq: oldest first
        return [outbox_from_row(row[:-1]) for row in rows]

    async def mark_sent(self, key: str, *, delivered_id: str | None = None) -> OutboxItem:
        row = await self._one(
            "UPDATE outbox SET status = 'sent', delivered_id = %s, updated_at = %s"
            f" WHERE key = %s AND status <> 'sent' RETURNING {OUTBOX_COLUMNS}",
            (delivered_id, self._clock(), key),
        )
        return await self._must(key) if row is None else outbox_from_row(row)

    async def mark_failed(self, key: str, error: str, *, retry_at: float | None) -> OutboxItem:
        # A sent item stays sent: a late report from a deliverer whose lease ran out.
        if retry_at is None:
            query = (
                "UPDATE outbox SET status = 'failed', last_error = %(error)s, updated_at = %(now)s"
            )
        else:
            query = (
                "UPDATE outbox SET status = 'pending', last_error = %(error)s,"
                " next_attempt_at = %(retry_at)s, updated_at = %(now)s"
            )
        row = await self._one(
            query + f" WHERE key = %(key)s AND status <> 'sent' RETURNING {OUTBOX_COLUMNS}",
            {"error": encode(error), "now": self._clock(), "retry_at": retry_at, "key": key},
        )
        return await self._must(key) if row is None else outbox_from_row(row)

    async def outbox_item(self, key: str) -> OutboxItem | None:
        row = await self._one(f"SELECT {OUTBOX_COLUMNS} FROM outbox WHERE key = %s", (key,))
        return None if row is None else outbox_from_row(row)

    async def outbox_items(self, query: OutboxQuery = ALL_ITEMS) -> Sequence[OutboxItem]:
        rows = await self._all(*items_query(_ITEMS, query))
        return [outbox_from_row(row) for row in rows]

    async def wait_for_outbox(self, seconds: float) -> None:
        """Until an item is enqueued anywhere (the NOTIFY) or `seconds` pass."""
        await self._ensure_listening()
        await wait_and_clear(self._outbox_wake, seconds)

    async def _must(self, key: str) -> OutboxItem:
        item = await self.outbox_item(key)
        if item is None:
            raise OutboxItemNotFound(f"no outbox item {key!r}")
        return item
