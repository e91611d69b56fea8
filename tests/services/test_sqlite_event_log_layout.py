"""The SQLite event log is appended in the order it is written, and a file from before
keeps its log through the upgrade.

A turn's records went into a table ordered by (session, seq): with many sessions taking
turns, every write landed in the middle of the tree, split a page there and left pages
half empty, so the file (and the write-ahead log each commit appends to) grew by twice the
pages its records needed.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from seam.contracts.execution import EventQuery, EventRecord
from seam.services.sessions.sqlite import MIGRATIONS, SQLiteSessionStore

SESSIONS = 20
PAGE = 4096
# The benchmark turn's records, by payload size: the run's start, usage and three tool
# calls in the first write; three results, the text, usage and `done` in the second.
CALLS = (180, 220, 180, 180, 180)
ANSWER = (230, 230, 230, 1330, 220, 1070)
TURN = len(CALLS) + len(ANSWER)


def _record(key: str, seq: int, size: int) -> EventRecord:
    payload = f'{{"type":"tool_end","seq":{seq},"output":"{"x" * (size - 40)}"}}'
    return EventRecord(key, seq, seq, "tool_end", payload, "sub-1")


async def test_turns_of_many_sessions_fill_the_log_s_pages(tmp_path: Path) -> None:
    """Twenty sessions taking turns, eleven records a turn in two writes: the log's pages
    hold what was written with little room to spare (1.3 times its bytes; the (session,
    seq) table took 2.8 times)."""
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(str(path))
    try:
        keys = [f"s{n}" for n in range(SESSIONS)]
        for key in keys:
            await store.create(key)
        with sqlite3.connect(path) as db:
            before = db.execute("PRAGMA page_count").fetchone()[0]
        written = 0
        for turn in range(30):
            for key in keys:  # a turn's two writes: its tool calls, then the rest
                for first, sizes in ((1, CALLS), (len(CALLS) + 1, ANSWER)):
                    seq = turn * TURN + first
                    records = [_record(key, seq + i, size) for i, size in enumerate(sizes)]
                    written += sum(len(r.payload) for r in records)
                    await store.append_events(records)
        await store.aclose()
        with sqlite3.connect(path) as db:
            pages = db.execute("PRAGMA page_count").fetchone()[0] - before
        assert pages * PAGE < 1.5 * written, (pages, written)
    finally:
        await store.aclose()


async def test_an_older_file_keeps_its_log_in_order(tmp_path: Path) -> None:
    """A file the release before wrote: every record is read back in order after the
    upgrade, a seq already taken is refused, new records follow, and deleting a session
    still takes its log with it."""
    path = tmp_path / "s.db"
    with sqlite3.connect(path) as db:
        for migration in MIGRATIONS[:-1]:
            for statement in migration:
                db.execute(statement)
        db.execute(f"PRAGMA user_version = {len(MIGRATIONS) - 1}")
        for key in ("a", "b"):
            db.execute(
                "INSERT INTO sessions (key, created_at, updated_at) VALUES (?, 1.0, 1.0)", (key,)
            )
        for seq in (3, 1, 2):  # written out of order, two sessions interleaved
            for key in ("b", "a"):
                r = _record(key, seq, size=60)
                db.execute(
                    "INSERT INTO events (session_key, seq, first_seq, type, payload,"
                    " submission_id) VALUES (?, ?, ?, ?, ?, ?)",
                    (r.session_key, r.seq, r.first_seq, r.type, r.payload, r.submission_id),
                )
    store = SQLiteSessionStore(str(path))
    try:
        assert await store.events("a") == [_record("a", seq, size=60) for seq in (1, 2, 3)]
        assert [r.seq for r in await store.events("b", EventQuery(after_seq=1))] == [2, 3]
        with pytest.raises(sqlite3.IntegrityError):
            await store.append_events([_record("a", 3, 300)])
        await store.append_events([_record("a", 4, 300)])
        assert await store.last_seq("a") == 4
        await store.delete("a")
        assert await store.session_events("a") is None
        assert [r.seq for r in await store.events("b")] == [1, 2, 3]
    finally:
        await store.aclose()
