"""The `ApprovalAnswers` protocol (answers relayed between processes), on every backend.

`twin` is a second store over the same data (the same object in memory, a second
connection to the same SQLite file or PostgreSQL schema): what another process sees.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from seam.core.execution import InMemoryExecutionStore
from seam.testing.clock import ManualClock
from seam.testing.conformance.approval_relay import ApprovalRelaySuite

from .backends import open_backend, twin_of


@pytest.fixture
async def store(
    backend: str, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[Any]:
    opened = await open_backend(backend, request, clock, tmp_path, InMemoryExecutionStore)
    yield opened
    await opened.aclose()


@pytest.fixture
async def twin(
    store: Any, backend: str, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[Any]:
    async for other in twin_of(store, backend, request, clock, tmp_path):
        yield other


class TestApprovalAnswers(ApprovalRelaySuite):
    pass
