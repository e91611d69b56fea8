"""The SQLite store keeps live sessions' transcripts between turns (`sqlite_transcripts`):
a turn must still see every change made to its transcript from anywhere else."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from seam.contracts.messages import Message
from seam.core import AgentLoop, Coordinator, DefaultToolRegistry, SessionFactory
from seam.core.scripted_model import ScriptedModel, text_step
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.services.sessions.transcript_copies import TranscriptCopies

KEY = 'agent-session:["t","default","chat"]'


def _factory(store: SQLiteSessionStore, model: ScriptedModel) -> SessionFactory:
    loop = AgentLoop(model=model, tools=DefaultToolRegistry(), sessions=store)
    return SessionFactory(loop, store, Coordinator(store, owner="here"))


def _said(model: ScriptedModel) -> list[str]:
    """What the last request sent of the conversation (user and assistant text)."""
    return [m.content for m in model.requests[-1].messages if m.role in ("user", "assistant")]


async def test_a_turn_sees_an_undo_and_a_new_turn_written_by_another_process(
    tmp_path: Path,
) -> None:
    # A fixed clock on both: the row's updated_at cannot tell the two transcripts apart.
    path = str(tmp_path / "s.db")
    here = SQLiteSessionStore(path, clock=lambda: 1000.0)
    there = SQLiteSessionStore(path, clock=lambda: 1000.0)
    try:
        model = ScriptedModel([text_step("one"), text_step("two"), text_step("three")])
        session = await _factory(here, model).get_or_create_root(KEY)
        await session.ask("first")
        await session.ask("second")
        # Elsewhere: the last turn undone and another of the same length written.
        assert await there.undo(KEY) == 2
        await there.append(KEY, [Message("user", "other"), Message("assistant", "reply")])
        await session.ask("third")
        assert _said(model) == ["first", "one", "other", "reply", "third"]
    finally:
        await here.aclose()
        await there.aclose()


async def test_turns_another_process_appended_are_read_after_the_kept_ones(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "s.db")
    here = SQLiteSessionStore(path, clock=lambda: 1000.0)
    there = SQLiteSessionStore(path, clock=lambda: 1000.0)
    try:
        model = ScriptedModel([text_step("one"), text_step("two")])
        session = await _factory(here, model).get_or_create_root(KEY)
        await session.ask("first")
        for n in range(3):  # the session's turns move to another process meanwhile
            await there.append(KEY, [Message("user", f"q{n}"), Message("assistant", f"a{n}")])
        await session.ask("second")
        said = ["first", "one", "q0", "a0", "q1", "a1", "q2", "a2", "second"]
        assert _said(model) == said
        kept = await here.load(KEY)
        fresh = SQLiteSessionStore(path)
        try:
            read = await fresh.load(KEY)
        finally:
            await fresh.aclose()
        assert kept is not None and read is not None
        assert kept.messages == read.messages
        assert [m.content for m in kept.messages] == [*said, "two"]
    finally:
        await here.aclose()
        await there.aclose()


async def test_a_transcript_cut_by_hand_in_sqlite_is_read_again(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store = SQLiteSessionStore(path, clock=lambda: 1000.0)
    try:
        model = ScriptedModel([text_step("one"), text_step("two")])
        session = await _factory(store, model).get_or_create_root(KEY)
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
        assert _said(model) == ["first", "edited", "second"]
    finally:
        await store.aclose()


async def test_the_kept_transcript_is_the_one_the_file_holds(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    store = SQLiteSessionStore(path)
    try:
        model = ScriptedModel([text_step(f"answer {n}") for n in range(4)])
        session = await _factory(store, model).get_or_create_root(KEY)
        for n in range(3):
            await session.ask(f"question {n}")
        # Written here meanwhile, not through a turn: a plain append.
        await store.append(KEY, [Message("user", "a note"), Message("assistant", "noted")])
        await session.ask("question 3")
        kept = await store.load(KEY)
        fresh = SQLiteSessionStore(path)
        try:
            read = await fresh.load(KEY)
        finally:
            await fresh.aclose()
        assert kept is not None and read is not None
        assert kept.messages == read.messages
        assert kept.info.message_count == len(read.messages) == 10
        assert _said(model)[-3:] == ["a note", "noted", "question 3"]
    finally:
        await store.aclose()


async def test_a_session_deleted_and_made_again_is_read_again(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    try:
        model = ScriptedModel([text_step("one"), text_step("two")])
        factory = _factory(store, model)
        session = await factory.get_or_create_root(KEY)
        await session.ask("first")
        assert await store.delete(KEY)
        factory.drop(KEY)
        session = await factory.get_or_create_root(KEY)
        await session.ask("again")
        assert _said(model) == ["again"]
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
