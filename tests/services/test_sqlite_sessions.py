"""What only the SQLite session store promises: durability, its schema, sharing a file."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.messages import Message, ToolCall
from seam.contracts.sessions import NewSession
from seam.services.sessions.sqlite import MIGRATIONS, SCHEMA_VERSION, SQLiteSessionStore


@contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain connection beside the store's, to look at the file as it really is."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        yield db
    finally:
        db.close()


def search_index_is_consistent(path: Path) -> bool:
    """FTS5's own check, including that the index matches its content rows exactly."""
    with raw(path) as db:
        try:
            db.execute(
                "INSERT INTO messages_fts (messages_fts, rank) VALUES ('integrity-check', 1)"
            )
        except sqlite3.DatabaseError:
            return False
    return True


async def test_sessions_survive_reopening(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    transcript = [
        Message("user", "book a table at Café Lua"),
        Message("assistant", "", tool_calls=(ToolCall("c1", "book", '{"where":"Café Lua"}'),)),
        Message("tool", "booked", tool_call_id="c1", name="book"),
        Message("assistant", "Done, 8pm.", interrupted=True),
    ]
    store = SQLiteSessionStore(path, clock=lambda: 100.0)
    await store.create("s", NewSession(title="Dinner", personality="concierge", parent_key="root"))
    await store.append("s", transcript)
    info = await store.get("s")
    await store.aclose()

    reopened = SQLiteSessionStore(path, clock=lambda: 200.0)
    assert await reopened.get("s") == info
    assert await reopened.messages("s") == transcript
    assert await reopened.find_by_title("Dinner") == info
    assert [h.message_index for h in await reopened.search("cafe lua")] == [0]
    await reopened.aclose()


async def test_wal_mode_is_on(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(str(path))
    with raw(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    await store.aclose()


async def test_schema_version_is_recorded_and_migrations_run_once(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(str(path))
    await store.create("s")
    await store.aclose()
    with raw(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == len(MIGRATIONS)
    # Reopening must not re-run CREATE TABLE (which would fail) nor lose data.
    store = SQLiteSessionStore(str(path))
    assert await store.get("s") is not None
    await store.aclose()


async def test_a_newer_schema_is_refused_with_its_version(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    await SQLiteSessionStore(str(path)).aclose()
    with raw(path) as db:
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 7}")
    with pytest.raises(RuntimeError, match=f"schema version {SCHEMA_VERSION + 7}"):
        SQLiteSessionStore(str(path))


async def test_in_memory_database_works(tmp_path: Path) -> None:
    store = SQLiteSessionStore(":memory:")
    await store.create("s")
    await store.append("s", [Message("user", "hello there")])
    assert [h.snippet for h in await store.search("hello")] == ["hello there"]
    await store.aclose()


# Each would be a syntax error, or mean something else, if handed to MATCH as typed.
# Here every word is simply required; message 2 holds the operator words themselves.
@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ('"hello', [2, 0]),
        ("hello OR", [2]),
        ("goodbye OR hello", []),
        ("NOT hello", [2]),
        ("hello NOT world", [2]),
        ("NEAR(hello world, 1)", [2]),
        ("hello*", [2, 0]),
        ("*hello", [2, 0]),
        ("content:hello", [2]),
        ("messages_fts:hello", [2]),
        ("{content}: hello", [2]),
        ("(hello", [2, 0]),
        ("hello) OR (world", [2]),
        ("^hello", [2, 0]),
        ("hello + world", [2, 0]),
        ("'hello'", [2, 0]),
        ("-hello", [2, 0]),
    ],
)
async def test_queries_that_break_a_naive_match_find_their_words(
    tmp_path: Path, query: str, expected: list[int]
) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    await store.create("s")
    await store.append(
        "s",
        [
            Message("user", "hello world"),
            Message("user", "goodbye"),
            Message("user", "NOT near, OR and content 1: hello world messages_fts"),
        ],
    )
    assert [h.message_index for h in await store.search(query)] == expected
    await store.aclose()


async def test_delete_leaves_no_search_rows_behind(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(str(path))
    for key in ("a", "b"):
        await store.create(key)
        await store.append(
            key,
            [
                Message("user", f"question {key}"),
                Message("tool", "output", tool_call_id="c", name="t"),
                Message("assistant", f"answer {key}"),
            ],
        )
    await store.delete("a")
    await store.aclose()
    assert search_index_is_consistent(path)
    with raw(path) as db:
        assert db.execute("SELECT count(*) FROM messages").fetchone()[0] == 3


async def test_consistency_check_notices_a_stale_index(tmp_path: Path) -> None:
    """Guards the check above: a message deleted behind the trigger's back is caught."""
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(str(path))
    await store.create("s")
    await store.append("s", [Message("user", "indexed words")])
    await store.aclose()
    with raw(path) as db:
        db.execute("DROP TRIGGER messages_fts_delete")
        db.execute("DELETE FROM messages")
    assert not search_index_is_consistent(path)


async def test_a_batch_that_fails_halfway_leaves_no_trace(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"), clock=lambda: 5.0)
    before = await store.create("s")
    bad = Message("user", object())  # type: ignore[arg-type]
    with pytest.raises(sqlite3.Error):
        await store.append("s", [Message("user", "first of the batch"), bad])
    assert await store.get("s") == before
    assert await store.messages("s") == []
    assert await store.search("first") == []
    await store.append("s", [Message("user", "next")])
    assert [m.content for m in await store.messages("s")] == ["next"]
    await store.aclose()


def run_in_threads(
    count: int, work: Callable[[int, threading.Barrier], Coroutine[Any, Any, None]]
) -> None:
    """Runs `work(n, barrier)` in `count` threads, each with its own event loop."""
    barrier = threading.Barrier(count)
    errors: list[BaseException] = []

    def main(n: int) -> None:
        try:
            asyncio.run(work(n, barrier))
        except BaseException as exc:
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=main, args=(n,)) for n in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]


async def test_two_instances_on_one_file_append_in_order_and_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    rounds = 150

    async def writer(n: int, barrier: threading.Barrier) -> None:
        store = SQLiteSessionStore(path)
        await store.create("shared")
        barrier.wait()
        for i in range(rounds):
            await store.append(
                "shared", [Message("user", f"w{n} q{i}"), Message("assistant", f"w{n} a{i}")]
            )
        await store.aclose()

    run_in_threads(2, writer)

    store = SQLiteSessionStore(path)
    transcript = await store.messages("shared")
    info = await store.get("shared")
    assert info is not None
    assert info.message_count == len(transcript) == 2 * 2 * rounds
    # Each append's pair stays together, and each writer's rounds stay in its own order.
    pairs = [(q.content, a.content) for q, a in zip(transcript[::2], transcript[1::2], strict=True)]
    for n in range(2):
        mine = [p for p in pairs if p[0].startswith(f"w{n} ")]
        assert mine == [(f"w{n} q{i}", f"w{n} a{i}") for i in range(rounds)]
    assert len(await store.search("w0", limit=1000)) == 2 * rounds
    await store.aclose()


async def test_instances_opening_a_new_file_together_migrate_it_once(tmp_path: Path) -> None:
    path = tmp_path / "fresh.db"

    async def opener(n: int, barrier: threading.Barrier) -> None:
        barrier.wait()
        store = SQLiteSessionStore(str(path))
        await store.create("same", NewSession(personality=f"p{n}"))
        await store.aclose()

    run_in_threads(4, opener)

    store = SQLiteSessionStore(str(path))
    info = await store.get("same")
    assert info is not None
    assert info.personality in {"p0", "p1", "p2", "p3"}
    await store.aclose()
    with raw(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


async def test_migration_6_rebuilds_the_search_index_for_stems_without_losing_data(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    with raw(path) as db:  # a file as a store at schema version 5 left it
        for migration in MIGRATIONS[:5]:
            for statement in migration:
                db.execute(statement)
        db.execute("PRAGMA user_version = 5")
        db.execute("INSERT INTO sessions (key, created_at, updated_at) VALUES ('s', 1.0, 1.0)")
        for idx, (role, content) in enumerate(
            [("user", "ripe bananas please"), ("tool", "bananas"), ("assistant", "Running now")]
        ):
            db.execute(
                "INSERT INTO messages (session_key, idx, role, content) VALUES ('s', ?, ?, ?)",
                (idx, role, content),
            )
        db.execute("UPDATE sessions SET message_count = 3")
        assert db.execute("SELECT count(*) FROM messages_fts('banana')").fetchone() == (0,)

    store = SQLiteSessionStore(str(path))
    try:
        assert [h.message_index for h in await store.search("banana")] == [0]
        assert [h.message_index for h in await store.search("run")] == [2]
        assert [m.content for m in await store.messages("s")] == [
            "ripe bananas please",
            "bananas",
            "Running now",
        ]
        await store.append("s", [Message("user", "more bananas")])
        assert [h.message_index for h in await store.search("bananas")] == [3, 0]
    finally:
        await store.aclose()
    assert search_index_is_consistent(path)
    with raw(path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


async def test_a_new_title_in_a_long_lineage_is_one_index_seek(tmp_path: Path) -> None:
    """The next "hi #N" is read from `sessions_lineage`, not by scanning every "hi #..."
    (the plan says which index, and that no sort is left to do), and the numbers it
    finds are the lineage's as the contract counts them."""
    from seam.services.sessions.sqlite import NEXT_TITLE_SQL

    path = tmp_path / "s.db"
    store = SQLiteSessionStore(str(path))
    titles = ["hi", *(f"hi #{n}" for n in range(2, 120)), "hi #0500", "hi #12a", "hi #"]
    for n, title in enumerate([*titles, "y", "y #0200", "hi #3 #700"]):
        await store.create(str(n), NewSession(title=title))
    await store.create("new")
    assert await store.set_next_title("new", "hi") == "hi #120"
    assert await store.next_title("y") == "y #2"  # "y #0200" has a leading zero
    assert await store.next_title("hi #3 #9") == "hi #3 #701"
    await store.aclose()
    with raw(path) as db:
        plan = " ".join(
            row[3] for row in db.execute(f"EXPLAIN QUERY PLAN {NEXT_TITLE_SQL}", ("hi", "hi #", 5))
        )
    assert "sessions_lineage" in plan
    assert "TEMP B-TREE" not in plan
