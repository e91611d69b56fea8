"""The `TurnJournal` and `EventLog` conformance suites: a turn's messages, usage and events
written with its lease held, and the event log replayed from any sequence number.

Fixtures: `clock` and `store`, an `ExecutionStore` (see the package docstring).
"""

from __future__ import annotations

import pytest

from seam.contracts.execution import (
    EventQuery,
    EventRecord,
    ExecutionStore,
    JournalEntry,
    LeaseLost,
    Settlement,
)
from seam.contracts.messages import Message, ToolCall, Usage
from seam.contracts.sessions import UsageRecord
from seam.testing.conformance.support import KEY, OTHER, session_with
from seam.testing.conformance.support import admit as _admit


class TurnJournalSuite:
    """A running turn's progress, written in one transaction under its lease."""

    async def test_append_for_tags_messages_and_advances(self, store: ExecutionStore) -> None:
        await session_with(store, KEY, [Message("user", "earlier")])
        await _admit(store, "a")
        await store.claim("w1")
        call = ToolCall("c1", "read", "{}")
        await store.append_for("a", "w1", JournalEntry([Message("user", "hi")]))
        await store.append_for(
            "a",
            "w1",
            JournalEntry(
                [Message("assistant", "", (call,)), Message("tool", "x", tool_call_id="c1")]
            ),
        )
        assert [m.content for m in await store.submission_messages("a")] == ["hi", "", "x"]
        assert [m.content for m in await store.messages(KEY)] == ["earlier", "hi", "", "x"]
        sub = await store.submission("a")
        assert sub is not None and sub.steps == 3

    async def test_append_for_records_usage_with_the_messages(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await store.claim("w1")
        first = UsageRecord("p", "m", Usage(100, 20), 0.5, "t1")
        await store.append_for("a", "w1", JournalEntry([Message("assistant", "ok")], usage=[first]))
        await store.append_for(
            "a", "w1", JournalEntry([], usage=[UsageRecord("p", "m", Usage(10, 2))])
        )
        totals = await store.usage_totals(KEY)
        assert (totals.calls, totals.usage, totals.cost_usd) == (2, Usage(110, 22), 0.5)
        assert totals.unpriced_calls == 1
        sub = await store.submission("a")
        assert sub is not None and sub.steps == 1
        with pytest.raises(LeaseLost):
            await store.append_for("a", "w2", JournalEntry([], usage=[first]))
        assert (await store.usage_totals(KEY)).calls == 2

    async def test_append_for_stores_events_with_the_messages(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await store.claim("w1")
        records = [EventRecord(KEY, n, n, "tool_start", "{}", "a") for n in (1, 2)]
        await store.append_for("a", "w1", JournalEntry([Message("user", "hi")], events=records))
        assert await store.events(KEY) == records
        assert await store.last_seq(KEY) == 2
        late = EventRecord(KEY, 3, 3, "done", "{}", "a")
        with pytest.raises(LeaseLost):
            await store.append_for("a", "w2", JournalEntry([Message("user", "x")], events=[late]))
        assert await store.events(KEY) == records
        assert [m.content for m in await store.messages(KEY)] == ["hi"]

    async def test_settle_writes_its_journal_in_the_same_transaction(
        self, store: ExecutionStore
    ) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await store.claim("w1")
        done = EventRecord(KEY, 1, 1, "done", "{}", "a")
        answer = JournalEntry(
            [Message("assistant", "42")], usage=[UsageRecord("p", "m", Usage(5, 1))], events=[done]
        )
        with pytest.raises(LeaseLost):  # another worker's settle writes nothing
            await store.settle("a", "w2", Settlement("completed", result="42", journal=answer))
        assert await store.messages(KEY) == [] and await store.events(KEY) == []
        settled = await store.settle(
            "a", "w1", Settlement("completed", result="42", journal=answer)
        )
        assert (settled.state, settled.outcome, settled.steps) == ("settled", "completed", 1)
        assert [m.content for m in await store.submission_messages("a")] == ["42"]
        assert await store.events(KEY) == [done]
        assert (await store.usage_totals(KEY)).calls == 1

    async def test_append_for_needs_the_lease(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        with pytest.raises(LeaseLost):
            await store.append_for("a", "w1", JournalEntry([Message("user", "hi")]))
        await store.claim("w1")
        with pytest.raises(LeaseLost):
            await store.append_for("a", "w2", JournalEntry([Message("user", "hi")]))
        assert await store.messages(KEY) == []
        assert await store.submission_messages("a") == []


class EventLogSuite:
    """Stored events, replayable in order from any sequence number."""

    async def test_events_replay_in_order_after_a_sequence_number(
        self, store: ExecutionStore
    ) -> None:
        await store.create(KEY)
        await store.create(OTHER)
        records = [
            EventRecord(KEY, 1, 1, "run_start", '{"type":"run_start"}', "a"),
            EventRecord(KEY, 4, 2, "text_delta", '{"pieces":[1,1,1]}', "a"),
            EventRecord(KEY, 5, 5, "done", '{"type":"done"}', "a"),
        ]
        await store.append_events(records[:2])
        await store.append_events(records[2:])
        await store.append_events([EventRecord(OTHER, 1, 1, "run_start", "{}")])
        assert await store.events(KEY) == records
        assert await store.events(KEY, EventQuery(after_seq=1)) == records[1:]
        # A coalesced record reaching past after_seq comes back whole.
        assert await store.events(KEY, EventQuery(after_seq=3)) == records[1:]
        assert await store.events(KEY, EventQuery(after_seq=4)) == records[2:]
        assert await store.events(KEY, EventQuery(after_seq=5)) == []
        assert await store.events(KEY, EventQuery(limit=1)) == records[:1]
        assert await store.last_seq(KEY) == 5
        assert await store.last_seq(OTHER) == 1
        assert await store.last_seq('agent-session:["t","default","none"]') == 0

    async def test_a_submissions_first_event_is_found_among_the_sessions(
        self, store: ExecutionStore
    ) -> None:
        """A submission's first record, found by its id among another submission's, a
        record of no submission and a coalesced range (a resumed turn's repair reads its
        own records this way)."""
        await store.create(KEY)
        records = [
            EventRecord(KEY, 1, 1, "run_start", "{}", "a"),
            EventRecord(KEY, 2, 2, "done", "{}", "a"),
            EventRecord(KEY, 3, 3, "compacted", "{}"),
            EventRecord(KEY, 6, 4, "text_delta", '{"pieces":[1,1,1]}', "b"),
            EventRecord(KEY, 7, 7, "done", "{}", "b"),
        ]
        await store.append_events(records)
        assert await store.events(KEY, EventQuery(submission_id="b", limit=1)) == records[3:4]
        assert await store.events(KEY, EventQuery(submission_id="a")) == records[:2]
        assert await store.events(KEY, EventQuery(submission_id="c", limit=1)) == []

    async def test_a_sessions_events_are_read_with_whether_it_exists(
        self, store: ExecutionStore
    ) -> None:
        await store.create(KEY)
        await store.create(OTHER)
        assert await store.session_events(KEY) == []  # there, with no event yet
        assert await store.session_events('agent-session:["t","default","none"]') is None
        records = [
            EventRecord(KEY, 1, 1, "run_start", '{"type":"run_start"}', "a"),
            EventRecord(KEY, 4, 2, "text_delta", '{"pieces":[1,1,1]}', "a"),
        ]
        await store.append_events(records)
        await store.append_events([EventRecord(OTHER, 7, 7, "run_start", "{}")])
        assert await store.session_events(KEY) == records
        assert await store.session_events(KEY, 3) == records[1:]  # a coalesced one, whole
        assert await store.session_events(KEY, 4) == []
        assert await store.session_events(OTHER, 0) == [EventRecord(OTHER, 7, 7, "run_start", "{}")]

    async def test_deleting_a_session_removes_its_submissions_and_events(
        self, store: ExecutionStore
    ) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await store.append_events([EventRecord(KEY, 1, 1, "run_start", "{}", "a")])
        assert await store.delete(KEY)
        assert await store.submission("a") is None
        assert await store.events(KEY) == []

    async def test_events_of_one_submission(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        records = [
            EventRecord(KEY, 1, 1, "run_start", "{}", "a"),
            EventRecord(KEY, 2, 2, "run_start", "{}", "b"),
            EventRecord(KEY, 5, 3, "text_delta", "{}", "a"),
            EventRecord(KEY, 6, 6, "done", "{}", None),
        ]
        await store.append_events(records)
        assert await store.events(KEY, EventQuery(submission_id="a")) == [records[0], records[2]]
        assert await store.events(KEY, EventQuery(submission_id="a", after_seq=1)) == [records[2]]
        assert await store.events(KEY, EventQuery(submission_id="a", limit=1)) == [records[0]]
        assert await store.events(KEY, EventQuery(submission_id="none")) == []
