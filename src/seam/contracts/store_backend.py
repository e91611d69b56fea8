"""A store backend as wiring sees it: a `StoreBackend` descriptor says how to make the
execution store (sessions, submissions, outbox, approvals, cron) from where the settings
put it, how `seam doctor` checks it, and how the conformance suites open one. Each
backend's module exports one; `wiring/store_backends.py` registers them one line each, so
a new backend is its module plus that line.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from seam.contracts.execution import ExecutionStore


@dataclass(frozen=True, slots=True)
class StoreLocation:
    """Where the store lives, as the settings name it (wiring fills it in)."""

    url: str | None  # `[store] url` / SEAM_STORE_URL; None: a file at `path`
    path: str  # `[store] path`, under $SEAM_HOME (the SQLite file)
    clock: Callable[[], float] = time.time
    schema: str | None = None  # a schema of its own on a shared server (tests)


@dataclass(frozen=True, slots=True)
class StoreCheck:
    """`seam doctor`'s line for the store: whether it opens, what it holds, what to do."""

    ok: bool
    detail: str
    hint: str = ""


class ProcessLock(Protocol):
    """A lock one process at a time holds among all that share the store (the gateway
    holds one per chat adapter)."""

    async def acquire(self) -> bool:
        """Take the lock if it is free; whether this process holds it now."""
        ...

    async def held(self) -> bool:
        """Whether the lock is still ours (a dropped database connection loses it)."""
        ...

    async def release(self) -> None: ...


# The conformance suites' hook: (a pytest fixture by name, a location under the test's
# temporary folder) -> an open, empty store.
ConformanceOpen = Callable[[Callable[[str], Any], StoreLocation], Awaitable[ExecutionStore]]


@dataclass(frozen=True, slots=True)
class StoreBackend:
    """- `name`: how messages and tests call it ("sqlite", "postgres");
    - `schemes`: the URL schemes that select it (`postgresql://`); `()`: the backend used
      when no URL is set (the file at `[store] path`);
    - `create`: the store for a runtime, not yet opened (`Runtime.open()` opens it);
    - `check`: `seam doctor`'s line (opens the store, reads a little, closes it);
    - `conformance`: opens an empty store for the conformance suites
      (`seam.testing.conformance`), taking what it needs (a server URL) from pytest
      fixtures; opened again at the same location it is a second handle on the same data
      (the suites' "another process");
    - `lock`: a `ProcessLock` named `name` shared by every process on this store (None: a
      file lock under $SEAM_HOME, which holds among processes on one machine).
    """

    name: str
    schemes: tuple[str, ...]
    create: Callable[[StoreLocation], ExecutionStore]
    check: Callable[[StoreLocation], Awaitable[StoreCheck]]
    conformance: ConformanceOpen
    lock: Callable[[StoreLocation, str], ProcessLock] | None = None

    def selects(self, url: str | None) -> bool:
        """Whether a store at `url` (None: no URL set) is this backend's."""
        if url is None:
            return not self.schemes
        return url.split("://", 1)[0].lower() in self.schemes
