"""One gateway process holds each chat adapter: on a PostgreSQL store the lock is
`pg_try_advisory_lock` on a connection of its own, so gateways on several machines sharing
the store take turns; the server frees it when the holder's connection ends."""

from __future__ import annotations

import contextlib
import hashlib
import logging
from typing import Any

log = logging.getLogger("seam.gateway")


def advisory_key(name: str) -> int:
    """A stable signed 64-bit key for `pg_try_advisory_lock`, from the adapter's name."""
    digest = hashlib.sha256(f"seam-gateway:{name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class PostgresLock:
    """`pg_try_advisory_lock` on a connection of its own: gateways on several machines
    sharing a PostgreSQL store take turns; the server frees it when the holder's
    connection ends (a killed process, a lost network)."""

    def __init__(self, url: str, name: str) -> None:
        self.url = url
        self.key = advisory_key(name)
        self._conn: Any = None

    async def acquire(self) -> bool:
        import psycopg

        if self._conn is not None and await self.held():
            return True
        try:
            conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
        except psycopg.OperationalError as exc:
            log.warning("could not reach PostgreSQL for the adapter lock: %s", exc)
            return False
        cur = await conn.execute("SELECT pg_try_advisory_lock(%s)", (self.key,))
        row = await cur.fetchone()
        if not (row and row[0]):
            await conn.close()
            return False
        self._conn = conn
        return True

    async def held(self) -> bool:
        if self._conn is None:
            return False
        try:
            await self._conn.execute("SELECT 1")
            return True
        except Exception:
            with contextlib.suppress(Exception):
                await self._conn.close()
            self._conn = None
            return False

    async def release(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                await self._conn.close()
            self._conn = None
