"""The `SubmissionLeases.admit_and_claim` conformance suite: a submission admitted
already claimed when nothing of its session is ahead of it, and queued otherwise.

Fixtures: `clock` and `store`, an `ExecutionStore` (see the package docstring).
"""

from __future__ import annotations

import asyncio

import pytest

from seam.contracts.execution import (
    ExecutionStore,
    NewSubmission,
    Settlement,
    SubmissionConflict,
)
from seam.contracts.sessions import SessionNotFound
from seam.testing.clock import ManualClock
from seam.testing.conformance.support import KEY, OTHER
from seam.testing.conformance.support import admit as _admit


class AdmitAndClaimSuite:
    """What `Session.ask` relies on: its own submission runs at once, in order."""

    async def test_an_idle_session_s_submission_comes_back_running(
        self, store: ExecutionStore, clock: ManualClock
    ) -> None:
        await store.create(KEY)
        sub = await store.admit_and_claim(NewSubmission("a", KEY, "hello"), "w1", lease=30)
        assert (sub.id, sub.input, sub.state, sub.lease_owner) == ("a", "hello", "running", "w1")
        assert (sub.attempts, sub.lease_expires_at) == (1, clock.now + 30)
        assert await store.submission("a") == sub
        assert await store.claim("w2") is None  # held, as a claim would hold it

    async def test_it_queues_behind_its_session_s_work_and_runs_in_order(
        self, store: ExecutionStore, clock: ManualClock
    ) -> None:
        await store.create(KEY)
        await _admit(store, "a")
        clock.advance()
        queued = await store.admit_and_claim(NewSubmission("b", KEY, "later"), "w1")
        assert (queued.state, queued.attempts, queued.lease_owner) == ("queued", 0, None)
        first = await store.claim("w1")
        assert first is not None and first.id == "a"
        running = await store.admit_and_claim(NewSubmission("c", KEY, "last"), "w1")
        assert running.state == "queued"
        await store.settle("a", "w1", Settlement("completed", result="ok"))
        second = await store.claim("w1")
        assert second is not None and second.id == "b"

    async def test_another_session_s_work_does_not_hold_it_back(
        self, store: ExecutionStore
    ) -> None:
        await store.create(KEY)
        await store.create(OTHER)
        await _admit(store, "a", OTHER)
        sub = await store.admit_and_claim(NewSubmission("b", KEY, "hi"), "w1")
        assert sub.state == "running"

    async def test_a_resend_comes_back_as_stored(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        first = await store.admit_and_claim(NewSubmission("a", KEY, "hi"), "w1")
        again = await store.admit_and_claim(NewSubmission("a", KEY, "hi"), "w2")
        assert again == first  # no second attempt, no new owner
        with pytest.raises(SubmissionConflict):
            await store.admit_and_claim(NewSubmission("a", KEY, "other"), "w1")
        settled = await store.settle("a", "w1", Settlement("completed", result="done"))
        assert await store.admit_and_claim(NewSubmission("a", KEY, "hi"), "w1") == settled

    async def test_an_unknown_session_is_refused(self, store: ExecutionStore) -> None:
        with pytest.raises(SessionNotFound):
            await store.admit_and_claim(NewSubmission("a", KEY, "hi"), "w1")
        assert await store.submission("a") is None

    async def test_concurrent_ones_of_a_session_never_both_run(self, store: ExecutionStore) -> None:
        await store.create(KEY)
        subs = await asyncio.gather(
            *(store.admit_and_claim(NewSubmission(f"s{n}", KEY, "hi"), f"w{n}") for n in range(4))
        )
        assert [s.state for s in subs].count("running") == 1
