"""The execution protocols (`ExecutionStoreSuite`: SubmissionQueue, SubmissionLeases,
TurnJournal, EventLog), run against every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.execution import ExecutionStore
from seam.core.execution import InMemoryExecutionStore
from seam.testing.clock import ManualClock
from seam.testing.conformance.execution_store import ExecutionStoreSuite

from .backends import open_backend


@pytest.fixture
async def store(
    backend: str, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[ExecutionStore]:
    opened: ExecutionStore = await open_backend(
        backend, request, clock, tmp_path, InMemoryExecutionStore
    )
    yield opened
    await opened.aclose()


class TestExecutionStore(ExecutionStoreSuite):
    pass
