"""The PostgreSQL floor: what this machine allows a durable queue, beside Seam's store.

`durable.py` prints it after Seam's PostgreSQL throughput, so the issue's two goals can
be read against the machine (a worker at 60% of SQLite's throughput, four workers at 1.8
times one) and not against a guess of what two cores allow.

The floor is the least a durable worker does for each submission, done by hand with
psycopg: a claim that other workers see (committed, without waiting for the WAL flush)
and a settlement that is durable (its commit waits for the flush) writing the answer's
two message rows, a round trip each, as Seam's store does; between them the same turn
as `durable.py`'s throughput (the bare loop on the in-memory session store, a 20-delta
answer). No per-session order, no transcript, no event log, no usage row: a worker with
less to do, so the rate is an upper bound for Seam's and the CPU a lower bound.

    .venv/bin/python bench/pg_floor.py [--submissions 400] [--pg URL]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import secrets
import time
from typing import Any

from durable import SESSIONS, Throughput, _loop, _server_cpu

from seam.contracts.events import Done
from seam.core import InMemorySessionStore
from seam.core.scripted_model import Step

_SCHEMA = (
    "CREATE TABLE {s}.jobs (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " session text NOT NULL, input text NOT NULL, state text NOT NULL)",
    "CREATE INDEX ON {s}.jobs (id) WHERE state = 'queued'",
    "CREATE TABLE {s}.messages (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,"
    " job bigint NOT NULL, role text NOT NULL, body text NOT NULL)",
)
_CLAIM = (
    "UPDATE jobs SET state = 'running' WHERE id = (SELECT id FROM jobs"
    " WHERE state = 'queued' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)"
    " RETURNING id, session, input"
)
_SETTLE = (
    "WITH done AS (UPDATE jobs SET state = 'settled' WHERE id = %(id)s)"
    " INSERT INTO messages (job, role, body) VALUES (%(id)s, 'user', %(input)s),"
    " (%(id)s, 'assistant', %(answer)s)"
)


def _fill(url: str, schema: str, submissions: int) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        for statement in _SCHEMA:
            conn.execute(statement.format(s=f'"{schema}"'))
        conn.execute(
            f'INSERT INTO "{schema}".jobs (session, input, state)'
            " SELECT 's' || (n %% %s), 'question ' || n, 'queued'"
            " FROM generate_series(0, %s - 1) AS n",
            (SESSIONS, submissions),
        )


async def _claim(conn: Any) -> tuple[int, str, str] | None:
    """One round trip: the claim and its commit, which does not wait for the flush."""
    async with conn.pipeline():
        await conn.execute("SELECT set_config('synchronous_commit', 'off', true)")
        cur = await conn.execute(_CLAIM)
        await conn.execute("COMMIT")
    row = await cur.fetchone()
    return None if row is None else (int(row[0]), str(row[1]), str(row[2]))


async def _settle(conn: Any, job: int, question: str, answer: str) -> None:
    """One round trip: the settlement and its commit, which waits for the flush."""
    async with conn.pipeline():
        await conn.execute(_SETTLE, {"id": job, "input": question, "answer": answer})
        await conn.execute("COMMIT")


async def _work(url: str, schema: str, submissions: int, gate: Any) -> tuple[int, float]:
    import psycopg

    loop = _loop(InMemorySessionStore(), [Step(deltas=["ok "] * 20) for _ in range(submissions)])
    async with await psycopg.AsyncConnection.connect(url) as conn:
        await conn.execute(f'SET search_path TO "{schema}"')
        await conn.commit()
        ready, start = gate
        ready.put(os.getpid())
        start.wait()
        began, settled = time.process_time(), 0
        while (job := await _claim(conn)) is not None:
            answer = ""
            async for event in loop.run(job[1], job[2]):
                if isinstance(event, Done):
                    answer = event.text
            await _settle(conn, job[0], job[2], answer)
            settled += 1
        return settled, time.process_time() - began


def _worker(url: str, schema: str, submissions: int, gate: Any, out: Any) -> None:
    out.put(asyncio.run(_work(url, schema, submissions, gate)))


def floor_throughput(url: str, clients: int, submissions: int) -> Throughput:
    """`submissions` jobs over `SESSIONS` sessions settled by `clients` processes."""
    import psycopg

    schema = f"floor_{secrets.token_hex(4)}"
    _fill(url, schema, submissions)
    try:
        ctx = multiprocessing.get_context("spawn")
        ready, start, out = ctx.Queue(), ctx.Event(), ctx.Queue()
        gate = (ready, start)
        procs = [
            ctx.Process(target=_worker, args=(url, schema, submissions, gate, out))
            for _ in range(clients)
        ]
        for proc in procs:
            proc.start()
        for _ in procs:
            ready.get()
        server = _server_cpu(url)
        began = time.perf_counter()
        start.set()
        results = [out.get() for _ in procs]
        elapsed = time.perf_counter() - began
        after = _server_cpu(url)
        for proc in procs:
            proc.join()
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
    total = sum(settled for settled, _ in results)
    assert total == submissions, f"settled {total} of {submissions}"
    return Throughput(
        submissions / elapsed,
        sum(cpu for _, cpu in results) / submissions * 1000,
        None if server is None or after is None else (after - server) / submissions * 1000,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--submissions", type=int, default=400)
    parser.add_argument("--pg", default=os.environ.get("SEAM_TEST_PG_URL"))
    args = parser.parse_args()
    if not args.pg:
        print("PostgreSQL floor: no server (pass --pg URL or set SEAM_TEST_PG_URL)")
        return
    for clients in (1, 4):
        rate = floor_throughput(args.pg, clients, args.submissions)
        print(f"  PostgreSQL floor {clients} client(s): {rate.line()}")


if __name__ == "__main__":
    main()
