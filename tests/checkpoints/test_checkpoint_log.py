"""Every store backend keeps the checkpoint log (`CheckpointLogSuite`); SQLite keeps it
across a reopen."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from seam.core.execution import InMemoryExecutionStore
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.testing.clock import ManualClock
from seam.testing.conformance.checkpoint_log import CheckpointLogSuite
from tests.conformance.backends import BACKENDS, open_backend


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
async def store(
    backend: str, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[Any]:
    opened = await open_backend(backend, request, clock, tmp_path, InMemoryExecutionStore)
    yield opened
    await opened.aclose()


class TestCheckpointLog(CheckpointLogSuite):
    pass


async def test_sqlite_keeps_the_log_across_a_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "sessions.db")
    store = SQLiteSessionStore(path)
    await store.create("a")
    await store.record_checkpoint("a", turn_id="t", work_dir="/w", before="c", message_count=2)
    await store.aclose()
    again = SQLiteSessionStore(path)
    [row] = await again.checkpoints("a")
    assert (row.turn_id, row.before, row.message_count) == ("t", "c", 2)
    await again.aclose()
