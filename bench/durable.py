"""What durability costs, and how many submissions the stores settle per second.

1. Per-turn framework CPU time of the same turn (3 tool calls + 200 text deltas, every
   event consumed) run three ways: the bare loop on the in-memory session store (no
   submission), a durable submission on the in-memory execution store, and a durable
   submission on SQLite (transcript, submission progress and the event log on disk),
   in interleaved rounds so the machine's drift touches all three alike.
2. Throughput: submissions settled per second with a scripted model (a 20-delta answer),
   400 submissions over 40 sessions, by 1 and 4 worker processes sharing the store:
   SQLite (one file) and PostgreSQL (when a server is given or SEAM_TEST_PG_URL is set;
   `scripts/ensure-postgres` starts one), with the CPU each settled submission cost the
   workers and (a server on this machine, its /proc readable) PostgreSQL's processes;
   then PostgreSQL's floor (`pg_floor.py`: a minimal worker written by hand, 1 and 4).

    .venv/bin/python bench/durable.py [--turns 1000] [--submissions 400] [--pg URL]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import multiprocessing
import os
import secrets
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Run as a script, this folder is on sys.path: the same turn as loop_overhead.py.
from loop_overhead import EchoTool
from loop_overhead import script as turn_script

from seam.contracts.execution import ExecutionStore, SubmissionQuery
from seam.core import (
    AgentLoop,
    Coordinator,
    DefaultToolRegistry,
    InMemoryExecutionStore,
    InMemorySessionStore,
    ScriptedModel,
    SessionFactory,
)
from seam.core.scripted_model import Step

SESSIONS = 40
# Submissions one worker runs at a time in the "at a time" shape (`--concurrency`).
LANES = 4


def _loop(store: Any, steps: list[Step]) -> AgentLoop:
    tools = DefaultToolRegistry()
    tools.register_tool(EchoTool())
    return AgentLoop(model=ScriptedModel(steps), tools=tools, sessions=store)


async def bare_turns(turns: int) -> list[float]:
    loop = _loop(InMemorySessionStore(), turn_script(turns + 50))
    samples = []
    for i in range(turns + 50):
        start = time.process_time_ns()
        async for _ in loop.run(f"bench-{i % 20}", "go"):
            pass
        if i >= 50:
            samples.append((time.process_time_ns() - start) / 1e6)
    return samples


async def durable_turns(store: ExecutionStore, turns: int, name: str = "s") -> list[float]:
    """`turns` turns over 20 sessions named `name`0 to 19: new ones, so that a turn here
    carries as much history as `bare_turns`' (a history twice as long costs more in both)."""
    loop = _loop(store, turn_script(turns + 50))
    factory = SessionFactory(loop, store, Coordinator(store, owner="bench"))
    sessions = [
        await factory.get_or_create_root(f'agent-session:["b","default","{name}{n}"]')
        for n in range(20)
    ]
    samples = []
    for i in range(turns + 50):
        start = time.process_time_ns()
        await sessions[i % 20].ask("go", on_event=lambda event: None)
        if i >= 50:
            samples.append((time.process_time_ns() - start) / 1e6)
    return samples


def report(label: str, samples: list[float]) -> None:
    samples.sort()
    p50 = statistics.median(samples)
    p95 = samples[int(len(samples) * 0.95)]
    print(
        f"  {label:<34} mean {statistics.fmean(samples):7.3f} ms"
        f"   p50 {p50:7.3f} ms   p95 {p95:7.3f} ms"
    )


# -- throughput --------------------------------------------------------------------------


async def _open(target: str, schema: str | None, lanes: int = 1) -> ExecutionStore:
    """The store; on PostgreSQL with a connection ready for each of `lanes` (a worker's
    pool grows to that many on its first claims and keeps them)."""
    if target.startswith("postgres"):
        from seam.services.sessions.postgres import PostgresStore

        return await PostgresStore.connect(target, schema=schema, min_connections=lanes)
    from seam.services.sessions.sqlite import SQLiteSessionStore

    return SQLiteSessionStore(target, busy_timeout=30.0)


