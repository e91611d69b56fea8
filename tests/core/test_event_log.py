"""The event recorder: stored records keep the order of the events they hold."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence

import pytest

from seam.contracts import events as ev
from seam.contracts.events import TextDelta, event_to_dict
from seam.contracts.execution import EventRecord
from seam.contracts.messages import Usage
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


class RefusesTwice(InMemoryExecutionStore):
    """`append_events` fails twice (a disk full for a moment), then works again."""

    def __init__(self) -> None:
        super().__init__()
        self.refusals = 0

    async def append_events(self, records: Sequence[EventRecord]) -> None:
        if self.refusals < 2:
            self.refusals += 1
            raise OSError(28, "database or disk is full")
        await super().append_events(records)


async def test_events_the_store_refuses_for_a_moment_are_stored_once_it_recovers() -> None:
    """Found by the chaos suite: the disk filled as a turn ended and its `done` event was
    dropped, so a surface following the session would never have seen it end."""
    store = RefusesTwice()
    await store.create(KEY)
    recorder = EventRecorder(store, "s1", retry_delays=(0.0, 0.0, 0.0))
    await recorder.record(ev.ToolStart(KEY, "t", 1, "c1", "read_file", "{}"))
    await recorder.record(ev.Done(KEY, "t", 2, "the answer", "stop"))
    await recorder.aclose()
    assert store.refusals == 2
    assert [e.type for e in await replay(store, KEY)] == ["tool_start", "done"]


async def test_events_refused_past_the_last_retry_wait_for_the_next_write() -> None:
    """A batch given up on goes back to the front of the queue, for the next flush or
    handover to take: the log never lags the transcript (the chaos suite once found
    tool results stored without their `tool_start`)."""
    store = RefusesTwice()
    await store.create(KEY)
    recorder = EventRecorder(store, "s1", retry_delays=(0.0,))
    await recorder.record(ev.Done(KEY, "t", 1, "first", "stop"))
    await recorder.flush()
    assert await store.events(KEY) == []  # refused twice: kept, not stored
    await recorder.record(ev.Done(KEY, "t", 2, "second", "stop"))
    assert [r.seq for r in await recorder.handover()] == [1, 2]
    assert not recorder.lost


async def test_events_are_dropped_only_when_the_recorder_closes() -> None:
    store = RefusesTwice()
    store.refusals = -2  # four refusals: both attempts of both flushes
    await store.create(KEY)
    recorder = EventRecorder(store, "s1", retry_delays=(0.0,))
    await recorder.record(ev.Done(KEY, "t", 1, "lost", "stop"))
    await recorder.flush()
    await recorder.aclose()
    assert recorder.lost
    await recorder.record(ev.Done(KEY, "t", 2, "kept", "stop"))
    await recorder.aclose()
    assert [e.text for e in await replay(store, KEY)] == ["kept"]  # type: ignore[attr-defined]


EVERY_EVENT = [
    ev.RunStart(KEY, "t", 1, "openai", "gpt-x", "default"),
    ev.TextDelta(KEY, "t", 2, "hi"),
    ev.ThinkingDelta(KEY, "t", 3, "hmm"),
    ev.ToolStart(KEY, "t", 4, "c1", "read_file", '{"path": "a"}'),
    ev.ToolProgress(KEY, "t", 5, "c1", "read_file", "half way"),
    ev.ToolEnd(KEY, "t", 6, "c1", "read_file", "text", False, 1.5, truncated=True),
    ev.ToolApprovalRequired(KEY, "t", 7, "c2", "terminal", "rm -rf build", "deletes"),
    ev.ToolApprovalResponse(KEY, "t", 8, "c2", "once"),
    ev.UsageEvent(KEY, "t", 9, Usage(input_tokens=3, output_tokens=4)),
    ev.ContextCompacted(KEY, "t", 10, 40, 12, 9000, 3000),
    ev.ContextWarning(KEY, "t", 11, 7000, 8000, 87),
    ev.Halt(KEY, "t", 12, "cancelled", "stopped"),
    ev.Notice(KEY, "t", 13, "injection", "flagged"),
    ev.ErrorEvent(KEY, "t", 14, "timeout", "slow"),
    ev.Done(KEY, "t", 15, "the answer", "stop"),
]


@pytest.mark.parametrize("event", EVERY_EVENT, ids=lambda e: e.type)
def test_every_event_is_stored_as_its_dict_and_read_back_whole(event: ev.AgentEvent) -> None:
    record = event_log.encode(event, "s1")
    assert json.loads(record.payload) == event_to_dict(event)
    assert record.payload.startswith('{"type":')  # the tag first, as event_to_dict has it
    assert event_log.decode(record) == [event]


def test_stored_events_are_redacted_except_their_ids() -> None:
    def redact(text: str) -> str:
        return text.replace("sekrit", "[REDACTED]")

    key = 'agent-session:["local","default","sekrit"]'
    for _ in range(2):  # the second time, remembered redactions of names are used
        start = event_log.encode(
            ev.RunStart(key, "sekrit", 1, "p", "sekrit-model", "d"), "s", redact
        )
        end = event_log.encode(
            ev.ToolEnd(key, "sekrit", 2, "c1", "sekrit", "says sekrit", False, 1.0), "s", redact
        )
        assert json.loads(start.payload)["model"] == "[REDACTED]-model"
        assert json.loads(end.payload)["name"] == "[REDACTED]"
        assert json.loads(end.payload)["result"] == "says [REDACTED]"
        # The session key is a column of the record in the clear, and the turn id is ours.
        assert json.loads(end.payload)["session_key"] == key
        assert json.loads(end.payload)["turn_id"] == "sekrit"
