"""Usage and listings of the SQLite session store: what the session lists show.

A mixin of `SQLiteSessionStore`, apart because these reads serve the surfaces that list
sessions (`seam sessions`, the web UI, usage reports) rather than a turn: per-session
counts, usage totals and previews gathered in a few statements for many sessions at once.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from functools import partial

from seam.contracts.sessions import (
    SessionInfo,
    SessionSummary,
    UsageRecord,
    UsageTotals,
    check_limit,
    preview_line,
)
from seam.services.sessions.rows import SESSION_COLUMNS, session_from_row, usage_totals_from
from seam.services.sessions.sqlite_execution import insert_usage
from seam.services.sessions.sqlite_queries import USAGE_TOTALS, SQLiteQueries
from seam.services.sessions.sqlite_threads import SQLiteThreads, snapshot


class SQLiteSummaries(SQLiteQueries):
    _threads: SQLiteThreads
    _clock: Callable[[], float]

    async def record_usage(self, key: str, record: UsageRecord) -> None:
        def write(db: sqlite3.Connection) -> None:
            self._must_exist(db, key)
            insert_usage(db, key, record, self._clock())

        await self._threads.write(write)

    async def usage_totals(self, key: str) -> UsageTotals:
        def read(db: sqlite3.Connection) -> UsageTotals:
            with snapshot(db):
                self._must_exist(db, key)
                return self._totals_of(db, key)

        return await self._threads.read(read)

    async def list_rich(self, limit: int = 50) -> list[SessionSummary]:
        check_limit(limit)
        return await self._threads.read(partial(self._list_rich, limit))

    def _list_rich(self, limit: int, db: sqlite3.Connection) -> list[SessionSummary]:
        with snapshot(db):
            infos = [
                session_from_row(row)
                for row in db.execute(
                    f"SELECT {SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, key LIMIT ?",
                    (limit,),
                )
            ]
            # The listed keys travel as one JSON parameter, however many there are.
            keys = json.dumps([info.key for info in infos])
            counts: dict[tuple[str, str], int] = {
                (key, role): n
                for key, role, n in db.execute(
                    "SELECT session_key, role, count(*) FROM messages"
                    " WHERE session_key IN (SELECT value FROM json_each(?))"
                    " GROUP BY session_key, role",
                    (keys,),
                )
            }
            usage = {
                row[0]: usage_totals_from(row[1:])
                for row in db.execute(
                    f"SELECT session_key, {USAGE_TOTALS} FROM usage"
                    " WHERE session_key IN (SELECT value FROM json_each(?))"
                    " GROUP BY session_key",
                    (keys,),
                )
            }
            firsts = dict(
                db.execute(
                    "SELECT j.value, (SELECT m.content FROM messages AS m"
                    " WHERE m.session_key = j.value AND m.role = 'user' ORDER BY m.idx LIMIT 1)"
                    " FROM json_each(?) AS j",
                    (keys,),
                ).fetchall()
            )
        return [
            SessionSummary(
                info,
                counts.get((info.key, "user"), 0),
                counts.get((info.key, "assistant"), 0),
                counts.get((info.key, "tool"), 0),
                usage.get(info.key, UsageTotals()),
                preview_line(firsts.get(info.key) or ""),
            )
            for info in infos
        ]

    async def list_recently_active(self, since: float, limit: int = 50) -> list[SessionInfo]:
        check_limit(limit)

        def read(db: sqlite3.Connection) -> list[SessionInfo]:
            rows = db.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE updated_at >= ?"
                " ORDER BY updated_at DESC, key LIMIT ?",
                (since, limit),
            ).fetchall()
            return [session_from_row(row) for row in rows]

        return await self._threads.read(read)

    async def session_for_message(self, message_id: int) -> SessionInfo | None:
        def read(db: sqlite3.Connection) -> SessionInfo | None:
            row = db.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions"
                " WHERE key = (SELECT session_key FROM messages WHERE id = ?)",
                (message_id,),
            ).fetchone()
            return None if row is None else session_from_row(row)

        return await self._threads.read(read)
