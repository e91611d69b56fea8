"""The backends every store protocol's suite runs against, built one way for every
suite: the in-memory stores the suites are about (a test-only extra: each test module
names its own class), every backend registered in `wiring/store_backends.py`, and the
test-only backends in `TEST_BACKENDS`. A new backend's conformance run is its module plus
its line in either registry: each backend's `conformance` hook opens an empty store (and,
called again at the same location, a second handle on the same data: the `twin`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.store_backend import StoreBackend, StoreLocation
from seam.testing.clock import ManualClock
from seam.wiring.store_backends import STORE_BACKENDS

from .toy_backend import TOY_STORE

# Backends only the suites run (one line each).
TEST_BACKENDS: tuple[StoreBackend, ...] = (TOY_STORE,)
REGISTERED = {backend.name: backend for backend in (*STORE_BACKENDS, *TEST_BACKENDS)}
BACKENDS = ["memory", *REGISTERED]


def _where(clock: ManualClock, tmp_path: Path) -> StoreLocation:
    return StoreLocation(url=None, path=str(tmp_path / "sessions.db"), clock=clock)


async def open_backend(
    backend: str,
    request: pytest.FixtureRequest,
    clock: ManualClock,
    tmp_path: Path,
    memory: Callable[..., Any],
) -> Any:
    """A fresh, empty store of the kind `backend` names (`memory` builds the in-memory
    one the suite is about)."""
    if backend == "memory":
        return memory(clock=clock)
    return await REGISTERED[backend].conformance(request.getfixturevalue, _where(clock, tmp_path))


async def twin_of(
    first: Any, backend: str, request: pytest.FixtureRequest, clock: ManualClock, tmp_path: Path
) -> AsyncIterator[Any]:
    """A second store object on `first`'s data, as another process would open it: the
    backend's conformance hook again, at the same location (in memory: `first` itself)."""
    if backend == "memory":
        yield first
        return
    other = await REGISTERED[backend].conformance(request.getfixturevalue, _where(clock, tmp_path))
    try:
        yield other
    finally:
        if other is not first:
            await other.aclose()
