"""The fault suite against the backends with a meaningful fault: PostgreSQL restarted the
hard way (`-m immediate`, crash recovery on start) on a throwaway cluster of the test's
own, and SQLite locked by another connection past the store's busy timeout. (The
in-memory store has no outage to have.)"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.services.sessions.postgres import PostgresStore
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.testing.conformance.faults import FaultSuite, Faulty
from tests.chaos.infra import pg_available, throwaway_postgres


async def _sqlite(tmp_path: Path) -> AsyncIterator[Faulty]:
    path = tmp_path / "sessions.db"
    store = SQLiteSessionStore(str(path), busy_timeout=0.3)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)

    def lock() -> None:
        holder.execute("BEGIN EXCLUSIVE")

    def unlock() -> None:
        holder.execute("ROLLBACK")

    try:
        yield Faulty(store, lock, unlock)
    finally:
        if holder.in_transaction:
            holder.execute("ROLLBACK")
        holder.close()
        await store.aclose()


async def _postgres() -> AsyncIterator[Faulty]:
    why = pg_available()
    if why:
        pytest.fail(f"the PostgreSQL fault test needs a server of its own: {why}")
    with throwaway_postgres() as server:
        store = await PostgresStore.connect(server.url)
        try:
            yield Faulty(store, server.restart, lambda: None)
        finally:
            await store.aclose()


@pytest.fixture(params=["sqlite", "postgres"])
async def faulty(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Faulty]:
    backend = _sqlite(tmp_path) if request.param == "sqlite" else _postgres()
    async for value in backend:
        yield value


@pytest.mark.timeout(120)
class TestStoreFaults(FaultSuite):
    pass
