"""The backends every store contract runs against, built one way for every suite: the
in-memory stores the suites are about (a test-only extra: each suite names its own class),
every backend registered in `wiring/store_backends.py`, and the test-only backends in
`TEST_BACKENDS`. A new backend's conformance run is its module plus its line in either
registry: each backend's `conformance` hook opens an empty store."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.store_backend import StoreBackend, StoreLocation
from seam.wiring.store_backends import STORE_BACKENDS

from .session_store_suite import ManualClock
from .toy_backend import TOY_STORE

# Backends only the suites run (one line each).
TEST_BACKENDS: tuple[StoreBackend, ...] = (TOY_STORE,)
REGISTERED = {backend.name: backend for backend in (*STORE_BACKENDS, *TEST_BACKENDS)}
BACKENDS = ["memory", *REGISTERED]


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
    where = StoreLocation(url=None, path=str(tmp_path / "sessions.db"), clock=clock)
    return await REGISTERED[request.param].conformance(request.getfixturevalue, where)
