"""What a turn's transcript load costs in a long session, on SQLite and PostgreSQL.

A session of `--messages` (2,000) messages; each round appends a turn's two messages,
as another worker would (a plain `append` on a second store), then loads the session
through the first store, as a turn does before it runs. Printed: p50 and p95 of the
load's CPU time and wall time. Run with `PYTHONPATH=<older checkout>/src` for a before
figure (before the kept copies, PostgreSQL read the whole transcript every turn).

    .venv/bin/python bench/long_session.py [--messages 2000] [--rounds 200] [--pg URL]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from seam.contracts.messages import Message

KEY = 'agent-session:["b","default","long"]'


def _turn(n: int) -> list[Message]:
    return [
        Message("user", f"question {n}: how is the cabin's wifi set up again?"),
        Message("assistant", f"answer {n}: the router is in the loft, the password on it."),
    ]


async def measure(here: Any, there: Any, messages: int, rounds: int) -> tuple[list[float], ...]:
    await here.create(KEY)
    for n in range(0, messages, 100):
        await here.append(KEY, [m for i in range(n, n + 100, 2) for m in _turn(i)])
    cpu: list[float] = []
    wall: list[float] = []
    for n in range(rounds):
        await there.append(KEY, _turn(messages + n))
        began, began_cpu = time.perf_counter(), time.process_time()
        loaded = await here.load(KEY)
        cpu.append((time.process_time() - began_cpu) * 1000)
        wall.append((time.perf_counter() - began) * 1000)
        assert loaded is not None and len(loaded.messages) == messages + 2 * (n + 1)
    return cpu, wall


def report(label: str, cpu: list[float], wall: list[float]) -> None:
    def p(samples: list[float], q: float) -> float:
        return sorted(samples)[int(len(samples) * q)]

    print(
        f"  {label:<11} load CPU p50 {statistics.median(cpu):6.2f} ms  p95 {p(cpu, 0.95):6.2f}"
        f"   wall p50 {statistics.median(wall):6.2f} ms  p95 {p(wall, 0.95):6.2f}"
    )


async def sqlite(messages: int, rounds: int) -> None:
    from seam.services.sessions.sqlite import SQLiteSessionStore

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "sessions.db")
        here, there = SQLiteSessionStore(path), SQLiteSessionStore(path)
        try:
            report("SQLite", *await measure(here, there, messages, rounds))
        finally:
            await here.aclose()
            await there.aclose()


async def postgres(url: str, messages: int, rounds: int) -> None:
    import psycopg

    from seam.services.sessions.postgres import PostgresStore

    schema = f"bench_{secrets.token_hex(4)}"
    here = await PostgresStore.connect(url, schema=schema)
    there = await PostgresStore.connect(url, schema=schema)
    try:
        report("PostgreSQL", *await measure(here, there, messages, rounds))
    finally:
        await here.aclose()
        await there.aclose()
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--pg", default=os.environ.get("SEAM_TEST_PG_URL"))
    args = parser.parse_args()
    print(f"a turn's load of a session of {args.messages} messages, another worker appending")
    asyncio.run(sqlite(args.messages, args.rounds))
    if args.pg:
        asyncio.run(postgres(args.pg, args.messages, args.rounds))
    else:
        print("  PostgreSQL: no server (pass --pg URL or set SEAM_TEST_PG_URL)")


if __name__ == "__main__":
    main()
