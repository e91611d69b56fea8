"""The durable session store: one SQLite file, WAL mode, FTS5 search over transcripts.

Search matches whole words, case- and accent-insensitively, every query word required,
in user and assistant messages only (tool output and system prompts are bulky and
would drown the conversation a user is looking for); hits come newest first.
`seam.core.sessions.InMemorySessionStore` keeps the same rules; the conformance suite
holds both to them.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from seam.contracts.messages import Message, ToolCall, Usage
from seam.contracts.sessions import (
    DuplicateTitle,
    SearchHit,
    SessionInfo,
    SessionNotFound,
    UsageRecord,
    UsageTotals,
)

SNIPPET_CHARS = 160

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
)
SCHEMA_VERSION = len(MIGRATIONS)

_SESSION_COLUMNS = (
    "key, title, personality, created_at, updated_at, message_count, parent_key, ended"
)
_MESSAGE_COLUMNS = "role, content, tool_calls, tool_call_id, name, interrupted"

# Letters and digits; everything else (underscore included) separates words, as in
# FTS5's unicode61 tokenizer.
_WORD = re.compile(r"[^\W_]+")


class SQLiteSessionStore:
    """A `SessionStore` over one SQLite connection, used directly on the caller's thread.

    The calls are sub-millisecond local reads and writes, so running them inline on the
    event loop costs less than a hop to a worker thread would, and the agent loop's
    per-turn overhead budget is tight. The flip side: a call that waits on another
    process's write lock blocks the loop for up to `busy_timeout` seconds.

    Several instances, in one process or many, may share a file: each `append` is one
    `BEGIN IMMEDIATE` transaction, and `busy_timeout` makes writers queue instead of fail.
    """

    def __init__(
        self, path: str, *, clock: Callable[[], float] = time.time, busy_timeout: float = 5.0
    ) -> None:
        self._clock = clock
        self._db = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
        try:
            _enable_wal(self._db, busy_timeout)
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute("PRAGMA foreign_keys = ON")
            self._migrate(path)
        except BaseException:
            self._db.close()
            raise

    def _migrate(self, path: str) -> None:
        db = self._db
        while True:
            # Version is read inside the write lock, so two processes opening a new file
            # at once apply each migration exactly once.
            db.execute("BEGIN IMMEDIATE")
            try:
                version: int = db.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    raise RuntimeError(
                        f"session database {path} has schema version {version}, newer than "
                        f"this Seam supports ({SCHEMA_VERSION})"
                    )
                if version == SCHEMA_VERSION:
                    db.execute("COMMIT")
                    return
                for statement in MIGRATIONS[version]:
                    db.execute(statement)
                db.execute(f"PRAGMA user_version = {version + 1}")
                db.execute("COMMIT")
            except BaseException:
                _rollback(db)
                raise

    async def create(
        self,
        key: str,
        *,
        personality: str | None = None,
        title: str | None = None,
        parent_key: str | None = None,
    ) -> SessionInfo:
        existing = await self.get(key)
        if existing is not None:
            return existing
        if title is not None:
            _check_title(title)
        now = self._clock()
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            # Another process may have created it since the read above: theirs wins.
            db.execute(
                "INSERT INTO sessions (key, title, personality, parent_key, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
                (key, title, personality, parent_key, now, now),
            )
            row = db.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE key = ?", (key,)
            ).fetchone()
            db.execute("COMMIT")
        except sqlite3.IntegrityError:
            _rollback(db)
            raise self._duplicate(title) from None
        except BaseException:
            _rollback(db)
            raise
        return _info(row)

    async def record_usage(self, key: str, record: UsageRecord) -> None:
        if not self._exists(key):
            raise SessionNotFound(f"no session {key!r}")
        u = record.usage
        self._db.execute(
            "INSERT INTO usage (session_key, turn_id, provider, model, input_tokens,"
            " output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                record.turn_id,
                record.provider,
                record.model,
                u.input_tokens,
                u.output_tokens,
                u.cache_read_tokens,
                u.cache_write_tokens,
                u.reasoning_tokens,
                record.cost_usd,
                self._clock(),
            ),
        )

    async def usage_totals(self, key: str) -> UsageTotals:
        if not self._exists(key):
            raise SessionNotFound(f"no session {key!r}")
        row = self._db.execute(
            "SELECT count(*), total(input_tokens), total(output_tokens), total(cache_read_tokens),"
            " total(cache_write_tokens), total(reasoning_tokens), total(cost_usd),"
            " count(*) - count(cost_usd) FROM usage WHERE session_key = ?",
            (key,),
        ).fetchone()
        return UsageTotals(
            calls=row[0],
            usage=Usage(*(int(n) for n in row[1:6])),
            cost_usd=float(row[6]),
            unpriced_calls=row[7],
        )

    async def get(self, key: str) -> SessionInfo | None:
        row = self._db.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else _info(row)

    async def append(self, key: str, messages: Sequence[Message]) -> None:
        db = self._db
        if not messages:
            if not self._exists(key):
                raise SessionNotFound(f"no session {key!r}")
            return
        db.execute("BEGIN IMMEDIATE")
        try:
            row = db.execute(
                "UPDATE sessions SET message_count = message_count + ?, updated_at = ?"
                " WHERE key = ? RETURNING message_count",
                (len(messages), self._clock(), key),
            ).fetchone()
            if row is None:
                raise SessionNotFound(f"no session {key!r}")
            first = row[0] - len(messages)
            db.executemany(
                f"INSERT INTO messages (session_key, idx, {_MESSAGE_COLUMNS})"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (
                        key,
                        first + i,
                        m.role,
                        m.content,
                        _dump_calls(m.tool_calls) if m.tool_calls else None,
                        m.tool_call_id,
                        m.name,
                        m.interrupted,
                    )
                    for i, m in enumerate(messages)
                ],
            )
            db.execute("COMMIT")
        except BaseException:
            _rollback(db)
            raise

    async def messages(self, key: str, start: int = 0, limit: int | None = None) -> list[Message]:
        if limit is not None and limit < 0:
            raise ValueError(f"limit must be >= 0 or None, got {limit}")
        sql = f"SELECT {_MESSAGE_COLUMNS} FROM messages WHERE session_key = ? AND idx >= "
        if start >= 0:
            sql += "? ORDER BY idx LIMIT ?"
            params: tuple[object, ...] = (key, start, -1 if limit is None else limit)
        else:
            # Counted in the same statement, so a concurrent append cannot skew the offset.
            sql += "(SELECT message_count FROM sessions WHERE key = ?) + ? ORDER BY idx LIMIT ?"
            params = (key, key, start, -1 if limit is None else limit)
        rows = self._db.execute(sql, params).fetchall()
        if not rows and not self._exists(key):
            raise SessionNotFound(f"no session {key!r}")
        return [_message(row) for row in rows]

    async def set_title(self, key: str, title: str) -> None:
        _check_title(title)
        try:
            cursor = self._db.execute("UPDATE sessions SET title = ? WHERE key = ?", (title, key))
        except sqlite3.IntegrityError:
            raise self._duplicate(title) from None
        if cursor.rowcount == 0:
            raise SessionNotFound(f"no session {key!r}")

    async def find_by_title(self, title: str) -> SessionInfo | None:
        row = self._db.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE title = ?", (title,)
        ).fetchone()
        return None if row is None else _info(row)

    async def search(self, query: str, limit: int = 20) -> list[SearchHit]:
        _check_limit(limit)
        wanted = dict.fromkeys(_words(query))
        if not wanted or not limit:
            return []
        # Each word becomes a quoted FTS5 string: user text is never parsed as syntax.
        # The words hold only letters and digits, so none contains a quote.
        match = " ".join(f'"{word}"' for word in wanted)
        rows = self._db.execute(
            "WITH hits AS (SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?"
            " ORDER BY rowid DESC LIMIT ?)"
            " SELECT m.session_key, m.idx, m.role, m.content"
            " FROM hits JOIN messages AS m ON m.id = hits.rowid ORDER BY m.id DESC",
            (match, limit),
        ).fetchall()
        return [
            SearchHit(key, idx, role, _snippet(content, wanted)) for key, idx, role, content in rows
        ]

    async def delete(self, key: str) -> bool:
        # Messages go by cascade; their delete trigger keeps the search index in step.
        cursor = self._db.execute("DELETE FROM sessions WHERE key = ?", (key,))
        return cursor.rowcount > 0

    async def aclose(self) -> None:
        self._db.close()

    def _exists(self, key: str) -> bool:
        return (
            self._db.execute("SELECT 1 FROM sessions WHERE key = ?", (key,)).fetchone() is not None
        )

    def _duplicate(self, title: str | None) -> DuplicateTitle:
        row = self._db.execute("SELECT key FROM sessions WHERE title = ?", (title,)).fetchone()
        other = "another session" if row is None else f"session {row[0]!r}"
        return DuplicateTitle(f"title {title!r} is already used by {other}")

    # Defined last: once the class body binds `list`, later annotations would name this method.
    async def list(self, limit: int = 50) -> list[SessionInfo]:
        _check_limit(limit)
        rows = self._db.execute(
            f"SELECT {_SESSION_COLUMNS} FROM sessions ORDER BY updated_at DESC, key LIMIT ?",
            (limit,),
        ).fetchall()
        return [_info(row) for row in rows]


def _rollback(db: sqlite3.Connection) -> None:
    # SQLite has already rolled back after some errors (disk full, I/O): don't mask them.
    if db.in_transaction:
        db.execute("ROLLBACK")


def _check_limit(limit: int) -> None:
    if limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")


def _check_title(title: str) -> None:
    if not title.strip():
        raise ValueError(f"title must not be blank, got {title!r}")


def _info(row: tuple[Any, ...]) -> SessionInfo:
    key, title, personality, created, updated, count, parent_key, ended = row
    return SessionInfo(key, title, personality, created, updated, count, parent_key, bool(ended))


def _dump_calls(calls: tuple[ToolCall, ...]) -> str:
    return json.dumps(
        [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls],
        ensure_ascii=False,
        separators=(",", ":"),
    )


def _message(row: tuple[Any, ...]) -> Message:
    role, content, calls, call_id, name, interrupted = row
    return Message(
        role,
        content,
        () if calls is None else tuple(ToolCall(**c) for c in json.loads(calls)),
        call_id,
        name,
        bool(interrupted),
    )


def _fold(text: str) -> str:
    """Lowercase and strip accents, as the unicode61 tokenizer (remove_diacritics 2) does."""
    decomposed = unicodedata.normalize("NFD", text.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _words(text: str) -> list[str]:
    return _WORD.findall(_fold(text))


def _snippet(content: str, wanted: dict[str, None]) -> str:
    """One line of at most SNIPPET_CHARS around the first matching word."""
    text = " ".join(content.split())
    if len(text) <= SNIPPET_CHARS:
        return text
    at = next((m.start() for m in _WORD.finditer(text) if _fold(m.group()) in wanted), 0)
    room = SNIPPET_CHARS - 2  # one ellipsis each side
    start = max(0, min(at - room // 3, len(text) - room))
    end = start + room
    return ("…" if start else "") + text[start:end] + ("…" if end < len(text) else "")


def _enable_wal(db: sqlite3.Connection, busy_timeout: float) -> None:
    """Switch to WAL, waiting out other openers.

    Changing the journal mode takes an exclusive lock and SQLite reports a clash as
    "database is locked" at once, without consulting the busy timeout, so several
    processes opening a new file together would fail without this retry.
    """
    deadline = time.monotonic() + busy_timeout
    while True:
        try:
            if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)
