"""Search by meaning's vectors (`MessageVectorsSuite`), on every backend that keeps them:
the built-in SQLite and PostgreSQL stores (the in-memory and toy stores search by full
text alone, so they are not in it)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.sessions import SessionStore
from seam.core.sessions import InMemorySessionStore
from seam.testing.clock import ManualClock
from seam.testing.conformance.message_vectors import MessageVectorsSuite

from .backends import open_backend

KEEPS_VECTORS = ["sqlite", "postgres"]


@pytest.fixture(params=KEEPS_VECTORS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
async def store(
    backend: str, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[SessionStore]:
    opened: SessionStore = await open_backend(
        backend, request, clock, tmp_path, InMemorySessionStore
    )
    yield opened
    await opened.aclose()


class TestMessageVectors(MessageVectorsSuite):
    pass
