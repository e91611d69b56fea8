"""The conversation store's protocols (`SessionStoreSuite`: Transcript, SessionTitles,
SessionCatalogue, SessionUpkeep, UsageLedger), run against every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.sessions import SessionStore
from seam.core.sessions import InMemorySessionStore
from seam.testing.clock import ManualClock
from seam.testing.conformance.session_store import SessionStoreSuite

from .backends import open_backend


@pytest.fixture
async def store(
    backend: str, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[SessionStore]:
    opened: SessionStore = await open_backend(
        backend, request, clock, tmp_path, InMemorySessionStore
    )
    yield opened
    await opened.aclose()


class TestSessionStore(SessionStoreSuite):
    pass
