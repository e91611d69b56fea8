"""The `Outbox` contract (idempotent enqueue, claims with a lease, delivery outcomes),
written once and run against every backend.

A backend's test module subclasses `OutboxSuite` and provides three fixtures: `clock` (a
`ManualClock`), `outbox` (a fresh, empty store built with that clock) and `twin` (a
second store object on the same data, as a second deliverer process would open it; the
in-memory backend hands back the same object).
"""

from __future__ import annotations

import asyncio

import pytest

from seam.contracts.outbox import Outbox, OutboxItemNotFound, OutboxQuery, OutboxWaker, Outgoing
from seam.testing.clock import ManualClock

LEASE = 30.0


class OutboxSuite:
    # Enqueue

    async def test_is_an_outbox(self, outbox: Outbox) -> None:
        assert isinstance(outbox, Outbox)

    async def test_enqueue_adds_a_pending_item(self, outbox: Outbox, clock: ManualClock) -> None:
        item = await outbox.enqueue(
            "s1:reply:0", Outgoing("telegram:42", '{"text": "hi"}', source="s1")
        )
        assert (item.key, item.target, item.payload, item.source) == (
            "s1:reply:0",
            "telegram:42",
            '{"text": "hi"}',
            "s1",
        )
        assert item.status == "pending" and item.attempts == 0
        assert item.created_at == item.updated_at == clock.now
        assert item.next_attempt_at <= clock.now
        assert item.last_error is None and item.delivered_id is None
        assert await outbox.outbox_item("s1:reply:0") == item

    async def test_enqueue_is_idempotent_by_key(self, outbox: Outbox, clock: ManualClock) -> None:
        first = await outbox.enqueue(
            "k", Outgoing("telegram:42", '{"text": "original"}', source="s1")
        )
        clock.advance()
        again = await outbox.enqueue("k", Outgoing("slack:C1", '{"text": "changed"}', source="s2"))
        assert again == first
        assert [i.payload for i in await outbox.outbox_items()] == ['{"text": "original"}']

    async def test_enqueue_of_a_delivered_key_changes_nothing(self, outbox: Outbox) -> None:
        await outbox.enqueue("k", Outgoing("telegram:42", "{}"))
        await outbox.claim_due("telegram:", "w1", lease=LEASE)
        sent = await outbox.mark_sent("k", delivered_id="m7")
        assert await outbox.enqueue("k", Outgoing("telegram:42", "{}")) == sent
        assert await outbox.claim_due("telegram:", "w1", lease=LEASE) == []

    async def test_unknown_key_reads_as_none(self, outbox: Outbox) -> None:
        assert await outbox.outbox_item("nope") is None

    async def test_not_before_holds_an_item_back(self, outbox: Outbox, clock: ManualClock) -> None:
        item = await outbox.enqueue("k", Outgoing("file:a.md", "{}", not_before=clock.now + 60))
        assert item.next_attempt_at == clock.now + 60
        assert await outbox.claim_due("file:", "w1", lease=LEASE) == []
        clock.advance(60)
        assert [i.key for i in await outbox.claim_due("file:", "w1", lease=LEASE)] == ["k"]

    # Claims

    async def test_claim_takes_a_lease(self, outbox: Outbox, clock: ManualClock) -> None:
        await outbox.enqueue("k", Outgoing("telegram:42", "{}"))
        [claimed] = await outbox.claim_due("telegram:", "w1", lease=LEASE)
        assert claimed.key == "k" and claimed.status == "pending"
        assert claimed.attempts == 1
        assert claimed.next_attempt_at == clock.now + LEASE
        assert await outbox.outbox_item("k") == claimed

    async def test_a_second_claimer_waits_for_the_lease_to_run_out(
        self, outbox: Outbox, clock: ManualClock
    ) -> None:
        await outbox.enqueue("k", Outgoing("telegram:42", "{}"))
        assert len(await outbox.claim_due("telegram:", "w1", lease=LEASE)) == 1
        assert await outbox.claim_due("telegram:", "w2", lease=LEASE) == []
        clock.advance(LEASE - 1)
        assert await outbox.claim_due("telegram:", "w2", lease=LEASE) == []
        clock.advance(1)
        [again] = await outbox.claim_due("telegram:", "w2", lease=LEASE)
        assert again.key == "k" and again.attempts == 2

    async def test_claims_come_oldest_first_within_the_limit(
        self, outbox: Outbox, clock: ManualClock
    ) -> None:
        await outbox.enqueue("b", Outgoing("telegram:1", "{}"))
        clock.advance()
        await outbox.enqueue("a", Outgoing("telegram:1", "{}"))
        # Same instant: enqueue order decides (the parts of one split reply).
        await outbox.enqueue("s:reply:10", Outgoing("telegram:1", "{}"))
        await outbox.enqueue("s:reply:2", Outgoing("telegram:1", "{}"))
        clock.advance()
        first = await outbox.claim_due("telegram:", "w1", lease=LEASE, limit=3)
        assert [i.key for i in first] == ["b", "a", "s:reply:10"]
        rest = await outbox.claim_due("telegram:", "w1", lease=LEASE, limit=3)
        assert [i.key for i in rest] == ["s:reply:2"]

    async def test_claim_filters_by_target_prefix(self, outbox: Outbox) -> None:
        await outbox.enqueue("t", Outgoing("telegram:42", "{}"))
        await outbox.enqueue("s", Outgoing("slack:C1", "{}"))
        await outbox.enqueue("f", Outgoing("file:notes/a.md", "{}"))
        assert [i.key for i in await outbox.claim_due("slack:", "w1", lease=LEASE)] == ["s"]
        assert [i.key for i in await outbox.claim_due("", "w1", lease=LEASE)] == ["t", "f"]

    async def test_prefix_is_literal_not_a_pattern(self, outbox: Outbox) -> None:
        await outbox.enqueue("a", Outgoing("file:a_b%c", "{}"))
        await outbox.enqueue("b", Outgoing("file:aXbYc", "{}"))
        assert [i.key for i in await outbox.claim_due("file:a_b%", "w1", lease=LEASE)] == ["a"]
        assert [i.key for i in await outbox.outbox_items(OutboxQuery(target_prefix="file:a_"))] == [
            "a"
        ]

    # Outcomes

    async def test_mark_sent_records_the_delivery(self, outbox: Outbox, clock: ManualClock) -> None:
        await outbox.enqueue("k", Outgoing("telegram:42", "{}"))
        await outbox.claim_due("telegram:", "w1", lease=LEASE)
        clock.advance()
        sent = await outbox.mark_sent("k", delivered_id="msg-9")
        assert sent.status == "sent" and sent.delivered_id == "msg-9"
        assert sent.updated_at == clock.now and sent.attempts == 1
        clock.advance(LEASE)
        assert await outbox.claim_due("telegram:", "w2", lease=LEASE) == []

    async def test_marking_sent_twice_changes_nothing(
        self, outbox: Outbox, clock: ManualClock
    ) -> None:
        await outbox.enqueue("k", Outgoing("telegram:42", "{}"))
        first = await outbox.mark_sent("k", delivered_id="m1")
        clock.advance()
        assert await outbox.mark_sent("k", delivered_id="m2") == first

    async def test_a_failure_with_retry_at_comes_back_then(
        self, outbox: Outbox, clock: ManualClock
    ) -> None:
        await outbox.enqueue("k", Outgoing("telegram:42", "{}"))
        await outbox.claim_due("telegram:", "w1", lease=LEASE)
        failed = await outbox.mark_failed("k", "HTTP 502", retry_at=clock.now + 5)
        assert failed.status == "pending" and failed.last_error == "HTTP 502"
        assert failed.next_attempt_at == clock.now + 5
        clock.advance(4)
        assert await outbox.claim_due("telegram:", "w1", lease=LEASE) == []
        clock.advance(1)
        [again] = await outbox.claim_due("telegram:", "w1", lease=LEASE)
        assert again.attempts == 2 and again.last_error == "HTTP 502"
        sent = await outbox.mark_sent("k", delivered_id="m1")
        assert sent.status == "sent" and sent.attempts == 2

    async def test_a_failure_without_retry_is_failed_for_good(
        self, outbox: Outbox, clock: ManualClock
    ) -> None:
        await outbox.enqueue("k", Outgoing("telegram:42", "{}"))
        await outbox.claim_due("telegram:", "w1", lease=LEASE)
        failed = await outbox.mark_failed("k", "chat not found", retry_at=None)
        assert failed.status == "failed" and failed.last_error == "chat not found"
        clock.advance(3600)
        assert await outbox.claim_due("", "w1", lease=LEASE) == []
        assert [i.key for i in await outbox.outbox_items(OutboxQuery(status="failed"))] == ["k"]

    async def test_a_late_failure_does_not_undo_a_delivery(self, outbox: Outbox) -> None:
        await outbox.enqueue("k", Outgoing("telegram:42", "{}"))
        sent = await outbox.mark_sent("k", delivered_id="m1")
        assert await outbox.mark_failed("k", "timeout", retry_at=None) == sent

    async def test_outcomes_of_an_unknown_key_fail(self, outbox: Outbox) -> None:
        with pytest.raises(OutboxItemNotFound, match="nope"):
            await outbox.mark_sent("nope")
        with pytest.raises(OutboxItemNotFound):
            await outbox.mark_failed("nope", "x", retry_at=None)

    # Listing

    async def test_outbox_items_filter_and_order(self, outbox: Outbox, clock: ManualClock) -> None:
        await outbox.enqueue("a", Outgoing("telegram:1", "{}", source="run-1"))
        clock.advance()
        await outbox.enqueue("b", Outgoing("file:x.md", "{}", source="run-1"))
        clock.advance()
        await outbox.enqueue("c", Outgoing("telegram:2", "{}", source="run-2"))
        await outbox.mark_sent("a")
        assert [i.key for i in await outbox.outbox_items()] == ["a", "b", "c"]
        assert [i.key for i in await outbox.outbox_items(OutboxQuery(source="run-1"))] == ["a", "b"]
        assert [
            i.key for i in await outbox.outbox_items(OutboxQuery(target_prefix="telegram:"))
        ] == ["a", "c"]
        assert [i.key for i in await outbox.outbox_items(OutboxQuery(status="pending"))] == [
            "b",
            "c",
        ]
        assert [
            i.key for i in await outbox.outbox_items(OutboxQuery(source="run-1", status="pending"))
        ] == ["b"]
        assert [i.key for i in await outbox.outbox_items(OutboxQuery(limit=2))] == ["a", "b"]

    # Waking a deliverer

    async def test_wait_for_outbox_wakes_on_enqueue(self, outbox: Outbox) -> None:
        if not isinstance(outbox, OutboxWaker):
            pytest.skip("this backend has no wait_for_outbox")
        waiter = asyncio.create_task(outbox.wait_for_outbox(30))
        await asyncio.sleep(0)  # let the waiter start listening
        await outbox.enqueue("k", Outgoing("telegram:42", "{}"))
        await asyncio.wait_for(waiter, 10)

    async def test_wait_for_outbox_wakes_for_an_item_enqueued_elsewhere(
        self, outbox: Outbox, twin: Outbox
    ) -> None:
        if not isinstance(twin, OutboxWaker):
            pytest.skip("this backend has no wait_for_outbox")
        await twin.wait_for_outbox(0)  # listening (PostgreSQL) and nothing stale pending
        waiter = asyncio.create_task(twin.wait_for_outbox(30))
        await asyncio.sleep(0)
        await outbox.enqueue("k", Outgoing("telegram:42", "{}"))
        await asyncio.wait_for(waiter, 10)

    async def test_wait_for_outbox_returns_after_its_timeout(self, outbox: Outbox) -> None:
        if not isinstance(outbox, OutboxWaker):
            pytest.skip("this backend has no wait_for_outbox")
        await asyncio.wait_for(outbox.wait_for_outbox(0.05), 10)

    # Concurrency

    async def test_concurrent_claimers_never_share_an_item(
        self, outbox: Outbox, twin: Outbox
    ) -> None:
        keys = [f"k{n:03d}" for n in range(60)]
        for key in keys:
            await outbox.enqueue(key, Outgoing("telegram:42", "{}"))

        async def drain(store: Outbox, owner: str) -> list[str]:
            taken: list[str] = []
            while batch := await store.claim_due("telegram:", owner, lease=LEASE, limit=4):
                taken.extend(i.key for i in batch)
                await asyncio.sleep(0)
            return taken

        results = await asyncio.gather(
            drain(outbox, "a1"), drain(twin, "b1"), drain(outbox, "a2"), drain(twin, "b2")
        )
        everything = [key for taken in results for key in taken]
        assert sorted(everything) == keys  # each exactly once
        for key in keys:
            item = await outbox.outbox_item(key)
            assert item is not None and item.attempts == 1
