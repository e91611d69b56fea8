"""A session's stored working directory on PostgreSQL, a mixin of `PostgresStore`.

The directory is part of the session's spec (`SessionInfo.working_dir`): a process that
resumes the session after a crash runs its turns there, not in its own directory.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from psycopg import AsyncConnection

from seam.contracts.sessions import SessionNotFound


class PostgresWorkingDirs:
    if TYPE_CHECKING:

        def _tx(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

    async def set_working_dir(self, key: str, path: str | None) -> None:
        async with self._tx() as conn:
            cur = await conn.execute(
                "UPDATE sessions SET working_dir = %s WHERE key = %s", (path, key)
            )
        if cur.rowcount == 0:
            raise SessionNotFound(f"no session {key!r}")
