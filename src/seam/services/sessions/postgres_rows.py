"""Rows of the PostgreSQL store to and from the contract's dataclasses, and the small
helpers its modules share."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from psycopg import AsyncConnection, AsyncCursor

from seam.contracts.execution import EventRecord, Submission
from seam.contracts.messages import Message
from seam.contracts.sessions import SessionInfo, SessionNotFound, UsageRecord
from seam.services.sessions import rows
from seam.services.sessions.postgres_images import put_images
from seam.services.sessions.postgres_text import message_words
from seam.services.sessions.rows import (
    MESSAGE_COLUMNS,
    USAGE_COLUMNS,
    insert_sql,
    message_params,
    shown_images,
    usage_params,
)

# Query parameters: positional (%s) or named (%(name)s).
Params = Sequence[Any] | Mapping[str, Any] | None


def prefixed(columns: str, alias: str) -> str:
    """`columns` (a comma-separated list) each qualified by `alias`."""
    return ", ".join(f"{alias}.{c.strip()}" for c in columns.split(","))


def encode(text: str | None) -> bytes | None:
    """User and model text goes into `bytea` columns (PostgreSQL text cannot hold NUL)."""
    return None if text is None else text.encode()


def decode(data: bytes | memoryview | None) -> str | None:
    return None if data is None else bytes(data).decode()


def session_from_row(row: Sequence[Any]) -> SessionInfo:
    return rows.session_from_row(row, tuple)


def message_from_row(row: Sequence[Any]) -> Message:
    return rows.message_from_row(row, _text)


def submission_from_row(row: Sequence[Any]) -> Submission:
    return rows.submission_from_row(row, _text)


def _text(data: bytes | memoryview) -> str:
    return bytes(data).decode()


def event_from_row(row: Sequence[Any]) -> EventRecord:
    key, seq, first_seq, type_, payload, submission_id = row
    return EventRecord(key, int(seq), int(first_seq), type_, payload, submission_id)


_INSERT_USAGE = insert_sql("usage", USAGE_COLUMNS, "%s")


async def insert_usage(
    conn: AsyncConnection[Any], key: str, record: UsageRecord, now: float
) -> None:
    """One model call's usage row, inside the caller's transaction."""
    await conn.execute(_INSERT_USAGE, usage_params(key, record, now))


async def insert_messages(
    conn: AsyncConnection[Any],
    key: str,
    messages: Sequence[Message],
    submission_id: str | None,
    now: float,
) -> None:
    """Append `messages` to session `key` inside the caller's transaction.

    Bumping the count first locks the session row, so appends to one session queue up
    and each gets the next indexes. (A turn's own steps go by `postgres_journal`.)
    """
    n = len(messages)
    row = await (await conn.execute(_BUMP + " RETURNING message_count", (n, now, key))).fetchone()
    if row is None:
        raise SessionNotFound(f"no session {key!r}")
    await put_images(conn, shown_images(messages), now)
    async with conn.cursor() as cur:
        await cur.executemany(
            f"INSERT INTO messages (session_key, idx, {MESSAGE_COLUMNS}, submission_id, words)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::text[])",
            [
                (
                    key,
                    row[0] - n + i,
                    m.role,
                    encode(m.content),
                    *message_params(m)[2:],
                    submission_id,
                    message_words(m.role, m.content),
                )
                for i, m in enumerate(messages)
            ],
        )


_BUMP = "UPDATE sessions SET message_count = message_count + %s, updated_at = %s WHERE key = %s"


async def returned(cur: AsyncCursor[Any]) -> tuple[Any, ...]:
    """The row an UPDATE ... RETURNING on a row the transaction has locked gave back."""
    row = await cur.fetchone()
    if row is None:
        raise RuntimeError("a locked row vanished inside its transaction")
    return tuple(row)
