"""Approval answers on SQLite (see `contracts/approval_answers.py`): a mixin of
`SQLiteSessionStore`, over the `approval_answers` table of the same file.

SQLite has no notifications between processes: a waiter wakes at once for an answer
stored by this process and otherwise looks at the file every `POLL_SECONDS` (an approval
waits for a person, so a tenth of a second is not noticed). The primary key makes the
first answer the only one, whichever process wrote it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from seam.contracts.sessions import SessionNotFound
from seam.services.sessions.approval_waiters import ApprovalWaiters
from seam.services.sessions.sqlite_threads import SQLiteThreads

# How often a waiter looks for an answer another process stored.
POLL_SECONDS = 0.1


class SQLiteApprovals(ApprovalWaiters):
    _clock: Callable[[], float]
    _threads: SQLiteThreads
    _approval_recheck = POLL_SECONDS

    async def answer_approval(self, session_key: str, call_id: str, decision: str) -> bool:
        now = self._clock()

        def write(db: sqlite3.Connection) -> bool:
            known = db.execute("SELECT 1 FROM sessions WHERE key = ?", (session_key,)).fetchone()
            if known is None:
                raise SessionNotFound(f"no session {session_key!r}")
            cur = db.execute(
                "INSERT INTO approval_answers (session_key, call_id, decision, answered_at)"
                " VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (session_key, call_id, decision, now),
            )
            return cur.rowcount == 1

        stored = await self._threads.write(write)
        if stored:
            self._approvals_noted()
        return stored

    async def clear_approval(self, session_key: str, call_id: str) -> None:
        def write(db: sqlite3.Connection) -> None:
            db.execute(
                "DELETE FROM approval_answers WHERE session_key = ? AND call_id = ?",
                (session_key, call_id),
            )

        await self._threads.write(write)

    async def approval_answer(self, session_key: str, call_id: str) -> str | None:
        def read(db: sqlite3.Connection) -> str | None:
            row = db.execute(
                "SELECT decision FROM approval_answers WHERE session_key = ? AND call_id = ?",
                (session_key, call_id),
            ).fetchone()
            return None if row is None else str(row[0])

        return await self._threads.read(read)


__all__ = ["SQLiteApprovals"]
