"""The Coordinator rides out a store that is unreachable for a moment (`StoreUnavailable`):
the turn is not settled failed; it backs off (bounded, jittered, on the injected sleep)
and runs the claim again from what the store holds, as a resume after a crash would.
Past the bound the error goes up, and the next claim after the lease lapses finishes it:
never settled twice, never lost. The store here is the in-memory one, made to fail."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from seam.contracts.db import StoreUnavailable
from seam.contracts.execution import EventRecord, JournalEntry, Settlement, Submission
from seam.contracts.messages import Message
from seam.core.coordinator import Coordinator
from seam.core.event_log import replay
from seam.core.execution import InMemoryExecutionStore
from seam.core.outage import DEFAULT_STORE_BACKOFF, OutagePolicy
from seam.core.scripted_model import call, error_step, text_step, tool_step
from tests.core.test_coordinator import KEY, build


class FlakyStore(InMemoryExecutionStore):
    """Fails the next `append_fails` transcript writes and `settle_fails` settles with
    `StoreUnavailable`; `applied`: the write happens first and only its answer is lost (a
    connection that dropped after the commit)."""

    def __init__(self, *, clock: Any = None) -> None:
        super().__init__(**({"clock": clock} if clock is not None else {}))
        self.append_fails = 0
        self.settle_fails = 0
        self.applied = False
        self.settles = 0

    def _outage(self) -> StoreUnavailable:
        return StoreUnavailable("server closed the connection unexpectedly")

    async def append_for(self, submission_id: str, owner: str, entry: JournalEntry) -> None:
        if self.append_fails and entry.messages:
            self.append_fails -= 1
            if self.applied:
                await super().append_for(submission_id, owner, entry)
            raise self._outage()
        await super().append_for(submission_id, owner, entry)

    async def settle(
        self, submission_id: str, owner: str | None, settlement: Settlement
    ) -> Submission:
        if self.settle_fails:
            self.settle_fails -= 1
            if self.applied:
                self.settles += 1
                await super().settle(submission_id, owner, settlement)
            raise self._outage()
        self.settles += 1
        return await super().settle(submission_id, owner, settlement)


class Pauses:
    """The injected sleep: records each pause instead of waiting it out."""

    def __init__(self) -> None:
        self.taken: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.taken.append(seconds)


def _flaky(steps: list[Any], store: FlakyStore) -> tuple[Any, Any, Any, Pauses]:
    factory, model, tools = build(steps, store=store)
    pauses = Pauses()
    factory.coordinator.outage = OutagePolicy(sleep=pauses, random=lambda: 0.5)
    return factory, model, tools, pauses


def _transcript(messages: Sequence[Message]) -> list[tuple[str, str]]:
    return [(m.role, m.content) for m in messages]


async def test_a_transcript_write_the_store_refused_is_resumed_not_failed() -> None:
    store = FlakyStore()
    # The turn's first write (its input, with the model's tool call): three outages in a
    # row. The reply it carried never became durable, so each attempt asks for it again.
    store.append_fails = 3
    steps = [tool_step(call("lookup")) for _ in range(4)] + [text_step("the answer")]
    factory, model, tools, pauses = _flaky(steps, store)
    session = await factory.get_or_create_root(KEY)
    sub = await session.ask("question")
    assert (sub.outcome, sub.result, sub.attempts, sub.error) == (
        "completed",
        "the answer",
        1,
        None,
    )
    # Backed off on the schedule, each pause jittered (here to three quarters of it).
    assert pauses.taken == [b * 0.75 for b in DEFAULT_STORE_BACKOFF[:3]]
    assert _transcript(await store.messages(KEY)) == [
        ("user", "question"),
        ("assistant", ""),
        ("tool", "lookup ran 1"),
        ("assistant", "the answer"),
    ]
    # The tool ran once: only after the write that says it was asked for.
    assert tools["lookup"].runs == 1
    assert len(model.requests) == 5


async def test_a_write_whose_answer_was_lost_is_not_written_twice() -> None:
    store = FlakyStore()
    factory, model, _, _ = _flaky([tool_step(call("lookup")), text_step("found it")], store)
    session = await factory.get_or_create_root(KEY)
    sub = await session.submit("look it up")
    # The model's reply lands (committed) but its answer never comes back.
    store.applied = True
    store.append_fails = 2  # the user message, then the assistant's tool call
    settled = await factory.coordinator.run(sub.id, factory.resolve)
    assert (settled.outcome, settled.result) == ("completed", "found it")
    roles = [m.role for m in await store.messages(KEY)]
    assert roles == ["user", "assistant", "tool", "assistant"]
    # Resumed from the stored tool call: the model was not asked it twice.
    assert len(model.requests) == 2


async def test_a_failed_turn_whose_last_write_landed_unanswered_keeps_its_input_once() -> None:
    store = FlakyStore()
    steps = [error_step("rate_limit"), text_step("hello back")]
    factory, model, _, _ = _flaky(steps, store)
    session = await factory.get_or_create_root(KEY)
    sub = await session.submit("hello")
    # The model fails before its first write, so the turn's input goes with the write
    # that ends it; that write commits, and the connection drops before its answer.
    store.applied = True
    store.append_fails = 1
    settled = await factory.coordinator.run(sub.id, factory.resolve)
    assert (settled.outcome, settled.result) == ("completed", "hello back")
    assert _transcript(await store.messages(KEY)) == [
        ("user", "hello"),
        ("assistant", "hello back"),
    ]
    assert len(model.requests) == 2


async def test_a_non_idempotent_tool_is_not_run_twice() -> None:
    store = FlakyStore()
    factory, _, tools, _ = _flaky([tool_step(call("send_email")), text_step("sent")], store)
    session = await factory.get_or_create_root(KEY)
    sub = await session.submit("mail them")
    store_append = store.append_for
    writes = 0

    async def fail_third(*args: Any, **kwargs: Any) -> None:
        nonlocal writes
        if args[2]:
            writes += 1
            if writes == 3:  # user message, tool call, then the tool's result
                raise StoreUnavailable("server closed the connection unexpectedly")
        await store_append(*args, **kwargs)

    store.append_for = fail_third  # type: ignore[method-assign]
    settled = await factory.coordinator.run(sub.id, factory.resolve)
    assert (settled.outcome, settled.result) == ("completed", "sent")
    assert tools["send_email"].runs == 1
    tool_results = [m for m in await store.messages(KEY) if m.role == "tool"]
    assert len(tool_results) == 1  # the resume's "outcome unknown", once


async def test_a_settle_whose_answer_was_lost_is_not_settled_twice() -> None:
    store = FlakyStore()
    factory, model, _, pauses = _flaky([text_step("done")], store)
    store.applied = True
    store.settle_fails = 1
    session = await factory.get_or_create_root(KEY)
    sub = await session.ask("finish")
    assert (sub.state, sub.outcome, sub.result) == ("settled", "completed", "done")
    assert store.settles == 1 and len(pauses.taken) == 1
    assert len(model.requests) == 1


async def test_a_settle_the_store_refused_is_done_after_the_outage() -> None:
    store = FlakyStore()
    factory, model, _, _ = _flaky([text_step("done")], store)
    store.settle_fails = 2
    session = await factory.get_or_create_root(KEY)
    sub = await session.ask("finish")
    assert (sub.outcome, sub.result) == ("completed", "done")
    assert len(model.requests) == 1  # the stored reply settled it; the model was not asked
    dones = [e for e in await replay(store, KEY) if e.type == "done"]
    assert [d.text for d in dones] == ["done"]


async def test_a_store_down_past_the_bound_leaves_the_submission_to_its_lease() -> None:
    now = [1000.0]
    store = FlakyStore(clock=lambda: now[0])
    # The first answer goes with the settlement, which the store refuses: never durable.
    factory, _, _, pauses = _flaky([text_step("lost answer"), text_step("late answer")], store)
    session = await factory.get_or_create_root(KEY)
    sub = await session.submit("are you there")
    store.append_fails = store.settle_fails = 1_000
    with pytest.raises(StoreUnavailable):
        await factory.coordinator.run(sub.id, factory.resolve)
    assert len(pauses.taken) == len(DEFAULT_STORE_BACKOFF)
    stuck = await store.submission(sub.id)
    assert stuck is not None and (stuck.state, stuck.lease_owner) == ("running", "me")
    # The store is back, the lease lapses: another worker resumes it and settles it once.
    store.append_fails = store.settle_fails = 0
    now[0] += 60
    other = Coordinator(store, owner="other", lease=30.0)
    settled = await other.run(sub.id, factory.resolve)
    assert (settled.outcome, settled.result, settled.attempts) == (
        "completed",
        "late answer",
        2,
    )
    assert _transcript(await store.messages(KEY)) == [
        ("user", "are you there"),
        ("assistant", "late answer"),
    ]


def test_the_pauses_are_jittered_and_bounded() -> None:
    low = OutagePolicy(backoff=(1.0, 2.0), random=lambda: 0.0)
    high = OutagePolicy(backoff=(1.0, 2.0), random=lambda: 0.999)
    assert [low.pause(n) for n in (1, 2, 3)] == [0.5, 1.0, None]
    assert 0.99 < (high.pause(1) or 0) < 1.0
    assert low.pause(0) is None


class DoneRefusingStore(InMemoryExecutionStore):
    """Refuses every event batch holding a `done` for the first `refusals` tries: an
    outage that outlasts the event recorder's retries, right as the turn ends."""

    def __init__(self, refusals: int) -> None:
        super().__init__()
        self.refusals = refusals

    async def append_events(self, records: Sequence[EventRecord]) -> None:
        if self.refusals and any(record.type == "done" for record in records):
            self.refusals -= 1
            raise StoreUnavailable("server closed the connection unexpectedly")
        await super().append_events(records)


async def test_a_done_event_the_store_refused_for_good_is_written_before_settling() -> None:
    """The chaos suite saw it under a PostgreSQL restart: a completed answer with no `done`
    in the event log, so a follower never saw its turn end. The recorder gives up on the
    batch after its retries (1 + 5 tries here); the Coordinator writes the missing `done`."""
    store = DoneRefusingStore(refusals=6)
    factory, _, _ = build([text_step("the answer")], store=store)
    session = await factory.get_or_create_root(KEY)
    sub = await session.ask("question")
    assert (sub.outcome, sub.result) == ("completed", "the answer")
    assert store.refusals == 0
    done = [e for e in await replay(store, KEY) if e.type == "done"]
    assert [e.text for e in done] == ["the answer"]
