"""The `CheckpointLog` on SQLite (see `contracts/checkpoints.py`): a mixin of
`SQLiteSessionStore`, over the `turn_checkpoints` table of the same file (rows go with
their session by cascade)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from seam.contracts.checkpoints import TurnCheckpoint
from seam.contracts.sessions import SessionNotFound
from seam.services.sessions.sqlite_threads import SQLiteThreads

CHECKPOINTS_MIGRATION: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS turn_checkpoints (
        session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
        seq INTEGER NOT NULL,
        turn_id TEXT NOT NULL,
        work_dir TEXT NOT NULL,
        before TEXT NOT NULL,
        after TEXT,
        message_count INTEGER NOT NULL,
        created_at REAL NOT NULL,
        undone INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (session_key, seq),
        UNIQUE (session_key, turn_id)
    ) WITHOUT ROWID""",
)

_COLUMNS = "session_key, seq, turn_id, work_dir, before, message_count, created_at, after, undone"


def _row(row: sqlite3.Row | tuple[object, ...]) -> TurnCheckpoint:
    key, seq, turn, work_dir, before, count, created, after, undone = tuple(row)
    return TurnCheckpoint(
        session_key=str(key),
        seq=int(str(seq)),
        turn_id=str(turn),
        work_dir=str(work_dir),
        before=str(before),
        message_count=int(str(count)),
        created_at=float(str(created)),
        after=None if after is None else str(after),
        undone=bool(undone),
    )


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
            db.execute(
                f"INSERT INTO turn_checkpoints ({_COLUMNS}) SELECT ?, coalesce(max(seq), 0) + 1,"
                " ?, ?, ?, ?, ?, NULL, 0 FROM turn_checkpoints WHERE session_key = ?"
                " ON CONFLICT (session_key, turn_id) DO NOTHING",
                (session_key, turn_id, work_dir, before, message_count, now, session_key),
            )
            found = db.execute(
                f"SELECT {_COLUMNS} FROM turn_checkpoints WHERE session_key = ? AND turn_id = ?",
                (session_key, turn_id),
            ).fetchone()
            return _row(found)

        return await self._threads.write(write)

    async def finish_checkpoint(self, session_key: str, turn_id: str, after: str) -> None:
        def write(db: sqlite3.Connection) -> None:
            db.execute(
                "UPDATE turn_checkpoints SET after = ? WHERE session_key = ? AND turn_id = ?",
                (after, session_key, turn_id),
            )

        await self._threads.write(write)

    async def mark_undone(self, session_key: str, seq: int) -> None:
        def write(db: sqlite3.Connection) -> None:
            db.execute(
                "UPDATE turn_checkpoints SET undone = 1 WHERE session_key = ? AND seq = ?",
                (session_key, seq),
            )

        await self._threads.write(write)

    async def checkpoints(self, session_key: str) -> list[TurnCheckpoint]:
        def read(db: sqlite3.Connection) -> list[TurnCheckpoint]:
            rows = db.execute(
                f"SELECT {_COLUMNS} FROM turn_checkpoints WHERE session_key = ? ORDER BY seq",
                (session_key,),
            ).fetchall()
            return [_row(r) for r in rows]

        return await self._threads.read(read)


__all__ = ["CHECKPOINTS_MIGRATION", "SQLiteCheckpoints"]
