"""The `SubmissionQueue` and `SubmissionLeases` conformance suites: admission (idempotent by
id), listing and aborting; claims, leases, attempts, release and settling exactly once.

Fixtures: `clock` and `store`, an `ExecutionStore` (see the package docstring).
"""

from __future__ import annotations

import asyncio

import pytest

from seam.contracts.execution import (
    ClaimScope,
    ExecutionStore,
    JournalEntry,
    LeaseLost,
    NewSubmission,
    Settlement,
    SubmissionConflict,
    SubmissionQuery,
)
from seam.contracts.messages import Message
from seam.contracts.sessions import SessionNotFound
from seam.testing.clock import ManualClock
from seam.testing.conformance.support import KEY, OTHER, admit_two
from seam.testing.conformance.support import admit as _admit


class SubmissionQueueSuite:
    """What a surface that starts and watches turns relies on."""

    async def test_admit_queues_a_submission(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        sub = await store.admit(NewSubmission("s1", KEY, "hello", personality="coder"))
        assert (sub.id, sub.session_key, sub.input, sub.state) == ("s1", KEY, "hello", "queued")
        assert sub.personality == "coder"
        assert sub.attempts == 0 and sub.outcome is None and sub.steps == 0
        assert await store.submission("s1") == sub

    async def test_admission_is_idempotent_by_id(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        first = await store.admit(NewSubmission("s1", KEY, "hello"))
        again = await store.admit(NewSubmission("s1", KEY, "hello"))
        assert again == first
        assert [s.id for s in await store.submissions(KEY)] == ["s1"]

    async def test_same_id_other_payload_is_a_conflict(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await store.create(OTHER)
        await store.admit(NewSubmission("s1", KEY, "hello"))
        with pytest.raises(SubmissionConflict, match="s1"):
            await store.admit(NewSubmission("s1", KEY, "something else"))
        with pytest.raises(SubmissionConflict):
            await store.admit(NewSubmission("s1", OTHER, "hello"))
        assert (await store.submission("s1")).input == "hello"  # type: ignore[union-attr]

    async def test_admit_to_an_unknown_session_fails(self, store: ExecutionStore) -> None:
        with pytest.raises(SessionNotFound):
            await store.admit(NewSubmission("s1", KEY, "hello"))
        assert await store.submission("s1") is None

    async def test_admission_settles_a_settled_resend_unchanged(
        self, store: ExecutionStore
    ) -> None:
        await store.create(KEY)
        await _admit(store, "s1")
        await store.claim("w1")
        settled = await store.settle("s1", "w1", Settlement("completed", result="done"))
        assert await store.admit(NewSubmission("s1", KEY, "hi")) == settled

    async def test_submissions_filters_and_orders_oldest_first(
        self, store: ExecutionStore, clock: ManualClock
    ) -> None:
        await store.create(KEY)
        await store.create(OTHER)
        for sid, key in [("a", KEY), ("b", OTHER), ("c", KEY)]:
            await _admit(store, sid, key)
            clock.advance()
        assert [s.id for s in await store.submissions()] == ["a", "b", "c"]
        assert [s.id for s in await store.submissions(KEY)] == ["a", "c"]
        await store.claim("w1")
        queued, running = SubmissionQuery(states=["queued"]), SubmissionQuery(states=["running"])
        assert [s.id for s in await store.submissions(query=queued)] == ["b", "c"]
        assert [s.id for s in await store.submissions(query=running)] == ["a"]
        assert [s.id for s in await store.submissions(query=SubmissionQuery(limit=1))] == ["a"]

    async def test_abort_a_queued_submission(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        sub = await store.request_abort("a")
        assert (sub.state, sub.outcome) == ("settled", "aborted")
        assert await store.claim("w1") is None

    async def test_abort_a_running_submission_flags_it(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await store.claim("w1")
        sub = await store.request_abort("a")
        assert (sub.state, sub.abort_requested) == ("running", True)
        settled = await store.settle("a", "w1", Settlement("aborted"))
        assert settled.outcome == "aborted"
        assert await store.request_abort("a") == settled

    async def test_settle_queued_without_owner(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await store.claim("w1")
        with pytest.raises(LeaseLost):
            await store.settle("a", None, Settlement("aborted"))


class SubmissionLeasesSuite:
    """What the Coordinator relies on: one owner at a time, a dead one's lease runs out."""

    async def test_claim_leases_the_oldest_and_counts_an_attempt(
        self, store: ExecutionStore, clock: ManualClock
    ) -> None:
        await admit_two(store, clock, OTHER)
        sub = await store.claim("w1", lease=30)
        assert sub is not None and sub.id == "a"
        assert (sub.state, sub.lease_owner, sub.attempts) == ("running", "w1", 1)
        assert sub.lease_expires_at == clock.now + 30
        second = await store.claim("w2", lease=30)
        assert second is not None and second.id == "b"
        assert await store.claim("w3") is None

    async def test_one_running_submission_per_session(
        self, store: ExecutionStore, clock: ManualClock
    ) -> None:
        await admit_two(store, clock)
        first = await store.claim("w1")
        assert first is not None and first.id == "a"
        # b queues behind a: messages of one session never interleave.
        assert await store.claim("w2") is None
        await store.settle("a", "w1", Settlement("completed", result="ok"))
        second = await store.claim("w2")
        assert second is not None and second.id == "b"

    async def test_a_queued_submission_waits_behind_a_reclaimable_one(
        self, store: ExecutionStore, clock: ManualClock
    ) -> None:
        await admit_two(store, clock)
        await store.claim("w1", lease=10)
        # w1 died or stalled: a is unsettled, so b must not start on top of its transcript.
        assert (
            await store.claim("w2", scope=ClaimScope(submission_id="b", dead_owners=["w1"])) is None
        )
        clock.advance(11)
        assert await store.claim("w2", scope=ClaimScope(submission_id="b")) is None
        sub = await store.claim("w2")
        assert sub is not None and sub.id == "a"

    async def test_claim_a_given_submission(
        self, store: ExecutionStore, clock: ManualClock
    ) -> None:
        await admit_two(store, clock, OTHER)
        sub = await store.claim("w1", scope=ClaimScope(submission_id="b"))
        assert sub is not None and sub.id == "b"
        assert await store.claim("w2", scope=ClaimScope(submission_id="b")) is None
        assert await store.claim("w2", scope=ClaimScope(submission_id="missing")) is None

    async def test_an_expired_lease_is_reclaimed(
        self, store: ExecutionStore, clock: ManualClock
    ) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await store.claim("w1", lease=10)
        clock.advance(9)
        assert await store.claim("w2", lease=10) is None
        clock.advance(2)
        sub = await store.claim("w2", lease=10)
        assert sub is not None and (sub.id, sub.lease_owner, sub.attempts) == ("a", "w2", 2)
        # The old owner lost it: every write it tries is refused.
        with pytest.raises(LeaseLost):
            await store.renew("a", "w1", lease=10)
        with pytest.raises(LeaseLost):
            await store.append_for("a", "w1", JournalEntry([Message("user", "hi")]))
        with pytest.raises(LeaseLost):
            await store.settle("a", "w1", Settlement("completed"))

    async def test_renewal_keeps_the_lease(self, store: ExecutionStore, clock: ManualClock) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await store.claim("w1", lease=10)
        for _ in range(3):
            clock.advance(8)
            await store.renew("a", "w1", lease=10)
        assert await store.claim("w2", lease=10) is None
        sub = await store.submission("a")
        assert sub is not None and sub.lease_expires_at == clock.now + 10

    async def test_a_dead_owners_lease_is_reclaimed_at_once(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await store.claim("w1", lease=30)
        assert await store.claim("w2", scope=ClaimScope(dead_owners=["w9"])) is None
        sub = await store.claim("w2", scope=ClaimScope(dead_owners=["w1"]))
        assert sub is not None and sub.lease_owner == "w2"

    async def test_attempts_run_out_and_the_submission_fails(
        self, store: ExecutionStore, clock: ManualClock
    ) -> None:
        await store.create(KEY)
        await store.admit(NewSubmission("a", KEY, "hi", max_attempts=2))
        await store.claim("w1", lease=5)
        await store.release("a", "w1", not_before=0, error="HTTP 503")
        await store.claim("w1", lease=5)
        clock.advance(6)  # the second run crashed and its lease ran out
        assert await store.claim("w2") is None
        sub = await store.submission("a")
        assert sub is not None and (sub.state, sub.outcome) == ("settled", "failed")
        assert "2 attempts" in (sub.error or "") and "HTTP 503" in (sub.error or "")

    async def test_release_requeues_with_back_off(
        self, store: ExecutionStore, clock: ManualClock
    ) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await store.claim("w1")
        sub = await store.release("a", "w1", not_before=clock.now + 60, error="rate limited")
        assert (sub.state, sub.lease_owner, sub.error) == ("queued", None, "rate limited")
        assert await store.claim("w1") is None
        clock.advance(61)
        again = await store.claim("w1")
        assert again is not None and again.attempts == 2

    async def test_settle_unless_aborted(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await _admit(store, "b")
        await store.claim("w1", scope=ClaimScope(submission_id="a"))
        done = await store.settle(
            "a",
            "w1",
            Settlement("completed", result="hi", finish_reason="stop", unless_aborted=True),
        )
        assert (done.outcome, done.result, done.finish_reason) == ("completed", "hi", "stop")
        await store.claim("w1", scope=ClaimScope(submission_id="b"))
        await store.request_abort("b")
        aborted = await store.settle(
            "b",
            "w1",
            Settlement("completed", result="hi", finish_reason="stop", unless_aborted=True),
        )
        assert (aborted.state, aborted.outcome) == ("settled", "aborted")
        assert (aborted.result, aborted.finish_reason) == (None, "aborted")

    async def test_settle_exactly_once(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        await store.claim("w1")
        sub = await store.settle(
            "a", "w1", Settlement("completed", result="42", finish_reason="stop")
        )
        assert (sub.state, sub.outcome, sub.result, sub.finish_reason) == (
            "settled",
            "completed",
            "42",
            "stop",
        )
        assert sub.lease_owner is None and sub.settled_at is not None
        with pytest.raises(LeaseLost):
            await store.settle("a", "w1", Settlement("failed"))
        assert (await store.submission("a")).outcome == "completed"  # type: ignore[union-attr]
        assert await store.claim("w1") is None

    async def test_wait_for_work_wakes_on_admission(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        waiter = asyncio.create_task(store.wait_for_work(30))
        await asyncio.sleep(0)  # let the waiter start listening
        await _admit(store, "a")
        async with asyncio.timeout(10):
            await waiter

    async def test_wait_for_work_times_out(self, store: ExecutionStore) -> None:
        async with asyncio.timeout(10):
            await store.wait_for_work(0.01)
