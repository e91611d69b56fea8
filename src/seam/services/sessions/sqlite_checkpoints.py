"""The `CheckpointLog` on SQLite (see `contracts/checkpoints.py`): a mixin of
`SQLiteSessionStore`, over the `turn_checkpoints` table of the same file (rows go with
their session by cascade)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import partial

from seam.contracts.checkpoints import TurnCheckpoint
from seam.contracts.sessions import SessionNotFound
from seam.services.sessions import checkpoint_rows as rows
from seam.services.sessions.sqlite_threads import SQLiteThreads

_SELECT, _INSERT = rows.checkpoint_sql("?")


def _change(statement: str, params: tuple[object, ...], db: sqlite3.Connection) -> None:
    db.execute(statement, params)


def _rows(session_key: str, db: sqlite3.Connection) -> list[TurnCheckpoint]:
    found = db.execute(f"{_SELECT} ORDER BY seq", (session_key,)).fetchall()
    return [rows.checkpoint_from_row(tuple(r)) for r in found]


class SQLiteCheckpoints:
    _clock: Callable[[], float]
    _threads: SQLiteThreads

    async def record_checkpoint(
        self, session_key: str, *, turn_id: str, work_dir: str, before: str, message_count: int
    ) -> TurnCheckpoint:
        now = self._clock()

        def write(db: sqlite3.Connection) -> TurnCheckpoint:
            known = db.execute("SELECT 1 FROM sessions WHERE key = ?", (session_key,)).fetchone()
            if known is None:
                raise SessionNotFound(f"no session {session_key!r}")
            values = (session_key, turn_id, work_dir, before, message_count, now, session_key)
            db.execute(_INSERT, values)
            row = db.execute(f"{_SELECT} AND turn_id = ?", (session_key, turn_id)).fetchone()
            return rows.checkpoint_from_row(tuple(row))

        return await self._threads.write(write)

    async def finish_checkpoint(self, session_key: str, turn_id: str, after: str) -> None:
        statement = "UPDATE turn_checkpoints SET after = ? WHERE session_key = ? AND turn_id = ?"
        await self._threads.write(partial(_change, statement, (after, session_key, turn_id)))

    async def mark_undone(self, session_key: str, seq: int) -> None:
        statement = "UPDATE turn_checkpoints SET undone = 1 WHERE session_key = ? AND seq = ?"
        await self._threads.write(partial(_change, statement, (session_key, seq)))

    async def checkpoints(self, session_key: str) -> list[TurnCheckpoint]:
        return await self._threads.read(partial(_rows, session_key))


__all__ = ["SQLiteCheckpoints"]
