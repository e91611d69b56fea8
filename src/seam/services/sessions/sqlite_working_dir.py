"""A session's stored working directory on SQLite, a mixin of `SQLiteSessionStore`.

The directory is part of the session's spec (`SessionInfo.working_dir`): a process that
resumes the session after a crash runs its turns there, not in its own directory.
"""

from __future__ import annotations

import sqlite3

from seam.contracts.sessions import SessionNotFound
from seam.services.sessions.sqlite_threads import SQLiteThreads


class SQLiteWorkingDirs:
    _threads: SQLiteThreads

    async def set_working_dir(self, key: str, path: str | None) -> None:
        def write(db: sqlite3.Connection) -> None:
            cursor = db.execute("UPDATE sessions SET working_dir = ? WHERE key = ?", (path, key))
            if cursor.rowcount == 0:
                raise SessionNotFound(f"no session {key!r}")

        await self._threads.write(write)
