"""The execution store contract, run against every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.execution import ExecutionStore
from seam.core.execution import InMemoryExecutionStore
from seam.services.sessions.postgres import PostgresStore
from seam.services.sessions.sqlite import SQLiteSessionStore

from .execution_store_suite import ExecutionStoreSuite
from .session_store_suite import ManualClock


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(
    request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[ExecutionStore]:
    if request.param == "memory":
        backend: ExecutionStore = InMemoryExecutionStore(clock=clock)
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


class TestExecutionStore(ExecutionStoreSuite):
    pass
