"""The durable session store: one SQLite file, WAL mode, FTS5 search over transcripts.

Search matches whole words, case- and accent-insensitively, every query word required,
in user and assistant messages only (tool output and system prompts are bulky and
would drown the conversation a user is looking for); hits come newest first.
`seam.core.sessions.InMemorySessionStore` keeps the same rules; the conformance suite
holds both to them.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from seam.contracts.context import CompactionRecord
from seam.contracts.messages import Message, Usage
from seam.contracts.search import snippet, terms, words
from seam.contracts.sessions import (
    DuplicateTitle,
    LoadedSession,
    SearchHit,
    SessionInfo,
    SessionNotFound,
    SessionSummary,
    UsageRecord,
    UsageTotals,
    check_idle,
    check_limit,
    check_title,
    lineage_base,
    next_lineage_title,
    preview_line,
    session_to_dict,
)
from seam.services.sessions.rows import (
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    compaction_from_row,
    dump_calls,
    message_from_row,
    session_from_row,
)
from seam.services.sessions.sqlite_approvals import SQLiteApprovals
from seam.services.sessions.sqlite_cron import CRON_MIGRATION, SQLiteCron
from seam.services.sessions.sqlite_db import SQLiteDb
from seam.services.sessions.sqlite_execution import SQLiteSubmissions, insert_usage
from seam.services.sessions.sqlite_outbox import OUTBOX_MIGRATION, SQLiteOutbox
from seam.services.sessions.sqlite_threads import DEFAULT_READERS, SQLiteThreads, snapshot
from seam.services.sessions.sqlite_working_dir import SQLiteWorkingDirs

# Each migration is a list of statements run in one transaction; PRAGMA user_version
# counts how many have been applied. Append new ones, never edit a shipped one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        """CREATE TABLE sessions (
            key TEXT PRIMARY KEY,
            title TEXT UNIQUE,
            personality TEXT,
            parent_key TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            ended INTEGER NOT NULL DEFAULT 0,
            message_count INTEGER NOT NULL DEFAULT 0
        )""",
        "CREATE INDEX sessions_recent ON sessions (updated_at DESC, key)",
        # Append-only: rows are inserted and deleted, never updated, so the search index
        # needs no UPDATE trigger.
        """CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL,
            tool_calls TEXT,
            tool_call_id TEXT,
            name TEXT,
            interrupted INTEGER NOT NULL DEFAULT 0,
            UNIQUE (session_key, idx)
        )""",
        # The rows the search index covers; FTS5 reads it as its external content table.
        """CREATE VIEW searchable_messages AS
            SELECT id, content FROM messages
            WHERE role IN ('user', 'assistant') AND content <> ''""",
        """CREATE VIRTUAL TABLE messages_fts USING fts5 (
            content,
            content = 'searchable_messages',
            content_rowid = 'id',
            tokenize = 'unicode61 remove_diacritics 2'
        )""",
        """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
            WHEN new.role IN ('user', 'assistant') AND new.content <> ''
            BEGIN
                INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
            END""",
        """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
            WHEN old.role IN ('user', 'assistant') AND old.content <> ''
            BEGIN
                INSERT INTO messages_fts (messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
            END""",
    ),
    # 2: per-call usage and cost.
    (
        """CREATE TABLE usage (
            id INTEGER PRIMARY KEY,
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            turn_id TEXT NOT NULL,
            provider TEXT NOT NULL,
            model TEXT NOT NULL,
            input_tokens INTEGER NOT NULL,
            output_tokens INTEGER NOT NULL,
            cache_read_tokens INTEGER NOT NULL,
            cache_write_tokens INTEGER NOT NULL,
            reasoning_tokens INTEGER NOT NULL,
            cost_usd REAL,
            created_at REAL NOT NULL
        )""",
        "CREATE INDEX usage_session ON usage (session_key)",
    ),
    # 3: durable execution: session specs, submissions, tagged transcript rows, events.
    (
        "ALTER TABLE sessions ADD COLUMN tenant TEXT",
        "ALTER TABLE sessions ADD COLUMN tools TEXT",
        "ALTER TABLE sessions ADD COLUMN model TEXT",
        "ALTER TABLE messages ADD COLUMN submission_id TEXT",
        "CREATE INDEX messages_submission ON messages (submission_id)"
        " WHERE submission_id IS NOT NULL",
        """CREATE TABLE submissions (
            seq INTEGER PRIMARY KEY,
            id TEXT NOT NULL UNIQUE,
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            input TEXT NOT NULL,
            personality TEXT,
            state TEXT NOT NULL,
            outcome TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            max_attempts INTEGER NOT NULL,
            lease_owner TEXT,
            lease_expires_at REAL,
            not_before REAL NOT NULL DEFAULT 0,
            abort_requested INTEGER NOT NULL DEFAULT 0,
            steps INTEGER NOT NULL DEFAULT 0,
            result TEXT,
            error TEXT,
            finish_reason TEXT,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            settled_at REAL
        )""",
        "CREATE INDEX submissions_open ON submissions (state, seq) WHERE state <> 'settled'",
        "CREATE INDEX submissions_session ON submissions (session_key, seq)",
        """CREATE TABLE events (
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            first_seq INTEGER NOT NULL,
            type TEXT NOT NULL,
            payload TEXT NOT NULL,
            submission_id TEXT,
            PRIMARY KEY (session_key, seq)
        ) WITHOUT ROWID""",
    ),
    # 4: when a session ended (prune goes by it). Sessions ended before it was recorded
    # count as ended at their last activity.
    (
        "ALTER TABLE sessions ADD COLUMN ended_at REAL",
        "UPDATE sessions SET ended_at = updated_at WHERE ended <> 0",
        "CREATE INDEX sessions_ended ON sessions (ended_at) WHERE ended <> 0",
    ),
    # 5: context compactions (the summary itself is a marker message in the transcript).
    (
        """CREATE TABLE compactions (
            id INTEGER PRIMARY KEY,
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            marker_index INTEGER NOT NULL,
            tail_start INTEGER NOT NULL,
            messages_before INTEGER NOT NULL,
            messages_after INTEGER NOT NULL,
            tokens_before INTEGER NOT NULL,
            tokens_after INTEGER NOT NULL,
            duration_ms REAL NOT NULL,
            reason TEXT NOT NULL,
            summarised INTEGER NOT NULL,
            created_at REAL NOT NULL
        )""",
        "CREATE INDEX compactions_session ON compactions (session_key, id)",
    ),
    # 6: search matches word stems ("banana" finds "bananas"): the index is rebuilt with
    # the porter tokenizer from the messages themselves (nothing else is lost or moved).
    (
        "DROP TRIGGER messages_fts_insert",
        "DROP TRIGGER messages_fts_delete",
        "DROP TABLE messages_fts",
        """CREATE VIRTUAL TABLE messages_fts USING fts5 (
            content,
            content = 'searchable_messages',
            content_rowid = 'id',
            tokenize = 'porter unicode61 remove_diacritics 2'
        )""",
        """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
            WHEN new.role IN ('user', 'assistant') AND new.content <> ''
            BEGIN
                INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
            END""",
        """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
            WHEN old.role IN ('user', 'assistant') AND old.content <> ''
            BEGIN
                INSERT INTO messages_fts (messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
            END""",
        "INSERT INTO messages_fts (messages_fts) VALUES ('rebuild')",
    ),
    # outbox: outgoing messages (chat replies, cron deliveries), see sqlite_outbox.
    OUTBOX_MIGRATION,
    # approval answers: relayed between processes, the first answer to a call wins.
    (
        """CREATE TABLE IF NOT EXISTS approval_answers (
            session_key TEXT NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
            call_id TEXT NOT NULL,
            decision TEXT NOT NULL,
            answered_at REAL NOT NULL,
            PRIMARY KEY (session_key, call_id)
        ) WITHOUT ROWID""",
    ),
    # session working_dir: where a session's turns run, part of its spec.
    ("ALTER TABLE sessions ADD COLUMN working_dir TEXT",),
    # cron: jobs and the run ledger (services/sessions/sqlite_cron.py).
    CRON_MIGRATION,
)
SCHEMA_VERSION = len(MIGRATIONS)
SECONDS_PER_DAY = 86_400.0

_COMPACTION_COLUMNS = (
    "marker_index, tail_start, messages_before, messages_after, tokens_before, tokens_after,"
    " duration_ms, reason, summarised, created_at"
)


class SQLiteSessionStore(
    SQLiteCron, SQLiteApprovals, SQLiteSubmissions, SQLiteOutbox, SQLiteWorkingDirs
):
    """A `SessionStore` (and `ExecutionStore`) over one SQLite file, off the event loop.

    Every statement runs on the store's connection threads (`sqlite_threads`): writes on
    one writer thread, committed in groups, reads on reader threads with connections of
    their own. A slow query or another process holding the write lock delays the
    callers that wait for it, never the event loop (and so never the other sessions).

    Several instances, in one process or many, may share a file: each write is atomic in
    one `BEGIN IMMEDIATE` transaction, and `busy_timeout` makes writers queue instead of
    fail. Opening (and migrating) happens in the constructor, on the caller's thread.
    """

    def __init__(
        self,
        path: str,
        *,
        clock: Callable[[], float] = time.time,
        busy_timeout: float = 5.0,
        readers: int = DEFAULT_READERS,
    ) -> None:
        self._clock = clock
        self._wake = asyncio.Event()
        self._outbox_wake = asyncio.Event()
        # Opens, switches to WAL and migrates (see SQLiteDb); `seam doctor` uses it too.
        self.connector = SQLiteDb(
            path, MIGRATIONS, busy_timeout=busy_timeout, label="session database"
        )
        self.connector.open()
        try:
            self.connector.migrate()
            # A ":memory:" database lives in its one connection: reads must use it too.
            shared = path in ("", ":memory:") or path.startswith("file::memory:")
            self._threads = SQLiteThreads(
                self.connector.connection,
                None if shared else self.connector.open_reader,
                readers=readers,
                label="seam-sessions",
            )
        except BaseException:
            self.connector.close()
            raise

    async def create(
        self,
        key: str,
        *,
        personality: str | None = None,
        title: str | None = None,
        parent_key: str | None = None,
        tenant: str | None = None,
        tools: Sequence[str] | None = None,
        model: str | None = None,
    ) -> SessionInfo:
        existing = await self.get(key)
        if existing is not None:
            return existing
        if title is not None:
            check_title(title)
        row = (
            key,
            title,
            personality,
            parent_key,
            tenant,
            None if tools is None else json.dumps(list(tools)),
            model,
        )

        def write(db: sqlite3.Connection) -> SessionInfo:
            now = self._clock()
            try:
                # Another process may have created it since the read above: theirs wins.
                db.execute(
                    "INSERT INTO sessions (key, title, personality, parent_key, tenant, tools,"
                    " model, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (key) DO NOTHING",
                    (*row, now, now),
                )
            except sqlite3.IntegrityError:
                raise self._duplicate(db, title) from None
            info = self._info_of(db, key)
            assert info is not None
            return info

        return await self._threads.write(write)

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

    async def get(self, key: str) -> SessionInfo | None:
        return await self._threads.read(partial(self._info_in, key))

    def _info_in(self, key: str, db: sqlite3.Connection) -> SessionInfo | None:
        return self._info_of(db, key)

    async def append(self, key: str, messages: Sequence[Message]) -> None:
        if not messages:

            def check(db: sqlite3.Connection) -> None:
                self._must_exist(db, key)

            await self._threads.read(check)
            return
        rows = [
            (
                m.role,
                m.content,
                dump_calls(m.tool_calls),
                m.tool_call_id,
                m.name,
                m.interrupted,
            )
            for m in messages
        ]

        def write(db: sqlite3.Connection) -> None:
            row = db.execute(
                "UPDATE sessions SET message_count = message_count + ?, updated_at = ?"
                " WHERE key = ? RETURNING message_count",
                (len(rows), self._clock(), key),
            ).fetchone()
            if row is None:
                raise SessionNotFound(f"no session {key!r}")
            first = row[0] - len(rows)
            db.executemany(
                f"INSERT INTO messages (session_key, idx, {MESSAGE_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(key, first + i, *r) for i, r in enumerate(rows)],
            )

        await self._threads.write(write)

    async def messages(self, key: str, start: int = 0, limit: int | None = None) -> list[Message]:
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be >= 0 or None, got {limit}")
        sql = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_key = ? AND idx >= "
        if start >= 0:
            sql += "? ORDER BY idx LIMIT ?"
            params: tuple[object, ...] = (key, start, -1 if limit is None else limit)
        else:
            # Counted in the same statement, so a concurrent append cannot skew the offset.
            sql += "(SELECT message_count FROM sessions WHERE key = ?) + ? ORDER BY idx LIMIT ?"
            params = (key, key, start, -1 if limit is None else limit)

        def read(db: sqlite3.Connection) -> list[Message]:
            rows = db.execute(sql, params).fetchall()
            if not rows:
                self._must_exist(db, key)
            return [message_from_row(row) for row in rows]

        return await self._threads.read(read)

    async def set_title(self, key: str, title: str) -> None:
        check_title(title)

        def write(db: sqlite3.Connection) -> None:
            try:
                cursor = db.execute("UPDATE sessions SET title = ? WHERE key = ?", (title, key))
            except sqlite3.IntegrityError:
                raise self._duplicate(db, title) from None
            if cursor.rowcount == 0:
                raise SessionNotFound(f"no session {key!r}")

        await self._threads.write(write)

    async def find_by_title(self, title: str) -> SessionInfo | None:
        def read(db: sqlite3.Connection) -> SessionInfo | None:
            row = db.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE title = ?", (title,)
            ).fetchone()
            return None if row is None else session_from_row(row)

        return await self._threads.read(read)

    async def search(
        self,
        query: str,
        limit: int = 20,
        *,
        exclude_session: str | None = None,
        tenant: str | None = None,
    ) -> list[SearchHit]:
        check_limit(limit)
        wanted = dict.fromkeys(words(query))
        if not wanted or not limit:
            return []
        # Each word becomes a quoted FTS5 string: user text is never parsed as syntax.
        # The words hold only letters and digits, so none contains a quote. FTS5 stems
        # them itself (the porter tokenizer); the snippet looks for the same stems.
        match = " ".join(f'"{word}"' for word in wanted)
        stems = set(terms(query))
        if exclude_session is None and tenant is None:
            sql = (
                "WITH hits AS (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?"
                " ORDER BY rowid DESC LIMIT ?)"
                " SELECT m.id, m.session_key, m.idx, m.role, m.content"
                " FROM hits JOIN messages AS m ON m.id = hits.rowid ORDER BY m.id DESC"
            )
            params: tuple[object, ...] = (match, limit)
        else:
            # FTS5 hands rows over newest first; the filters just skip the other ones.
            sql = (
                "SELECT m.id, m.session_key, m.idx, m.role, m.content"
                " FROM messages_fts JOIN messages AS m ON m.id = messages_fts.rowid"
                " WHERE messages_fts MATCH ? AND (? IS NULL OR m.session_key <> ?)"
                " AND (? IS NULL OR m.session_key IN (SELECT key FROM sessions WHERE tenant = ?))"
                " ORDER BY messages_fts.rowid DESC LIMIT ?"
            )
            params = (match, exclude_session, exclude_session, tenant, tenant, limit)

        def read(db: sqlite3.Connection) -> list[SearchHit]:
            return [
                SearchHit(key, idx, role, snippet(content, stems), message_id)
                for message_id, key, idx, role, content in db.execute(sql, params)
            ]

        return await self._threads.read(read)

    async def record_compaction(self, key: str, record: CompactionRecord) -> None:
        row = (
            key,
            record.marker_index,
            record.tail_start,
            record.messages_before,
            record.messages_after,
            record.tokens_before,
            record.tokens_after,
            record.duration_ms,
            record.reason,
            int(record.summarised),
        )

        def write(db: sqlite3.Connection) -> None:
            self._must_exist(db, key)
            db.execute(
                f"INSERT INTO compactions (session_key, {_COMPACTION_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (*row, record.created_at or self._clock()),
            )

        await self._threads.write(write)

    async def compactions(self, key: str) -> list[CompactionRecord]:
        def read(db: sqlite3.Connection) -> list[CompactionRecord]:
            with snapshot(db):
                self._must_exist(db, key)
                rows = db.execute(
                    f"SELECT {_COMPACTION_COLUMNS} FROM compactions WHERE session_key = ?"
                    " ORDER BY id",
                    (key,),
                ).fetchall()
            return [compaction_from_row(row) for row in rows]

        return await self._threads.read(read)

    async def delete(self, key: str) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            # Messages go by cascade; their delete trigger keeps the search index in step.
            return db.execute("DELETE FROM sessions WHERE key = ?", (key,)).rowcount > 0

        return await self._threads.write(write)

    async def load(self, key: str) -> LoadedSession | None:
        def read(db: sqlite3.Connection) -> LoadedSession | None:
            with snapshot(db):
                info = self._info_of(db, key)
                if info is None:
                    return None
                messages = self._messages_of(db, key)
            return LoadedSession(info, tuple(messages))

        return await self._threads.read(read)

    async def next_title(self, title: str) -> str:
        check_title(title)
        base = lineage_base(title)

        def read(db: sqlite3.Connection) -> list[str]:
            # " #" up to " $" (the next character) is every title that starts with "base #".
            rows = db.execute(
                "SELECT title FROM sessions WHERE title = ? OR (title >= ? AND title < ?)",
                (base, base + " #", base + " $"),
            ).fetchall()
            return [row[0] for row in rows]

        return next_lineage_title(base, await self._threads.read(read))

    async def touch(self, key: str) -> None:
        def write(db: sqlite3.Connection) -> None:
            cursor = db.execute(
                "UPDATE sessions SET updated_at = ? WHERE key = ?", (self._clock(), key)
            )
            if cursor.rowcount == 0:
                raise SessionNotFound(f"no session {key!r}")

        await self._threads.write(write)

    async def end(self, key: str) -> None:
        def write(db: sqlite3.Connection) -> None:
            cursor = db.execute(
                "UPDATE sessions SET ended = 1, ended_at = coalesce(ended_at, ?) WHERE key = ?",
                (self._clock(), key),
            )
            if cursor.rowcount == 0:
                raise SessionNotFound(f"no session {key!r}")

        await self._threads.write(write)

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
                row[0]: _totals(row[1:])
                for row in db.execute(
                    f"SELECT session_key, {_USAGE_TOTALS} FROM usage"
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

    async def resolve_root(self, key: str) -> SessionInfo:
        def read(db: sqlite3.Connection) -> SessionInfo:
            with snapshot(db):
                info = self._info_of(db, key)
                if info is None:
                    raise SessionNotFound(f"no session {key!r}")
                seen = {info.key}
                while info.parent_key is not None and info.parent_key not in seen:
                    parent = self._info_of(db, info.parent_key)
                    if parent is None:
                        break
                    seen.add(parent.key)
                    info = parent
            return info

        return await self._threads.read(read)

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

    async def aclose(self) -> None:
        """Let queued work finish, stop the threads and close the file."""
        await self._threads.aclose()
        self.connector.close()

    # Statements shared by several calls; each runs on the caller's connection.

    def _info_of(self, db: sqlite3.Connection, key: str) -> SessionInfo | None:
        row = db.execute(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE key = ?", (key,)).fetchone()
        return None if row is None else session_from_row(row)

    def _messages_of(self, db: sqlite3.Connection, key: str) -> list[Message]:
        rows = db.execute(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_key = ? ORDER BY idx", (key,)
        ).fetchall()
        return [message_from_row(row) for row in rows]

    def _totals_of(self, db: sqlite3.Connection, key: str) -> UsageTotals:
        row = db.execute(
            f"SELECT {_USAGE_TOTALS} FROM usage WHERE session_key = ?", (key,)
        ).fetchone()
        return _totals(row)

    def _must_exist(self, db: sqlite3.Connection, key: str) -> None:
        if db.execute("SELECT 1 FROM sessions WHERE key = ?", (key,)).fetchone() is None:
            raise SessionNotFound(f"no session {key!r}")

    def _duplicate(self, db: sqlite3.Connection, title: str | None) -> DuplicateTitle:
        row = db.execute("SELECT key FROM sessions WHERE title = ?", (title,)).fetchone()
        other = "another session" if row is None else f"session {row[0]!r}"
        return DuplicateTitle(f"title {title!r} is already used by {other}")

    # Defined last: once the class body binds `list`, later annotations would name this method.
    async def list(self, limit: int = 50) -> list[SessionInfo]:
        check_limit(limit)

        def read(db: sqlite3.Connection) -> list[SessionInfo]:
            rows = db.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, key LIMIT ?",
                (limit,),
            ).fetchall()
            return [session_from_row(row) for row in rows]

        return await self._threads.read(read)


_USAGE_TOTALS = (
    "count(*), total(input_tokens), total(output_tokens), total(cache_read_tokens),"
    " total(cache_write_tokens), total(reasoning_tokens), total(cost_usd),"
    " count(*) - count(cost_usd)"
)


def _totals(row: Sequence[Any]) -> UsageTotals:
    return UsageTotals(
        calls=row[0],
        usage=Usage(*(int(n) for n in row[1:6])),
        cost_usd=float(row[6]),
        unpriced_calls=row[7],
    )


def _days(days: float) -> float:
    if not days >= 0:  # also refuses NaN
        raise ValueError(f"older_than_days must be >= 0, got {days}")
    return days
