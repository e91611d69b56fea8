"""The PostgreSQL store: sessions, transcripts, submissions and the event log in one
database that several worker processes, on several machines, share.

It keeps the SQLite store's promises (the conformance suites run against both): search
matches whole words, case- and accent-insensitively, every query word required, in user
and assistant messages only, newest first (see `postgres_text`). What PostgreSQL adds is
the shared queue (`postgres_execution`): claims by `FOR NO KEY UPDATE SKIP LOCKED`, and
wake-ups by LISTEN/NOTIFY on one dedicated connection per store.

Every statement runs on a connection from an `AsyncConnectionPool`; each write that
touches more than one row is one transaction. Times come from the injected clock, as in
the other stores (workers' clocks are assumed to agree to well within a lease).

    store = await PostgresStore.connect("postgresql://seam@db/seam")
    ...
    await store.aclose()
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, Self, TypedDict, Unpack

import psycopg
from psycopg import AsyncConnection, errors
from psycopg_pool import AsyncConnectionPool

from seam.contracts.closing import ClosesOnExit
from seam.contracts.context import CompactionRecord
from seam.contracts.db import StoreUnavailable
from seam.contracts.messages import Message, Usage
from seam.contracts.sessions import (
    ANY_SESSION,
    PLAIN_SESSION,
    DuplicateTitle,
    NewSession,
    SearchHit,
    SearchScope,
    SessionInfo,
    SessionNotFound,
    UsageRecord,
    UsageTotals,
    check_limit,
    check_page,
    check_title,
)
from seam.services.sessions.claim_hints import LoadHint, SeqHint
from seam.services.sessions.postgres_approvals import PostgresApprovals
from seam.services.sessions.postgres_channels import CHANNEL, CONNECT_TIMEOUT
from seam.services.sessions.postgres_checkpoints import PostgresCheckpoints
from seam.services.sessions.postgres_cron import PostgresCron
from seam.services.sessions.postgres_execution import PostgresSubmissions
from seam.services.sessions.postgres_faults import (
    OUTAGE_ERRORS,
    check_pool,
    is_outage,
    unavailable,
)
from seam.services.sessions.postgres_images import PostgresImages, sweep_images
from seam.services.sessions.postgres_listen import PostgresListener, describe_url
from seam.services.sessions.postgres_outbox import PostgresOutbox
from seam.services.sessions.postgres_pipeline import pipelined
from seam.services.sessions.postgres_rows import (
    Params,
    insert_messages,
    insert_usage,
    message_from_row,
    session_from_row,
)
from seam.services.sessions.postgres_schema import check_schema_name, migrate
from seam.services.sessions.postgres_text import query_words, snippet
from seam.services.sessions.postgres_transcripts import PostgresTranscripts
from seam.services.sessions.postgres_upkeep import PostgresUpkeep
from seam.services.sessions.postgres_usage_report import PostgresUsageReport
from seam.services.sessions.postgres_vectors import PostgresVectors
from seam.services.sessions.postgres_working_dir import PostgresWorkingDirs
from seam.services.sessions.rows import (
    COMPACTION_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_COLUMNS,
    compaction_from_row,
    compaction_params,
    insert_sql,
)
from seam.services.sessions.transcript_copies import TranscriptCopies

# Re-exported: the channel, the timeout and `describe_url` lived here, and callers import
# them from here.
__all__ = ["CHANNEL", "COMPACTION_COLUMNS", "CONNECT_TIMEOUT", "PostgresStore", "describe_url"]


class PostgresOptions(TypedDict, total=False):
    """`PostgresStore`'s keywords, which `connect` passes on as they are."""

    clock: Callable[[], float]
    schema: str | None
    min_connections: int
    max_connections: int
    idle_in_transaction: float


# Seconds a pooled connection may sit idle inside a transaction before the server ends its
# session. The store never waits on anything but the server inside a transaction, so one
# idle for this long belongs to a task that hung mid-way (a worker stalled under a row
# lock), and ending it frees the row for the next claim: claims skip locked rows, so a
# lock held by a live but stuck worker would otherwise stall its session for good. (In a
# pipelined transaction the timer runs only after a Sync: `read_point`.)
IDLE_IN_TRANSACTION_SECONDS = 30.0


