"""The `Outbox` protocol, run against every backend."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.outbox import Outbox
from seam.core.execution import InMemoryExecutionStore
from seam.testing.clock import ManualClock
from seam.testing.conformance.outbox import OutboxSuite

from .backends import open_backend, twin_of


@pytest.fixture
async def outbox(
    backend: str, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[Any]:
    opened: Any = await open_backend(backend, request, clock, tmp_path, InMemoryExecutionStore)
    yield opened
    await opened.aclose()


@pytest.fixture
async def twin(
    outbox: Any, backend: str, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[Outbox]:
    """A second store on the same data, as another deliverer process would open it."""
    async for other in twin_of(outbox, backend, request, clock, tmp_path):
        yield other


class TestOutbox(OutboxSuite):
    pass
