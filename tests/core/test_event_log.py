"""The event recorder: stored records keep the order of the events they hold."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from seam.contracts.events import TextDelta
from seam.contracts.execution import EventRecord
from seam.core import event_log
from seam.core.event_log import EventRecorder, replay
from seam.core.execution import InMemoryExecutionStore

KEY = 'agent-session:["local","default","main"]'


class SlowFirstCommit(InMemoryExecutionStore):
    """The first `append_events` hangs until `release` is set (a slow database commit)."""

    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.writes = 0

    async def append_events(self, records: Sequence[EventRecord]) -> None:
        self.writes += 1
        if self.writes == 1:
            self.started.set()
            await self.release.wait()
        await super().append_events(records)


async def test_timed_flushes_are_stored_in_order_when_a_commit_is_slow(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(event_log, "FLUSH_AFTER_SECONDS", 0.0)
    store = SlowFirstCommit()
    await store.create(KEY)
    recorder = EventRecorder(store, "s1")
    recorder.buffer(TextDelta(KEY, "t", 1, "one "))
    await store.started.wait()  # the first timed flush is stuck in its commit
    recorder.buffer(TextDelta(KEY, "t", 2, "two"))
    while recorder._timer is not None:  # the second timed flush fires
        await asyncio.sleep(0)
    for _ in range(3):  # and gets as far as it can
        await asyncio.sleep(0)
    store.release.set()
    await recorder.aclose()
    # Commit order is what a follower polling the log sees: seq 2 before seq 1 would
    # make it skip "one " for good.
    assert [r.seq for r in await store.events(KEY)] == [1, 2]
    assert [e.text for e in await replay(store, KEY)] == ["one ", "two"]  # type: ignore[attr-defined]
