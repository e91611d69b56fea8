"""The SQLite `DbConnector`: versioned migrations, upgrading an old file, health checks."""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from seam.contracts.db import DbConnector, SchemaTooNew
from seam.contracts.messages import Message, ToolCall, Usage
from seam.services.sessions.sqlite import SCHEMA_VERSION, SQLiteSessionStore
from seam.services.sessions.sqlite_db import SQLiteDb

FIXTURES = Path(__file__).parents[1] / "fixtures"
# Written by tests/fixtures/make_sessions_v2.py with migrations 1-2 as they shipped.
V2_FILE = FIXTURES / "sessions-v2.db"
LISBON = 'agent-session:["local","default","lisbon"]'
TASK = 'agent-session:["local","default","task:lisbon:1"]'
CAFE = 'agent-session:["local","default","café"]'
T0 = 1_700_000_000.0


@contextmanager
def raw(path: Path) -> Iterator[sqlite3.Connection]:
    db = sqlite3.connect(path, isolation_level=None)
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def v2_copy(tmp_path: Path) -> Path:
    path = tmp_path / "sessions.db"
    shutil.copyfile(V2_FILE, path)
    return path


# --- upgrading a file from an older version ---------------------------------------------


def test_the_fixture_is_a_version_2_file() -> None:
    with raw(V2_FILE) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == 2
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "messages", "usage"} <= tables
    assert "submissions" not in tables


async def test_a_version_2_file_upgrades_and_keeps_every_row(v2_copy: Path) -> None:
    tables = ("sessions", "messages", "usage")
    with raw(v2_copy) as db:
        before = {t: db.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}
    assert all(before.values())

    store = SQLiteSessionStore(str(v2_copy))
    assert store.connector.version() == SCHEMA_VERSION > 2
    assert store.connector.integrity_check() == []
    await store.aclose()

    with raw(v2_copy) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        for table, rows in before.items():
            after = db.execute(f"SELECT * FROM {table} ORDER BY rowid").fetchall()
            # New columns are appended; every old value is where it was.
            assert [row[: len(rows[0])] for row in after] == rows, table


async def test_an_upgraded_file_reads_searches_and_writes(v2_copy: Path) -> None:
    store = SQLiteSessionStore(str(v2_copy), clock=lambda: T0 + 1000)
    lisbon = await store.get(LISBON)
    assert lisbon is not None
    assert (lisbon.title, lisbon.personality, lisbon.message_count) == (
        "Trip to Lisbon",
        "default",
        5,
    )
    assert (lisbon.created_at, lisbon.updated_at) == (T0, T0 + 60)
    assert (lisbon.ended, lisbon.ended_at, lisbon.tenant, lisbon.tools) == (False, None, None, None)
    messages = await store.messages(LISBON)
    assert messages[2] == Message(
        "assistant", "", tool_calls=(ToolCall("c1", "read_file", '{"path": "ñ.txt"}'),)
    )
    assert messages[3] == Message(
        "tool", "Belém tower, Alfama", tool_call_id="c1", name="read_file"
    )
    assert (await store.messages(TASK))[1].interrupted is True
    assert (await store.messages(CAFE))[0].name == "alice"

    # The search index built by the old version still answers, accents folded.
    assert [(h.session_key, h.message_index) for h in await store.search("belem")] == [(LISBON, 4)]
    (hit,) = await store.search("flat white")
    assert await store.session_for_message(hit.message_id) == await store.get(CAFE)

    totals = await store.usage_totals(LISBON)
    assert (totals.calls, totals.usage) == (2, Usage(280, 50, 220, 0, 5))
    assert (await store.usage_totals(CAFE)).unpriced_calls == 1

    # A session ended under version 2 counts as ended at its last activity.
    task = await store.get(TASK)
    assert task is not None
    assert (task.ended, task.ended_at) == (True, T0 + 20)
    assert (await store.resolve_root(TASK)).key == LISBON
    assert await store.next_title("Trip to Lisbon") == "Trip to Lisbon #2"

    await store.append(LISBON, [Message("user", "And Sintra?")])
    assert [h.message_index for h in await store.search("sintra")] == [5]
    assert await store.prune(0.001) == 1  # the ended task session, and only it
    assert {s.key for s in await store.list()} == {LISBON, CAFE}
    assert store.connector.integrity_check() == []
    await store.aclose()


# --- migrations -------------------------------------------------------------------------

STEPS = [
    ("CREATE TABLE notes (n INTEGER)", "INSERT INTO notes VALUES (1)"),
    ("INSERT INTO notes VALUES (2)",),
]


def notes(path: Path) -> list[int]:
    with raw(path) as db:
        return [r[0] for r in db.execute("SELECT n FROM notes ORDER BY rowid")]


def test_sqlite_db_is_a_db_connector(tmp_path: Path) -> None:
    db = SQLiteDb(str(tmp_path / "x.db"), STEPS)
    assert isinstance(db, DbConnector)
    assert db.schema_version == 2


