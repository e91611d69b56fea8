"""`SessionRenamer` on both stores: a rename moves the session and everything keyed by it
in one step, so undo, usage, the event log and the title all follow the new name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.execution import EventRecord, NewSubmission
from seam.contracts.messages import Message, Usage
from seam.contracts.sessions import NewSession, SessionRenamer, UsageRecord
from seam.contracts.usage_report import UsageQuery
from seam.services.sessions.postgres import PostgresStore
from seam.services.sessions.sqlite import SQLiteSessionStore

OLD, NEW = "web:old-name", "web:new-name"


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "sqlite":
        made: Any = SQLiteSessionStore(str(tmp_path / "s.db"))
    else:
        url = request.getfixturevalue("postgres_url")
        made = await PostgresStore.connect(url, schema=request.getfixturevalue("postgres_schema"))
    yield made
    await made.aclose()


async def filled(store: Any) -> None:
    """A session with a turn's worth of everything: messages, usage, a submission, events,
    a checkpoint, a title, and a fork that names it as its parent."""
    await store.create(OLD, NewSession(personality="pirate"))
    await store.append(OLD, [Message("user", "plan the trip"), Message("assistant", "Aye")])
    await store.record_usage(OLD, UsageRecord("openai", "gpt-x", Usage(120, 30, 0), 0.01))
    await store.admit(NewSubmission("sub-1", OLD, "plan the trip"))
    await store.append_events([EventRecord(OLD, 1, 1, "run_start", '{"type":"run_start"}')])
    await store.record_checkpoint(
        OLD, turn_id="t1", work_dir="/w", before="abc123", message_count=0
    )
    await store.set_title(OLD, "The trip")
    await store.create("web:fork", NewSession(parent_key=OLD))


async def test_a_rename_moves_the_session_and_everything_keyed_by_it(store: Any) -> None:
    assert isinstance(store, SessionRenamer)
    await filled(store)
    assert await store.rename(OLD, NEW)
    assert await store.get(OLD) is None
    info = await store.get(NEW)
    assert info is not None
    assert (info.title, info.personality) == ("The trip", "pirate")
    assert [m.content for m in await store.messages(NEW)] == ["plan the trip", "Aye"]
    totals = await store.usage_totals(NEW)
    assert (totals.calls, totals.usage.input_tokens) == (1, 120)
    per_model = await store.usage_by("model", UsageQuery())
    assert [group.group for group in per_model] == ["gpt-x"]  # not a made-up record
    assert [s.id for s in await store.submissions(NEW)] == ["sub-1"]
    assert [e.type for e in await store.events(NEW)] == ["run_start"]
    assert [c.before for c in await store.checkpoints(NEW)] == ["abc123"]
    assert await store.submissions(OLD) == [] and await store.events(OLD) == []
    fork = await store.get("web:fork")
    assert fork is not None and fork.parent_key == NEW


async def test_renaming_a_missing_session_changes_nothing(store: Any) -> None:
    await store.create(NEW, NewSession())
    assert not await store.rename(OLD, "web:other")
    assert await store.get("web:other") is None and await store.get(NEW) is not None
