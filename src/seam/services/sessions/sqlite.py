"""The durable session store: one SQLite file, WAL mode, FTS5 search over transcripts.

Search matches whole words, case- and accent-insensitively, every query word required,
in user and assistant messages only (tool output and system prompts are bulky and
would drown the conversation a user is looking for); hits come newest first.
`seam.core.sessions.InMemorySessionStore` keeps the same rules; the conformance suite
holds both to them.

The store's parts live beside it, one concern each: the schema (`sqlite_schema`), the
session lists and usage (`sqlite_summaries`), upkeep (`sqlite_upkeep`), the reads they
share (`sqlite_queries`), and the queue, outbox, cron and approvals (as before).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from seam.contracts.context import CompactionRecord
from seam.contracts.messages import Message
from seam.contracts.search import snippet, terms, words
from seam.contracts.sessions import (
    ANY_SESSION,
    PLAIN_SESSION,
    NewSession,
    SearchHit,
    SearchScope,
    SessionInfo,
    SessionNotFound,
    check_limit,
    check_page,
    check_title,
    lineage_base,
    next_lineage_title,
)
from seam.services.sessions.claim_hints import HintsUntilWrite
from seam.services.sessions.rows import (
    COMPACTION_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    compaction_from_row,
    compaction_params,
    insert_sql,
    message_from_row,
    message_params,
    session_from_row,
    shown_images,
)
from seam.services.sessions.sqlite_approvals import SQLiteApprovals
from seam.services.sessions.sqlite_checkpoints import SQLiteCheckpoints
from seam.services.sessions.sqlite_cron import SQLiteCron
from seam.services.sessions.sqlite_db import SQLiteDb
from seam.services.sessions.sqlite_execution import SQLiteSubmissions
from seam.services.sessions.sqlite_images import (
    SQLiteImages,
    put_images,
    sweep_images,
    with_images,
)
from seam.services.sessions.sqlite_outbox import SQLiteOutbox
from seam.services.sessions.sqlite_schema import MIGRATIONS, SCHEMA_VERSION
from seam.services.sessions.sqlite_search_index import (
    SearchBacklog,
    caught_up,
)
from seam.services.sessions.sqlite_summaries import SQLiteSummaries
from seam.services.sessions.sqlite_threads import DEFAULT_READERS, SQLiteThreads, snapshot
from seam.services.sessions.sqlite_transcripts import SQLiteTranscripts
from seam.services.sessions.sqlite_upkeep import SECONDS_PER_DAY, SQLiteUpkeep
from seam.services.sessions.sqlite_working_dir import SQLiteWorkingDirs
from seam.services.sessions.transcript_copies import TranscriptCopies

if TYPE_CHECKING:
    from seam.contracts.session_recall import MessageVectors
    from seam.contracts.usage_report import UsageGroup, UsageGrouping, UsageQuery

# Re-exported: the schema and the day length lived here, and callers import them from here.
__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "SECONDS_PER_DAY", "SQLiteSessionStore"]


# `base` (?1) and the highest-numbered title of its lineage ("?1 #N", N = [1-9][0-9]*),
# found in the index `sessions_lineage` (the title lineages migration, `sqlite_schema`):
# its entries are keyed by the title without its trailing digits (?2 = "base #" finds
# exactly the titles "base #" + digits), then by length and title, so the longest then
# greatest is the first entry read backwards: one seek, however long the lineage (the
# range scan it replaced read every "base #N" to order them: 0.4 ms at a thousand, on the
# thread turns wait for).
NEXT_TITLE_SQL = """
SELECT title FROM sessions WHERE title = ?1
UNION ALL
SELECT title FROM (
    SELECT title FROM sessions
    WHERE rtrim(title, '0123456789') = ?2 AND title GLOB '* #[1-9]*'
    AND substr(title, ?3) GLOB '[1-9]*'
    ORDER BY length(title) DESC, title DESC LIMIT 1
)
"""


class SQLiteSessionStore(
    SQLiteSummaries,
    SQLiteUpkeep,
    SQLiteCron,
    SQLiteApprovals,
    SQLiteSubmissions,
    SQLiteOutbox,
    SQLiteWorkingDirs,
    SQLiteCheckpoints,
    SQLiteImages,
    SQLiteTranscripts,
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

    async def usage_by(self, grouping: UsageGrouping, query: UsageQuery) -> list[UsageGroup]:
        """`UsageReport`: the dashboard's usage sums (imported on first use)."""
        from seam.services.sessions.sqlite_usage_report import usage_by

        return await usage_by(self._threads, grouping, query)

    def message_vectors(self) -> MessageVectors:
        """`KeepsVectors`: the per-message vectors of search by meaning (imported here)."""
        from seam.services.sessions.sqlite_vectors import SQLiteVectors

        return SQLiteVectors(self._threads)

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
        # Live sessions' transcripts, checked against the file at each `load`.
        self._transcripts = TranscriptCopies()
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
                open_loop=None if shared else self.connector.open_loop,
            )
            self._search_backlog = SearchBacklog()
            self._hints = HintsUntilWrite(lambda: self._threads.writes)  # `claim_hints`
        except BaseException:
            self.connector.close()
            raise

    async def create(self, key: str, new: NewSession = PLAIN_SESSION) -> SessionInfo:
        existing = await self.get(key)
        if existing is not None:
            return existing
        title, tools = new.title, new.tools
        if title is not None:
            check_title(title)
        row = (
            key,
            title,
            new.personality,
            new.parent_key,
            new.tenant,
            None if tools is None else json.dumps(list(tools)),
            new.model,
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

        return await self._threads.write_small(write)

    async def get(self, key: str) -> SessionInfo | None:
        if (hint := self._hints.load(key, take=False)) is not None:  # a claim just read it
            return hint.session
        return await self._threads.read_small(partial(self._info_in, key))

    def _info_in(self, key: str, db: sqlite3.Connection) -> SessionInfo | None:
        return self._info_of(db, key)

    async def append(self, key: str, messages: Sequence[Message]) -> None:
        if not messages:

            def check(db: sqlite3.Connection) -> None:
                self._must_exist(db, key)

            await self._threads.read(check)
            return
        rows = [message_params(m) for m in messages]

        def write(db: sqlite3.Connection) -> None:
            row = db.execute(
                "UPDATE sessions SET message_count = message_count + ?, updated_at = ?"
                " WHERE key = ? RETURNING message_count",
                (len(rows), self._clock(), key),
            ).fetchone()
            if row is None:
                raise SessionNotFound(f"no session {key!r}")
            first = row[0] - len(rows)
            put_images(db, shown_images(messages), self._clock())
            db.executemany(
                insert_sql("messages", f"session_key, idx, {MESSAGE_COLUMNS}", "?"),
                [(key, first + i, *r) for i, r in enumerate(rows)],
            )
            self._search_backlog.add(db, len(rows))

        await self._threads.write_small(write)

    async def messages(self, key: str, start: int = 0, limit: int | None = None) -> list[Message]:
        check_page(limit)
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
            return with_images(db, [message_from_row(row) for row in rows])

        if await self._threads.read_small(partial(_rows_between, key, start, limit)) > SMALL_READ:
            return await self._threads.read(read)
        return await self._threads.read_small(read)

    async def set_title(self, key: str, title: str) -> None:
        check_title(title)

        def write(db: sqlite3.Connection) -> None:
            try:
                cursor = db.execute("UPDATE sessions SET title = ? WHERE key = ?", (title, key))
            except sqlite3.IntegrityError:
                raise self._duplicate(db, title) from None
            if cursor.rowcount == 0:
                raise SessionNotFound(f"no session {key!r}")

        await self._threads.write_small(write)

    async def find_by_title(self, title: str) -> SessionInfo | None:
        def read(db: sqlite3.Connection) -> SessionInfo | None:
            row = db.execute(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE title = ?", (title,)
            ).fetchone()
            return None if row is None else session_from_row(row)

        return await self._threads.read(read)

    async def search(
        self, query: str, limit: int = 20, scope: SearchScope = ANY_SESSION
    ) -> list[SearchHit]:
        check_limit(limit)
        wanted = dict.fromkeys(words(query))
        if not wanted or not limit:
            return []
        # Each word becomes a quoted FTS5 string: user text is never parsed as syntax.
        # The words hold only letters and digits, so none contains a quote. FTS5 stems
        # them itself (the porter tokenizer); the snippet looks for the same stems.
        match = " ".join(f'"{word}"' for word in wanted)
        await self.catch_up_search()
        stems = set(terms(query))
        exclude_session, tenant = scope.exclude_session, scope.tenant
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

    async def catch_up_search(self) -> None:
        """Index what was written since the last catch-up (`sqlite_search_index`)."""
        await caught_up(self._threads)

    async def record_compaction(self, key: str, record: CompactionRecord) -> None:
        def write(db: sqlite3.Connection) -> None:
            self._must_exist(db, key)
            db.execute(_INSERT_COMPACTION, compaction_params(key, record, self._clock()))

        await self._threads.write_small(write)

    async def compactions(self, key: str) -> list[CompactionRecord]:
        def read(db: sqlite3.Connection) -> list[CompactionRecord]:
            with snapshot(db):
                self._must_exist(db, key)
                rows = db.execute(
                    f"SELECT {COMPACTION_COLUMNS} FROM compactions WHERE session_key = ?"
                    " ORDER BY id",
                    (key,),
                ).fetchall()
            return [compaction_from_row(row) for row in rows]

        return await self._threads.read(read)

    async def delete(self, key: str) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            # Messages go by cascade; their delete trigger keeps the search index in step.
            deleted = db.execute("DELETE FROM sessions WHERE key = ?", (key,)).rowcount > 0
            if deleted:
                sweep_images(db)  # the images no other session shows
            return deleted

        return await self._threads.write(write)

    async def rename(self, old: str, new: str) -> bool:
        """`SessionRenamer`: the session and everything keyed by it move to `new`, in one
        transaction (`session_rename.py`)."""
        from seam.services.sessions.session_rename import rename_sql

        sql = rename_sql("?")

        def write(db: sqlite3.Connection) -> bool:
            row = db.execute(sql.title, (old,)).fetchone()
            if row is None:
                return False
            db.execute(sql.copy, (new, old))
            for statement in (*sql.children, sql.forks):
                db.execute(statement, (new, old))
            db.execute(sql.drop, (old,))
            if row[0] is not None:
                db.execute(sql.retitle, (row[0], new))
            return True

        return await self._threads.write(write)

    async def next_title(self, title: str) -> str:
        check_title(title)
        base = lineage_base(title)
        return next_lineage_title(base, await self._threads.read(partial(_lineage, base)))

    async def set_next_title(self, key: str, title: str) -> str | None:
        """Picks the number inside the write that sets it: writes run one after another
        (in one group, each in its savepoint), so each sees the titles the ones before it
        took and none is refused (a refused write would make its whole group commit run
        again). A small write, on the loop's own connection: on the writer thread, every
        new session's title kept the thread busy, so the loop handed its other writes
        over too, and each waited for the GIL there (22 ms p50 added at 100 turns/s)."""
        check_title(title)
        base = lineage_base(title)

        def write(db: sqlite3.Connection) -> str | None:
            row = db.execute("SELECT title FROM sessions WHERE key = ?", (key,)).fetchone()
            if row is None:
                raise SessionNotFound(f"no session {key!r}")
            if row[0] is not None:
                return None
            free = next_lineage_title(base, _lineage(base, db))
            db.execute("UPDATE sessions SET title = ? WHERE key = ?", (free, key))
            return free

        return await self._threads.write_small(write)

    async def touch(self, key: str) -> None:
        def write(db: sqlite3.Connection) -> None:
            cursor = db.execute(
                "UPDATE sessions SET updated_at = ? WHERE key = ?", (self._clock(), key)
            )
            if cursor.rowcount == 0:
                raise SessionNotFound(f"no session {key!r}")

        await self._threads.write_small(write)

    async def end(self, key: str) -> None:
        def write(db: sqlite3.Connection) -> None:
            cursor = db.execute(
                "UPDATE sessions SET ended = 1, ended_at = coalesce(ended_at, ?) WHERE key = ?",
                (self._clock(), key),
            )
            if cursor.rowcount == 0:
                raise SessionNotFound(f"no session {key!r}")

        await self._threads.write(write)

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

    def trace(self, callback: Callable[[str], object] | None) -> None:
        """Every SQL statement the store runs, to `callback` (None: stop), on whichever
        connection runs it (`sqlite_threads`); tests count transactions with it."""
        self._threads.trace(callback)

    async def aclose(self) -> None:
        """Let queued work finish (and the search index), stop the threads, close the file."""
        if self._search_backlog.pending:
            await self.catch_up_search()
        await self._threads.aclose()
        self.connector.close()

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


# Messages a read may return to be run on the event loop's own connection (a thread hop
# costs more than reading a short transcript; a long one is a reader thread's, about 10 us
# a message, and a Python thread decoding rows holds the GIL the loop needs anyway).
SMALL_READ = 256


def _rows_between(key: str, start: int, limit: int | None, db: sqlite3.Connection) -> int:
    """How many messages `messages(key, start, limit)` returns (0 for no session)."""
    row = db.execute("SELECT message_count FROM sessions WHERE key = ?", (key,)).fetchone()
    count = 0 if row is None else int(row[0])
    rows = count - start if start >= 0 else min(-start, count)
    return max(0, rows if limit is None else min(rows, limit))


_INSERT_COMPACTION = insert_sql("compactions", f"session_key, {COMPACTION_COLUMNS}", "?")


def _lineage(base: str, db: sqlite3.Connection) -> list[str]:
    """`base` if taken, and the lineage's highest "base #N" (digits only, longest then
    greatest): one row and one index seek, however long the lineage. A thousand sessions
    first titled "hi" made a plain scan return a thousand rows, every title, on the
    thread turns wait for."""
    rows = db.execute(NEXT_TITLE_SQL, (base, base + " #", len(base) + 3))
    return [row[0] for row in rows.fetchall()]
