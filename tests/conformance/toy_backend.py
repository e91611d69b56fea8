"""A store backend from one file: what a new backend's author writes to have the
conformance suites run against it (then one line in `backends.TEST_BACKENDS`, or in
`wiring/store_backends.py` for a backend the runtime can pick).

The toy keeps everything in memory, as the in-memory stores do, behind a `toy://` URL:
each URL names one store for the life of the process.
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


async def conformance(fixture: Callable[[str], Any], where: StoreLocation) -> ExecutionStore:
    return ToyStore(where.clock)


TOY_STORE = StoreBackend(
    name="toy", schemes=("toy",), create=create, check=check, conformance=conformance
)