async def _fill(target: str, schema: str | None, submissions: int) -> None:
    store = await _open(target, schema)
    try:
        keys = [f'agent-session:["b","default","s{n}"]' for n in range(SESSIONS)]
        for key in keys:
            await store.create(key)
        for n in range(submissions):
            coordinator = Coordinator(store)
            await coordinator.submit(keys[n % SESSIONS], f"question {n}")
    finally:
        await store.aclose()


async def _work(
    target: str, schema: str | None, submissions: int, gate: Any, lanes: int = 1
) -> tuple[int, float]:
    """How many submissions this worker settled, and the CPU seconds it spent on them;
    `lanes` drain loops side by side, as `seam worker --concurrency` runs them."""
    # Connected (pool, schema check and PostgreSQL's LISTEN connection) before the clock
    # starts, so the figure is the settling alone, the same for every worker and store.
    store = await _open(target, schema, lanes)
    try:
        await store.submissions(query=SubmissionQuery(limit=1))
        await store.wait_for_work(0)
        ready, start = gate
        ready.put(os.getpid())
        start.wait()
        began = time.process_time()
        loop = _loop(store, [Step(deltas=["ok "] * 20) for _ in range(submissions)])
        coordinator = Coordinator(store, owner=f"bench-{os.getpid()}")
        factory = SessionFactory(loop, store, coordinator)

        async def lane() -> int:
            done = 0
            while True:
                done += len(await coordinator.drain_runnable(factory.resolve))
                if not await store.submissions(
                    query=SubmissionQuery(states=("queued", "running"), limit=1)
                ):
                    return done
                await store.wait_for_work(0.05)

        settled = sum(await asyncio.gather(*(lane() for _ in range(lanes))))
        return settled, time.process_time() - began
    finally:
        await store.aclose()


def _worker(
    target: str, schema: str | None, submissions: int, gate: Any, out: Any, lanes: int = 1
) -> None:
    out.put(asyncio.run(_work(target, schema, submissions, gate, lanes)))


def _server_cpu(url: str) -> float | None:
    """CPU seconds the PostgreSQL server's processes have used (the postmaster, its live
    children and those it reaped): None when the server is not on this machine or its
    /proc is not readable."""
    import psycopg

    try:
        with psycopg.connect(url) as conn:
            row = conn.execute("SHOW data_directory").fetchone()
        if row is None:
            return None
        postmaster = int(Path(str(row[0]), "postmaster.pid").read_text().split()[0])
        total = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                pid = int(stat.parent.name)
                if pid == postmaster:
                    total += sum(int(f) for f in fields[11:15])  # own and reaped children's
                elif int(fields[1]) == postmaster:
                    total += int(fields[11]) + int(fields[12])
        return total / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, TypeError, psycopg.Error):
        return None


@dataclass(frozen=True, slots=True)
class Throughput:
    """Settled per second, and CPU milliseconds per settled submission: the workers'
    (after the start signal), and the PostgreSQL server's (None: not measurable)."""

    rate: float
    worker_ms: float
    server_ms: float | None

    def line(self) -> str:
        server = "" if self.server_ms is None else f", server {self.server_ms:.2f} ms"
        return (
            f"{self.rate:8.1f} settled/s   CPU per submission: workers"
            f" {self.worker_ms:.2f} ms{server}"
        )


def throughput(target: str, workers: int, submissions: int, lanes: int = 1) -> Throughput:
    schema = f"bench_{secrets.token_hex(4)}" if target.startswith("postgres") else None
    asyncio.run(_fill(target, schema, submissions))
    ctx = multiprocessing.get_context("spawn")
    ready, start = ctx.Queue(), ctx.Event()
    out = ctx.Queue()
    procs = [
        ctx.Process(target=_worker, args=(target, schema, submissions, (ready, start), out, lanes))
        for _ in range(workers)
    ]
    for proc in procs:
        proc.start()
    for _ in procs:  # every worker imported and connected before the clock starts
        ready.get()
    server = _server_cpu(target) if schema is not None else None
    began = time.perf_counter()
    start.set()
    results = [out.get() for _ in procs]
    elapsed = time.perf_counter() - began
    if server is not None:
        after = _server_cpu(target)
        server = None if after is None else after - server
    for proc in procs:
        proc.join()
    total = sum(settled for settled, _ in results)
    assert total == submissions, f"settled {total} of {submissions}"
    if schema is not None:
        asyncio.run(_drop_schema(target, schema))
    return Throughput(
        submissions / elapsed,
        sum(cpu for _, cpu in results) / submissions * 1000,
        None if server is None else server / submissions * 1000,
    )


