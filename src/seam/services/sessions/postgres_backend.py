"""The PostgreSQL store as a `StoreBackend`: selected by a `postgresql://` (or
`postgres://`) `[store] url` / SEAM_STORE_URL. psycopg is imported only when a store is
made, so a SQLite install never needs it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from seam.contracts.execution import UNSETTLED, ExecutionStore
from seam.contracts.store_backend import ProcessLock, StoreBackend, StoreCheck, StoreLocation


def _url(where: StoreLocation) -> str:
    if not where.url:
        raise ValueError("the PostgreSQL store needs a postgresql:// URL")
    return where.url


def create(where: StoreLocation) -> ExecutionStore:
    from seam.services.sessions.postgres import PostgresStore

    return PostgresStore(_url(where), clock=where.clock, schema=where.schema)


async def check(where: StoreLocation) -> StoreCheck:
    """Connects with one connection, reads a session and counts unsettled submissions."""
    from seam.services.sessions.postgres import PostgresStore, describe_url

    url = _url(where)
    try:
        async with PostgresStore(url, min_connections=1, max_connections=1) as store:
            recent = await store.list(1)
            queued = await store.submissions(query=UNSETTLED)
    except (ConnectionError, OSError, RuntimeError) as exc:
        return StoreCheck(False, str(exc), "check [store] url / SEAM_STORE_URL")
    state = "has sessions" if recent else "empty"
    return StoreCheck(True, f"PostgreSQL at {describe_url(url)} ({state}, {len(queued)} unsettled)")


async def conformance(fixture: Callable[[str], Any], where: StoreLocation) -> ExecutionStore:
    """A database and a schema of its own, from the suites' `postgres_url` and
    `postgres_schema` fixtures (tests/support/postgres.py)."""
    from seam.services.sessions.postgres import PostgresStore

    url, schema = fixture("postgres_url"), fixture("postgres_schema")
    return await PostgresStore.connect(url, clock=where.clock, schema=schema)


def lock(where: StoreLocation, name: str) -> ProcessLock:
    """An advisory lock on the store's server, on a connection of its own."""
    from seam.services.sessions.postgres_lock import PostgresLock

    return PostgresLock(_url(where), name)


POSTGRES = StoreBackend(
    name="postgres",
    schemes=("postgresql", "postgres"),
    create=create,
    check=check,
    conformance=conformance,
    lock=lock,
)
