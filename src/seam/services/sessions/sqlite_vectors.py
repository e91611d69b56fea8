"""Message vectors on SQLite (`contracts/session_recall.MessageVectors`), for
`SQLiteSessionStore.message_vectors`: imported on first use, off the one-shot path.

A plain table, `message_vectors` (no vector extension; created in `sqlite_schema`): each
row is one message's float32 vector as a blob and the embedder that computed it. It
references the message with ON DELETE CASCADE, so deleting, pruning or undoing removes
the vectors in the same statement, and a rename
(which re-keys messages, not their ids) leaves them in place. `seq` is AUTOINCREMENT, so
it only grows: with the row count it tells a reader whether anything changed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from seam.contracts.session_recall import FoundRow
from seam.contracts.sessions import SearchScope
from seam.services.sessions.sqlite_threads import SQLiteThreads

_UNINDEXED = (
    "SELECT m.id, m.content FROM messages AS m"
    " WHERE m.role IN ('user', 'assistant') AND m.content <> '' AND m.id > ?"
    " AND NOT EXISTS (SELECT 1 FROM message_vectors AS v"
    "                 WHERE v.message_id = m.id AND v.model = ?)"
    " ORDER BY m.id LIMIT ?"
)
_PUT = (
    "INSERT OR REPLACE INTO message_vectors (message_id, model, vector)"
    " SELECT id, ?, ? FROM messages WHERE id = ?"
)
_VECTORS = (
    "SELECT v.message_id, v.vector FROM message_vectors AS v"
    " JOIN messages AS m ON m.id = v.message_id"
    " WHERE v.model = ?"
    " AND (? IS NULL OR m.session_key IN (SELECT key FROM sessions WHERE tenant = ?))"
)


class SQLiteVectors:
    """`MessageVectors` on the store's connection threads (`SQLiteSessionStore.
    message_vectors`)."""

    def __init__(self, threads: SQLiteThreads) -> None:
        self._threads = threads

    async def unindexed(self, model: str, after: int, limit: int) -> list[tuple[int, str]]:
        def read(db: sqlite3.Connection) -> list[tuple[int, str]]:
            rows = db.execute(_UNINDEXED, (after, model, limit))
            return [(row[0], row[1]) for row in rows]

        return await self._threads.read(read)

    async def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]]) -> None:
        rows = [(model, vector, message_id) for message_id, vector in vectors]

        def write(db: sqlite3.Connection) -> None:
            db.executemany(_PUT, rows)

        if rows:
            await self._threads.write(write)

    async def vector_mark(self) -> tuple[int, int]:
        def read(db: sqlite3.Connection) -> tuple[int, int]:
            count, newest = db.execute(
                "SELECT count(*), coalesce(max(seq), 0) FROM message_vectors"
            ).fetchone()
            return int(count), int(newest)

        return await self._threads.read(read)

    async def vectors(self, model: str, tenant: str | None) -> list[tuple[int, bytes]]:
        def read(db: sqlite3.Connection) -> list[tuple[int, bytes]]:
            return [(row[0], row[1]) for row in db.execute(_VECTORS, (model, tenant, tenant))]

        return await self._threads.read(read)

    async def message_ids(self, key: str) -> list[int]:
        def read(db: sqlite3.Connection) -> list[int]:
            rows = db.execute("SELECT id FROM messages WHERE session_key = ?", (key,))
            return [row[0] for row in rows]

        return await self._threads.read(read)

    async def found_messages(self, ids: Sequence[int], scope: SearchScope) -> list[FoundRow]:
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        sql = (
            "SELECT id, session_key, idx, role, content FROM messages"
            f" WHERE id IN ({marks}) AND (? IS NULL OR session_key <> ?)"
            " AND (? IS NULL OR session_key IN (SELECT key FROM sessions WHERE tenant = ?))"
        )
        skip, tenant = scope.exclude_session, scope.tenant
        params = (*ids, skip, skip, tenant, tenant)

        def read(db: sqlite3.Connection) -> list[FoundRow]:
            return [(r[0], r[1], r[2], r[3], r[4]) for r in db.execute(sql, params)]

        return await self._threads.read(read)
