"""The session store contract, run against every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.sessions import SessionStore
from seam.core.sessions import InMemorySessionStore

from .backends import BACKENDS, open_backend
from .session_store_suite import ManualClock, SessionStoreSuite


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=BACKENDS)
async def store(
    request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[SessionStore]:
    backend: SessionStore = await open_backend(request, clock, tmp_path, InMemorySessionStore)
    yield backend
    await backend.aclose()


class TestSessionStore(SessionStoreSuite):
    pass
