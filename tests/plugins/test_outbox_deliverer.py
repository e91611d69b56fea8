"""The outbox deliverer: claims, sends, back-off, outcomes, waking and stopping."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from seam.contracts.outbox import OutboxItem, OutboxQuery, Outgoing
from seam.core.execution import InMemoryExecutionStore
from seam.plugins.delivery.outbox_worker import STOPPED, OutboxDeliverer
from seam.plugins.delivery.senders import DeliveryFailed, FileSender, WebhookSender
from seam.services.sessions.postgres import PostgresStore
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.testing.clock import ManualClock
from tests.support.webhook_server import webhook_receiver

Outcome = BaseException | str | None


class ScriptedSender:
    """A stand-in platform: each send takes the next scripted outcome (an exception to
    raise, or the id to return); then succeeds."""

    def __init__(self, prefix: str, script: list[Outcome] | None = None) -> None:
        self.prefix = prefix
        self.script = list(script or [])
        self.sent: list[OutboxItem] = []
        self.started = asyncio.Event()
        self.hold: asyncio.Future[None] | None = None

    async def send(self, item: OutboxItem) -> str | None:
        self.sent.append(item)
        self.started.set()
        if self.hold is not None:
            await self.hold
        outcome = self.script.pop(0) if self.script else f"id-{item.key}"
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome


def text(value: str) -> str:
    return json.dumps({"text": value})


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(clock: ManualClock) -> InMemoryExecutionStore:
    return InMemoryExecutionStore(clock=clock)


def deliverer(
    store: InMemoryExecutionStore, clock: ManualClock, *senders: ScriptedSender, **kw: object
) -> tuple[OutboxDeliverer, list[OutboxItem]]:
    seen: list[OutboxItem] = []
    worker = OutboxDeliverer(
        store,
        senders,
        clock=clock,
        jitter=lambda: 0.5,  # no jitter: exact back-off
        on_result=seen.append,
        **kw,  # type: ignore[arg-type]
    )
    return worker, seen


async def test_a_due_item_is_sent_and_recorded(
    store: InMemoryExecutionStore, clock: ManualClock
) -> None:
    sender = ScriptedSender("telegram:")
    worker, seen = deliverer(store, clock, sender)
    await store.enqueue("s1:reply:0", Outgoing("telegram:42", text("hi"), source="s1"))
    await store.enqueue("other", Outgoing("slack:C1", text("not mine")))
    [done] = await worker.deliver_due()
    assert done.status == "sent" and done.delivered_id == "id-s1:reply:0" and done.attempts == 1
    assert [i.key for i in sender.sent] == ["s1:reply:0"]
    assert seen == [done] and await store.outbox_item("s1:reply:0") == done
    assert (await store.outbox_item("other")).status == "pending"  # type: ignore[union-attr]
    assert await worker.deliver_due() == []


async def test_failures_back_off_exponentially_then_fail_for_good(
    store: InMemoryExecutionStore, clock: ManualClock
) -> None:
    sender = ScriptedSender("telegram:", [DeliveryFailed("HTTP 502")] * 20)
    worker, seen = deliverer(store, clock, sender, max_attempts=5)
    await store.enqueue("k", Outgoing("telegram:42", text("hi")))
    waits = []
    for _ in range(5):
        [outcome] = await worker.deliver_due()
        if outcome.status == "pending":
            waits.append(outcome.next_attempt_at - clock.now)
            assert await worker.deliver_due() == []  # not before its time
            clock.advance(outcome.next_attempt_at - clock.now)
    assert waits == [1.0, 2.0, 4.0, 8.0]
    assert outcome.status == "failed" and outcome.attempts == 5
    assert outcome.last_error == "HTTP 502 (gave up after 5 attempts)"
    assert [i.status for i in seen] == ["pending"] * 4 + ["failed"]
    clock.advance(3600)
    assert await worker.deliver_due() == []


def test_back_off_is_capped_at_ten_minutes_with_jitter() -> None:
    store = InMemoryExecutionStore()
    low = OutboxDeliverer(store, jitter=lambda: 0.0)
    high = OutboxDeliverer(store, jitter=lambda: 1.0)
    mid = OutboxDeliverer(store, jitter=lambda: 0.5)
    assert [mid.backoff(n) for n in (1, 2, 3, 10, 11, 50)] == [1, 2, 4, 512, 600, 600]
    assert low.backoff(1) == pytest.approx(0.8) and high.backoff(1) == pytest.approx(1.2)
    assert high.backoff(12) == 600


async def test_a_permanent_failure_is_not_retried(
    store: InMemoryExecutionStore, clock: ManualClock
) -> None:
    sender = ScriptedSender("telegram:", [DeliveryFailed("chat not found", permanent=True)])
    worker, _ = deliverer(store, clock, sender)
    await store.enqueue("k", Outgoing("telegram:42", text("hi")))
    [outcome] = await worker.deliver_due()
    assert (outcome.status, outcome.last_error, outcome.attempts) == ("failed", "chat not found", 1)


async def test_retry_after_is_honoured(store: InMemoryExecutionStore, clock: ManualClock) -> None:
    sender = ScriptedSender("telegram:", [DeliveryFailed("HTTP 429", retry_after=37)])
    worker, _ = deliverer(store, clock, sender)
    await store.enqueue("k", Outgoing("telegram:42", text("hi")))
    [outcome] = await worker.deliver_due()
    assert outcome.next_attempt_at == clock.now + 37


async def test_an_unexpected_sender_error_is_retried(
    store: InMemoryExecutionStore, clock: ManualClock
) -> None:
    sender = ScriptedSender("telegram:", [RuntimeError("boom")])
    worker, _ = deliverer(store, clock, sender)
    await store.enqueue("k", Outgoing("telegram:42", text("hi")))
    [outcome] = await worker.deliver_due()
    assert outcome.status == "pending" and outcome.last_error == "RuntimeError: boom"


async def test_one_target_keeps_its_order_others_go_on(
    store: InMemoryExecutionStore, clock: ManualClock
) -> None:
    sender = ScriptedSender("telegram:", [DeliveryFailed("HTTP 502")])
    worker, _ = deliverer(store, clock, sender)
    await store.enqueue("a:0", Outgoing("telegram:1", text("part one")))
    await store.enqueue("a:1", Outgoing("telegram:1", text("part two")))
    await store.enqueue("b:0", Outgoing("telegram:2", text("elsewhere")))
    outcomes = {i.key: i for i in await worker.deliver_due()}
    assert outcomes["a:0"].status == "pending"
    assert outcomes["a:1"].status == "pending"  # held behind part one, not sent
    assert outcomes["a:1"].next_attempt_at == outcomes["a:0"].next_attempt_at
    assert outcomes["b:0"].status == "sent"
    assert [i.key for i in sender.sent] == ["a:0", "b:0"]
    clock.advance(1)
    await worker.deliver_due()
    assert [i.key for i in sender.sent] == ["a:0", "b:0", "a:0", "a:1"]


async def test_an_item_claimed_too_often_is_given_up(
    store: InMemoryExecutionStore, clock: ManualClock
) -> None:
    """Deliverers that die sending it: each claim counts; it is not sent an 11th time."""
    await store.enqueue("k", Outgoing("telegram:42", text("hi")))
    for _ in range(10):
        await store.claim_due("telegram:", "dead", lease=60)
        clock.advance(60)
    sender = ScriptedSender("telegram:")
    worker, _ = deliverer(store, clock, sender)
    [outcome] = await worker.deliver_due()
    assert outcome.status == "failed" and "gave up after 10 attempts" in (outcome.last_error or "")
    assert sender.sent == []


async def test_async_on_result_and_a_failing_one(
    store: InMemoryExecutionStore, clock: ManualClock
) -> None:
    seen: list[str] = []

    async def record(item: OutboxItem) -> None:
        seen.append(item.status)
        raise RuntimeError("ledger down")  # logged; the delivery stands

    worker = OutboxDeliverer(store, [ScriptedSender("telegram:")], clock=clock, on_result=record)
    await store.enqueue("k", Outgoing("telegram:42", text("hi")))
    await worker.deliver_due()
    assert seen == ["sent"]
    assert (await store.outbox_item("k")).status == "sent"  # type: ignore[union-attr]


async def test_a_sender_per_prefix() -> None:
    worker = OutboxDeliverer(InMemoryExecutionStore(), [ScriptedSender("telegram:")])
    with pytest.raises(ValueError, match="telegram:"):
        worker.register(ScriptedSender("telegram:"))


# Running in the background (real time, real waits on conditions)


async def _until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def test_running_it_wakes_at_once_on_enqueue() -> None:
    store = InMemoryExecutionStore()
    sender = ScriptedSender("telegram:")
    sent = asyncio.Event()
    worker = OutboxDeliverer(store, [sender], poll=60, on_result=lambda item: sent.set())
    async with worker:  # a poll would take a minute
        await store.enqueue("k", Outgoing("telegram:42", text("hi")))
        await asyncio.wait_for(sent.wait(), 5)
    assert (await store.outbox_item("k")).status == "sent"  # type: ignore[union-attr]


async def test_a_sender_registered_while_running_starts_delivering() -> None:
    store = InMemoryExecutionStore()
    await store.enqueue("k", Outgoing("discord:7", text("hi")))
    async with OutboxDeliverer(store, poll=0.05) as worker:
        sender = ScriptedSender("discord:")
        worker.register(sender)
        await asyncio.wait_for(sender.started.wait(), 5)
        await worker.unregister("discord:")
        assert "discord:" not in worker.senders


async def test_stopping_releases_what_it_claimed() -> None:
    store = InMemoryExecutionStore()
    sender = ScriptedSender("telegram:")
    sender.hold = asyncio.get_running_loop().create_future()  # a send that never returns
    await store.enqueue("k", Outgoing("telegram:42", text("hi")))
    async with OutboxDeliverer(store, [sender], lease=600):
        await asyncio.wait_for(sender.started.wait(), 5)
    item = await store.outbox_item("k")
    assert item is not None and item.status == "pending" and item.last_error == STOPPED
    assert (await store.claim_due("telegram:", "next", lease=60))[0].key == "k"  # at once


async def test_a_webhook_that_fails_twice_is_delivered_once() -> None:
    store = InMemoryExecutionStore()
    seen: list[OutboxItem] = []
    webhook = WebhookSender(allow=["127.0.0.1"])
    async with webhook_receiver([(503, {}), (500, {})]) as receiver:
        await store.enqueue(
            "run-1:deliver",
            Outgoing(receiver.url, json.dumps({"text": "Report.", "source": "cron:j"})),
        )
        async with OutboxDeliverer(
            store, [webhook], base_delay=0.05, poll=0.05, on_result=seen.append
        ):
            await _until(lambda: bool(seen) and seen[-1].status == "sent")
    await webhook.aclose()
    assert [r.status for r in receiver.requests] == [503, 500, 200]
    assert {r.key for r in receiver.requests} == {"run-1:deliver"}
    assert list(receiver.accepted) == ["run-1:deliver"]
    assert receiver.accepted["run-1:deliver"]["text"] == "Report."
    item = await store.outbox_item("run-1:deliver")
    assert item is not None and item.status == "sent" and item.attempts == 3
    assert [i.status for i in seen] == ["pending", "pending", "sent"]
    assert seen[0].last_error is not None and "HTTP 503" in seen[0].last_error


async def test_files_on_a_sqlite_store_end_to_end(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "sessions.db"))
    root = tmp_path / "deliveries"
    sent: list[str] = []
    worker = OutboxDeliverer(
        store, [FileSender(root)], poll=0.05, on_result=lambda item: sent.append(item.status)
    )
    try:
        async with worker:
            await store.enqueue(
                "r1", Outgoing("file:daily.md", json.dumps({"text": "one"}), source="j")
            )
            await store.enqueue(
                "r2", Outgoing("file:daily.md", json.dumps({"text": "two"}), source="j")
            )
            await _until(lambda: sent == ["sent", "sent"])
        assert [i.status for i in await store.outbox_items(OutboxQuery(source="j"))] == [
            "sent",
            "sent",
        ]
    finally:
        await store.aclose()
    content = (root / "daily.md").read_text()
    assert content.index("one") < content.index("two")


async def test_two_machines_deliver_each_item_once(
    postgres_url: str, postgres_schema: str, tmp_path: Path
) -> None:
    """Two deliverers on each of two PostgreSQL stores (two machines) share 100 items."""
    first, second = await asyncio.gather(
        PostgresStore.connect(postgres_url, schema=postgres_schema),
        PostgresStore.connect(postgres_url, schema=postgres_schema),
    )
    root = tmp_path / "deliveries"
    sent: list[str] = []

    def record(item: OutboxItem) -> None:
        if item.status == "sent":
            sent.append(item.key)

    workers = [
        OutboxDeliverer(store, [FileSender(root)], poll=0.05, batch=5, on_result=record)
        for store in (first, second, first, second)
    ]
    try:
        async with contextlib.AsyncExitStack() as stack:
            for worker in workers:
                await stack.enter_async_context(worker)
            for n in range(100):
                payload = json.dumps({"text": f"item {n:03d}"})
                await first.enqueue(f"k{n:03d}", Outgoing(f"file:out-{n % 7}.md", payload))
            await _until(lambda: len(sent) >= 100, timeout=60)
        items = await second.outbox_items(OutboxQuery(limit=1000))
    finally:
        await first.aclose()
        await second.aclose()
    assert sorted(sent) == [f"k{n:03d}" for n in range(100)]
    assert {(i.status, i.attempts) for i in items} == {("sent", 1)}
    written = "".join(path.read_text() for path in root.iterdir())
    assert all(written.count(f"item {n:03d}\n") == 1 for n in range(100))
