"""The SQLite store's search index kept up in batches, not message by message.

Why: FTS5 indexing each message in the transaction that writes it was the largest single
cost of a durable turn's writes (12% of the turn's CPU, on the event loop's thread): every
transaction that adds to the index writes a segment of its own, and merging those
segments rewrites them again and again.

How: `search_progress.indexed_to` is the highest message id the index covers. A message
written above it is indexed later, many at a time (`catch_up`): on the writer thread
every `INDEX_EVERY` messages this process writes, before every search (a search finds
everything written before it began), and before the integrity check. The triggers keep
the rule exact: a message deleted at or below the mark is taken out of the index (one
above it never went in), and a message written at or below it (an id used again after
the newest messages were deleted) is indexed at once.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from seam.contracts.db import StoreUnavailable
from seam.services.sessions.sqlite_groups import rollback

if TYPE_CHECKING:
    from seam.services.sessions.sqlite_threads import SQLiteThreads

log = logging.getLogger("seam.sqlite")

# Messages this process writes between two catch-ups on the writer thread: one batch of
# index segments per this many, and a bound on what a search may have to index first.
INDEX_EVERY = 64

_SEARCHABLE = "role IN ('user', 'assistant') AND content <> ''"
_MARK = "(SELECT indexed_to FROM search_progress)"

# The triggers of the index kept up in batches (see the module docstring).
LATER_TRIGGERS = (
    f"""CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
            WHEN new.role IN ('user', 'assistant') AND new.content <> ''
            AND new.id <= {_MARK}
            BEGIN
                INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
            END""",
    f"""CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
            WHEN old.role IN ('user', 'assistant') AND old.content <> ''
            AND old.id <= {_MARK}
            BEGIN
                INSERT INTO messages_fts (messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
            END""",
)

# A migration of `sqlite_schema`: everything written so far is indexed already.
SEARCH_INDEX_MIGRATION = (
    "CREATE TABLE search_progress (indexed_to INTEGER NOT NULL)",
    "INSERT INTO search_progress (indexed_to) SELECT coalesce(max(id), 0) FROM messages",
    "DROP TRIGGER messages_fts_insert",
    "DROP TRIGGER messages_fts_delete",
    *LATER_TRIGGERS,
    # The index's content is what it covers, so SQLite's own check of the index against
    # its content holds between catch-ups too.
    "DROP VIEW searchable_messages",
    f"""CREATE VIEW searchable_messages AS
        SELECT id, content FROM messages WHERE {_SEARCHABLE} AND id <= {_MARK}""",
)


def behind(db: sqlite3.Connection) -> bool:
    """Whether messages were written above the mark (a read of two rows by key)."""
    row = db.execute(f"SELECT {_MARK} < coalesce((SELECT max(id) FROM messages), 0)").fetchone()
    return bool(row[0])


def catch_up(db: sqlite3.Connection) -> int:
    """Index the messages above the mark and raise it past them, in the caller's write
    transaction; returns how many were indexed."""
    mark, newest = db.execute(
        f"SELECT {_MARK}, coalesce((SELECT max(id) FROM messages), 0)"
    ).fetchone()
    if newest <= mark:
        return 0
    cur = db.execute(
        "INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages"
        f" WHERE id > ? AND id <= ? AND {_SEARCHABLE} ORDER BY id",
        (mark, newest),
    )
    db.execute("UPDATE search_progress SET indexed_to = ?", (newest,))
    return max(cur.rowcount, 0)


def index_alone(db: sqlite3.Connection) -> None:
    """`catch_up` in a transaction of its own (the writer thread's upkeep, outside any
    write); a failure is logged, and the next catch-up or search tries again."""
    try:
        db.execute("BEGIN IMMEDIATE")
        try:
            catch_up(db)
            db.execute("COMMIT")
        except BaseException:
            rollback(db)
            raise
    except sqlite3.Error:
        log.warning("search index catch-up failed", exc_info=True)


async def caught_up(threads: SQLiteThreads) -> None:
    """Index what was written since the last catch-up, before a search or a check. A
    catch-up that fails (a full disk, the file locked past the timeout) is logged and
    the search reads what is indexed: finding less beats finding nothing."""
    try:
        if await threads.read_small(behind):
            await threads.write(catch_up)
    except (sqlite3.Error, StoreUnavailable):
        log.warning("search index catch-up failed; searching what is indexed", exc_info=True)


class SearchBacklog:
    """Counts the messages this process writes and asks for a catch-up every
    `INDEX_EVERY` (a heuristic: writes from the loop's thread and the writer thread may
    race on the count, which only moves a catch-up by a message or two)."""

    def __init__(self, ask: Callable[[], None], every: int = INDEX_EVERY) -> None:
        self._ask = ask
        self._every = every
        self._count = 0

    @property
    def pending(self) -> bool:
        """Whether messages were written since the last catch-up asked for."""
        return self._count > 0

    def add(self, messages: int) -> None:
        self._count += messages
        if self._count >= self._every:
            self._count = 0
            self._ask()
