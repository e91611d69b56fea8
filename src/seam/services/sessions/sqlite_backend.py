"""The SQLite store as a `StoreBackend`: the file at `[store] path`, used when no store
URL is set. The store's module is imported only when a store is made."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from seam.contracts.execution import ExecutionStore
from seam.contracts.store_backend import StoreBackend, StoreCheck, StoreLocation


def create(where: StoreLocation) -> ExecutionStore:
    from seam.services.sessions.sqlite import SQLiteSessionStore

    Path(where.path).parent.mkdir(parents=True, exist_ok=True)
    return SQLiteSessionStore(where.path, clock=where.clock)


async def check(where: StoreLocation) -> StoreCheck:
    """Opens the file, reads a session and runs SQLite's integrity check."""
    from seam.services.sessions.sqlite import SQLiteSessionStore

    path = Path(where.path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        store = SQLiteSessionStore(str(path))
        try:
            recent = await store.list(1)
            await store.catch_up_search()  # the index checked against every message
            problems = store.connector.integrity_check()
        finally:
            await store.aclose()
    except (sqlite3.Error, OSError, RuntimeError) as exc:  # RuntimeError: a newer schema
        return StoreCheck(False, f"{path}: {exc}", "check the file and its folder")
    if problems:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        hint = "keep a copy (seam sessions export > backup.json), then restore or rebuild it"
        return StoreCheck(False, f"{path}: {problems[0]}{more}", hint)
    state = "has sessions" if recent else "empty"
    return StoreCheck(True, f"{path} opens ({state}, integrity ok)")


async def conformance(fixture: Callable[[str], Any], where: StoreLocation) -> ExecutionStore:
    return create(where)


SQLITE = StoreBackend(
    name="sqlite", schemes=(), create=create, check=check, conformance=conformance
)
