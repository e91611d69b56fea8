"""The PostgreSQL store's pipelined transactions (`postgres_pipeline`) on a real server:
all or nothing like any transaction, a failing queued statement surfaces at COMMIT, and
the connection is left idle for the pool's next user."""

from __future__ import annotations

from collections.abc import AsyncIterator

import psycopg
import pytest
from psycopg import AsyncConnection
from psycopg.pq import TransactionStatus

from seam.services.sessions.postgres_pipeline import pipelined, relax_commit


@pytest.fixture
async def conn(postgres_url: str, postgres_schema: str) -> AsyncIterator[AsyncConnection[object]]:
    async with await AsyncConnection.connect(postgres_url, autocommit=True) as conn:
        await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{postgres_schema}"')
        await conn.execute(f'SET search_path TO "{postgres_schema}"')
        await conn.execute("CREATE TABLE parent (key text PRIMARY KEY)")
        await conn.execute("CREATE TABLE child (key text REFERENCES parent (key), n int)")
        yield conn


async def _children(conn: AsyncConnection[object]) -> list[object]:
    cur = await conn.execute("SELECT n FROM child ORDER BY n")
    return [row[0] for row in await cur.fetchall()]


async def test_queued_writes_commit_together_and_reads_see_them(
    conn: AsyncConnection[object],
) -> None:
    async with pipelined(conn):
        await relax_commit(conn)
        await conn.execute("INSERT INTO parent VALUES ('a')")
        await conn.execute("INSERT INTO child VALUES ('a', 1)")
        # A read inside the transaction sees what was queued before it.
        cur = await conn.execute("SELECT count(*) FROM child")
        assert await cur.fetchone() == (1,)
        await conn.execute("INSERT INTO child VALUES ('a', 2)")
    assert conn.info.transaction_status == TransactionStatus.IDLE
    assert await _children(conn) == [1, 2]


async def test_a_raising_block_leaves_nothing(conn: AsyncConnection[object]) -> None:
    with pytest.raises(LookupError):
        async with pipelined(conn):
            await conn.execute("INSERT INTO parent VALUES ('a')")
            await conn.execute("INSERT INTO child VALUES ('a', 1)")
            raise LookupError("the lease is gone")
    assert conn.info.transaction_status == TransactionStatus.IDLE
    assert await _children(conn) == []
    assert await (await conn.execute("SELECT count(*) FROM parent")).fetchone() == (0,)


async def test_a_failing_queued_statement_raises_at_commit_and_leaves_nothing(
    conn: AsyncConnection[object],
) -> None:
    await conn.execute("INSERT INTO parent VALUES ('a')")
    with pytest.raises(psycopg.errors.ForeignKeyViolation):
        async with pipelined(conn):
            await conn.execute("INSERT INTO child VALUES ('a', 1)")
            await conn.execute("INSERT INTO child VALUES ('missing', 2)")
    assert conn.info.transaction_status == TransactionStatus.IDLE
    assert await _children(conn) == []
