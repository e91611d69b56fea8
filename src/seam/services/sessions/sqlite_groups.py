"""One transaction for a group of writes, each write still all-or-nothing with its own outcome.

Shared by the two places a SQLite store commits: the writer thread (`sqlite_threads`) and
the event loop's own connection (`sqlite_inline`). A group first runs plainly in one
transaction; when a write of it fails, the group is rolled back and run again with a
savepoint around each write, so the failing write is undone alone and hears its error while
the others commit together. Failures are rare (a lost lease, a duplicate title), so the
common case pays for no savepoints. Nobody hears an outcome before the `COMMIT`.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from typing import Any

Work = Callable[[sqlite3.Connection], Any]


class Job:
    """A write (or read) waiting for its connection, and the future its caller awaits."""

    __slots__ = ("future", "loop", "work")

    def __init__(
        self, work: Work, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]
    ) -> None:
        self.work = work
        self.loop = loop
        self.future = future


Outcome = tuple[Job, bool, Any]
Tell = Callable[[Job, bool, Any], None]


def run_plain(db: sqlite3.Connection, job: Job) -> Outcome:
    """`job` inside the open transaction; a failure raises (the group is run again)."""
    return job, True, job.work(db)


def run_in_savepoint(db: sqlite3.Connection, job: Job) -> Outcome:
    """`job` inside the open transaction, undone alone when it fails (raises when the
    failure ended the transaction itself)."""
    db.execute("SAVEPOINT job")
    try:
        value = job.work(db)
    except Exception as exc:
        if not db.in_transaction:
            raise
        db.execute("ROLLBACK TO job")
        db.execute("RELEASE job")
        return job, False, exc
    db.execute("RELEASE job")
    return job, True, value


def commit_group(
    db: sqlite3.Connection,
    group: list[Job],
    run: Callable[[sqlite3.Connection, Job], Outcome],
    tell: Tell,
) -> bool:
    """`run` for each job in the transaction `db` has just begun, then `COMMIT`, then
    each outcome told. False (rolled back, nobody told) when `run` raised or the commit
    failed."""
    try:
        outcomes = [run(db, job) for job in group]
        db.execute("COMMIT")
    except Exception:
        rollback(db)
        return False
    for job, ok, value in outcomes:
        tell(job, ok, value)
    return True


def rollback(db: sqlite3.Connection) -> None:
    # SQLite has already rolled back after some errors (disk full, I/O): don't mask them.
    if db.in_transaction:
        db.execute("ROLLBACK")
