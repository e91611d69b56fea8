"""Submissions and the event log on PostgreSQL: the `ExecutionStore` half of
`PostgresStore`, a queue that workers on several machines share.

Claims: `postgres_claim`, usually one round trip.

Every write that changes a submission checks, under its row lock, that the caller still
holds the lease; `append_for` writes the transcript rows and the submission's progress
in one transaction. A step of a turn and its settlement are one statement each
(`postgres_journal`); renewals and releases run in pipeline mode (`postgres_pipeline`):
a transaction costs one round trip per result read before deciding what to write, plus
its COMMIT. Claims, renewals and the event log do not wait for the WAL flush at commit:
they ride on the next commit that does (`relax_commit`). Admission, release, settlement
and aborts NOTIFY the channel (a settlement after its commit), so idle
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
    LeaseLost,
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
from seam.services.sessions.claim_hints import LoadHint, SeqHint
from seam.services.sessions.postgres_claim import (
    ClaimAsk,
    claim_at_once,
    claim_step_by_step,
)
from seam.services.sessions.postgres_execution_now import (
    PostgresAdmitClaimed,
    insert_new,
    resent,
)
from seam.services.sessions.postgres_journal import journal_statement
from seam.services.sessions.postgres_pipeline import (
    SESSION_GONE,
    pipelined,
    read_point,
    relax_commit,
)
from seam.services.sessions.postgres_rows import (
    Params,
    encode,
    event_from_row,
    message_from_row,
    returned,
    submission_from_row,
)
from seam.services.sessions.rows import (
    EVENT_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_EVENTS_PG,
    SUBMISSION_COLUMNS,
    event_params,
    insert_sql,
    session_events_from,
)
from seam.services.sessions.transcript_copies import TranscriptCopies


class PostgresSubmissions(PostgresAdmitClaimed):
    """Mixed into `PostgresStore`, which provides the pool, clock and notifications."""

    _pool: AsyncConnectionPool[Any]
    _clock: Callable[[], float]
    _wake: asyncio.Event
    _seq_hint: SeqHint | None
    _load_hint: LoadHint | None
    _transcripts: TranscriptCopies

    if TYPE_CHECKING:

        def _tx(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        def _batched(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        def _connection(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        async def _one(self, query: Any, params: Params = None) -> Any: ...

        async def _all(self, query: Any, params: Params = None) -> list[Any]: ...

        async def _notify(self, conn: AsyncConnection[Any]) -> None: ...

        def _owe_note(self) -> None: ...

        def _take_note(self) -> str | None: ...

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
            sub = await insert_new(conn, submission, self._clock())
            if sub is None:  # admitted by another process since our read: a resend
                return await resent(conn, submission, _locked)
            await self._notify(conn)
        return sub

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
        ask = ClaimAsk(owner, now, now + lease, list(scope.dead_owners), scope.submission_id)
        note = self._take_note()  # a settlement's NOTIFY, sent with this claim
        async with self._connection() as conn:
            try:
                claimed = await claim_at_once(conn, ask, note)
            except BaseException:
                if note is not None:
                    self._owe_note()
                raise
            sub = claimed.submission
            if claimed.picked and sub is None:  # a race lost, a busy session, no attempts
                sub = await claim_step_by_step(conn, ask, self._give_up)
            elif sub is not None:
                self._seq_hint = SeqHint(sub.session_key, claimed.last_seq)
                if claimed.session is not None and claimed.stamp is not None:
                    self._load_hint = LoadHint(claimed.session, claimed.stamp)
        return sub

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
        await self._journal(submission_id, owner, entry)

    async def _journal(
        self,
        submission_id: str,
        owner: str | None,
        entry: JournalEntry | None,
        settlement: Settlement | None = None,
    ) -> tuple[Any, ...]:
        """`entry` (and `settlement`) written by one statement (`postgres_journal`), when
        `owner` may write; the statement's row (the settled submission for a settle)."""
        query, params = journal_statement(submission_id, owner, entry, self._clock(), settlement)
        try:
            async with self._connection() as conn:
                row = await (await conn.execute(query, params)).fetchone()
                if row is None:  # nothing written: say why
                    check_holder(await _read(conn, submission_id), submission_id, owner)
                    raise LeaseLost(f"submission {submission_id!r} changed hands meanwhile")
        except SESSION_GONE:
            raise SessionNotFound(f"no session for submission {submission_id!r}") from None
        if not row[-1]:  # its messages found no session row to count them in
            raise SessionNotFound(f"no session for submission {submission_id!r}")
        key, count, cuts, created = row[-5:-1]
        if key is not None and entry is not None:  # the kept copy extended (or dropped)
            self._transcripts.appended(key, (count, cuts, created), entry.messages)
        return tuple(row[:-5])

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
        row = await self._journal(submission_id, owner, settlement.journal, settlement)
        self._owe_note()
        return submission_from_row(row)

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

    async def session_events(
        self, session_key: str, after_seq: int = 0
    ) -> list[EventRecord] | None:
        rows = await self._all(SESSION_EVENTS_PG, (after_seq, session_key))
        return session_events_from(rows, event_from_row)

    async def last_seq(self, session_key: str) -> int:
        hint, self._seq_hint = self._seq_hint, None
        if hint is not None and hint.serves(session_key):
            return hint.seq
        row = await self._one(
            "SELECT coalesce(max(seq), 0) FROM events WHERE session_key = %s", (session_key,)
        )
        return int(row[0])


async def _locked(
    conn: AsyncConnection[Any], submission_id: str, *, in_pipeline: bool = False
) -> Submission | None:
    """The submission, its row locked until the transaction ends; read after a
    `read_point()` in a `pipelined` transaction."""
    cur = await conn.execute(
        f"SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE id = %s FOR NO KEY UPDATE",
        (submission_id,),
    )
    if in_pipeline:
        await read_point()
    row = await cur.fetchone()
    return None if row is None else submission_from_row(row)


async def _read(conn: AsyncConnection[Any], submission_id: str) -> Submission | None:
    cur = await conn.execute(
        f"SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE id = %s", (submission_id,)
    )
    row = await cur.fetchone()
    return None if row is None else submission_from_row(row)


async def _held(conn: AsyncConnection[Any], submission_id: str, owner: str | None) -> Submission:
    """The submission, locked, when `owner` may write to it (`check_holder`); in a
    `pipelined` transaction."""
    return check_holder(await _locked(conn, submission_id, in_pipeline=True), submission_id, owner)


_INSERT_EVENTS = insert_sql("events", EVENT_COLUMNS, "%s")


async def _insert_events(cur: AsyncCursor[Any], records: Sequence[EventRecord]) -> None:
    await cur.executemany(_INSERT_EVENTS, [event_params(r) for r in records])
