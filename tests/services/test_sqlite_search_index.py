"""The SQLite store indexes messages for search in batches (`sqlite_search_index`): a
search still finds everything written before it, an undo or a reused id never leaves the
index out of step with the messages, and nothing written stays unindexed for long."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from seam.contracts.messages import Message
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.services.sessions.sqlite_search_index import BATCH_MOST, INDEX_EVERY


def _mark_and_newest(path: Path) -> tuple[int, int]:
    with sqlite3.connect(path) as db:
        row = db.execute(
            "SELECT (SELECT indexed_to FROM search_progress), (SELECT max(id) FROM messages)"
        ).fetchone()
    return int(row[0]), int(row[1])


async def _found(store: SQLiteSessionStore, words: str) -> list[str]:
    return [hit.snippet for hit in await store.search(words)]


async def test_a_search_finds_what_was_written_just_before_it(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    try:
        await store.create("s")
        await store.append("s", [Message("user", "the kayak is in the boathouse")])
        assert await _found(store, "kayak") == ["the kayak is in the boathouse"]
        await store.append("s", [Message("assistant", "and the paddles by the kayak")])
        assert len(await _found(store, "kayak")) == 2
    finally:
        await store.aclose()


async def test_undo_and_ids_used_again_keep_the_index_in_step(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(str(path))
    try:
        await store.create("s")
        await store.append("s", [Message("user", "first walnut"), Message("assistant", "ok")])
        await store.append("s", [Message("user", "second walnut"), Message("assistant", "ok")])
        assert len(await _found(store, "walnut")) == 2  # indexed, up to the newest id
        assert await store.undo("s") == 2  # the newest two go: their ids are free again
        await store.append("s", [Message("user", "third walnut")])  # an id at the mark
        assert sorted(await _found(store, "walnut")) == ["first walnut", "third walnut"]
        assert store.connector.integrity_check() == []
        assert await store.undo("s") == 1
        await store.append("s", [Message("user", "a walnut never indexed")])
        assert await store.undo("s") == 1  # deleted before any catch-up
        assert store.connector.integrity_check() == []
        await store.append("s", [Message("user", "fourth walnut, not indexed yet")])
        assert store.connector.integrity_check() == []
        assert sorted(await _found(store, "walnut")) == [
            "first walnut",
            "fourth walnut, not indexed yet",
        ]
        assert store.connector.integrity_check() == []
    finally:
        await store.aclose()


async def test_messages_are_indexed_in_batches_as_they_pile_up(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(str(path))
    try:
        await store.create("s")
        await store.append("s", [Message("user", f"note {n}") for n in range(INDEX_EVERY - 1)])
        assert _mark_and_newest(path) == (0, INDEX_EVERY - 1)  # waits for more
        await store.append("s", [Message("user", "one more")])  # its write takes the batch
        assert _mark_and_newest(path) == (INDEX_EVERY, INDEX_EVERY)
    finally:
        await store.aclose()


async def test_a_batch_takes_at_most_its_share_of_what_others_left(tmp_path: Path) -> None:
    """Messages another process left unindexed do not make one write index them all."""
    path = tmp_path / "s.db"
    theirs = BATCH_MOST * 2
    store = SQLiteSessionStore(str(path))
    try:
        await store.create("s")
        with sqlite3.connect(path) as db:  # another process's writes, not indexed yet
            db.executemany(
                "INSERT INTO messages (session_key, idx, role, content) VALUES ('s', ?, ?, ?)",
                [(n, "user", f"theirs {n}") for n in range(theirs)],
            )
            db.execute("UPDATE sessions SET message_count = ? WHERE key = 's'", (theirs,))
        await store.append("s", [Message("user", f"mine {n}") for n in range(INDEX_EVERY)])
        assert _mark_and_newest(path) == (BATCH_MOST, theirs + INDEX_EVERY)
        assert len(await store.search("mine", limit=100)) == INDEX_EVERY  # a search: all
        assert store.connector.integrity_check() == []
    finally:
        await store.aclose()


async def test_a_closed_store_leaves_nothing_unindexed(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(str(path))
    await store.create("s")
    await store.append("s", [Message("user", "written just before closing")])
    await store.aclose()
    assert _mark_and_newest(path) == (1, 1)


async def test_a_search_whose_catch_up_fails_finds_what_is_indexed(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SQLiteSessionStore(str(path), busy_timeout=0.1)
    try:
        await store.create("s")
        await store.append("s", [Message("user", "an alpaca in the field")])
        await store.catch_up_search()
        await store.append("s", [Message("user", "another alpaca, not indexed yet")])
        holder = sqlite3.connect(path, isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            assert await _found(store, "alpaca") == ["an alpaca in the field"]
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert len(await _found(store, "alpaca")) == 2
    finally:
        await store.aclose()
