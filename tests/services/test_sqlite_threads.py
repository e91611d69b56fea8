"""The SQLite store never blocks the event loop: its statements run on its own threads,
or (small writes and reads by key) on the loop's own connection when nothing makes them wait.

A slow read, or a write waiting for another process's lock, delays only its caller; every
other coroutine (every other session in the process) keeps running meanwhile. Writes that
arrive together commit together, each still all-or-nothing.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.messages import Message
from seam.contracts.sessions import DuplicateTitle
from seam.services.sessions import sqlite_inline
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.services.sessions.sqlite_inline import THREAD_GROUP
from tests.support.collect import collect


class Ticker:
    """Counts how often the event loop gets round to it while something else runs."""

    def __init__(self) -> None:
        self.ticks = 0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            self.ticks += 1
            await asyncio.sleep(0)

    async def during(self, work: Awaitable[Any]) -> Any:
        self._task = asyncio.ensure_future(self._run())
        try:
            return await work
        finally:
            self._task.cancel()


def fill(path: Path, sessions: int, messages_each: int) -> None:
    """Many stored messages, written straight into the file (quicker than the store)."""
    with sqlite3.connect(path, isolation_level=None) as db:
        db.execute("BEGIN")
        db.executemany(
            "INSERT INTO sessions (key, created_at, updated_at, message_count) VALUES (?, 0, 0, ?)",
            [(f"s{n}", messages_each) for n in range(sessions)],
        )
        db.executemany(
            "INSERT INTO messages (session_key, idx, role, content) VALUES (?, ?, 'user', ?)",
            [
                (f"s{n}", i, f"message {i} of session {n} about the weather")
                for n in range(sessions)
                for i in range(messages_each)
            ],
        )
        db.execute("COMMIT")


async def test_the_loop_keeps_running_while_a_large_export_and_search_run(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    SQLiteSessionStore(str(path)).connector.close()  # create and migrate the file
    fill(path, sessions=100, messages_each=100)
    store = SQLiteSessionStore(str(path))
    ticker = Ticker()
    exported = await ticker.during(store.export_all())
    assert len(exported) == 100 and len(exported[0]["messages"]) == 100
    # Turning 10,000 rows into dicts takes the reader thread many loop iterations' time;
    # on the loop's thread it would have been one long stall.
    assert ticker.ticks > 20
    ticker = Ticker()
    hits = await ticker.during(store.search("weather", limit=5000))
    assert len(hits) == 5000
    assert ticker.ticks > 20
    await store.aclose()


async def test_a_write_waiting_for_another_process_lock_does_not_stall_the_loop(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(str(path), busy_timeout=30.0)
    await store.create("s")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
    other.execute("UPDATE sessions SET updated_at = 1")
    write = asyncio.ensure_future(store.append("s", [Message("user", "waits its turn")]))
    ticks = 0
    while ticks < 1000:  # the loop goes round freely while the write waits
        await asyncio.sleep(0)
        ticks += 1
    assert not write.done()
    # Reads do not wait for the lock either (WAL: they see the last commit).
    assert await store.messages("s") == []
    other.execute("COMMIT")
    other.close()
    await write
    assert [m.content for m in await store.messages("s")] == ["waits its turn"]
    await store.aclose()


async def test_writes_arriving_together_each_commit_or_fail_alone(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    for n in range(50):
        await store.create(f"s{n}")
    bad = Message("user", object())  # type: ignore[arg-type]

    def batch(n: int) -> list[Message]:
        if n == 25:  # fails halfway, in the same group commit as the others
            return [Message("user", "first of a broken batch"), bad]
        return [Message("user", f"question {n}"), Message("assistant", f"answer {n}")]

    results = await asyncio.gather(
        *(store.append(f"s{n}", batch(n)) for n in range(50)), return_exceptions=True
    )
    assert [n for n, r in enumerate(results) if isinstance(r, BaseException)] == [25]
    assert isinstance(results[25], sqlite3.Error)
    for n in range(50):
        contents = [m.content for m in await store.messages(f"s{n}")]
        assert contents == ([] if n == 25 else [f"question {n}", f"answer {n}"])
    assert await store.search("broken") == []
    info = await store.get("s25")
    assert info is not None and info.message_count == 0
    await store.aclose()


async def test_a_group_with_failing_writes_still_commits_together(tmp_path: Path) -> None:
    """Sessions racing for one title fail a write each: the others keep their group
    commit (a savepoint undoes the failing write alone) instead of a commit per write."""
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    for n in range(60):
        await store.create(f"s{n}")
    commits: list[str] = []
    store.trace(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    # s0 takes "Boiler" first; every later writer of "Boiler" in the group is refused.
    titles = ["Boiler" if n % 10 == 0 else f"Title {n}" for n in range(60)]
    results = await asyncio.gather(
        *(store.set_title(f"s{n}", title) for n, title in enumerate(titles)),
        return_exceptions=True,
    )
    store.trace(None)
    failed = [n for n, r in enumerate(results) if isinstance(r, BaseException)]
    assert failed == [10, 20, 30, 40, 50]
    assert all(isinstance(results[n], DuplicateTitle) for n in failed)
    for n, title in enumerate(titles):
        info = await store.get(f"s{n}")
        assert info is not None and info.title == (None if n in failed else title)
    assert len(commits) < 10, f"{len(commits)} commits for 60 writes"
    await store.aclose()


async def test_writes_of_one_loop_turn_commit_together_on_the_loop_thread(
    tmp_path: Path,
) -> None:
    """No thread hop per small write: the writes one turn of the event loop makes are one
    transaction, committed on the loop's thread (`sqlite_inline`), each still told its
    own outcome (a failing one undone alone)."""
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    for n in range(5):
        await store.create(f"s{n}")
    seen: list[tuple[str, int]] = []
    store.trace(
        lambda sql: (
            seen.append((sql, threading.get_ident()))
            if sql.startswith(("BEGIN", "COMMIT"))
            else None
        )
    )
    bad = Message("user", object())  # type: ignore[arg-type]
    results = await asyncio.gather(
        *(store.append(f"s{n}", [Message("user", f"q{n}")]) for n in range(4)),
        store.append("s4", [Message("user", "broken"), bad]),
        return_exceptions=True,
    )
    store.trace(None)
    assert [sql for sql, _ in seen] == ["BEGIN IMMEDIATE", "COMMIT"]
    assert {thread for _, thread in seen} == {threading.get_ident()}
    assert results[:4] == [None] * 4 and isinstance(results[4], sqlite3.Error)
    assert [m.content for m in await store.messages("s3")] == ["q3"]
    assert await store.messages("s4") == []
    await store.aclose()


async def test_a_group_that_succeeds_pays_no_savepoint_per_write(tmp_path: Path) -> None:
    """Writes rarely fail: a group runs them plain inside one savepoint, and only a
    failure makes it run each in a savepoint of its own (the others still commit)."""
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    for n in range(4):
        await store.create(f"s{n}")
    seen: list[str] = []
    store.trace(lambda sql: seen.append(sql) if "SAVEPOINT" in sql else None)
    await asyncio.gather(*(store.append(f"s{n}", [Message("user", f"q{n}")]) for n in range(4)))
    assert seen == ["SAVEPOINT jobs"]
    seen.clear()
    bad = Message("user", object())  # type: ignore[arg-type]
    results = await asyncio.gather(
        store.append("s0", [Message("user", "kept")]),
        store.append("s1", [Message("user", "broken"), bad]),
        store.append("s2", [Message("user", "kept too")]),
        return_exceptions=True,
    )
    store.trace(None)
    assert seen == ["SAVEPOINT jobs", *["SAVEPOINT job"] * 3]
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], sqlite3.Error)
    assert [m.content for m in await store.messages("s0")] == ["q0", "kept"]
    assert [m.content for m in await store.messages("s1")] == ["q1"]
    assert [m.content for m in await store.messages("s2")] == ["q2", "kept too"]
    await store.aclose()


async def test_a_burst_of_writes_commits_on_the_writer_thread(tmp_path: Path) -> None:
    """Many writes in one loop turn are one group for the writer thread, whose SQLite work
    runs beside the loop (one hop for the lot)."""
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    for n in range(THREAD_GROUP):
        await store.create(f"s{n}")
    seen: list[tuple[str, int]] = []
    store.trace(lambda sql: seen.append((sql, threading.get_ident())) if sql == "COMMIT" else None)
    await asyncio.gather(
        *(store.append(f"s{n}", [Message("user", f"q{n}")]) for n in range(THREAD_GROUP))
    )
    store.trace(None)
    assert len(seen) == 1 and seen[0][1] != threading.get_ident()
    assert [m.content for m in await store.messages("s1")] == ["q1"]
    await store.aclose()


async def test_the_loop_connection_hands_the_wal_checkpoint_to_the_writer_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop's connection never checkpoints (that waits for the disk): after enough
    rows it asks the writer thread, which does."""
    monkeypatch.setattr(sqlite_inline, "CHECKPOINT_CHANGES", 10)
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    await store.create("s")
    seen: list[tuple[str, int]] = []
    store.trace(lambda sql: seen.append((sql, threading.get_ident())))
    for n in range(12):
        await store.append("s", [Message("user", f"q{n}")])
    await store.end("s")  # a write on the writer thread: queued after the checkpoint
    store.trace(None)
    checkpoints = [thread for sql, thread in seen if sql.startswith("PRAGMA wal_checkpoint")]
    assert checkpoints and threading.get_ident() not in checkpoints
    await store.aclose()


