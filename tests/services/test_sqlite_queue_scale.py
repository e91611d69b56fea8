"""A store's history does not slow its queue: a claim and an admission read the open
submissions alone, however many settled ones the file holds.

Counted in SQLite's own virtual machine steps (its progress handler), not in time: the
same claim and the same admission, over a few settled submissions and over thousands.
Before the open-rows indexes, a claim walked every submission ever made and an admission
every one of its session's: the steps grew a hundredfold with the history.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Awaitable, Callable

import pytest

from seam.contracts.execution import NewSubmission
from seam.services.sessions.sqlite import SQLiteSessionStore

# VM instructions between two calls of the progress handler: one call is one tick.
TICK = 100


def _settled_history(db: sqlite3.Connection, session_key: str, count: int) -> None:
    """`count` settled submissions of `session_key`, as finished turns leave them."""
    db.execute(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)"
        " INSERT INTO submissions (id, session_key, input, state, outcome, attempts,"
        " max_attempts, created_at, updated_at, settled_at)"
        " SELECT ?2 || '-old-' || i, ?2, 'hello', 'settled', 'completed', 1, 3, i, i, i"
        " FROM n",
        (count, session_key),
    )


async def _ticks(db: sqlite3.Connection, call: Callable[[], Awaitable[object]]) -> int:
    ticks = 0

    def tick() -> int:
        nonlocal ticks
        ticks += 1
        return 0

    db.set_progress_handler(tick, TICK)
    try:
        await call()
    finally:
        db.set_progress_handler(None, TICK)
    return ticks


async def _queue_ticks(history: int) -> tuple[int, int]:
    """Ticks of a claim of a queued submission, then of an admission (claimed at once)
    in another session with the same history, on a store holding `history` settled
    submissions in each of the two sessions."""
    store = SQLiteSessionStore(":memory:")  # one connection: every statement runs on it
    try:
        db = store.connector.connection
        for key in ("chat", "other"):
            await store.create(key)
            _settled_history(db, key, history)
        await store.admit(NewSubmission(id="new", session_key="chat", input="hi"))
        claim = await _ticks(db, lambda: store.claim("worker"))
        admission = await _ticks(
            db,
            lambda: store.admit_and_claim(
                NewSubmission(id="now", session_key="other", input="hi"), "worker"
            ),
        )
        assert (await store.claim("worker")) is None  # "new" and "now" are both running
        return claim, admission
    finally:
        await store.aclose()


@pytest.mark.parametrize("which", ["claim", "admission"])
async def test_the_queue_reads_open_submissions_alone_however_long_the_history(
    which: str,
) -> None:
    short = await _queue_ticks(10)
    long = await _queue_ticks(5000)
    index = 0 if which == "claim" else 1
    assert long[index] <= short[index] + 2, (short, long)
