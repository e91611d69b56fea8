"""The PostgreSQL store keeps live sessions' transcripts between turns
(`postgres_transcripts`): a turn must still see every change made to its transcript by
another worker, another path or a hand in psql, and a load must equal a whole read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import psycopg
import pytest

from seam.contracts.messages import Message
from seam.core import Coordinator
from seam.core.scripted_model import ScriptedModel, text_step
from seam.services.sessions.postgres import PostgresStore
from tests.support.transcript_copies import (
    KEY,
    an_undo_and_a_turn_written_elsewhere_are_seen,
    messages_of,
    said,
    session_factory,
    turns_appended_elsewhere_are_read_after_the_kept_ones,
)


@pytest.fixture
async def two_stores(
    postgres_url: str, postgres_schema: str
) -> AsyncIterator[tuple[PostgresStore, PostgresStore]]:
    """Two workers' stores on one schema, on one fixed clock (the row's `updated_at`
    cannot tell two transcripts apart)."""
    here, there = await asyncio.gather(
        PostgresStore.connect(postgres_url, schema=postgres_schema, clock=lambda: 1000.0),
        PostgresStore.connect(postgres_url, schema=postgres_schema, clock=lambda: 1000.0),
    )
    yield here, there
    await here.aclose()
    await there.aclose()


async def _whole(url: str, schema: str) -> tuple[Message, ...]:
    """The transcript as a store with no copies reads it."""
    fresh = await PostgresStore.connect(url, schema=schema)
    try:
        return await messages_of(fresh)
    finally:
        await fresh.aclose()


async def test_a_turn_sees_an_undo_and_a_new_turn_written_by_another_worker(
    two_stores: tuple[PostgresStore, PostgresStore],
) -> None:
    await an_undo_and_a_turn_written_elsewhere_are_seen(*two_stores)


async def test_a_worker_claiming_the_next_turn_sees_a_cut_made_meanwhile(
    two_stores: tuple[PostgresStore, PostgresStore],
) -> None:
    """The claim hands the turn its session's stamp (`LoadHint`): a copy that no longer
    matches it, even at the same length, is read again rather than served."""
    here, there = two_stores
    model = ScriptedModel([text_step("one"), text_step("two"), text_step("three")])
    factory = session_factory(here, model)
    coordinator = Coordinator(here, owner="here")
    session = await factory.get_or_create_root(KEY)
    for text in ("first", "second"):  # each claimed by the worker, as a queue runs them
        await session.submit(text)
        assert len(await coordinator.drain_runnable(factory.resolve)) == 1
    assert await there.undo(KEY) == 2
    await there.append(KEY, [Message("user", "other"), Message("assistant", "reply")])
    await session.submit("third")
    assert len(await coordinator.drain_runnable(factory.resolve)) == 1
    assert said(model) == ["first", "one", "other", "reply", "third"]


async def test_turns_another_worker_appended_are_read_after_the_kept_ones(
    two_stores: tuple[PostgresStore, PostgresStore], postgres_url: str, postgres_schema: str
) -> None:
    here, there = two_stores
    await turns_appended_elsewhere_are_read_after_the_kept_ones(
        here, there, lambda: _whole(postgres_url, postgres_schema)
    )


async def test_a_transcript_edited_by_hand_in_psql_is_read_again(
    two_stores: tuple[PostgresStore, PostgresStore], postgres_url: str, postgres_schema: str
) -> None:
    here, _ = two_stores
    model = ScriptedModel([text_step("one"), text_step("two")])
    session = await session_factory(here, model).get_or_create_root(KEY)
    await session.ask("first")
    assert await here.load(KEY) is not None  # the copy kept here: both messages
    with psycopg.connect(postgres_url, autocommit=True) as conn:  # no store at all
        conn.execute(f"SET search_path TO {postgres_schema}")
        with conn.transaction():
            conn.execute("DELETE FROM messages WHERE session_key = %s AND idx = 1", (KEY,))
            conn.execute(
                "INSERT INTO messages (session_key, idx, role, content) VALUES (%s, 1, %s, %s)",
                (KEY, "assistant", b"edited"),
            )
    await session.ask("second")
    assert said(model) == ["first", "edited", "second"]


async def test_a_row_miscounted_outside_seam_is_read_whole_not_doubled(
    two_stores: tuple[PostgresStore, PostgresStore], postgres_url: str, postgres_schema: str
) -> None:
    here, _ = two_stores
    await here.create(KEY)
    await here.append(KEY, [Message("user", "hi"), Message("assistant", "hello")])
    assert await here.load(KEY) is not None  # a copy of two messages is kept
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(f"SET search_path TO {postgres_schema}")
        # A message added with no bump of the count: the row says 2, the table holds 3.
        conn.execute(
            "INSERT INTO messages (session_key, idx, role, content) VALUES (%s, 2, %s, %s)",
            (KEY, "user", b"slipped in"),
        )
    loaded = await here.load(KEY)
    assert loaded is not None
    assert [m.content for m in loaded.messages] == ["hi", "hello", "slipped in"]
    assert loaded.messages == await _whole(postgres_url, postgres_schema)


async def test_a_session_deleted_and_made_again_is_read_again(
    two_stores: tuple[PostgresStore, PostgresStore],
) -> None:
    here, there = two_stores
    model = ScriptedModel([text_step("one"), text_step("two")])
    factory = session_factory(here, model)
    session = await factory.get_or_create_root(KEY)
    await session.ask("first")
    assert await here.load(KEY) is not None  # the copy kept here: both messages
    # Made again at the same time by the fixed clock: only the count tells them apart.
    assert await there.delete(KEY)
    factory.drop(KEY)
    session = await factory.get_or_create_root(KEY)
    await session.ask("again")
    assert said(model) == ["again"]
