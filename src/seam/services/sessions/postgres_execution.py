"""Submissions and the event log on PostgreSQL: the `ExecutionStore` half of
`PostgresStore`, a queue that workers on several machines share.

Claiming: one transaction picks the oldest runnable submission with
`FOR NO KEY UPDATE OF submission, session SKIP LOCKED`, so concurrent claimers never
wait on each other and never take the same row, and a session being claimed by one
worker is skipped by the others. Under those locks a fresh statement re-checks that the
session has no other running submission and no earlier due one still queued: every
claim of a queued submission holds its session's row lock until it commits, so the
re-check sees any claim that won the race, and a row skipped only because another
transaction held it locked is not overtaken by the next one of its session.
At most one submission per session runs at a time (stricter than "no live lease": a
queued submission also waits behind a running one whose lease ran out, which is
reclaimed first).

Every write that changes a submission checks, under its row lock, that the caller still
holds the lease; `append_for` writes the transcript rows and the submission's progress
in one transaction. Those hot writes (claim, renew, append, settle, release) run in
pipeline mode (`postgres_pipeline`): a transaction costs one round trip per result read
before deciding what to write, plus its COMMIT. Claims, renewals and the event log do
not wait for the WAL flush at commit: they ride on the next commit that does
(`relax_commit`). Admission, release, settlement and aborts NOTIFY the channel, so idle
workers (`wait_for_work`) wake at once; lease expiry and back-off are found by the
workers' periodic look (their wait's timeout).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from psycopg import AsyncConnection, AsyncCursor, errors, sql
from psycopg_pool import AsyncConnectionPool

from seam.contracts.execution import (
    ALL_EVENTS,
    ANY_RUNNABLE,
    DEFAULT_LEASE_SECONDS,
    EVERY_SUBMISSION,
    ClaimScope,
    EventQuery,
    EventRecord,
    JournalEntry,
    NewSubmission,
    Settlement,
    Submission,
    SubmissionNotFound,
    SubmissionQuery,
    check_holder,
    check_new,
    check_same_payload,
    give_up_message,
)
from seam.contracts.messages import Message
from seam.contracts.sessions import SessionNotFound
from seam.services.sessions.postgres_execution_now import PostgresAdmitClaimed
from seam.services.sessions.postgres_images import put_images
from seam.services.sessions.postgres_pipeline import (
    SESSION_GONE,
    pipelined,
    relax_commit,
    session_gone,
)
from seam.services.sessions.postgres_rows import (
    Params,
    encode,
    event_from_row,
    insert_messages,
    insert_usage,
    message_from_row,
    returned,
    submission_from_row,
)
from seam.services.sessions.rows import (
    EVENT_COLUMNS,
    MESSAGE_COLUMNS,
    SUBMISSION_COLUMNS,
    event_params,
    hashes_column,
    insert_sql,
)

# Runnable, as the contract says; `%(now)s` and `%(dead)s` are bound per claim.
_RUNNABLE = """(
    (s.state = 'queued' AND s.not_before <= %(now)s AND NOT EXISTS (
        SELECT 1 FROM submissions AS r
        WHERE r.session_key = s.session_key AND r.state = 'running'))
    OR (s.state = 'running' AND (s.lease_expires_at IS NULL OR s.lease_expires_at <= %(now)s
        OR s.lease_owner = ANY (%(dead)s::text[])))
)"""
# A queued submission waits behind any earlier one of its session that is due, as in the
# other stores, where the oldest runnable one is found by a scan in admission order. Here
# the scan skips rows other transactions hold locked (SKIP LOCKED), and a claimer that
# skipped a session because its session row was taken may still hold the lock on that
# session's next submission (row locks last until the transaction ends), as does an
# admission re-sending an existing id: without this rule the submission after it would
# be claimed first. Not for a claim of one named submission (the caller chose it).
_IN_ORDER = """(s.state <> 'queued' OR NOT EXISTS (
    SELECT 1 FROM submissions AS e
    WHERE e.session_key = s.session_key AND e.state = 'queued'
    AND e.not_before <= %(now)s AND e.seq < s.seq)
)"""


class PostgresSubmissions(PostgresAdmitClaimed):
    """Mixed into `PostgresStore`, which provides the pool, clock and notifications."""

    _pool: AsyncConnectionPool[Any]
    _clock: Callable[[], float]
    _wake: asyncio.Event

    if TYPE_CHECKING:

        def _tx(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        def _batched(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        def _connection(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        async def _one(self, query: Any, params: Params = None) -> Any: ...

        async def _all(self, query: Any, params: Params = None) -> list[Any]: ...

        async def _notify(self, conn: AsyncConnection[Any]) -> None: ...

        async def _hydrated(self, messages: list[Message]) -> list[Message]: ...

        async def _ensure_listening(self) -> None: ...

    # Admission and reads

    async def admit(self, submission: NewSubmission) -> Submission:
        async with self._tx() as conn:
            existing = await _locked(conn, submission.id)
            if existing is not None:
                check_same_payload(existing, submission)
                return existing
            # Shared lock: the session cannot be deleted under the new submission.
            cur = await conn.execute(
                "SELECT 1 FROM sessions WHERE key = %s FOR KEY SHARE", (submission.session_key,)
            )
            if await cur.fetchone() is None:
                raise SessionNotFound(f"no session {submission.session_key!r}")
            check_new(submission)
            now = self._clock()
            cur = await conn.execute(
                "INSERT INTO submissions (id, session_key, input, personality, state,"
                " max_attempts, created_at, updated_at, images)"
                " VALUES (%s, %s, %s, %s, 'queued', %s, %s, %s, %s)"
                f" ON CONFLICT (id) DO NOTHING RETURNING {SUBMISSION_COLUMNS}",
                (
                    submission.id,
                    submission.session_key,
                    encode(submission.input),
                    submission.personality,
                    submission.max_attempts,
                    now,
                    now,
                    hashes_column(submission.images),
                ),
            )
            row = await cur.fetchone()
            if row is not None:
                await put_images(conn, submission.images, now)
            if row is None:
                # Admitted by another process since our read: same rules as a resend.
                raced = await _locked(conn, submission.id)
                assert raced is not None
                check_same_payload(raced, submission)
                return raced
            await self._notify(conn)
        return submission_from_row(row)

    async def submission(self, submission_id: str) -> Submission | None:
        row = await self._one(
            f"SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE id = %s", (submission_id,)
        )
        return None if row is None else submission_from_row(row)

    async def submissions(
        self, session_key: str | None = None, query: SubmissionQuery = EVERY_SUBMISSION
    ) -> list[Submission]:
        states = query.states
        # Only the filters given, so the planner can use the open-submissions index.
        where = [sql.SQL("true")]
        if session_key is not None:
            where.append(sql.SQL("session_key = %(key)s"))
        if states is not None:
            where.append(sql.SQL("state = ANY (%(states)s::text[])"))
        select = sql.SQL(
            "SELECT {columns} FROM submissions WHERE {where} ORDER BY seq LIMIT %(limit)s"
        ).format(columns=sql.SQL(SUBMISSION_COLUMNS), where=sql.SQL(" AND ").join(where))
        rows = await self._all(
            select,
            {
                "key": session_key,
                "states": None if states is None else list(states),
                "limit": query.limit,
            },
        )
        return [submission_from_row(row) for row in rows]

    # Claims and leases

    async def claim(
        self, owner: str, *, lease: float = DEFAULT_LEASE_SECONDS, scope: ClaimScope = ANY_RUNNABLE
    ) -> Submission | None:
        # Listen before looking, so work that appears after this look wakes the worker.
        await self._ensure_listening()
        now = self._clock()
        dead = list(scope.dead_owners)
        submission_id = scope.submission_id
        pick = sql.SQL(
            "SELECT s.id FROM submissions AS s JOIN sessions AS k ON k.key = s.session_key"
            " WHERE s.state <> 'settled' AND {runnable}{order}{only}"
            " AND NOT (s.session_key = ANY (%(skip)s::text[]))"
            " ORDER BY s.seq LIMIT 1 FOR NO KEY UPDATE OF s, k SKIP LOCKED"
        ).format(
            runnable=sql.SQL(_RUNNABLE),
            order=sql.SQL("" if submission_id is not None else f" AND {_IN_ORDER}"),
            only=sql.SQL(" AND s.id = %(id)s" if submission_id is not None else ""),
        )
        skip: list[str] = []
        async with self._connection() as conn:
            async with pipelined(conn):
                await relax_commit(conn)
                while True:
                    params = {"now": now, "dead": dead, "skip": skip, "id": submission_id}
                    row = await (await conn.execute(pick, params)).fetchone()
                    if row is None:
                        return None
                    sub, blocked = await _recheck(conn, row[0], now, submission_id is None)
                    if blocked or not _runnable(sub, now, dead):
                        skip.append(sub.session_key)
                        continue
                    if sub.attempts < sub.max_attempts:
                        break
                    await self._give_up(conn, sub, now)
                cur = await conn.execute(
                    "UPDATE submissions SET state = 'running', attempts = attempts + 1,"
                    " lease_owner = %s, lease_expires_at = %s, updated_at = %s"
                    f" WHERE id = %s RETURNING {SUBMISSION_COLUMNS}",
                    (owner, now + lease, now, sub.id),
                )
            return submission_from_row(await returned(cur))

    async def _give_up(self, conn: AsyncConnection[Any], sub: Submission, now: float) -> None:
        """Settle `sub` as failed (no attempts left), in the claim's transaction; a
        settlement, so this commit waits for the WAL flush after all."""
        await conn.execute("SET LOCAL synchronous_commit = on")
        await conn.execute(
            "UPDATE submissions SET state = 'settled', outcome = 'failed',"
            " error = %s, lease_owner = NULL, lease_expires_at = NULL,"
            " settled_at = %s, updated_at = %s WHERE id = %s",
            (encode(give_up_message(sub)), now, now, sub.id),
        )
        await self._notify(conn)

    async def renew(self, submission_id: str, owner: str, *, lease: float) -> None:
        async with self._batched() as conn:
            await relax_commit(conn)
            await _held(conn, submission_id, owner)
            now = self._clock()
            await conn.execute(
                "UPDATE submissions SET lease_expires_at = %s, updated_at = %s WHERE id = %s",
                (now + lease, now, submission_id),
            )

    async def append_for(self, submission_id: str, owner: str, entry: JournalEntry) -> None:
        sub: Submission | None = None
        try:
            async with self._batched() as conn:
                sub = await _held(conn, submission_id, owner)
                await self._append_for(conn, sub, entry)
        except SESSION_GONE:
            raise session_gone(sub) from None

    async def _append_for(
        self, conn: AsyncConnection[Any], sub: Submission, entry: JournalEntry
    ) -> None:
        """`entry` written in the caller's pipelined transaction, for `sub` (its lease
        checked); a foreign key error (the session gone) raises at the caller's COMMIT."""
        now = self._clock()
        messages = entry.messages
        for record in entry.usage:
            await insert_usage(conn, sub.session_key, record, now)
        if entry.events:
            async with conn.cursor() as cur:
                await _insert_events(cur, entry.events)
        if not messages:
            return
        await insert_messages(conn, sub.session_key, messages, sub.id, now, queued=True)
        await conn.execute(
            "UPDATE submissions SET steps = steps + %s, updated_at = %s WHERE id = %s",
            (len(messages), now, sub.id),
        )

    async def submission_messages(self, submission_id: str) -> list[Message]:
        if await self._one("SELECT 1 FROM submissions WHERE id = %s", (submission_id,)) is None:
            raise SubmissionNotFound(f"no submission {submission_id!r}")
        rows = await self._all(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE submission_id = %s ORDER BY id",
            (submission_id,),
        )
        return await self._hydrated([message_from_row(row) for row in rows])

    # Settlement

    async def settle(
        self, submission_id: str, owner: str | None, settlement: Settlement
    ) -> Submission:
        sub: Submission | None = None
        async with self._connection() as conn:
            try:
                async with pipelined(conn):
                    sub = await _held(conn, submission_id, owner)
                    cur = await self._settle(conn, sub, settlement)
            except SESSION_GONE:
                raise session_gone(sub) from None
            return submission_from_row(await returned(cur))

    async def _settle(
        self, conn: AsyncConnection[Any], sub: Submission, settlement: Settlement
    ) -> AsyncCursor[Any]:
        """The journal and the settlement, queued in the caller's transaction; the cursor
        gives the settled row once it commits."""
        if settlement.journal is not None:
            await self._append_for(conn, sub, settlement.journal)
        end = settlement.for_submission(sub)
        now = self._clock()
        cur = await conn.execute(
            "UPDATE submissions SET state = 'settled', outcome = %s, result = %s,"
            " error = %s, finish_reason = %s, lease_owner = NULL, lease_expires_at = NULL,"
            f" settled_at = %s, updated_at = %s WHERE id = %s RETURNING {SUBMISSION_COLUMNS}",
            (
                end.outcome,
                encode(end.result),
                encode(end.error),
                end.finish_reason,
                now,
                now,
                sub.id,
            ),
        )
        await self._notify(conn)
        return cur

    async def release(
        self, submission_id: str, owner: str, *, not_before: float, error: str | None = None
    ) -> Submission:
        async with self._connection() as conn:
            async with pipelined(conn):
                await _held(conn, submission_id, owner)
                cur = await conn.execute(
                    "UPDATE submissions SET state = 'queued', not_before = %s, error = %s,"
                    " lease_owner = NULL, lease_expires_at = NULL, updated_at = %s"
                    f" WHERE id = %s RETURNING {SUBMISSION_COLUMNS}",
                    (not_before, encode(error), self._clock(), submission_id),
                )
                await self._notify(conn)
            return submission_from_row(await returned(cur))

    async def request_abort(self, submission_id: str) -> Submission:
        async with self._tx() as conn:
            sub = await _locked(conn, submission_id)
            if sub is None:
                raise SubmissionNotFound(f"no submission {submission_id!r}")
            if sub.state == "settled":
                return sub
            now = self._clock()
            if sub.state == "queued":
                change = (
                    "state = 'settled', outcome = 'aborted', abort_requested = true,"
                    " settled_at = %(now)s, updated_at = %(now)s"
                )
            else:
                change = "abort_requested = true, updated_at = %(now)s"
            cur = await conn.execute(
                sql.SQL(
                    "UPDATE submissions SET {change} WHERE id = %(id)s"
                    f" RETURNING {SUBMISSION_COLUMNS}"
                ).format(change=sql.SQL(change)),
                {"now": now, "id": submission_id},
            )
            row = await returned(cur)
            # A running one's owner may be idle-waiting on the channel for exactly this.
            await self._notify(conn)
        return submission_from_row(row)

    # The event log

    async def append_events(self, records: Sequence[EventRecord]) -> None:
        if not records:
            return
        try:
            async with self._batched() as conn, conn.cursor() as cur:
                # The event log is a replay aid, not the record (the transcript is): its
                # commits skip the WAL flush wait. A worker crash loses nothing committed;
                # only a server crash can lose the last few hundred ms of events.
                await relax_commit(cur)
                await _insert_events(cur, records)
        except errors.ForeignKeyViolation:
            keys = sorted({r.session_key for r in records})
            raise SessionNotFound(f"no session {', '.join(map(repr, keys))}") from None

    async def events(self, session_key: str, query: EventQuery = ALL_EVENTS) -> list[EventRecord]:
        only = query.submission_id
        rows = await self._all(
            f"SELECT {EVENT_COLUMNS} FROM events WHERE session_key = %s AND seq > %s"
            " AND (%s::text IS NULL OR submission_id = %s) ORDER BY seq LIMIT %s",
            (session_key, query.after_seq, only, only, query.limit),
        )
        return [event_from_row(row) for row in rows]

    async def last_seq(self, session_key: str) -> int:
        row = await self._one(
            "SELECT coalesce(max(seq), 0) FROM events WHERE session_key = %s", (session_key,)
        )
        return int(row[0])


