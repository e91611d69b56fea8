"""One transaction in psycopg's pipeline mode: the queue's writes that need several
statements (renew, release, the step-by-step claim) in as few round trips as their reads
allow (a turn's step and settlement are one statement each: `postgres_journal`).

Why: a worker's submission used to cost about 30 round trips to the server (BEGIN, each
statement, COMMIT), each one a wake-up of the worker, the server and the event loop. In
pipeline mode a statement whose result nobody reads yet is only queued; the queue goes
to the server, in order, when a result is read (`fetchone`) or at COMMIT. So a
transaction costs one round trip per result it reads before deciding what to write,
plus its COMMIT.

What stays the same: the statements run in the order they were issued, in one
transaction; every check that decides what to write reads its result first (the lease
under its row lock); nothing is committed when the block raises. What moves: a failing
statement whose result nobody reads (a foreign key, a constraint) raises at the next
read or at COMMIT rather than where it was issued, so callers catch such errors around
the whole block.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextvars import ContextVar
from typing import Any

from psycopg import AsyncConnection, AsyncCursor, AsyncPipeline, errors
from psycopg.pq import TransactionStatus


@contextlib.asynccontextmanager
async def pipelined(conn: AsyncConnection[Any]) -> AsyncIterator[AsyncConnection[Any]]:
    """`BEGIN` ... `COMMIT` on `conn` (an autocommit connection) in pipeline mode.

    The BEGIN travels with the first statement and the COMMIT with the last writes, so
    a transaction that reads nothing before COMMIT is one round trip. When the block
    raises, whatever was queued is sent with a ROLLBACK after it (pipeline exit sends
    the queue first), so nothing of it stays.
    """
    try:
        async with conn.pipeline() as pipeline:
            token = _CURRENT.set(pipeline)
            try:
                await conn.execute("BEGIN")
                yield conn
                await conn.execute("COMMIT")
            finally:
                _CURRENT.reset(token)
    except BaseException:
        await _roll_back(conn)
        raise


# The pipeline of the `pipelined` block this task is in, for `read_point`.
_CURRENT: ContextVar[AsyncPipeline | None] = ContextVar("seam_pg_pipeline", default=None)


async def read_point() -> None:
    """Inside `pipelined`, before reading a result: send what is queued with a Sync.

    A read in pipeline mode sends a flush request, and a server that answered one waits
    for the next command without having said it is ready for it, so its
    `idle_in_transaction_session_timeout` (`IDLE_IN_TRANSACTION_SECONDS` in `postgres`)
    is not running: a worker that hung after the read would hold the transaction's row
    locks for good. After a Sync the server says it is ready (the explicit transaction
    goes on) and the timer runs while it waits; the read then finds its result there
    and sends nothing more. The same round trip as the flush. (Not a nested pipeline
    block: leaving one may send a flush after its Sync, which stops the timer again.)"""
    pipeline = _CURRENT.get()
    if pipeline is None:
        raise RuntimeError("read_point is for a `pipelined` block")
    await pipeline.sync()


async def _roll_back(conn: AsyncConnection[Any]) -> None:
    """End a transaction the block left open; a dead connection needs nothing (the pool
    drops it) and its error must not hide the block's own."""
    if conn.closed or conn.info.transaction_status == TransactionStatus.IDLE:
        return
    with contextlib.suppress(Exception):
        await conn.execute("ROLLBACK")


# A write whose session was deleted under it: its foreign key, or a message index that
# found no session row to count from.
SESSION_GONE = (errors.ForeignKeyViolation, errors.NotNullViolation)


async def relax_commit(conn: AsyncConnection[Any] | AsyncCursor[Any]) -> None:
    """This transaction's commit returns without waiting for the WAL flush. Only for a
    write the next durable commit may carry: the server flushes its WAL in order, so the
    turn's first transcript write makes its claim durable too, and a server crash before
    that loses only a claim whose worker has written nothing yet (its next write finds
    the lease gone and stops; the submission is claimed again)."""
    await conn.execute("SET LOCAL synchronous_commit = off")
