"""The store backends Seam knows: one line per backend.

Each backend's module exports a `StoreBackend` (contracts/store_backend.py): the URL
schemes that select it, how to make the store, `seam doctor`'s check, and the
conformance suites' hook. The runtime, `seam doctor`, the `[store] url` check and
`tests/conformance` all iterate this registry, so a new backend is its module plus one
line in `STORE_BACKENDS`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from seam.contracts.execution import ExecutionStore
from seam.contracts.store_backend import StoreBackend, StoreLocation
from seam.services.sessions.postgres_backend import POSTGRES
from seam.services.sessions.sqlite_backend import SQLITE

STORE_BACKENDS: tuple[StoreBackend, ...] = (
    SQLITE,
    POSTGRES,
)


def backend_for(url: str | None) -> StoreBackend:
    """The backend a store at `url` (None: no URL set) belongs to; ValueError (one line)
    when no registered backend takes its scheme."""
    for backend in STORE_BACKENDS:
        if backend.selects(url):
            return backend
    schemes = [f"{s}://" for b in STORE_BACKENDS for s in b.schemes[:1]]
    shown = url.split("@")[-1] if url else url
    raise ValueError(f"must be a {' or '.join(schemes)} URL, got {shown!r}")


class StoreSettings(Protocol):
    """What `store_location` reads of `Settings` (typed here, not imported: the settings
    check a store URL against this registry, so importing them back made a circle)."""

    @property
    def store_url(self) -> str | None: ...

    @property
    def store_path(self) -> Path: ...


def store_location(settings: StoreSettings) -> StoreLocation:
    return StoreLocation(url=settings.store_url, path=str(settings.store_path))


def open_store(where: StoreLocation) -> ExecutionStore:
    """The runtime's store, not yet opened (`Runtime.open()` opens it)."""
    return backend_for(where.url).create(where)


__all__ = [
    "STORE_BACKENDS",
    "StoreBackend",
    "StoreLocation",
    "backend_for",
    "open_store",
    "store_location",
]
