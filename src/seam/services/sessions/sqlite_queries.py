"""Statements several parts of the SQLite session store share, a mixin of each part.

Apart so the store's parts (catalogue, summaries, upkeep) can each live in a file of its
own and still read a session, its transcript and its usage the same way. Each runs on the
caller's connection, inside whatever transaction or snapshot the caller holds.
"""

from __future__ import annotations

import sqlite3

from seam.contracts.messages import Message
from seam.contracts.sessions import DuplicateTitle, SessionInfo, SessionNotFound, UsageTotals
from seam.services.sessions.rows import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    message_from_row,
    session_from_row,
    usage_totals_from,
)
from seam.services.sessions.sqlite_images import with_images


class SQLiteQueries:
    """Reads of one session's row, transcript and usage, on a given connection."""

    def _info_of(self, db: sqlite3.Connection, key: str) -> SessionInfo | None:
        row = db.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE key = ?", (key,)).fetchone()
        return None if row is None else session_from_row(row)

    def _messages_of(self, db: sqlite3.Connection, key: str, since: int = 0) -> list[Message]:
        """The session's messages from index `since` on, in order."""
        rows = db.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_key = ? AND idx >= ?"
            " ORDER BY idx",
            (key, since),
        ).fetchall()
        return with_images(db, [message_from_row(row) for row in rows])

    def _totals_of(self, db: sqlite3.Connection, key: str) -> UsageTotals:
        row = db.execute(
            f"SELECT {USAGE_TOTALS} FROM usage WHERE session_key = ?", (key,)
        ).fetchone()
        return usage_totals_from(row)

    def _must_exist(self, db: sqlite3.Connection, key: str) -> None:
        if db.execute("SELECT 1 FROM sessions WHERE key = ?", (key,)).fetchone() is None:
            raise SessionNotFound(f"no session {key!r}")

    def _duplicate(self, db: sqlite3.Connection, title: str | None) -> DuplicateTitle:
        row = db.execute("SELECT key FROM sessions WHERE title = ?", (title,)).fetchone()
        other = "another session" if row is None else f"session {row[0]!r}"
        return DuplicateTitle(f"title {title!r} is already used by {other}")


USAGE_TOTALS = (
    "count(*), total(input_tokens), total(output_tokens), total(cache_read_tokens),"
    " total(cache_write_tokens), total(reasoning_tokens), total(cost_usd),"
    " count(*) - count(cost_usd)"
)
