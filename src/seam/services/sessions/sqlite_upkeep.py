"""Upkeep of the SQLite session store: ending idle sessions, pruning, undo and export.

A mixin of `SQLiteSessionStore`, apart because these are the operator's tools (`seam
sessions prune/export/undo`, the idle sweep), not what a turn uses: they touch many rows
at once and change rarely.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from functools import partial
from typing import Any

from seam.contracts.sessions import SessionInfo, SessionNotFound, check_idle, session_to_dict
from seam.services.sessions.rows import SESSION_COLUMNS, session_from_row
from seam.services.sessions.sqlite_images import sweep_images
from seam.services.sessions.sqlite_queries import SQLiteQueries
from seam.services.sessions.sqlite_threads import SQLiteThreads, snapshot

SECONDS_PER_DAY = 86_400.0


class SQLiteUpkeep(SQLiteQueries):
    _threads: SQLiteThreads
    _clock: Callable[[], float]

    async def end_idle(self, idle_seconds: float) -> int:
        check_idle(idle_seconds)
        cutoff = self._clock() - idle_seconds

        def write(db: sqlite3.Connection) -> int:
            cursor = db.execute(
                "UPDATE sessions SET ended = 1, ended_at = updated_at + ?1"
                " WHERE ended = 0 AND updated_at < ?2",
                (idle_seconds, cutoff),
            )
            return cursor.rowcount

        return await self._threads.write(write)

    async def export(self, key: str) -> dict[str, Any]:
        def read(db: sqlite3.Connection) -> dict[str, Any]:
            with snapshot(db):
                info = self._info_of(db, key)
                if info is None:
                    raise SessionNotFound(f"no session {key!r}")
                return self._export_one(db, info)

        return await self._threads.read(read)

    async def export_all(self) -> list[dict[str, Any]]:
        return await self._threads.read(self._export_all)

    def _export_all(self, db: sqlite3.Connection) -> list[dict[str, Any]]:
        with snapshot(db):
            infos = [
                session_from_row(row)
                for row in db.execute(
                    f"SELECT {SESSION_COLUMNS} FROM sessions ORDER BY created_at, key"
                ).fetchall()
            ]
            return [self._export_one(db, info) for info in infos]

    def _export_one(self, db: sqlite3.Connection, info: SessionInfo) -> dict[str, Any]:
        return session_to_dict(info, self._messages_of(db, info.key), self._totals_of(db, info.key))

    async def prune(self, older_than_days: float) -> int:
        cutoff = self._clock() - _days(older_than_days) * SECONDS_PER_DAY

        def write(db: sqlite3.Connection) -> int:
            # Messages, usage, submissions and events go by cascade; the messages' delete
            # trigger keeps the search index in step.
            cursor = db.execute(
                "DELETE FROM sessions WHERE ended <> 0"
                " AND max(updated_at, coalesce(ended_at, updated_at)) < ?",
                (cutoff,),
            )
            if cursor.rowcount:
                sweep_images(db)  # the images no session left shows
            return cursor.rowcount

        return await self._threads.write(write)

    async def undo(self, key: str, turns: int = 1) -> int:
        if turns < 0:
            raise ValueError(f"turns must be >= 0, got {turns}")
        return await self._threads.write(partial(self._undo, key, turns))

    def _undo(self, key: str, turns: int, db: sqlite3.Connection) -> int:
        self._must_exist(db, key)
        if turns == 0:
            return 0
        # The turns'-th user message from the end, or the first one when there are fewer.
        row = db.execute(
            "SELECT coalesce((SELECT idx FROM messages WHERE session_key = ?1 AND role = 'user'"
            " ORDER BY idx DESC LIMIT 1 OFFSET ?2), (SELECT min(idx) FROM messages"
            " WHERE session_key = ?1 AND role = 'user'))",
            (key, turns - 1),
        ).fetchone()
        cut = row[0]
        if cut is None:
            return 0
        # Only transcript rows: their delete trigger updates the search index.
        removed: int = db.execute(
            "DELETE FROM messages WHERE session_key = ? AND idx >= ?", (key, cut)
        ).rowcount
        db.execute(
            "UPDATE sessions SET message_count = ?, updated_at = ? WHERE key = ?",
            (cut, self._clock(), key),
        )
        return removed


def _days(days: float) -> float:
    if not days >= 0:  # also refuses NaN
        raise ValueError(f"older_than_days must be >= 0, got {days}")
    return days
