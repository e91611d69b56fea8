"""The outbox on SQLite: outgoing messages in the session file, a mixin of
`SQLiteSessionStore` (see `seam.contracts.outbox` for the promises).

Every write is one transaction on the store's writer thread (`sqlite_threads`), so
`claim_due` selects and leases its batch in one `BEGIN IMMEDIATE`: another store object,
in this process or another, waits for the write lock and then sees the leases, and two
claimers never take the same item. Reads run on the reader threads. `wait_for_outbox`
wakes at once for an item enqueued through this object and otherwise polls the file for
a new row (SQLite has no NOTIFY).
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import Callable, Sequence
from functools import partial

from seam.contracts.outbox import ALL_ITEMS, OutboxItem, OutboxItemNotFound, OutboxQuery, Outgoing
from seam.services.sessions.outbox_rows import (
    OUTBOX_COLUMNS,
    ItemsDialect,
    items_query,
    outbox_from_row,
)
from seam.services.sessions.sqlite_threads import SQLiteThreads
from seam.services.sessions.sqlite_wait import woken

# The migration `SQLiteSessionStore` appends: one row per outgoing message. Idempotent, so a
# schema whose version was wound back (a test of an older migration) runs it again.
OUTBOX_MIGRATION: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS outbox (
        key TEXT PRIMARY KEY,
        target TEXT NOT NULL,
        payload TEXT NOT NULL,
        status TEXT NOT NULL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at REAL NOT NULL,
        last_error TEXT,
        delivered_id TEXT,
        source TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS outbox_due ON outbox (status, next_attempt_at)",
    "CREATE INDEX IF NOT EXISTS outbox_source ON outbox (source) WHERE source IS NOT NULL",
)

# A literal prefix match (LIKE would treat `_` and `%` in a path as patterns).
_PREFIX = "substr(target, 1, length(:prefix)) = :prefix"
_ITEMS = ItemsDialect(named=lambda name: f":{name}", starts_with=_PREFIX, tie_break="rowid")


class SQLiteOutbox:
    _clock: Callable[[], float]
    _threads: SQLiteThreads
    _outbox_wake: asyncio.Event
    # The newest row (rowid) the last `wait_for_outbox` saw; None before the first.
    _outbox_seen: int | None = None

    async def enqueue(self, key: str, message: Outgoing) -> OutboxItem:
        def write(db: sqlite3.Connection) -> tuple[OutboxItem, bool]:
            now = self._clock()
            inserted = db.execute(
                "INSERT INTO outbox (key, target, payload, status, created_at, updated_at,"
                " next_attempt_at, source) VALUES (?, ?, ?, 'pending', ?, ?, ?, ?)"
                " ON CONFLICT (key) DO NOTHING",
                (key, message.target, message.payload, now, now, message.due(now), message.source),
            ).rowcount
            return _must(db, key), inserted == 1

        item, inserted = await self._threads.write(write)
        if inserted:
            self._outbox_wake.set()
        return item

    async def claim_due(
        self, target_prefix: str, owner: str, *, lease: float, limit: int = 50
    ) -> list[OutboxItem]:
        def write(db: sqlite3.Connection) -> list[OutboxItem]:
            now = self._clock()
            keys = [
                row[0]
                for row in db.execute(
                    f"SELECT key FROM outbox WHERE status = 'pending' AND next_attempt_at <= :now"
                    f" AND {_PREFIX} ORDER BY created_at, rowid LIMIT :limit",
                    {"now": now, "prefix": target_prefix, "limit": max(limit, 0)},
                ).fetchall()
            ]
            db.executemany(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, updated_at = ?"
                " WHERE key = ?",
                [(now + lease, now, key) for key in keys],
            )
            return [_must(db, key) for key in keys]

        return await self._threads.write(write)

    async def mark_sent(self, key: str, *, delivered_id: str | None = None) -> OutboxItem:
        def write(db: sqlite3.Connection) -> OutboxItem:
            if _must(db, key).status != "sent":
                db.execute(
                    "UPDATE outbox SET status = 'sent', delivered_id = ?, updated_at = ?"
                    " WHERE key = ?",
                    (delivered_id, self._clock(), key),
                )
            return _must(db, key)

        return await self._threads.write(write)

    async def mark_failed(self, key: str, error: str, *, retry_at: float | None) -> OutboxItem:
        def write(db: sqlite3.Connection) -> OutboxItem:
            item = _must(db, key)
            if item.status == "sent":
                return item  # a late report from a deliverer whose lease ran out
            now = self._clock()
            if retry_at is None:
                db.execute(
                    "UPDATE outbox SET status = 'failed', last_error = ?, updated_at = ?"
                    " WHERE key = ?",
                    (error, now, key),
                )
            else:
                db.execute(
                    "UPDATE outbox SET status = 'pending', last_error = ?, next_attempt_at = ?,"
                    " updated_at = ? WHERE key = ?",
                    (error, retry_at, now, key),
                )
            return _must(db, key)

        return await self._threads.write(write)

    async def outbox_item(self, key: str) -> OutboxItem | None:
        return await self._threads.read(partial(_row, key=key))

    async def outbox_items(self, query: OutboxQuery = ALL_ITEMS) -> Sequence[OutboxItem]:
        sql, params = items_query(_ITEMS, query)

        def read(db: sqlite3.Connection) -> list[OutboxItem]:
            return [outbox_from_row(row) for row in db.execute(sql, params).fetchall()]

        return await self._threads.read(read)

    async def wait_for_outbox(self, seconds: float) -> None:
        """Until an item is enqueued (through this object: at once; by another process:
        within `sqlite_wait.POLL_SECONDS`) or `seconds` pass. "New" is measured against the
        newest row the previous wait saw, so an item enqueued between two waits is not
        missed."""
        deadline = time.monotonic() + seconds
        if self._outbox_seen is None:
            self._outbox_seen = await self._threads.read(_newest)
        while True:
            newest = await self._threads.read(_newest)
            if newest != self._outbox_seen:
                self._outbox_seen = newest
                self._outbox_wake.clear()
                return
            woke = await woken(self._outbox_wake, deadline)
            if woke is None:
                return
            if woke:
                self._outbox_seen = await self._threads.read(_newest)
                return


def _row(db: sqlite3.Connection, key: str) -> OutboxItem | None:
    row = db.execute(f"SELECT {OUTBOX_COLUMNS} FROM outbox WHERE key = ?", (key,)).fetchone()
    return None if row is None else outbox_from_row(row)


def _must(db: sqlite3.Connection, key: str) -> OutboxItem:
    item = _row(db, key)
    if item is None:
        raise OutboxItemNotFound(f"no outbox item {key!r}")
    return item


def _newest(db: sqlite3.Connection) -> int:
    row = db.execute("SELECT max(rowid) FROM outbox").fetchone()
    return int(row[0] or 0)
