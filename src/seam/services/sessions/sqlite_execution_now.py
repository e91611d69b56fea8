"""`admit_and_claim` on SQLite: a submission its own process runs at once, admitted
already claimed, in one transaction where an admission and a claim made two.

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

from seam.contracts.execution import DEFAULT_LEASE_SECONDS, NewSubmission, Submission

if TYPE_CHECKING:
    from seam.services.sessions.sqlite_threads import SQLiteThreads

# Whether a session has a submission queued or running: through the session's own open
# rows (as a claim's look at its session goes), not the index of every open submission,
# which a burst of a thousand new turns fills, nor every submission the session ever had.
_OPEN_IN_SESSION = (
    "SELECT 1 FROM submissions INDEXED BY submissions_session_open"
    " WHERE session_key = ? AND state <> 'settled' LIMIT 1"
)


# Who claims a submission as it is admitted, and for how many seconds.
Lease = tuple[str, float]


class SQLiteAdmitClaimed:
    _clock: Callable[[], float]
    _wake: asyncio.Event
    _threads: SQLiteThreads

    if TYPE_CHECKING:

        def _admit(
            self, submission: NewSubmission, db: sqlite3.Connection, lease: Lease | None = None
        ) -> Submission: ...

        def _update(
            self, db: sqlite3.Connection, assignments: str, params: tuple[Any, ...]
        ) -> Submission: ...

    async def admit_and_claim(
        self, submission: NewSubmission, owner: str, *, lease: float = DEFAULT_LEASE_SECONDS
    ) -> Submission:
        sub = await self._threads.write_small(
            partial(self._admit_and_claim, submission, owner, lease)
        )
        if sub.lease_owner != owner:  # queued: wake this process's workers, as `admit` does
            self._wake.set()
        return sub

    def _admit_and_claim(
        self, submission: NewSubmission, owner: str, lease: float, db: sqlite3.Connection
    ) -> Submission:
        # An id admitted before is open in the session (ahead of itself) or settled.
        ahead = db.execute(_OPEN_IN_SESSION, (submission.session_key,)).fetchone() is not None
        # A new one with nothing ahead is inserted claimed: one statement, not two.
        sub = self._admit(submission, db, None if ahead else (owner, lease))
        if ahead or sub.state != "queued" or sub.attempts >= sub.max_attempts:
            return sub
        now = self._clock()
        return self._update(
            db,
            "state = 'running', attempts = attempts + 1, lease_owner = ?,"
            " lease_expires_at = ?, updated_at = ?",
            (owner, now + lease, now, sub.id),
        )
