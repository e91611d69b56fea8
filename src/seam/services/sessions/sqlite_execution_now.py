"""Admission on SQLite: `admit`, and `admit_and_claim`, where a submission its own
process runs at once is admitted already claimed, in one transaction where an admission
and a claim made two; that transaction also reads what the turn asks next (its session's
last event and row: hints, see `claim_hints`).

A mixin of `SQLiteSubmissions` (apart for size). The look at the session's open
submissions, the insert and the claim are one write on the store's writer (SQLite has
one writer at a time), so no claim elsewhere can take the session between them.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from seam.contracts.execution import (
    DEFAULT_LEASE_SECONDS,
    NewSubmission,
    Submission,
    SubmissionState,
    check_new,
    check_same_payload,
)
from seam.contracts.sessions import SessionNotFound
from seam.services.sessions.claim_hints import HintsUntilWrite, LoadHint, SeqHint
from seam.services.sessions.rows import hashes_column
from seam.services.sessions.sqlite_images import put_images
from seam.services.sessions.sqlite_transcripts import row_and_stamp

if TYPE_CHECKING:
    from seam.services.sessions.sqlite_threads import SQLiteThreads

# Whether a session has a submission queued or running: through the session's own open
# rows (as a claim's look at its session goes), not the index of every open submission,
# which a burst of a thousand new turns fills, nor every submission the session ever had.
_OPEN_IN_SESSION = (
    "SELECT 1 FROM submissions INDEXED BY submissions_session_open"
    " WHERE session_key = ? AND state <> 'settled' LIMIT 1"
)
_INSERT_SUBMISSION = (
    "INSERT INTO submissions (id, session_key, input, personality, max_attempts, created_at,"
    " updated_at, images, state, attempts, lease_owner, lease_expires_at)"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING"
)

# Who claims a submission as it is admitted, and for how many seconds.
Lease = tuple[str, float]
# What a claim read for its turn, and the store's write count as it read them.
Hints = tuple[SeqHint, LoadHint, int]
# A session's last event seq (0: none yet).
LAST_SEQ = "SELECT coalesce(max(seq), 0) FROM events WHERE session_key = ?"


class SQLiteAdmitClaimed:
    _clock: Callable[[], float]
    _wake: asyncio.Event
    _threads: SQLiteThreads
    _hints: HintsUntilWrite

    if TYPE_CHECKING:

        def _row(self, db: sqlite3.Connection, submission_id: str) -> Submission | None: ...

        async def _write_waking(
            self, write: Callable[[sqlite3.Connection], Submission]
        ) -> Submission: ...

        def _update(
            self, db: sqlite3.Connection, assignments: str, params: tuple[Any, ...]
        ) -> Submission: ...

    async def admit(self, submission: NewSubmission) -> Submission:
        return await self._write_waking(partial(self._admit, submission))

    def _admit(
        self, submission: NewSubmission, db: sqlite3.Connection, lease: Lease | None = None
    ) -> Submission:
        """The submission as stored: one admitted before, or this one, new; queued, or
        (`lease`: its owner and length) already claimed by the caller in the same insert.
        The insert comes first and says whether the id was new: the row it wrote is known
        here, and only a resend reads the stored one."""
        try:
            check_new(submission)
        except ValueError:  # a resend of one admitted before is answered all the same
            stored = self._resent(db, submission)
            if stored is None:
                raise
            return stored
        now = self._clock()
        put_images(db, submission.images, now)
        state: SubmissionState
        state, attempts, owner, expires = (
            ("queued", 0, None, None) if lease is None else ("running", 1, lease[0], now + lease[1])
        )
        key = submission.session_key
        try:
            inserted = db.execute(
                _INSERT_SUBMISSION,
                (
                    submission.id,
                    key,
                    submission.input,
                    submission.personality,
                    submission.max_attempts,
                    now,
                    now,
                    hashes_column(submission.images),
                    state,
                    attempts,
                    owner,
                    expires,
                ),
            ).rowcount
        except sqlite3.IntegrityError as exc:  # the session's foreign key
            if "FOREIGN KEY" in str(exc):
                raise SessionNotFound(f"no session {key!r}") from None
            raise
        if not inserted:  # the id was taken: admitted before
            stored = self._resent(db, submission)
            assert stored is not None, "the insert found the id taken in this write"
            return stored
        return Submission(
            submission.id,
            key,
            submission.input,
            state,
            now,
            now,
            submission.personality,
            attempts=attempts,
            max_attempts=submission.max_attempts,
            lease_owner=owner,
            lease_expires_at=expires,
            images=tuple(image.sha256 for image in submission.images),
        )

    def _resent(self, db: sqlite3.Connection, submission: NewSubmission) -> Submission | None:
        """The stored submission `submission` resends, when there is one (a conflict
        when its payload differs)."""
        existing = self._row(db, submission.id)
        if existing is not None:
            check_same_payload(existing, submission)
        return existing

    async def admit_and_claim(
        self, submission: NewSubmission, owner: str, *, lease: float = DEFAULT_LEASE_SECONDS
    ) -> Submission:
        sub, hints = await self._threads.write_small(
            partial(self._admit_and_claim, submission, owner, lease)
        )
        if hints is not None:
            self._hints.hold(*hints)
        elif sub.lease_owner != owner:  # queued: wake this process's workers, as `admit` does
            self._wake.set()
        return sub

    def _admit_and_claim(
        self, submission: NewSubmission, owner: str, lease: float, db: sqlite3.Connection
    ) -> tuple[Submission, Hints | None]:
        # An id admitted before is open in the session (ahead of itself) or settled.
        key = submission.session_key
        ahead = db.execute(_OPEN_IN_SESSION, (key,)).fetchone() is not None
        # A new one with nothing ahead is inserted claimed: one statement, not two.
        sub = self._admit(submission, db, None if ahead else (owner, lease))
        if ahead or sub.state == "settled":
            return sub, None
        if sub.state == "queued":  # not inserted claimed: claim it as `claim` would
            if sub.attempts >= sub.max_attempts:
                return sub, None
            now = self._clock()
            sub = self._update(
                db,
                "state = 'running', attempts = attempts + 1, lease_owner = ?,"
                " lease_expires_at = ?, updated_at = ?",
                (owner, now + lease, now, sub.id),
            )
        # Claimed here (a running one of someone else's would be ahead): what the turn
        # asks next, read in this transaction (`claim_hints`).
        return sub, _hints(key, db, self._threads.writes)


def _hints(key: str, db: sqlite3.Connection, written: int) -> Hints | None:
    found = row_and_stamp(key, db)
    if found is None:
        return None
    last = db.execute(LAST_SEQ, (key,)).fetchone()[0]
    return SeqHint(key, last), LoadHint(*found), written
