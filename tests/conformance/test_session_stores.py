"""The conversation store's protocols (`SessionStoreSuite`: Transcript, SessionTitles,
SessionCatalogue, SessionUpkeep, UsageLedger), run against every backend, and
`MessageVectorsSuite` on those that keep vectors."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.sessions import SessionStore
from seam.core.sessions import InMemorySessionStore
from seam.testing.clock import ManualClock
from seam.testing.conformance.message_vectors import MessageVectorsSuite
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


class TestMessageVectors(MessageVectorsSuite):
    """Search by meaning's vectors, on the backends that keep them: the built-in SQLite and
    PostgreSQL stores (the in-memory and toy stores search by full text alone)."""

    @pytest.fixture(params=["sqlite", "postgres"])
    def backend(self, request: pytest.FixtureRequest) -> str:
        name: str = request.param
        return name
