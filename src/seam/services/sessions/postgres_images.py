"""A person's images in the PostgreSQL store: one `image_blobs` row per SHA-256 (bytea),
referred to by the `images` column of transcript messages and submissions
(`rows.py`), written in the transaction of what refers to them, swept when the
last session that refers to one is deleted. The SQLite twin is `sqlite_images.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

from psycopg import AsyncConnection

from seam.contracts.messages import ImagePart, Message
from seam.services.sessions import rows

# The schema step (appended to postgres_schema.MIGRATIONS).
IMAGES_MIGRATION: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS image_blobs (
        sha256 text PRIMARY KEY,
        mime_type text NOT NULL,
        size integer NOT NULL,
        data bytea NOT NULL,
        created_at double precision NOT NULL
    )""",
    "ALTER TABLE messages ADD COLUMN IF NOT EXISTS images text",
    "ALTER TABLE submissions ADD COLUMN IF NOT EXISTS images text",
    "CREATE INDEX IF NOT EXISTS messages_images ON messages (id) WHERE images IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS submissions_images ON submissions (seq) WHERE images IS NOT NULL",
)

_INSERT = (
    rows.insert_sql("image_blobs", rows.BLOB_COLUMNS, "%s") + " ON CONFLICT (sha256) DO NOTHING"
)
# Every hash some message or submission still shows.
_SHOWN = (
    "SELECT jsonb_array_elements_text(images::jsonb) FROM messages WHERE images IS NOT NULL"
    " UNION SELECT jsonb_array_elements_text(images::jsonb) FROM submissions"
    " WHERE images IS NOT NULL"
)


async def put_images(conn: AsyncConnection[Any], images: Iterable[ImagePart], now: float) -> None:
    """Store the images not stored yet, in the caller's transaction."""
    params = rows.blob_params(images, now)
    if params:
        async with conn.cursor() as cur:
            await cur.executemany(_INSERT, params)


async def read_images(conn: AsyncConnection[Any], hashes: Sequence[str]) -> dict[str, ImagePart]:
    """The stored images of these hashes, by hash."""
    if not hashes:
        return {}
    cur = await conn.execute(
        "SELECT sha256, mime_type, size, data FROM image_blobs WHERE sha256 = ANY(%s)",
        (list(hashes),),
    )
    return {row[0]: rows.image_from_blob(row) for row in await cur.fetchall()}


async def with_images(conn: AsyncConnection[Any], messages: list[Message]) -> list[Message]:
    """Messages read from the transcript, their stored images swapped in."""
    return rows.hydrate(messages, await read_images(conn, rows.wanted(messages)))


async def sweep_images(conn: AsyncConnection[Any]) -> int:
    """Drop the images no message or submission shows any more; how many went. Run in
    the deleting transaction: the lock waits for the writers of images in flight (whose
    references the DELETE's snapshot then sees) and holds new ones until it commits, so
    an image another session is just being given is never swept from under it."""
    await conn.execute("LOCK TABLE image_blobs IN SHARE ROW EXCLUSIVE MODE")
    cur = await conn.execute(f"DELETE FROM image_blobs WHERE sha256 NOT IN ({_SHOWN})")
    return cur.rowcount


class PostgresImages:
    """`ImageBlobs` for the PostgreSQL store (a mixin of `PostgresStore`, which provides
    the connections)."""

    if TYPE_CHECKING:

        def _connection(self) -> AbstractAsyncContextManager[AsyncConnection[Any]]: ...

    async def load_images(self, hashes: Sequence[str]) -> list[ImagePart]:
        async with self._connection() as conn:
            found = await read_images(conn, list(dict.fromkeys(hashes)))
        return [found[digest] for digest in hashes if digest in found]

    async def _hydrated(self, messages: list[Message]) -> list[Message]:
        """`messages` with their stored images (no query when they show none)."""
        if not rows.wanted(messages):
            return messages
        async with self._connection() as conn:
            return await with_images(conn, messages)


__all__ = [
    "IMAGES_MIGRATION",
    "PostgresImages",
    "put_images",
    "read_images",
    "sweep_images",
    "with_images",
]
