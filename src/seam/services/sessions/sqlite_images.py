"""A person's images in the SQLite session store: one `image_blobs` row per SHA-256,
referred to by the `images` column of transcript messages and submissions
(`rows.py`), written in the transaction of what refers to them, swept when the
last session that refers to one is deleted.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from seam.contracts.messages import ImagePart, Message
from seam.services.sessions.rows import (
    BLOB_COLUMNS,
    blob_params,
    hydrate,
    image_from_blob,
    insert_sql,
    wanted,
)
from seam.services.sessions.sqlite_threads import SQLiteThreads

# The schema step (appended to sqlite_schema.MIGRATIONS). A plain rowid table: big blobs
# do not belong in a WITHOUT ROWID b-tree.
IMAGES_MIGRATION = (
    """CREATE TABLE image_blobs (
        sha256 TEXT NOT NULL UNIQUE,
        mime_type TEXT NOT NULL,
        size INTEGER NOT NULL,
        data BLOB NOT NULL,
        created_at REAL NOT NULL
    )""",
    "ALTER TABLE messages ADD COLUMN images TEXT",
    "ALTER TABLE submissions ADD COLUMN images TEXT",
    "CREATE INDEX messages_images ON messages (id) WHERE images IS NOT NULL",
    "CREATE INDEX submissions_images ON submissions (seq) WHERE images IS NOT NULL",
)

_INSERT = insert_sql("image_blobs", BLOB_COLUMNS, "?") + " ON CONFLICT (sha256) DO NOTHING"
# Every hash some message or submission still shows.
_SHOWN = (
    "SELECT j.value FROM messages AS m, json_each(m.images) AS j WHERE m.images IS NOT NULL"
    " UNION SELECT j.value FROM submissions AS s, json_each(s.images) AS j"
    " WHERE s.images IS NOT NULL"
)


def put_images(db: sqlite3.Connection, images: Iterable[ImagePart], now: float) -> None:
    """Store the images not stored yet, in the caller's transaction."""
    rows = blob_params(images, now)
    if rows:
        db.executemany(_INSERT, rows)


def read_images(db: sqlite3.Connection, hashes: Sequence[str]) -> dict[str, ImagePart]:
    """The stored images of these hashes, by hash."""
    if not hashes:
        return {}
    marks = ", ".join("?" * len(hashes))
    rows = db.execute(
        f"SELECT sha256, mime_type, size, data FROM image_blobs WHERE sha256 IN ({marks})",
        tuple(hashes),
    ).fetchall()
    return {row[0]: image_from_blob(row) for row in rows}


def with_images(db: sqlite3.Connection, messages: list[Message]) -> list[Message]:
    """Messages read from the transcript, their stored images swapped in."""
    return hydrate(messages, read_images(db, wanted(messages)))


def sweep_images(db: sqlite3.Connection) -> int:
    """Drop the images no message or submission shows any more; how many went."""
    return db.execute(f"DELETE FROM image_blobs WHERE sha256 NOT IN ({_SHOWN})").rowcount


class SQLiteImages:
    """`ImageBlobs` for the SQLite store (a mixin of `SQLiteSessionStore`)."""

    _threads: SQLiteThreads

    async def load_images(self, hashes: Sequence[str]) -> list[ImagePart]:
        def read(db: sqlite3.Connection) -> list[ImagePart]:
            found = read_images(db, list(dict.fromkeys(hashes)))
            return [found[digest] for digest in hashes if digest in found]

        return await self._threads.read(read)


__all__ = [
    "IMAGES_MIGRATION",
    "SQLiteImages",
    "put_images",
    "read_images",
    "sweep_images",
    "with_images",
]
