"""Titles numbered by several machines on one PostgreSQL store: `set_next_title` picks and
writes in one transaction, its callers taking turns on an advisory lock per lineage, and
tries again when a plain write took the title it picked. The contract is in
tests/conformance (`SessionTitlesSuite`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import psycopg
import pytest

from seam.contracts.sessions import NewSession
from seam.services.sessions.postgres import PostgresStore


@pytest.fixture
async def store(postgres_url: str, postgres_schema: str) -> AsyncIterator[PostgresStore]:
    opened = await PostgresStore.connect(postgres_url, schema=postgres_schema)
    yield opened
    await opened.aclose()


async def test_two_machines_titling_alike_get_distinct_numbers(
    store: PostgresStore, postgres_url: str, postgres_schema: str
) -> None:
    other = await PostgresStore.connect(postgres_url, schema=postgres_schema)
    try:
        keys = [f"s{n}" for n in range(16)]
        for key in keys:
            await store.create(key)
        given = await asyncio.gather(
            *((store if n % 2 else other).set_next_title(key, "Hi") for n, key in enumerate(keys))
        )
        assert set(given) == {"Hi", *(f"Hi #{n}" for n in range(2, 17))}  # 16, all distinct
    finally:
        await other.aclose()


async def test_a_title_a_plain_write_took_meanwhile_is_numbered_again(
    store: PostgresStore, postgres_url: str, postgres_schema: str
) -> None:
    await store.create("a", NewSession(title="Hi"))
    await store.create("b")
    await store.create("c")
    async with (
        await psycopg.AsyncConnection.connect(postgres_url) as writer,
        await psycopg.AsyncConnection.connect(postgres_url, autocommit=True) as watcher,
    ):
        # Not committed yet: `set_next_title` cannot see it and picks "Hi #2" too.
        await writer.execute(
            f"UPDATE {postgres_schema}.sessions SET title = 'Hi #2' WHERE key = 'b'"
        )
        numbering = asyncio.ensure_future(store.set_next_title("c", "Hi"))
        async with asyncio.timeout(30):
            while not await _waits_for_a_lock(watcher):  # its UPDATE waits on "Hi #2"
                pass
        await writer.commit()
    assert await numbering == "Hi #3"  # refused once, numbered again
    info = await store.get("c")
    assert info is not None and info.title == "Hi #3"


async def _waits_for_a_lock(watcher: psycopg.AsyncConnection[tuple[object, ...]]) -> bool:
    cur = await watcher.execute(
        "SELECT count(*) FROM pg_stat_activity"
        " WHERE datname = current_database() AND wait_event_type = 'Lock'"
        " AND query LIKE 'UPDATE sessions SET title%%'"
    )
    row = await cur.fetchone()
    return row is not None and int(str(row[0])) > 0
