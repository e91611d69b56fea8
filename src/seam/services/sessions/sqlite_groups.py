"""One transaction for a group of writes, each write still all-or-nothing with its own outcome.

Shared by the two places a SQLite store commits: the writer thread (`sqlite_threads`) and
the event loop's own connection (`sqlite_inline`). A group of several writes runs in one
savepoint, each write plain: writes rarely fail (a lease lost, a session deleted), and a
savepoint per write was two statements more per write, each a release and a retake of the
GIL on the writer thread (a seventh of a burst's statements). When one fails, the group is
undone to its savepoint and run again with each write in a savepoint of its own: the
failing write is undone alone and hears its error while the others commit together (a
write is a function of what the transaction holds, so running it again does the same; a
lost transaction already runs each again alone). A write alone needs no savepoint: its
failure rolls the transaction back. Nobody hears an outcome before the `COMMIT`.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from typing import Any

Work = Callable[[sqlite3.Connection], Any]


class Job:
    """A write (or read) waiting for its connection, and the future its caller awaits;
    `handed`: a write the loop's connection handed to the writer thread."""

    __slots__ = ("future", "handed", "loop", "work")

    def __init__(
        self, work: Work, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]
    ) -> None:
        self.work = work
        self.loop = loop
        self.future = future
        self.handed = False


Outcome = tuple[Job, bool, Any]
Tell = Callable[[Job, bool, Any], None]


def tell(job: Job, ok: bool, value: Any) -> None:
    """Give `job`'s caller its outcome, on the caller's loop's thread."""
    future = job.future
    if future.done():  # the caller was cancelled; the work happened anyway
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


def run_alone(db: sqlite3.Connection, job: Job) -> Outcome:
    """The only `job` of the open transaction, rolled back when it fails (raises when the
    failure ended the transaction itself)."""
    try:
        return job, True, job.work(db)
    except Exception as exc:
        if not db.in_transaction:
            raise
        db.execute("ROLLBACK")
        return job, False, exc


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


def run_together(db: sqlite3.Connection, group: list[Job]) -> list[Outcome]:
    """Every job of `group` inside the open transaction, each undone alone when it fails
    (see the module docstring; raises when a failure ended the transaction itself)."""
    db.execute("SAVEPOINT jobs")
    try:
        outcomes: list[Outcome] = [(job, True, job.work(db)) for job in group]
    except Exception:
        if not db.in_transaction:
            raise
        db.execute("ROLLBACK TO jobs")
        outcomes = [run_in_savepoint(db, job) for job in group]
    db.execute("RELEASE jobs")
    return outcomes


def commit_group(db: sqlite3.Connection, group: list[Job], tell: Tell) -> bool:
    """Each job in the transaction `db` has just begun, then `COMMIT`, then each outcome
    told. False (nothing kept, nobody told) when the transaction was lost: SQLite ended it
    (an I/O error, a full disk) or the commit failed."""
    try:
        outcomes = [run_alone(db, group[0])] if len(group) == 1 else run_together(db, group)
        if db.in_transaction:  # not when a write alone failed: rolled back already
            db.execute("COMMIT")
    except Exception:
        rollback(db)
        return False
    except BaseException:  # an interrupt: leave no transaction open on the connection
        rollback(db)
        raise
    for job, ok, value in outcomes:
        tell(job, ok, value)
    return True


def rollback(db: sqlite3.Connection) -> None:
    # SQLite has already rolled back after some errors (disk full, I/O): don't mask them.
    if db.in_transaction:
        db.execute("ROLLBACK")