async def _locked(conn: AsyncConnection[Any], submission_id: str) -> Submission | None:
    """The submission, its row locked until the transaction ends."""
    cur = await conn.execute(
        f"SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE id = %s FOR NO KEY UPDATE",
        (submission_id,),
    )
    row = await cur.fetchone()
    return None if row is None else submission_from_row(row)


async def _held(conn: AsyncConnection[Any], submission_id: str, owner: str | None) -> Submission:
    """The submission, locked, when `owner` may write to it (`check_holder`)."""
    return check_holder(await _locked(conn, submission_id), submission_id, owner)


# The picked submission read again, in a statement of its own (a fresh snapshot, taken
# after the pick locked its rows), with whether its session blocks it: another running
# submission, or (`in_order`) an earlier due one still queued (see `_IN_ORDER`).
_RECHECK = f"""SELECT {SUBMISSION_COLUMNS}, EXISTS (
    SELECT 1 FROM submissions AS o WHERE o.session_key = s.session_key AND o.id <> s.id
    AND (o.state = 'running' OR (%(in_order)s AND o.state = 'queued'
    AND o.not_before <= %(now)s AND o.seq < s.seq)))
FROM submissions AS s WHERE s.id = %(id)s FOR NO KEY UPDATE OF s"""


async def _recheck(
    conn: AsyncConnection[Any], submission_id: str, now: float, in_order: bool
) -> tuple[Submission, bool]:
    """Re-check a picked submission with a fresh snapshot, its rows locked: the
    submission as it is now, and whether its session blocks a queued one.

    The pick's snapshot may predate a claim that committed while it ran (row locks alone
    do not re-run its NOT EXISTS), so it may have seen a session idle that is now busy.
    Holding the session row, no claim of an earlier submission can be under way meanwhile.
    """
    cur = await conn.execute(_RECHECK, {"id": submission_id, "now": now, "in_order": in_order})
    row = await returned(cur)
    sub = submission_from_row(row[:-1])
    return sub, sub.state == "queued" and bool(row[-1])


def _runnable(sub: Submission, now: float, dead: list[str]) -> bool:
    """Whether the re-read `sub` may be claimed now (its session not blocking it)."""
    if sub.state == "queued":
        return sub.not_before <= now
    if sub.state == "running":
        expires = sub.lease_expires_at
        return expires is None or expires <= now or sub.lease_owner in dead
    return False


_INSERT_EVENTS = insert_sql("events", EVENT_COLUMNS, "%s")


async def _insert_events(cur: AsyncCursor[Any], records: Sequence[EventRecord]) -> None:
    await cur.executemany(_INSERT_EVENTS, [event_params(r) for r in records])