class PostgresStore(
    PostgresTranscripts,
    PostgresCron,
    PostgresApprovals,
    PostgresUpkeep,
    PostgresSubmissions,
    PostgresOutbox,
    PostgresWorkingDirs,
    PostgresCheckpoints,
    PostgresImages,
    PostgresUsageReport,
    PostgresListener,
    ClosesOnExit,
):
    """A `SessionStore` and `ExecutionStore` over a PostgreSQL database.

    `schema` keeps this store's tables in their own PostgreSQL schema (created and
    migrated on `open`), so one database can hold several independent stores; the
    default is `public`. Build it with `await PostgresStore.connect(url)` (or construct,
    then `await store.open()`); `aclose()` ends the pool and the listener.
    """

    def __init__(
        self,
        url: str,
        *,
        clock: Callable[[], float] = time.time,
        schema: str | None = None,
        min_connections: int = 1,
        max_connections: int = 10,
        idle_in_transaction: float = IDLE_IN_TRANSACTION_SECONDS,
    ) -> None:
        self._url = url
        self._clock = clock
        self._schema = check_schema_name(schema or "public")
        self._pool = AsyncConnectionPool(
            url,
            min_size=min_connections,
            max_size=max_connections,
            kwargs={"autocommit": True, "options": _options(self._schema, idle_in_transaction)},
            open=False,
            name=f"seam-{self._schema}",
        )
        self._wake = asyncio.Event()
        self._outbox_wake = asyncio.Event()  # set by the outbox's notifications
        self._opened = False
        self._open_lock = asyncio.Lock()
        self._listener: asyncio.Task[None] | None = None
        self._listening: asyncio.Future[None] | None = None
        self._pool_check: asyncio.Task[None] | None = None
        self._note_owed = False  # a settlement's NOTIFY not sent yet (`_owe_note`)
        self._seq_hint: SeqHint | None = None  # the last claim's event seq
        self._load_hint: LoadHint | None = None  # and its session's row (`LoadHint`)
        self._transcripts = TranscriptCopies()  # live sessions' transcripts, checked per load
        self._note_sender: asyncio.Future[None] | None = None

    def message_vectors(self) -> PostgresVectors:
        """`KeepsVectors`: the per-message vectors of search by meaning."""
        return PostgresVectors(self._all)

    @classmethod
    async def connect(cls, url: str, **options: Unpack[PostgresOptions]) -> Self:
        """Build (the constructor's keywords) and open: `await PostgresStore.connect(url)`."""
        store = cls(url, **options)
        await store.open()
        return store

    async def open(self) -> None:
        """Connect and bring the schema up to date (safe in several processes at once).

        The first connection is made directly, so a wrong URL or password fails at once
        with the server's own words instead of after the pool's retry timeout. Called by
        the first use when nobody called it, so the store can be built where no event loop
        runs yet (the composition root) and connect when it is first needed.
        """
        async with self._open_lock:
            if self._opened:
                return
            await self._open()
            self._opened = True

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        """A pooled connection; an outage under it (see `postgres_faults`) comes out as
        `StoreUnavailable`, and has the pool test its idle connections, so the ones the
        server dropped are replaced instead of failing the next callers one by one."""
        if not self._opened:
            await self.open()
        self._seq_hint = self._load_hint = None  # a claim's hints serve the next calls
        try:
            async with self._pool.connection() as conn:
                yield conn
        except OUTAGE_ERRORS as exc:
            if isinstance(exc, StoreUnavailable) or not is_outage(exc):
                raise
            self._check_pool()
            raise unavailable(exc) from exc

    def _check_pool(self) -> None:
        if self._pool_check is None or self._pool_check.done():
            self._pool_check = check_pool(self._pool)

    async def _open(self) -> None:
        try:
            conn = await AsyncConnection.connect(
                self._url, autocommit=True, connect_timeout=int(CONNECT_TIMEOUT)
            )
        except psycopg.OperationalError as exc:
            raise ConnectionError(
                f"cannot connect to PostgreSQL at {describe_url(self._url)}: {exc}"
            ) from None
        async with conn:
            await migrate(conn, self._schema)
        try:
            await self._pool.open(wait=True, timeout=CONNECT_TIMEOUT)
        except BaseException:
            await self._pool.close()
            raise

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def aclose(self) -> None:
        if self._opened:
            await self._send_owed_note()
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._listener
            self._listener = None
        if self._pool_check is not None:
            self._pool_check.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._pool_check
        await self._pool.close()

    # Connections

    @contextlib.asynccontextmanager
    async def _tx(self) -> AsyncIterator[AsyncConnection[Any]]:
        async with self._connection() as conn, conn.transaction():
            yield conn

    @contextlib.asynccontextmanager
    async def _batched(self) -> AsyncIterator[AsyncConnection[Any]]:
        """A transaction in pipeline mode, for the queue's hot writes (`postgres_pipeline`)."""
        async with self._connection() as conn, pipelined(conn):
            yield conn

    @contextlib.asynccontextmanager
    async def _snapshot(self) -> AsyncIterator[AsyncConnection[Any]]:
        """A read-only transaction whose statements all see one snapshot."""
        async with self._connection() as conn, conn.transaction():
            await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    async def _one(self, query: Any, params: Params = None) -> Any:
        async with self._connection() as conn:
            cur = await conn.execute(query, params)
            return await cur.fetchone()

    async def _all(self, query: Any, params: Params = None) -> list[Any]:
        async with self._connection() as conn:
            cur = await conn.execute(query, params)
            rows: list[Any] = await cur.fetchall()
            return rows

    # Sessions

    async def create(self, key: str, new: NewSession = PLAIN_SESSION) -> SessionInfo:
        existing = await self.get(key)
        if existing is not None:
            return existing
        if new.title is not None:
            check_title(new.title)
        now = self._clock()
        try:
            async with self._tx() as conn:
                # Another process may have created it since the read above: theirs wins.
                await conn.execute(
                    "INSERT INTO sessions (key, title, personality, parent_key, created_at,"
                    " updated_at, tenant, tools, model)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s::text[], %s)"
                    " ON CONFLICT (key) DO NOTHING",
                    (
                        key,
                        new.title,
                        new.personality,
                        new.parent_key,
                        now,
                        now,
                        new.tenant,
                        None if new.tools is None else list(new.tools),
                        new.model,
                    ),
                )
                cur = await conn.execute(
                    f"SELECT {SESSION_COLUMNS} FROM sessions WHERE key = %s", (key,)
                )
                row = await cur.fetchone()
        except errors.UniqueViolation:
            raise await self._duplicate(new.title) from None
        assert row is not None
        return session_from_row(row)

    async def get(self, key: str) -> SessionInfo | None:
        hint = self._load_hint  # the session a claim just took: its row, as the claim read it
        if hint is not None and hint.serves(key):
            return hint.session
        row = await self._one(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE key = %s", (key,))
        return None if row is None else session_from_row(row)

    async def append(self, key: str, messages: Sequence[Message]) -> None:
        if not messages:
            if not await self._exists(key):
                raise SessionNotFound(f"no session {key!r}")
            return
        async with self._tx() as conn:
            await insert_messages(conn, key, messages, None, self._clock())

    async def messages(self, key: str, start: int = 0, limit: int | None = None) -> list[Message]:
        check_page(limit)
        sql = f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_key = %s AND idx >= "
        if start >= 0:
            sql += "%s ORDER BY idx LIMIT %s"
            params: tuple[object, ...] = (key, start, limit)
        else:
            # Counted in the same statement, so a concurrent append cannot skew the offset.
            sql += "(SELECT message_count FROM sessions WHERE key = %s) + %s ORDER BY idx LIMIT %s"
            params = (key, key, start, limit)
        rows = await self._all(sql, params)
        if not rows and not await self._exists(key):
            raise SessionNotFound(f"no session {key!r}")
        return await self._hydrated([message_from_row(row) for row in rows])

    async def set_title(self, key: str, title: str) -> None:
        check_title(title)
        try:
            async with self._connection() as conn:
                cur = await conn.execute(
                    "UPDATE sessions SET title = %s WHERE key = %s", (title, key)
                )
        except errors.UniqueViolation:
            raise await self._duplicate(title) from None
        if cur.rowcount == 0:
            raise SessionNotFound(f"no session {key!r}")

    async def find_by_title(self, title: str) -> SessionInfo | None:
        row = await self._one(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE title = %s", (title,))
        return None if row is None else session_from_row(row)

    async def search(
        self, query: str, limit: int = 20, scope: SearchScope = ANY_SESSION
    ) -> list[SearchHit]:
        check_limit(limit)
        wanted = query_words(query)
        if not wanted or not limit:
            return []
        # The words are a bound array parameter: user text is never parsed as syntax.
        rows = await self._all(
            "SELECT id, session_key, idx, role, content FROM messages"
            " WHERE words @> %(words)s::text[]"
            " AND (%(skip)s::text IS NULL OR session_key <> %(skip)s)"
            " AND (%(tenant)s::text IS NULL"
            "      OR session_key IN (SELECT key FROM sessions WHERE tenant = %(tenant)s))"
            " ORDER BY id DESC LIMIT %(limit)s",
            {
                "words": wanted,
                "skip": scope.exclude_session,
                "tenant": scope.tenant,
                "limit": limit,
            },
        )
        return [
            SearchHit(key, idx, role, snippet(bytes(content).decode(), wanted), message_id)
            for message_id, key, idx, role, content in rows
        ]

    async def record_usage(self, key: str, record: UsageRecord) -> None:
        try:
            async with self._connection() as conn:
                await insert_usage(conn, key, record, self._clock())
        except errors.ForeignKeyViolation:
            raise SessionNotFound(f"no session {key!r}") from None

    async def usage_totals(self, key: str) -> UsageTotals:
        row = await self._one(
            "SELECT count(u.id), coalesce(sum(u.input_tokens), 0),"
            " coalesce(sum(u.output_tokens), 0), coalesce(sum(u.cache_read_tokens), 0),"
            " coalesce(sum(u.cache_write_tokens), 0), coalesce(sum(u.reasoning_tokens), 0),"
            " coalesce(sum(u.cost_usd), 0), count(u.id) - count(u.cost_usd)"
            " FROM sessions AS s LEFT JOIN usage AS u ON u.session_key = s.key"
            " WHERE s.key = %s GROUP BY s.key",
            (key,),
        )
        if row is None:
            raise SessionNotFound(f"no session {key!r}")
        return UsageTotals(
            calls=row[0],
            usage=Usage(*(int(n) for n in row[1:6])),
            cost_usd=float(row[6]),
            unpriced_calls=row[7],
        )

    async def record_compaction(self, key: str, record: CompactionRecord) -> None:
        try:
            async with self._connection() as conn:
                await conn.execute(
                    _INSERT_COMPACTION, compaction_params(key, record, self._clock())
                )
        except errors.ForeignKeyViolation:
            raise SessionNotFound(f"no session {key!r}") from None

    async def compactions(self, key: str) -> list[CompactionRecord]:
        if not await self._exists(key):
            raise SessionNotFound(f"no session {key!r}")
        rows = await self._all(
            f"SELECT {COMPACTION_COLUMNS} FROM compactions WHERE session_key = %s ORDER BY id",
            (key,),
        )
        return [compaction_from_row(row) for row in rows]

    async def delete(self, key: str) -> bool:
        # Messages, usage, submissions, events and compactions go by cascade.
        async with self._tx() as conn:
            cur = await conn.execute("DELETE FROM sessions WHERE key = %s", (key,))
            deleted: bool = cur.rowcount > 0
            if deleted:
                await sweep_images(conn)  # the images no other session shows
        return deleted

    async def rename(self, old: str, new: str) -> bool:
        """`SessionRenamer`: the session and everything keyed by it move to `new`, in one
        transaction (`session_rename.py`)."""
        from seam.services.sessions.session_rename import rename_sql

        sql = rename_sql("%s")
        async with self._connection() as conn, conn.transaction():
            row = await (await conn.execute(sql.title, (old,))).fetchone()
            if row is None:
                return False
            await conn.execute(sql.copy, (new, old))
            for statement in (*sql.children, sql.forks):
                await conn.execute(statement, (new, old))
            await conn.execute(sql.drop, (old,))
            if row[0] is not None:
                await conn.execute(sql.retitle, (row[0], new))
        return True

    async def _exists(self, key: str) -> bool:
        return await self._one("SELECT 1 FROM sessions WHERE key = %s", (key,)) is not None

    async def _duplicate(self, title: str | None) -> DuplicateTitle:
        row = await self._one("SELECT key FROM sessions WHERE title = %s", (title,))
        other = "another session" if row is None else f"session {row[0]!r}"
        return DuplicateTitle(f"title {title!r} is already used by {other}")

    # Defined last: once the class body binds `list`, later annotations would name this method.
    async def list(self, limit: int = 50) -> list[SessionInfo]:
        check_limit(limit)
        rows = await self._all(
            f"SELECT {SESSION_COLUMNS} FROM sessions"
            ' ORDER BY updated_at DESC, key COLLATE "C" LIMIT %s',
            (limit,),
        )
        return [session_from_row(row) for row in rows]


_INSERT_COMPACTION = insert_sql("compactions", f"session_key, {COMPACTION_COLUMNS}", "%s")


def _options(schema: str, idle_in_transaction: float) -> str:
    """The pooled connections' server settings: the store's schema, and how long one may
    stay idle in a transaction (`IDLE_IN_TRANSACTION_SECONDS`)."""
    idle_ms = max(1, round(idle_in_transaction * 1000))
    return f"-c search_path={schema} -c idle_in_transaction_session_timeout={idle_ms}"
