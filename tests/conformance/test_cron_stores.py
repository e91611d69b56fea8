"""The cron protocols (`CronStoreSuite`: CronJobBook, CronRunLedger), run against every
backend."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.cron import CronStore
from seam.core.cron import InMemoryCronStore
from seam.testing.clock import ManualClock
from seam.testing.conformance.cron import CronStoreSuite, claim, job

from .backends import open_backend


class _Holder:
    """The in-memory backend as the SQL ones come: a store whose `cron` is the view."""

    def __init__(self, clock: ManualClock) -> None:
        self.cron = InMemoryCronStore(clock=clock)

    async def aclose(self) -> None:
        pass


@pytest.fixture
async def cron(
    backend: str, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[CronStore]:
    opened: Any = await open_backend(backend, request, clock, tmp_path, _Holder)
    assert isinstance(opened.cron, CronStore)
    yield opened.cron
    await opened.aclose()


class TestCronStore(CronStoreSuite):
    pass


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
async def test_two_store_objects_claim_each_slot_once(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Two processes' stores over one database, claiming the same 20 slots at once."""
    from seam.services.sessions.postgres import PostgresStore
    from seam.services.sessions.sqlite import SQLiteSessionStore

    stores: list[Any]
    if kind == "sqlite":
        path = str(tmp_path / "shared.db")
        stores = [SQLiteSessionStore(path), SQLiteSessionStore(path)]
    else:
        url = request.getfixturevalue("postgres_url")
        schema = request.getfixturevalue("postgres_schema")
        stores = [await PostgresStore.connect(url, schema=schema) for _ in range(2)]
    try:
        a, b = (s.cron for s in stores)
        await a.upsert(job())
        slots = [1_700_000_000.0 + 60 * n for n in range(20)]
        won = await asyncio.gather(*(claim(c, due=t) for t in slots for c in (a, b)))
        assert sum(r is not None for r in won) == len(slots)
        assert len(await b.runs("j1", limit=100)) == len(slots)
    finally:
        for s in stores:
            await s.aclose()
