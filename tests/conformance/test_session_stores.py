"""The session store contract, run against every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.sessions import SessionStore
from seam.core.sessions import InMemorySessionStore
from seam.services.sessions.postgres import PostgresStore
from seam.services.sessions.sqlite import SQLiteSessionStore

from .session_store_suite import ManualClock, SessionStoreSuite


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(
    request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[SessionStore]:
    if request.param == "memory":
        backend: SessionStore = InMemorySessionStore(clock=clock)
    elif request.param == "sqlite":
        backend = SQLiteSessionStore(str(tmp_path / "sessions.db"), clock=clock)
    else:
        backend = await PostgresStore.connect(
            request.getfixturevalue("postgres_url"),
            clock=clock,
            schema=request.getfixturevalue("postgres_schema"),
        )
    yield backend
    await backend.aclose()


class TestSessionStore(SessionStoreSuite):
    pass
