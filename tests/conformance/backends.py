"""The backends every store contract runs against, built one way for every suite."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from seam.services.sessions.postgres import PostgresStore
from seam.services.sessions.sqlite import SQLiteSessionStore

from .session_store_suite import ManualClock

BACKENDS = ["memory", "sqlite", "postgres"]


async def open_backend(
    request: pytest.FixtureRequest,
    clock: ManualClock,
    tmp_path: Path,
    memory: Callable[..., Any],
) -> Any:
    """A fresh, empty store of the kind `request.param` names (`memory` builds the
    in-memory one the suite is about)."""
    if request.param == "memory":
        return memory(clock=clock)
    if request.param == "sqlite":
        return SQLiteSessionStore(str(tmp_path / "sessions.db"), clock=clock)
    return await PostgresStore.connect(
        request.getfixturevalue("postgres_url"),
        clock=clock,
        schema=request.getfixturevalue("postgres_schema"),
    )
