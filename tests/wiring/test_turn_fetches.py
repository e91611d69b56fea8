"""A turn reads its session's row once (#23: it was read five times per turn).

The store is the real one (in memory, or SQLite on a file) behind a wrapper that counts
what is asked of it: reads of a session's row (`get`, `load`) and creations. What a store
does inside its own methods (SQLite's `create` looks for the row before it writes) is the
store's business and is not counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.execution import ExecutionStore
from seam.contracts.sessions import PLAIN_SESSION, LoadedSession, NewSession, SessionInfo
from seam.core.execution import InMemoryExecutionStore
from seam.core.scripted_model import ScriptedModel, text_step
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.wiring import Runtime, assemble_runtime


class CountingStore:
    """The real store, counting the row reads and creations asked of it, by key."""

    def __init__(self, inner: ExecutionStore) -> None:
        self.inner = inner
        self.reads: Counter[str] = Counter()
        self.creates: Counter[str] = Counter()

    async def get(self, key: str) -> SessionInfo | None:
        self.reads[key] += 1
        return await self.inner.get(key)

    async def load(self, key: str) -> LoadedSession | None:
        self.reads[key] += 1
        return await self.inner.load(key)

    async def create(self, key: str, new: NewSession = PLAIN_SESSION) -> SessionInfo:
        self.creates[key] += 1
        return await self.inner.create(key, new)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


Stores = Callable[[Path], ExecutionStore]
STORES: dict[str, Stores] = {
    "memory": lambda _: InMemoryExecutionStore(),
    "sqlite": lambda tmp: SQLiteSessionStore(str(tmp / "sessions.db")),
}


def _runtime(store: CountingStore, answers: int) -> Runtime:
    model = ScriptedModel([text_step(f"answer {n}") for n in range(answers)])
    return assemble_runtime(model=model, store=store)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", sorted(STORES))
async def test_each_turn_reads_the_session_row_once(kind: str, tmp_path: Path) -> None:
    store = CountingStore(STORES[kind](tmp_path))
    async with _runtime(store, 3) as runtime:
        key = runtime.session_key_for("main")
        per_turn = []
        for n in range(3):
            before = store.reads[key]
            sub = await runtime.ask("main", f"question {n}")
            assert sub.outcome == "completed", sub.error
            per_turn.append(store.reads[key] - before)
    assert per_turn == [1, 1, 1]
    assert store.creates[key] == 1  # the first turn made the session


async def test_a_row_the_surface_read_is_not_read_again(tmp_path: Path) -> None:
    """`ask_key` with the row a surface already read (`seam run --session`, after its
    toolset check): the runtime neither reads nor creates it; the turn reads it once."""
    first = CountingStore(SQLiteSessionStore(str(tmp_path / "sessions.db")))
    async with _runtime(first, 1) as runtime:
        await runtime.ask("main", "hello")
    store = CountingStore(SQLiteSessionStore(str(tmp_path / "sessions.db")))
    async with _runtime(store, 1) as runtime:  # a new process over the same file
        key = runtime.session_key_for("main")
        stored = await store.inner.get(key)
        assert stored is not None
        sub = await runtime.ask_key(key, "again", stored=stored)
    assert sub.outcome == "completed", sub.error
    assert store.reads[key] == 1
    assert store.creates[key] == 0
