"""The PostgreSQL store's pipelined transactions (`postgres_pipeline`) on a real server:
all or nothing like any transaction, a failing queued statement surfaces at COMMIT, and
the connection is left idle for the pool's next user."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import psycopg
import pytest
from psycopg import AsyncConnection
from psycopg.pq import TransactionStatus

from seam.services.sessions.postgres_pipeline import pipelined, read_point, relax_commit


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


async def test_a_client_that_stops_after_a_read_point_has_its_transaction_ended(
    postgres_url: str, postgres_schema: str, conn: AsyncConnection[object]
) -> None:
    """A worker hung inside a pipelined transaction holds its row locks; after a
    `read_point` the server's idle-in-transaction timeout runs, so the server ends it (a
    read's flush alone would leave the server waiting, the timer off, for good)."""
    await conn.execute("INSERT INTO parent VALUES ('a')")
    async with await AsyncConnection.connect(
        postgres_url,
        autocommit=True,
        options=f"-c search_path={postgres_schema} -c idle_in_transaction_session_timeout=300",
    ) as hung:
        pid = hung.info.backend_pid
        with pytest.raises(psycopg.OperationalError):
            async with pipelined(hung):
                cur = await hung.execute("SELECT key FROM parent FOR UPDATE")
                await read_point()
                assert await cur.fetchone() == ("a",)
                await _until_gone(conn, pid)  # the hang: nothing sent meanwhile
                await hung.execute("SELECT 1")
    # The row is free again: another transaction locks it at once.
    await conn.execute("SET lock_timeout = '1s'")
    cur = await conn.execute("SELECT key FROM parent FOR UPDATE")
    assert await cur.fetchone() == ("a",)


async def _until_gone(conn: AsyncConnection[object], pid: int, seconds: float = 10) -> None:
    """Poll the server until backend `pid` has ended (what is awaited is its timer)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while loop.time() < deadline:
        cur = await conn.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,))
        if await cur.fetchone() == (0,):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"backend {pid} still there after {seconds} s")
