"""The execution store contract, run against every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.execution import ExecutionStore
from seam.core.execution import InMemoryExecutionStore

from .backends import BACKENDS, open_backend
from .execution_store_suite import ExecutionStoreSuite
from .session_store_suite import ManualClock


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture(params=BACKENDS)
async def store(
    request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[ExecutionStore]:
    backend: ExecutionStore = await open_backend(request, clock, tmp_path, InMemoryExecutionStore)
    yield backend
    await backend.aclose()


class TestExecutionStore(ExecutionStoreSuite):
    pass
