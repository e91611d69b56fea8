"""The session store contract, run against every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.sessions import SessionStore
from seam.core.sessions import InMemorySessionStore
from seam.services.sessions.sqlite import SQLiteSessionStore

from .session_store_suite import ManualClock, SessionStoreSuite


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=["memory", "sqlite"])
async def store(
    request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[SessionStore]:
    if request.param == "memory":
        backend: SessionStore = InMemorySessionStore(clock=clock)
    else:
        backend = SQLiteSessionStore(str(tmp_path / "sessions.db"), clock=clock)
    yield backend
    await backend.aclose()


class TestSessionStore(SessionStoreSuite):
    pass
