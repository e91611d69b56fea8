"""Message vectors on PostgreSQL (`contracts/session_recall.MessageVectors`), for
`PostgresStore.message_vectors`.

A plain table, the vector as little-endian float32 `bytea` (pgvector is not assumed: the
nearest are found in numpy over the caller's scope, `services/recall`). Each row
references its message with ON DELETE CASCADE, so delete, prune and undo take the
vectors with them, and a rename (which re-keys messages, not their ids) leaves them be.
`seq` is taken from a sequence on every write, so with the row count it tells a reader
whether anything changed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from seam.contracts.session_recall import FoundRow
from seam.contracts.sessions import SearchScope
from seam.services.sessions.postgres_rows import Params

Query = Callable[[str, Params], Awaitable[list[Any]]]

VECTORS_MIGRATION: tuple[str, ...] = (
    "CREATE SEQUENCE IF NOT EXISTS message_vectors_seq",
    """CREATE TABLE IF NOT EXISTS message_vectors (
        message_id bigint PRIMARY KEY REFERENCES messages (id) ON DELETE CASCADE,
        seq bigint NOT NULL DEFAULT nextval('message_vectors_seq'),
        model text NOT NULL,
        vector bytea NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS messages_searchable ON messages (id) WHERE words IS NOT NULL",
)

# `words` is set exactly for the searchable messages (user and assistant, not empty).
_UNINDEXED = (
    "SELECT m.id, m.content FROM messages AS m WHERE m.words IS NOT NULL AND m.id > %s"
    " AND NOT EXISTS (SELECT 1 FROM message_vectors AS v"
    "                 WHERE v.message_id = m.id AND v.model = %s)"
    " ORDER BY m.id LIMIT %s"
)
# One statement for the batch; a message removed meanwhile has no row to join.
_PUT = (
    "INSERT INTO message_vectors (message_id, model, vector)"
    " SELECT m.id, %s, u.vector FROM unnest(%s::bigint[], %s::bytea[]) AS u (id, vector)"
    " JOIN messages AS m ON m.id = u.id"
    " ON CONFLICT (message_id) DO UPDATE SET model = EXCLUDED.model,"
    " vector = EXCLUDED.vector, seq = nextval('message_vectors_seq')"
    " RETURNING message_id"
)
_SCOPED = (
    " AND (%(skip)s::text IS NULL OR session_key <> %(skip)s)"
    " AND (%(tenant)s::text IS NULL"
    "      OR session_key IN (SELECT key FROM sessions WHERE tenant = %(tenant)s))"
)


class PostgresVectors:
    """`MessageVectors` over the store's pool (`PostgresStore.message_vectors`): every
    statement is one round trip through `query` (the store's `_all`)."""

    def __init__(self, query: Query) -> None:
        self._all = query

    async def unindexed(self, model: str, after: int, limit: int) -> list[tuple[int, str]]:
        rows = await self._all(_UNINDEXED, (after, model, limit))
        return [(row[0], bytes(row[1]).decode()) for row in rows]

    async def put_vectors(self, model: str, vectors: Sequence[tuple[int, bytes]]) -> None:
        if vectors:
            ids = [message_id for message_id, _ in vectors]
            await self._all(_PUT, (model, ids, [vector for _, vector in vectors]))

    async def vector_mark(self) -> tuple[int, int]:
        (row,) = await self._all(
            "SELECT count(*), coalesce(max(seq), 0) FROM message_vectors", None
        )
        return int(row[0]), int(row[1])

    async def vectors(self, model: str, tenant: str | None) -> list[tuple[int, bytes]]:
        rows = await self._all(
            "SELECT v.message_id, v.vector FROM message_vectors AS v"
            " JOIN messages AS m ON m.id = v.message_id WHERE v.model = %(model)s"
            " AND (%(tenant)s::text IS NULL"
            "      OR m.session_key IN (SELECT key FROM sessions WHERE tenant = %(tenant)s))",
            {"model": model, "tenant": tenant},
        )
        return [(row[0], bytes(row[1])) for row in rows]

    async def message_ids(self, key: str) -> list[int]:
        rows = await self._all("SELECT id FROM messages WHERE session_key = %s", (key,))
        return [row[0] for row in rows]

    async def found_messages(self, ids: Sequence[int], scope: SearchScope) -> list[FoundRow]:
        if not ids:
            return []
        rows = await self._all(
            "SELECT id, session_key, idx, role, content FROM messages"
            " WHERE id = ANY(%(ids)s::bigint[])" + _SCOPED,
            {"ids": list(ids), "skip": scope.exclude_session, "tenant": scope.tenant},
        )
        return [(r[0], r[1], r[2], r[3], bytes(r[4]).decode()) for r in rows]