def test_migrations_run_once_in_order(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    db = SQLiteDb(str(path), STEPS)
    db.open()
    assert db.version() == 0
    assert db.migrate() == 2
    assert db.migrate() == 0
    assert db.version() == 2
    db.close()
    assert notes(path) == [1, 2]

    # A later version adds a migration: only that one runs on the old file.
    newer = SQLiteDb(str(path), [*STEPS, ("INSERT INTO notes VALUES (3)",)])
    newer.open()
    assert newer.migrate() == 1
    newer.close()
    assert notes(path) == [1, 2, 3]


def test_a_failing_migration_leaves_the_file_at_the_previous_version(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    broken = [STEPS[0], ("CREATE TABLE half (x)", "INSERT INTO missing VALUES (1)")]
    db = SQLiteDb(str(path), broken)
    db.open()
    with pytest.raises(sqlite3.OperationalError, match="missing"):
        db.migrate()
    assert db.version() == 1
    assert (
        db.connection.execute("SELECT name FROM sqlite_master WHERE name = 'half'").fetchall() == []
    )
    assert not db.connection.in_transaction
    db.close()


def test_a_newer_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.db"
    with raw(path) as conn:
        conn.execute("PRAGMA user_version = 99")  # newer than any Seam so far
    db = SQLiteDb(str(path), STEPS, label="notes database")
    db.open()
    with pytest.raises(SchemaTooNew, match=r"notes database .* schema version 99, .* \(2\)"):
        db.migrate()
    db.close()
    with pytest.raises(RuntimeError, match="schema version 99"):  # what older callers catch
        SQLiteSessionStore(str(path))


def test_open_and_close_are_idempotent(tmp_path: Path) -> None:
    db = SQLiteDb(str(tmp_path / "x.db"), STEPS)
    with pytest.raises(RuntimeError, match="not open"):
        db.version()
    db.open()
    first = db.connection
    db.open()
    assert db.connection is first
    db.close()
    db.close()
    with pytest.raises(RuntimeError, match="not open"):
        db.connection  # noqa: B018


# --- health -----------------------------------------------------------------------------


async def store_with_messages(path: Path, *, indexed: bool = True) -> SQLiteSessionStore:
    store = SQLiteSessionStore(str(path))
    await store.create("s")
    await store.append("s", [Message("user", f"message number {i}") for i in range(50)])
    if indexed:  # in the search index now, not at the next catch-up
        await store.catch_up_search()
    return store


async def test_a_healthy_file_has_no_problems(tmp_path: Path) -> None:
    store = await store_with_messages(tmp_path / "s.db", indexed=False)
    assert store.connector.integrity_check() == []  # messages waiting to be indexed
    await store.undo("s", 3)
    await store.catch_up_search()
    assert store.connector.integrity_check() == []
    await store.undo("s", 3)
    await store.delete("s")
    assert store.connector.integrity_check() == []
    await store.aclose()


async def test_integrity_check_finds_a_stale_search_index(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await store_with_messages(path)
    with raw(path) as db:
        db.execute("DROP TRIGGER messages_fts_delete")
        db.execute("DELETE FROM messages WHERE idx < 10")
    problems = store.connector.integrity_check()
    assert len(problems) == 1
    assert problems[0].startswith("search index messages_fts:")
    await store.aclose()


async def test_integrity_check_finds_dangling_rows(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await store_with_messages(path)
    with raw(path) as db:  # foreign keys are off on a plain connection
        db.execute(
            "INSERT INTO usage (session_key, turn_id, provider, model, input_tokens,"
            " output_tokens, cache_read_tokens, cache_write_tokens, reasoning_tokens,"
            " created_at) VALUES ('ghost', '', 'p', 'm', 1, 1, 0, 0, 0, 0)"
        )
    assert store.connector.integrity_check() == ["usage row 1 refers to a missing sessions row"]
    await store.aclose()


async def test_checkpoint_empties_the_write_ahead_log(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await store_with_messages(path)
    wal = Path(f"{path}-wal")
    assert wal.stat().st_size > 0
    assert store.connector.checkpoint() is True
    assert wal.stat().st_size == 0
    assert len(await store.messages("s")) == 50
    await store.aclose()


async def test_checkpoint_reports_a_reader_in_the_way(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = await store_with_messages(path)
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM messages").fetchone()  # holds a snapshot
    await store.append("s", [Message("user", "after the snapshot")])
    # A connector with a short busy timeout, so the blocked checkpoint gives up quickly.
    quick = SQLiteDb(str(path), [], busy_timeout=0.05)
    quick.open()
    assert quick.checkpoint() is False
    reader.execute("COMMIT")
    reader.close()
    assert quick.checkpoint() is True
    quick.close()
    await store.aclose()


def test_an_in_memory_database_checkpoints_trivially() -> None:
    db = SQLiteDb(":memory:", STEPS)
    db.open()
    db.migrate()
    assert db.checkpoint() is True
    assert db.integrity_check() == []
    db.close()
