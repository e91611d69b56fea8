"""The SQLite store's search index kept up in batches, not message by message.

Why: FTS5 indexing each message in the transaction that writes it was the largest single
cost of a durable turn's writes (12% of the turn's CPU, on the event loop's thread): every
transaction that adds to the index writes a segment of its own, and merging those
segments rewrites them again and again.

How: `search_progress.indexed_to` is the highest message id the index covers. A message
written above it is indexed later, many at a time (`catch_up`): in the write that takes
a process past every `INDEX_EVERY` messages it wrote (in a savepoint of its own:
`SearchBacklog`), before every search (a search finds everything written before it
began), when the store closes and before the integrity check. The triggers keep
the rule exact: a message deleted at or below the mark is taken out of the index (one
above it never went in), and a message written at or below it (an id used again after
the newest messages were deleted) is indexed at once.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import TYPE_CHECKING

from seam.contracts.db import StoreUnavailable

if TYPE_CHECKING:
    from seam.services.sessions.sqlite_threads import SQLiteThreads

log = logging.getLogger("seam.sqlite")

# Messages this process writes between two batches (one set of index segments per batch),
# and the most one batch indexes.
INDEX_EVERY = 64
BATCH_MOST = 4 * INDEX_EVERY

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


def catch_up(db: sqlite3.Connection, most: int | None = None) -> None:
    """Index the messages above the mark (the `most` oldest of them, when given) and
    raise it past them, in the caller's write transaction."""
    mark = db.execute(f"SELECT {_MARK}").fetchone()[0]
    above = "SELECT id FROM messages WHERE id > ? ORDER BY id LIMIT ?"
    top = db.execute(f"SELECT max(id) FROM ({above})", (mark, -1 if most is None else most))
    (newest,) = top.fetchone()
    if newest is None:
        return
    db.execute(
        "INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages"
        f" WHERE id > ? AND id <= ? AND {_SEARCHABLE} ORDER BY id",
        (mark, newest),
    )
    db.execute("UPDATE search_progress SET indexed_to = ?", (newest,))


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
    """Counts the messages this process writes, and every `INDEX_EVERY` indexes a batch
    in the write that crossed the count, in a savepoint of its own: no thread, no job,
    no wait (about 5 us a message), and a batch that fails is undone alone and logged,
    never failing the write (the next batch or search tries again). At most `BATCH_MOST`
    messages a batch, so messages other processes left unindexed never make one turn's
    write long."""

    def __init__(self, every: int = INDEX_EVERY) -> None:
        self._every = every
        self._count = 0

    @property
    def pending(self) -> bool:
        """Whether messages were written since the last batch."""
        return self._count > 0

    def add(self, db: sqlite3.Connection, messages: int) -> None:
        """`messages` were written on `db`, in its write transaction."""
        self._count += messages
        if self._count < self._every:
            return
        self._count = 0
        db.execute("SAVEPOINT search_batch")
        try:
            catch_up(db, BATCH_MOST)
        except sqlite3.Error:
            db.execute("ROLLBACK TO search_batch")
            log.warning("search index batch failed; the next one tries again", exc_info=True)
        finally:
            db.execute("RELEASE search_batch")
