"""A store backend from one file: what a new backend's author writes to have every
store protocol's conformance suite (`seam.testing.conformance`) run against it, then one
line in `backends.TEST_BACKENDS` (or in `wiring/store_backends.py` for a backend the
runtime can pick). See docs/stores.md.

The toy keeps everything in memory, as the in-memory stores do, behind a `toy://` URL:
each URL names one store for the life of the process, and the conformance hook keeps one
store per location, so opening it twice gives two handles on the same data (the suites'
`twin`, as a second process would see it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seam.contracts.execution import ExecutionStore
from seam.contracts.store_backend import StoreBackend, StoreCheck, StoreLocation
from seam.core.cron import InMemoryCronStore
from seam.core.execution import InMemoryExecutionStore


class ToyStore(InMemoryExecutionStore):
    """The in-memory execution store with its cron view, as the SQL stores come."""

    def __init__(self, clock: Callable[[], float]) -> None:
        super().__init__(clock=clock)
        self.cron = InMemoryCronStore(clock=clock)


STORES: dict[str, ToyStore] = {}


def create(where: StoreLocation) -> ExecutionStore:
    return STORES.setdefault(where.url or "toy://", ToyStore(where.clock))


async def check(where: StoreLocation) -> StoreCheck:
    store = STORES.get(where.url or "toy://")
    sessions = len(await store.list(100)) if store is not None else 0
    return StoreCheck(True, f"toy store {where.url} ({sessions} sessions)")


_CONFORMANCE: dict[str, ToyStore] = {}


async def conformance(fixture: Callable[[str], Any], where: StoreLocation) -> ExecutionStore:
    """A fresh store per test (each test's location is its own folder)."""
    return _CONFORMANCE.setdefault(where.path, ToyStore(where.clock))


TOY_STORE = StoreBackend(
    name="toy", schemes=("toy",), create=create, check=check, conformance=conformance
)
