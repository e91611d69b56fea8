"""Submissions and the event log on SQLite: the `ExecutionStore` half of the SQLite store.

A mixin of `SQLiteSessionStore` (kept apart for size): the tables come from the same
migrations, and every write is one atomic unit on the writer thread (`sqlite_threads`),
so a transcript step and the submission's progress commit together or not at all, and a
claim cannot race another process's claim (SQLite has one writer at a time).

SQLite has no LISTEN/NOTIFY: `wait_for_work` wakes at once for work admitted in this
process and otherwise polls the file, which is right for the embedded single-machine
case. Several machines share a queue through PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from seam.contracts.execution import (
    ALL_EVENTS,
    ANY_RUNNABLE,
    DEFAULT_LEASE_SECONDS,
    EVERY_SUBMISSION,
    ClaimScope,
    EventQuery,
    EventRecord,
    JournalEntry,
    Settlement,
    Submission,
    SubmissionNotFound,
    SubmissionQuery,
    check_holder,
    give_up_message,
)
from seam.contracts.messages import Message
from seam.contracts.sessions import SessionNotFound, UsageRecord
from seam.services.sessions.rows import (
    EVENT_COLUMNS,
    MESSAGE_COLUMNS,
    SESSION_EVENTS,
    SUBMISSION_COLUMNS,
    USAGE_COLUMNS,
    event_rows,
    insert_sql,
    message_from_row,
    message_params,
    session_events_from,
    shown_images,
    submission_from_row,
    usage_params,
)
from seam.services.sessions.sqlite_execution_now import LAST_SEQ, SQLiteAdmitClaimed
from seam.services.sessions.sqlite_images import put_images, with_images
from seam.services.sessions.sqlite_search_index import SearchBacklog
from seam.services.sessions.sqlite_threads import SQLiteThreads, snapshot
from seam.services.sessions.sqlite_transcripts import STAMP_COLUMNS
from seam.services.sessions.sqlite_wait import woken
from seam.services.sessions.transcript_copies import Stamp, TranscriptCopies


class SQLiteSubmissions(SQLiteAdmitClaimed):
    _clock: Callable[[], float]
    _wake: asyncio.Event
    _threads: SQLiteThreads
    _transcripts: TranscriptCopies
    _search_backlog: SearchBacklog

    def _row(self, db: sqlite3.Connection, submission_id: str) -> Submission | None:
        row = db.execute(
            f"SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE id = ?", (submission_id,)
        ).fetchone()
        return None if row is None else submission_from_row(row)

    def _written(self, db: sqlite3.Connection, submission_id: str) -> Submission:
        """The row as this transaction just wrote it (so it exists)."""
        sub = self._row(db, submission_id)
        assert sub is not None
        return sub

    def _update(
        self, db: sqlite3.Connection, assignments: str, params: tuple[Any, ...]
    ) -> Submission:
        """`UPDATE submissions SET <assignments> WHERE id = ?` (the id last in `params`),
        the row as written coming back in the same statement."""
        row = db.execute(
            f"UPDATE submissions SET {assignments} WHERE id = ? RETURNING {SUBMISSION_COLUMNS}",
            params,
        ).fetchone()
        assert row is not None, "the caller read the row in this transaction"
        return submission_from_row(row)

    async def _write_waking(self, write: Callable[[sqlite3.Connection], Submission]) -> Submission:
        """Run `write`, which may have made work runnable, and wake this process's idle
        workers (other processes find it on their next look)."""
        written = await self._threads.write_small(write)
        self._wake.set()
        return written

    def _held(self, db: sqlite3.Connection, submission_id: str, owner: str | None) -> Submission:
        return check_holder(self._row(db, submission_id), submission_id, owner)

    async def submission(self, submission_id: str) -> Submission | None:
        return await self._threads.read_small(partial(self._row_of, submission_id))

    def _row_of(self, submission_id: str, db: sqlite3.Connection) -> Submission | None:
        return self._row(db, submission_id)

    async def submissions(
        self, session_key: str | None = None, query: SubmissionQuery = EVERY_SUBMISSION
    ) -> list[Submission]:
        states, limit = query.states, query.limit
        sql = f"SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE 1"
        params: list[Any] = []
        if session_key is not None:
            sql += " AND session_key = ?"
            params.append(session_key)
        if states is not None:
            sql += f" AND state IN ({', '.join('?' * len(states))})"
            params.extend(states)
            if "settled" not in states:  # the open rows' index (see the schema)
                sql += " AND state <> 'settled'"
        sql += " ORDER BY seq LIMIT ?"
        params.append(-1 if limit is None else limit)

        def read(db: sqlite3.Connection) -> list[Submission]:
            return [submission_from_row(r) for r in db.execute(sql, params).fetchall()]

        return await self._threads.read(read)

    async def claim(
        self, owner: str, *, lease: float = DEFAULT_LEASE_SECONDS, scope: ClaimScope = ANY_RUNNABLE
    ) -> Submission | None:
        # Small: the queue is read CLAIM_BATCH rows at a time (see `_claim`).
        return await self._threads.write_small(partial(self._claim, owner, lease, scope))

    def _claim(
        self, owner: str, lease: float, scope: ClaimScope, db: sqlite3.Connection
    ) -> Submission | None:
        now = self._clock()
        dead = json.dumps(list(scope.dead_owners))
        submission_id = scope.submission_id
        # A lease is over when it expired or its owner is known dead.
        over = (
            "(s.lease_expires_at <= :now OR s.lease_owner IN (SELECT value FROM json_each(:dead)))"
        )
        sql = (
            "SELECT s.id, s.attempts, s.max_attempts FROM submissions AS s"
            # Behind any running submission of its session, even one whose lease is
            # over: that one is reclaimed first, so two turns never interleave.
            " WHERE s.state <> 'settled'"
            " AND ((s.state = 'queued' AND s.not_before <= :now AND NOT EXISTS ("
            "   SELECT 1 FROM submissions AS r WHERE r.session_key = s.session_key"
            # (`<> 'settled'` lets SQLite read the session's open rows alone.)
            "   AND r.state = 'running' AND r.state <> 'settled'))"
            f" OR (s.state = 'running' AND {over}))"
        )
        params: dict[str, Any] = {"now": now, "dead": dead}
        if submission_id is not None:
            sql += " AND s.id = :id"
            params["id"] = submission_id
        # A batch at a time, so a long queue costs no more than its head: the ones given
        # up below are settled, so the next batch starts past them.
        sql += f" ORDER BY s.seq LIMIT {CLAIM_BATCH}"
        while True:
            rows = db.execute(sql, params).fetchall()
            for sid, attempts, max_attempts in rows:
                if attempts < max_attempts:
                    return self._update(
                        db,
                        "state = 'running', attempts = attempts + 1, lease_owner = ?,"
                        " lease_expires_at = ?, updated_at = ?",
                        (owner, now + lease, now, sid),
                    )
                self._give_up(db, sid, now)
            if len(rows) < CLAIM_BATCH:
                return None

    def _give_up(self, db: sqlite3.Connection, submission_id: str, now: float) -> None:
        """Settle a submission out of attempts as failed."""
        sub = self._written(db, submission_id)
        db.execute(
            "UPDATE submissions SET state = 'settled', outcome = 'failed', error = ?,"
            " lease_owner = NULL, lease_expires_at = NULL, settled_at = ?,"
            " updated_at = ? WHERE id = ?",
            (give_up_message(sub), now, now, submission_id),
        )

    async def renew(self, submission_id: str, owner: str, *, lease: float) -> None:
        def write(db: sqlite3.Connection) -> None:
            self._held(db, submission_id, owner)
            now = self._clock()
            db.execute(
                "UPDATE submissions SET lease_expires_at = ?, updated_at = ? WHERE id = ?",
                (now + lease, now, submission_id),
            )

        await self._threads.write_small(write)

    async def append_for(self, submission_id: str, owner: str, entry: JournalEntry) -> None:
        written = await self._threads.write_small(
            partial(self._append_for, submission_id, owner, entry)
        )
        self._transcripts.appended(*written, entry.messages)

    def _append_for(
        self, submission_id: str, owner: str, entry: JournalEntry, db: sqlite3.Connection
    ) -> tuple[str, Stamp | None]:
        # The lease checked and the steps counted in one statement.
        row = db.execute(
            "UPDATE submissions SET steps = steps + ?, updated_at = ?"
            " WHERE id = ? AND state = 'running' AND lease_owner = ? RETURNING session_key",
            (len(entry.messages), self._clock(), submission_id, owner),
        ).fetchone()
        if row is None:
            self._held(db, submission_id, owner)  # raises, saying why
        return row[0], self._journal(db, row[0], submission_id, entry)

    def _journal(
        self, db: sqlite3.Connection, key: str, submission_id: str, entry: JournalEntry
    ) -> Stamp | None:
        """Write `entry` for a submission of session `key` its writer holds (the caller
        counts the submission's steps); the session row's stamp after it, when it wrote
        messages (`sqlite_transcripts`: the kept copy is extended with them)."""
        now = self._clock()
        messages = entry.messages
        if entry.events:
            _insert_events(db, entry.events)
        for record in entry.usage:
            insert_usage(db, key, record, now)
        if not messages:
            return None
        row = db.execute(
            "UPDATE sessions SET message_count = message_count + ?, updated_at = ?"
            f" WHERE key = ? RETURNING {STAMP_COLUMNS}",
            (len(messages), now, key),
        ).fetchone()
        if row is None:
            raise SessionNotFound(f"no session {key!r}")
        first = row[0] - len(messages)
        shown = shown_images(messages)
        if shown:
            put_images(db, shown, now)
        db.executemany(
            _INSERT_MESSAGE,
            [(key, first + i, *message_params(m), submission_id) for i, m in enumerate(messages)],
        )
        self._search_backlog.add(db, len(messages))
        return int(row[0]), int(row[1]), float(row[2])

    async def submission_messages(self, submission_id: str) -> list[Message]:
        def read(db: sqlite3.Connection) -> list[Message]:
            with snapshot(db):
                if self._row(db, submission_id) is None:
                    raise SubmissionNotFound(f"no submission {submission_id!r}")
                rows = db.execute(
                    f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE submission_id = ? ORDER BY idx",
                    (submission_id,),
                ).fetchall()
                return with_images(db, [message_from_row(r) for r in rows])

        return await self._threads.read(read)

    async def settle(
        self, submission_id: str, owner: str | None, settlement: Settlement
    ) -> Submission:
        stamp: list[Stamp | None] = [None]
        journal = settlement.journal

        def write(db: sqlite3.Connection) -> Submission:
            # The holder checked and the row settled in one statement; no row back means
            # the check failed, and `_held` says why.
            steps = 0 if journal is None else len(journal.messages)
            row = db.execute(
                _SETTLE, _settle_params(submission_id, owner, settlement, steps, self._clock())
            ).fetchone()
            if row is None:
                self._held(db, submission_id, owner)
                raise AssertionError("unreachable: the holder check passed in this write")
            sub = submission_from_row(row)
            if journal is not None:
                stamp[0] = self._journal(db, sub.session_key, submission_id, journal)
            return sub

        settled = await self._write_waking(write)
        if journal is not None:
            self._transcripts.appended(settled.session_key, stamp[0], journal.messages)
        return settled

    async def release(
        self, submission_id: str, owner: str, *, not_before: float, error: str | None = None
    ) -> Submission:
        def write(db: sqlite3.Connection) -> Submission:
            self._held(db, submission_id, owner)
            db.execute(
                "UPDATE submissions SET state = 'queued', not_before = ?, error = ?,"
                " lease_owner = NULL, lease_expires_at = NULL, updated_at = ? WHERE id = ?",
                (not_before, error, self._clock(), submission_id),
            )
            return self._written(db, submission_id)

        return await self._write_waking(write)

    async def request_abort(self, submission_id: str) -> Submission:
        def write(db: sqlite3.Connection) -> Submission:
            sub = self._row(db, submission_id)
            if sub is None:
                raise SubmissionNotFound(f"no submission {submission_id!r}")
            now = self._clock()
            if sub.state == "queued":
                db.execute(
                    "UPDATE submissions SET state = 'settled', outcome = 'aborted',"
                    " abort_requested = 1, settled_at = ?, updated_at = ? WHERE id = ?",
                    (now, now, submission_id),
                )
            elif sub.state == "running":
                db.execute(
                    "UPDATE submissions SET abort_requested = 1, updated_at = ? WHERE id = ?",
                    (now, submission_id),
                )
            return self._written(db, submission_id)

        return await self._threads.write_small(write)

    async def append_events(self, records: Sequence[EventRecord]) -> None:
        if not records:
            return
        await self._threads.write_small(partial(_insert_events, records=records))

    async def events(self, session_key: str, query: EventQuery = ALL_EVENTS) -> list[EventRecord]:
        only, limit = query.submission_id, query.limit
        params = (session_key, query.after_seq, only, only, -1 if limit is None else limit)

        def read(db: sqlite3.Connection) -> list[EventRecord]:
            rows = db.execute(
                "SELECT session_key, seq, first_seq, type, payload, submission_id FROM events"
                " WHERE session_key = ? AND seq > ? AND (? IS NULL OR submission_id = ?)"
                " ORDER BY seq LIMIT ?",
                params,
            ).fetchall()
            return [_record(row) for row in rows]

        return await self._threads.read(read)

    async def session_events(
        self, session_key: str, after_seq: int = 0
    ) -> list[EventRecord] | None:
        def read(db: sqlite3.Connection) -> list[EventRecord] | None:
            rows = db.execute(SESSION_EVENTS, (after_seq, session_key)).fetchall()
            return session_events_from(rows, _record)

        # On a reader thread, as `events`: a session's log after a point can be long, and
        # a read of it must not hold up the event loop.
        return await self._threads.read(read)

    async def last_seq(self, session_key: str) -> int:
        hint = self._hints.take_seq(session_key)  # the session a claim just took
        if hint is not None:
            return hint

        def read(db: sqlite3.Connection) -> int:
            return int(db.execute(LAST_SEQ, (session_key,)).fetchone()[0])

        return await self._threads.read_small(read)

    async def wait_for_work(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while (woke := await woken(self._wake, deadline)) is not None:
            if woke or await self._threads.read_small(self._has_due_work):
                return

    def _has_due_work(self, db: sqlite3.Connection) -> bool:
        now = self._clock()
        row = db.execute(
            "SELECT 1 FROM submissions WHERE state <> 'settled'"
            " AND ((state = 'queued' AND not_before <= ?)"
            " OR (state = 'running' AND lease_expires_at <= ?)) LIMIT 1",
            (now, now),
        ).fetchone()
        return row is not None


# Runnable submissions a claim reads at a time (it takes the first it may).
CLAIM_BATCH = 16
# A settlement under the holder's check (`check_holder`): the lease's owner, or none for a
# submission still queued; an abort asked meanwhile wins when the settlement says so
# (`ABORTED`, as PostgreSQL's statement writes it too).
_ABORTED_IF = "CASE WHEN :abortable AND abort_requested THEN"
_SETTLE = (
    "UPDATE submissions SET state = 'settled',"
    f" outcome = {_ABORTED_IF} 'aborted' ELSE :outcome END,"
    f" result = {_ABORTED_IF} NULL ELSE :result END,"
    f" error = {_ABORTED_IF} NULL ELSE :error END,"
    f" finish_reason = {_ABORTED_IF} 'aborted' ELSE :finish END,"
    " lease_owner = NULL, lease_expires_at = NULL, settled_at = :now, updated_at = :now,"
    " steps = steps + :steps WHERE id = :id AND CASE WHEN :owner IS NULL THEN state = 'queued'"
    " ELSE state = 'running' AND lease_owner = :owner END"
    f" RETURNING {SUBMISSION_COLUMNS}"
)
_INSERT_USAGE = insert_sql("usage", USAGE_COLUMNS, "?")
_INSERT_EVENTS = insert_sql("events", EVENT_COLUMNS, "?")
_INSERT_MESSAGE = insert_sql("messages", f"session_key, idx, {MESSAGE_COLUMNS}, submission_id", "?")


def insert_usage(db: sqlite3.Connection, key: str, record: UsageRecord, now: float) -> None:
    """One model call's usage row (the session is known to exist)."""
    db.execute(_INSERT_USAGE, usage_params(key, record, now))


def _insert_events(db: sqlite3.Connection, records: Sequence[EventRecord]) -> None:
    try:
        db.executemany(_INSERT_EVENTS, map(event_rows, records))
    except sqlite3.IntegrityError as exc:
        if "FOREIGN KEY" in str(exc):
            raise SessionNotFound(f"no session {records[0].session_key!r}") from None
        raise


def _record(row: Sequence[Any]) -> EventRecord:
    return EventRecord(*row)


def _settle_params(
    submission_id: str, owner: str | None, end: Settlement, steps: int, now: float
) -> dict[str, Any]:
    return {
        "id": submission_id,
        "owner": owner,
        "abortable": end.unless_aborted,
        "outcome": end.outcome,
        "result": end.result,
        "error": end.error,
        "finish": end.finish_reason,
        "steps": steps,
        "now": now,
    }
