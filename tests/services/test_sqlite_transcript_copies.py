"""The SQLite store keeps live sessions' transcripts between turns (`sqlite_transcripts`):
a turn must still see every change made to its transcript from anywhere else."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.execution import EventRecord, NewSubmission
from seam.contracts.messages import Message
from seam.core.scripted_model import ScriptedModel, text_step
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.services.sessions.transcript_copies import TranscriptCopies
from tests.support.transcript_copies import (
    KEY,
    an_undo_and_a_turn_written_elsewhere_are_seen,
    messages_of,
    said,
    session_factory,
    turns_appended_elsewhere_are_read_after_the_kept_ones,
)


async def _whole(path: str) -> tuple[Message, ...]:
    """The transcript as a store with no copies reads it."""
    fresh = SQLiteSessionStore(path)
    try:
        return await messages_of(fresh)
    finally:
        await fresh.aclose()


@pytest.fixture
async def two_stores(tmp_path: Path) -> AsyncIterator[tuple[SQLiteSessionStore, ...]]:
    """Two processes' stores on one file, on one fixed clock (the row's `updated_at`
    cannot tell two transcripts apart)."""
    path = str(tmp_path / "s.db")
    here = SQLiteSessionStore(path, clock=lambda: 1000.0)
    there = SQLiteSessionStore(path, clock=lambda: 1000.0)
    yield here, there
    await here.aclose()
    await there.aclose()


async def test_a_turn_sees_an_undo_and_a_new_turn_written_by_another_process(
    two_stores: tuple[SQLiteSessionStore, SQLiteSessionStore],
) -> None:
    await an_undo_and_a_turn_written_elsewhere_are_seen(*two_stores)


async def test_turns_another_process_appended_are_read_after_the_kept_ones(
    two_stores: tuple[SQLiteSessionStore, SQLiteSessionStore], tmp_path: Path
) -> None:
    here, there = two_stores
    await turns_appended_elsewhere_are_read_after_the_kept_ones(
        here, there, lambda: _whole(str(tmp_path / "s.db"))
    )


async def test_a_transcript_cut_by_hand_in_sqlite_is_read_again(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store = SQLiteSessionStore(path, clock=lambda: 1000.0)
    try:
        model = ScriptedModel([text_step("one"), text_step("two")])
        session = await session_factory(store, model).get_or_create_root(KEY)
        await session.ask("first")
        with sqlite3.connect(path) as db:  # another connection, no store at all
            db.execute("DELETE FROM messages WHERE session_key = ? AND idx = 1", (KEY,))
            db.execute("UPDATE sessions SET message_count = 1 WHERE key = ?", (KEY,))
            db.execute(
                "INSERT INTO messages (session_key, idx, role, content) VALUES (?, 1, ?, ?)",
                (KEY, "assistant", "edited"),
            )
            db.execute("UPDATE sessions SET message_count = 2 WHERE key = ?", (KEY,))
        await session.ask("second")
        assert said(model) == ["first", "edited", "second"]
    finally:
        await store.aclose()


async def test_the_kept_transcript_is_the_one_the_file_holds(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store = SQLiteSessionStore(path)
    try:
        model = ScriptedModel([text_step(f"answer {n}") for n in range(4)])
        session = await session_factory(store, model).get_or_create_root(KEY)
        for n in range(3):
            await session.ask(f"question {n}")
        # Written here meanwhile, not through a turn: a plain append.
        await store.append(KEY, [Message("user", "a note"), Message("assistant", "noted")])
        await session.ask("question 3")
        kept = await store.load(KEY)
        assert kept is not None
        assert kept.messages == await _whole(path)
        assert kept.info.message_count == len(kept.messages) == 10
        assert said(model)[-3:] == ["a note", "noted", "question 3"]
    finally:
        await store.aclose()


async def test_a_session_deleted_and_made_again_is_read_again(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    try:
        model = ScriptedModel([text_step("one"), text_step("two")])
        factory = session_factory(store, model)
        session = await factory.get_or_create_root(KEY)
        await session.ask("first")
        assert await store.delete(KEY)
        factory.drop(KEY)
        session = await factory.get_or_create_root(KEY)
        await session.ask("again")
        assert said(model) == ["again"]
    finally:
        await store.aclose()


def test_the_copies_are_bounded_by_sessions_and_by_messages() -> None:
    copies = TranscriptCopies(size=2, messages=5)
    two = (Message("user", "a"), Message("assistant", "b"))
    copies.keep("s1", (2, 0, 1.0), two)
    copies.keep("s2", (2, 0, 1.0), two)
    assert copies.get("s1") is not None  # now the most recent
    copies.keep("s3", (2, 0, 1.0), two)  # a third session: the least recent goes
    assert [k for k in ("s1", "s2", "s3") if copies.get(k)] == ["s1", "s3"]
    copies.appended("s3", (4, 0, 1.0), two)  # 6 messages in all, but no eviction yet
    copies.keep("s4", (1, 0, 1.0), two[:1])  # 7: the oldest go until 5 or fewer
    assert [k for k in ("s1", "s3", "s4") if copies.get(k)] == ["s3", "s4"]
    copies.appended("s4", (9, 0, 1.0), two)  # the stamp moved under it: dropped
    assert copies.get("s4") is None


async def test_what_this_process_writes_after_a_claim_is_seen_by_the_turn(
    tmp_path: Path,
) -> None:
    """The claim reads the session's row and last event for the turn (`claim_hints`);
    a write this process makes before the turn asks must not be hidden by them."""
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    try:
        await store.create(KEY)
        await store.append(KEY, [Message("user", "hi"), Message("assistant", "hello")])
        assert await store.load(KEY) is not None  # a copy of both is kept
        claimed = await store.admit_and_claim(NewSubmission("s1", KEY, "next"), "me")
        assert claimed.lease_owner == "me"
        await store.append(KEY, [Message("user", "between")])
        await store.set_title(KEY, "renamed")
        await store.append_events([EventRecord(KEY, n, n, "note", "{}", "s1") for n in (1, 2)])
        loaded = await store.load(KEY)
        assert loaded is not None
        assert [m.content for m in loaded.messages] == ["hi", "hello", "between"]
        info = await store.get(KEY)
        assert info is not None and info.title == "renamed"
        assert await store.last_seq(KEY) == 2
    finally:
        await store.aclose()


async def test_a_claim_s_reads_answer_the_turn_as_a_read_would(tmp_path: Path) -> None:
    """With nothing written since the claim, the turn's questions are answered from
    what it read: the same answers a fresh store reads from the file."""
    path = str(tmp_path / "s.db")
    store = SQLiteSessionStore(path)
    try:
        await store.create(KEY)
        await store.append(KEY, [Message("user", "hi"), Message("assistant", "hello")])
        await store.append_events([EventRecord(KEY, 7, 7, "note", "{}", None)])
        assert await store.load(KEY) is not None
        await store.admit_and_claim(NewSubmission("s1", KEY, "next"), "me")
        info, loaded, last = await store.get(KEY), await store.load(KEY), await store.last_seq(KEY)
        fresh = SQLiteSessionStore(path)
        try:
            assert (info, loaded, last) == (
                await fresh.get(KEY),
                await fresh.load(KEY),
                await fresh.last_seq(KEY),
            )
        finally:
            await fresh.aclose()
    finally:
        await store.aclose()


async def test_a_write_that_commits_with_the_claim_is_seen_by_the_turn(tmp_path: Path) -> None:
    """Writes asked in the same turn of the event loop commit in one transaction: one
    that runs after the claim's, in that transaction, must not be hidden by the hints the
    claim read."""
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    try:
        await store.create(KEY)
        await store.append(KEY, [Message("user", "hi"), Message("assistant", "hello")])
        assert await store.load(KEY) is not None
        await asyncio.gather(
            store.admit_and_claim(NewSubmission("s1", KEY, "next"), "me"),
            store.append(KEY, [Message("user", "same transaction")]),
        )
        loaded = await store.load(KEY)
        assert loaded is not None
        assert [m.content for m in loaded.messages] == ["hi", "hello", "same transaction"]
    finally:
        await store.aclose()