async def test_reads_by_key_on_the_loop_see_what_the_writer_thread_committed(
    tmp_path: Path,
) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    await store.create("s")
    await store.set_working_dir("s", str(tmp_path))  # through the writer thread
    await store.end("s")
    info = await store.get("s")  # on the loop's connection
    assert info is not None and info.ended
    await store.aclose()


async def test_an_in_memory_database_reads_what_it_wrote() -> None:
    store = SQLiteSessionStore(":memory:")
    await store.create("s")
    await store.append("s", [Message("user", "kept in memory")])
    assert [m.content for m in await store.messages("s")] == ["kept in memory"]
    await store.aclose()


async def test_a_closed_store_refuses_work_clearly(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    await store.create("s")
    await store.aclose()
    with pytest.raises(RuntimeError, match="closed"):
        await store.get("s")


async def test_a_store_dropped_without_closing_stops_its_threads(tmp_path: Path) -> None:
    before = set(threading.enumerate())
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    await store.create("s")
    assert await store.get("s") is not None
    started = set(threading.enumerate()) - before
    assert len(started) == 3  # the writer and two readers
    del store
    collect()
    for thread in started:
        thread.join(timeout=10)
        assert not thread.is_alive()


async def test_the_wal_starts_over_under_steady_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Writes that never pause leave no moment when the WAL is all copied into the file,
    and only then may it start over: the checkpoint sees to it all the same, so the WAL
    stays the size of what is written between a few checkpoints instead of growing with
    everything ever written (41 MB and more before; 2 to 9 MB now, the machine loaded)."""
    monkeypatch.setattr(sqlite_inline, "CHECKPOINT_CHANGES", 300)
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    await store.create("s")
    for n in range(1000):
        await store.append("s", [Message("user", f"message {n}")])
    size = (tmp_path / "s.db-wal").stat().st_size
    await store.aclose()
    assert size < 20_000_000, f"the WAL grew to {size / 1e6:.0f} MB"
