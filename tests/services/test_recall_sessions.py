"""Search over past sessions by meaning as well as words: the indexer, the fused ranking
and the `session_search` tool, over a real SQLite store and the real local embedder."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.messages import Message
from seam.contracts.recall import Embedder
from seam.contracts.session_recall import MEANING, WORDS, SessionRecall
from seam.contracts.sessions import NewSession, SearchScope
from seam.contracts.tools import ToolContext
from seam.core.storage import InMemoryStorage
from seam.plugins.tools.session_search import SessionSearchTool
from seam.services.recall.embedder import load_embedder
from seam.services.recall.session_recall import SessionRecall as Recall
from seam.services.sessions.sqlite import SCHEMA_VERSION, SQLiteSessionStore
from seam.services.sessions.sqlite_schema import MIGRATIONS
from tests.support.tools import checked

WIFI = "the wifi password is in the blue notebook"
QUESTION = "where did I write down the cabin's internet login?"


def real_embedder() -> Embedder:
    embedder = load_embedder()
    assert embedder is not None, "the recall extra is installed in every venv"
    return embedder


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteSessionStore]:
    sessions = SQLiteSessionStore(str(tmp_path / "s.db"))
    await sessions.create("cabin", NewSession(title="Cabin weekend"))
    await sessions.append(
        "cabin",
        [
            Message("user", "Remember this for the cabin: " + WIFI),
            Message("tool", "the router login is admin", tool_call_id="c", name="read_file"),
            Message("assistant", "Noted, I'll remember where the notebook is."),
        ],
    )
    await sessions.create("dentist")
    await sessions.append("dentist", [Message("user", "The dentist appointment is on Tuesday")])
    await sessions.create("now")
    await sessions.append("now", [Message("user", QUESTION)])
    yield sessions
    await sessions.aclose()


def hybrid(store: SQLiteSessionStore, **options: float) -> Recall:
    return Recall(store, store.message_vectors(), real_embedder, **options)  # type: ignore[arg-type]


async def test_a_question_sharing_no_word_finds_the_message_by_meaning(
    store: SQLiteSessionStore,
) -> None:
    assert await store.search(QUESTION, 5, SearchScope(exclude_session="now")) == []
    found = await hybrid(store).search(QUESTION, 5, SearchScope(exclude_session="now"))
    assert found, "meaning finds it"
    first = found[0]
    assert (first.hit.session_key, first.hit.role, first.signals) == ("cabin", "user", (MEANING,))
    assert WIFI in first.hit.snippet
    assert all(f.hit.session_key != "now" for f in found)  # the asking session is left out


async def test_words_and_meaning_are_fused_and_say_which_found_each(
    store: SQLiteSessionStore,
) -> None:
    found = await hybrid(store).search("wifi password notebook", 5)
    assert found[0].hit.snippet.endswith(WIFI)
    assert found[0].signals == (WORDS, MEANING)


async def test_a_query_about_nothing_said_finds_nothing(store: SQLiteSessionStore) -> None:
    assert await hybrid(store).search("zebra", 5) == []


async def test_the_tool_finds_it_and_says_by_what(store: SQLiteSessionStore) -> None:
    recall = hybrid(store)
    tool = checked(SessionSearchTool(store, lambda: recall))
    out = await tool.run(
        {"query": QUESTION}, ToolContext(session_key="now", storage=InMemoryStorage())
    )
    lines = out.splitlines()
    assert lines[0].endswith("best first:")
    assert lines[1].startswith('- ["Cabin weekend", ')
    assert " user (meaning): Remember this for the cabin: " + WIFI in lines[1]
    assert "router" not in out  # tool output is not searched, by meaning either
    none = await tool.run(
        {"query": "zebra"}, ToolContext(session_key="now", storage=InMemoryStorage())
    )
    assert none == "No past conversation matches: zebra"


async def test_only_new_messages_are_embedded_and_nothing_during_a_turn(
    store: SQLiteSessionStore,
) -> None:
    recall = hybrid(store)
    assert await recall.index_pending() == 4  # user and assistant messages only
    assert await recall.index_pending() == 0
    await store.append("dentist", [Message("assistant", "I'll remind you on Monday.")])
    assert await recall.index_pending() == 1


async def test_deleting_renaming_and_undoing_keep_the_index_consistent(
    store: SQLiteSessionStore,
) -> None:
    recall = hybrid(store)
    await recall.index_pending()
    count = (await store.message_vectors().vector_mark())[0]
    assert await store.rename("cabin", "lodge")
    assert (await store.message_vectors().vector_mark())[
        0
    ] == count  # a rename moves nothing to re-embed
    assert await recall.index_pending() == 0
    (first,) = await recall.search(QUESTION, 1, SearchScope(exclude_session="now"))
    assert first.hit.session_key == "lodge"
    await store.undo("dentist")
    assert (await store.message_vectors().vector_mark())[0] == count - 1
    assert await store.delete("lodge")
    assert (await store.message_vectors().vector_mark())[0] == count - 3
    found = await recall.search(QUESTION, 5, SearchScope(exclude_session="now"))
    assert all(f.hit.session_key != "lodge" for f in found)


async def test_another_embedders_vectors_are_recomputed_not_compared(
    store: SQLiteSessionStore,
) -> None:
    await store.message_vectors().put_vectors("old-model-8", [(1, b"\0" * 32)])
    recall = hybrid(store)
    assert await recall.index_pending() == 4  # the old vector is replaced too
    assert len(await store.message_vectors().vectors("old-model-8", None)) == 0


async def test_only_the_callers_tenant_is_searched_by_meaning(
    store: SQLiteSessionStore,
) -> None:
    await store.create("alice-now", NewSession(tenant="alice"))
    await store.create("bob-before", NewSession(tenant="bob"))
    await store.append("bob-before", [Message("user", "bob's " + WIFI)])
    found = await hybrid(store).search(QUESTION, 5, SearchScope("alice-now", "alice"))
    assert found == []


async def test_without_an_embedder_it_is_full_text_as_before(store: SQLiteSessionStore) -> None:
    recall: SessionRecall = Recall(store, store.message_vectors(), lambda: None)
    assert not await recall.by_meaning()
    assert await recall.search(QUESTION, 5, SearchScope(exclude_session="now")) == []
    (hit,) = await recall.search("notebook wifi", 5)
    assert hit.signals == (WORDS,)
    assert await recall.index_pending() == 0
    tool = checked(SessionSearchTool(store, lambda: recall))
    out = await tool.run(
        {"query": "tram"}, ToolContext(session_key="now", storage=InMemoryStorage())
    )
    assert out == "No past conversation has all of these words: tram"


# The schema version just before the step that adds the vectors; the upgrade reruns the
# steps after it too (the image tables', the cron limits', the transcript cuts'), so the
# test undoes those too.
VECTORS_STEP = next(i for i, step in enumerate(MIGRATIONS) if "message_vectors" in step[0])
LATER_STEPS_UNDONE = (
    "DROP INDEX messages_images",
    "DROP INDEX submissions_images",
    "ALTER TABLE messages DROP COLUMN images",
    "ALTER TABLE submissions DROP COLUMN images",
    "DROP TABLE image_blobs",
    "DROP INDEX usage_created",
    "ALTER TABLE cron_jobs DROP COLUMN max_tokens",
    "ALTER TABLE cron_jobs DROP COLUMN max_usd",
    "DROP TRIGGER messages_cut",
    "ALTER TABLE sessions DROP COLUMN cuts",
    "DROP INDEX submissions_session_open",
    "DROP INDEX submissions_open",
    "CREATE INDEX submissions_open ON submissions (state, seq) WHERE state <> 'settled'",
    "DROP VIEW searchable_messages",
    """CREATE VIEW searchable_messages AS SELECT id, content FROM messages
        WHERE role IN ('user', 'assistant') AND content <> ''""",
    "DROP TABLE search_progress",
    "DROP TRIGGER messages_fts_insert",
    "DROP TRIGGER messages_fts_delete",
    """CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
        WHEN new.role IN ('user', 'assistant') AND new.content <> ''
        BEGIN INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content); END""",
    """CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
        WHEN old.role IN ('user', 'assistant') AND old.content <> ''
        BEGIN INSERT INTO messages_fts (messages_fts, rowid, content)
        VALUES ('delete', old.id, old.content); END""",
)


async def test_a_store_of_the_schema_before_upgrades_and_is_searched_by_meaning(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "old.db")
    store = SQLiteSessionStore(path)
    await store.create("cabin")
    await store.append("cabin", [Message("user", WIFI)])
    await store.aclose()
    with sqlite3.connect(path) as db:  # as the schema before vectors left it
        db.execute("DROP TABLE message_vectors")
        db.execute("DROP INDEX messages_searchable")
        for undo in LATER_STEPS_UNDONE:  # the steps after it, rerun by the upgrade
            db.execute(undo)
        db.execute(f"PRAGMA user_version = {VECTORS_STEP}")
    upgraded = SQLiteSessionStore(path)
    try:
        assert upgraded.connector.version() == SCHEMA_VERSION
        (found,) = await hybrid(upgraded).search(QUESTION, 5)
        assert (found.hit.session_key, found.signals) == ("cabin", (MEANING,))
    finally:
        await upgraded.aclose()
