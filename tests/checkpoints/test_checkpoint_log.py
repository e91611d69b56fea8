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
from tests.conformance.backends import open_backend
from tests.conformance.conftest import backend, clock  # noqa: F401  (the suites' fixtures)


@pytest.fixture
async def store(
    backend: str,  # noqa: F811
    request: pytest.FixtureRequest,
    clock: ManualClock,  # noqa: F811
    tmp_path: Path,
) -> AsyncIterator[Any]:
    """The backend's store, which is also its `CheckpointLog` (the in-memory one:
    `InMemoryExecutionStore`, where the log lives)."""
    log = await open_backend(backend, request, clock, tmp_path, InMemoryExecutionStore)
    try:
        yield log
    finally:
        await log.aclose()


class TestCheckpointLog(CheckpointLogSuite):
    """The suite, on every backend `backend` names."""


async def test_sqlite_keeps_the_log_across_a_reopen(tmp_path: Path) -> None:
    path = str(tmp_path / "sessions.db")
    for opening in range(2):
        sqlite = SQLiteSessionStore(path)
        if opening == 0:
            await sqlite.create("a")
            await sqlite.record_checkpoint(
                "a", turn_id="t", work_dir="/w", before="c", message_count=2
            )
        else:
            [row] = await sqlite.checkpoints("a")
            assert (row.turn_id, row.before, row.message_count) == ("t", "c", 2)
        await sqlite.aclose()
