"""`admit_and_claim` on PostgreSQL: a submission its own process runs at once, admitted
already claimed, in one transaction where an admission and a claim made two.

A mixin of `PostgresSubmissions` (apart for size). The session's row is locked as a
claim locks it (`FOR NO KEY UPDATE`) before the look at its open submissions: a claim
of the session under way elsewhere commits first (and its running submission is seen),
a claim that comes later skips the locked session (`SKIP LOCKED`) and then finds this
one running, and two of these for one session run one after the other. So one session
never has two running submissions, whatever the number of workers. A plain `admit` takes
only a key-share lock and is not held up.

The commit is synchronous, as `admit`'s is: it is the person's message being accepted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from psycopg import AsyncConnection

from seam.contracts.execution import (
    DEFAULT_LEASE_SECONDS,
    NewSubmission,
    Submission,
    check_new,
    check_same_payload,
)
from seam.contracts.sessions import SessionNotFound
from seam.services.sessions.postgres_images import put_images
from seam.services.sessions.postgres_rows import encode, submission_from_row
from seam.services.sessions.rows import SUBMISSION_COLUMNS, hashes_column

_LOCK_SESSION = "SELECT 1 FROM sessions WHERE key = %s FOR NO KEY UPDATE"
_STORED = f"SELECT {SUBMISSION_COLUMNS} FROM submissions WHERE id = %s"
# Whether the session has a running or queued submission: each found in its own partial
# index (`CLAIM_INDEXES`). Asked as `state <> 'settled'`, the planner read the session's
# every submission through `submissions_session` until it had statistics (3,000 rows a
# turn with 3,000 settled), or every open one of every session after.
_OPEN_IN_SESSION = (
    "SELECT 1 WHERE EXISTS (SELECT 1 FROM submissions WHERE session_key = %(key)s"
    " AND state = 'running') OR EXISTS (SELECT 1 FROM submissions"
    " WHERE session_key = %(key)s AND state = 'queued')"
)
_INSERT = (
    "INSERT INTO submissions (id, session_key, input, personality, state, attempts,"
    " lease_owner, lease_expires_at, max_attempts, created_at, updated_at, images)"
    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    f" ON CONFLICT (id) DO NOTHING RETURNING {SUBMISSION_COLUMNS}"
)


class PostgresAdmitClaimed:
    _clock: Callable[[], float]

    if TYPE_CHECKING:

        def _tx(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        async def _notify(self, conn: AsyncConnection[Any]) -> None: ...

    async def admit_and_claim(
        self, submission: NewSubmission, owner: str, *, lease: float = DEFAULT_LEASE_SECONDS
    ) -> Submission:
        key = submission.session_key
        async with self._tx() as conn:
            # A resend is read without a lock: locking its row after the session's would
            # take the two locks in the order opposite to a turn's write (a deadlock).
            stored = await _stored(conn, submission.id)
            if stored is not None:
                check_same_payload(stored, submission)
                return stored
            locked = await conn.execute(_LOCK_SESSION, (key,))
            if await locked.fetchone() is None:
                raise SessionNotFound(f"no session {key!r}")
            check_new(submission)
            cur = await conn.execute(_OPEN_IN_SESSION, {"key": key})
            now = self._clock()
            run = await cur.fetchone() is None and submission.max_attempts > 0
            sub = await insert_new(conn, submission, now, owner if run else None, now + lease)
            if sub is None:  # admitted by another process since our read: a resend
                return await resent(conn, submission, _stored)
            if not run:
                await self._notify(conn)
        return sub


async def insert_new(
    conn: AsyncConnection[Any],
    submission: NewSubmission,
    now: float,
    owner: str | None = None,
    until: float | None = None,
) -> Submission | None:
    """Insert `submission` (already checked new), queued, or claimed by `owner` (its first
    attempt, its lease running to `until`), with its images; None when its id was
    admitted by another process meanwhile. `admit` and `admit_and_claim` share it."""
    run = owner is not None
    cur = await conn.execute(
        _INSERT,
        (
            submission.id,
            submission.session_key,
            encode(submission.input),
            submission.personality,
            "running" if run else "queued",
            1 if run else 0,
            owner,
            until if run else None,
            submission.max_attempts,
            now,
            now,
            hashes_column(submission.images),
        ),
    )
    row = await cur.fetchone()
    if row is None:
        return None
    await put_images(conn, submission.images, now)
    return submission_from_row(row)


async def resent(
    conn: AsyncConnection[Any],
    submission: NewSubmission,
    read: Callable[[AsyncConnection[Any], str], Awaitable[Submission | None]],
) -> Submission:
    """The row another process admitted under `submission`'s id since our first read:
    the same rules as a resend (the same payload, or `SubmissionConflict`)."""
    raced = await read(conn, submission.id)
    assert raced is not None  # rows are never deleted under an open transaction's insert
    check_same_payload(raced, submission)
    return raced


async def _stored(conn: AsyncConnection[Any], submission_id: str) -> Submission | None:
    row = await (await conn.execute(_STORED, (submission_id,))).fetchone()
    return None if row is None else submission_from_row(row)


__all__ = ["PostgresAdmitClaimed", "insert_new", "resent"]
