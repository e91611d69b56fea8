"""The outbox contract, run against every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.outbox import Outbox
from seam.core.execution import InMemoryExecutionStore
from seam.services.sessions.postgres import PostgresStore
from seam.services.sessions.sqlite import SQLiteSessionStore

from .backends import BACKENDS, open_backend
from .outbox_suite import OutboxSuite
from .session_store_suite import ManualClock


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=BACKENDS)
async def outbox(
    request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[Any]:
    backend: Any = await open_backend(request, clock, tmp_path, InMemoryExecutionStore)
    yield backend
    await backend.aclose()


@pytest.fixture
async def twin(
    outbox: Any, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[Outbox]:
    """A second store on the same data, as another deliverer process would open it."""
    if isinstance(outbox, SQLiteSessionStore):
        other: Any = SQLiteSessionStore(str(tmp_path / "sessions.db"), clock=clock)
    elif isinstance(outbox, PostgresStore):
        other = await PostgresStore.connect(
            request.getfixturevalue("postgres_url"),
            clock=clock,
            schema=request.getfixturevalue("postgres_schema"),
        )
    else:
        yield outbox
        return
    try:
        yield other
    finally:
        await other.aclose()


class TestOutbox(OutboxSuite):
    pass