async def _drop_schema(url: str, schema: str) -> None:
    import psycopg

    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


async def per_turn(turns: int, rounds: int = 5, pg: str | None = None) -> None:
    """The three ways in `rounds` interleaved rounds, each a share of the turns: a machine
    whose speed drifts (this one's does, by a third from minute to minute) then slows or
    speeds all three alike, and their ratio is the cost of durability, not of the drift.
    With `pg`, a fourth: the same turn on PostgreSQL (this process's CPU: the worker's
    side; the server's is not counted)."""
    print(f"per-turn framework CPU time, {turns} turns (3 tool calls + 200 text deltas)")
    from seam.services.sessions.sqlite import SQLiteSessionStore

    bare: list[float] = []
    memory: list[float] = []
    sqlite: list[float] = []
    postgres: list[float] = []
    share = max(1, turns // rounds)
    # Each round's turns run in new sessions on every way: on the one SQLite file, a
    # round in the sessions of the round before would carry twice their history.
    schema = f"bench_{secrets.token_hex(4)}"
    with tempfile.TemporaryDirectory() as tmp:
        store = SQLiteSessionStore(str(Path(tmp) / "sessions.db"))
        remote = None if pg is None else await _open(pg, schema)
        try:
            for n in range(rounds):
                gc.collect()
                bare += await bare_turns(share)
                memory += await durable_turns(InMemoryExecutionStore(), share)
                sqlite += await durable_turns(store, share, f"r{n}s")
                if remote is not None:
                    postgres += await durable_turns(remote, share, f"r{n}s")
        finally:
            await store.aclose()
            if remote is not None and pg is not None:
                await remote.aclose()
                await _drop_schema(pg, schema)
    report("bare loop, in-memory session store", bare)
    report("durable, in-memory execution store", memory)
    report("durable, SQLite (WAL, file)", sqlite)
    if postgres:
        report("durable, PostgreSQL (worker CPU)", postgres)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--submissions", type=int, default=400, help="0: the per-turn part alone")
    parser.add_argument(
        "--pg",
        default=os.environ.get("SEAM_TEST_PG_URL"),
        help="a PostgreSQL server's URL (default: SEAM_TEST_PG_URL; empty: none)",
    )
    args = parser.parse_args()
    pg = args.pg or None
    asyncio.run(per_turn(args.turns, pg=pg))
    if args.submissions <= 0:
        return
    print(f"throughput: {args.submissions} submissions over {SESSIONS} sessions, scripted model")
    # (workers, lanes): one and four workers one submission at a time, and one worker
    # running four at a time (`seam worker --concurrency 4`).
    shapes = ((1, 1), (4, 1), (1, LANES))
    with tempfile.TemporaryDirectory() as tmp:
        for workers, lanes in shapes:
            path = str(Path(tmp) / f"throughput-{workers}-{lanes}.db")
            rate = throughput(path, workers, args.submissions, lanes)
            print(f"  SQLite      {_shape(workers, lanes)}: {rate.line()}")
    if pg is None:
        print("  PostgreSQL: no server (pass --pg URL or set SEAM_TEST_PG_URL)")
        return
    for workers, lanes in shapes:
        rate = throughput(pg, workers, args.submissions, lanes)
        print(f"  PostgreSQL  {_shape(workers, lanes)}: {rate.line()}")
    # What this machine allows: a minimal worker by hand (pg_floor.py), one and four.
    from pg_floor import floor_throughput

    for clients in (1, 4):
        rate = floor_throughput(pg, clients, args.submissions)
        print(f"  PostgreSQL floor {clients} client(s): {rate.line()}")


def _shape(workers: int, lanes: int) -> str:
    return f"{workers} worker(s)" + ("" if lanes == 1 else f", {lanes} at a time")


if __name__ == "__main__":
    main()
