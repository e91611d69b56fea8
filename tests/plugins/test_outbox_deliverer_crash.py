"""A deliverer killed with SIGKILL after its send and before `mark_sent`: the item is
claimed again when the lease runs out and delivered, and the repeat is harmless (the file
sender finds its marker; the webhook receiver sees the same Idempotency-Key)."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest

from seam.contracts.outbox import OutboxItem, Outgoing
from seam.plugins.delivery.outbox_worker import OutboxDeliverer
from seam.plugins.delivery.senders import FileSender, WebhookSender
from seam.services.sessions.sqlite import SQLiteSessionStore
from tests.support.webhook_server import WebhookReceiver, webhook_receiver

CHILD = Path(__file__).with_name("outbox_deliverer_child.py")
LEASE = 2.0


async def _kill_after_send(db: Path, root: Path, flag: Path) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(CHILD), str(db), str(root), str(flag), str(LEASE)
    )
    try:
        async with asyncio.timeout(60):
            while not flag.exists():  # the child sent and is stuck before recording it
                await asyncio.sleep(0.02)
    finally:
        proc.send_signal(signal.SIGKILL)
        await proc.wait()
    assert proc.returncode == -signal.SIGKILL


async def _deliver_again(store: SQLiteSessionStore, root: Path, key: str) -> OutboxItem:
    sent = asyncio.Event()
    webhook = WebhookSender(allow=["127.0.0.1"])

    def record(item: OutboxItem) -> None:
        if item.key == key and item.status == "sent":
            sent.set()

    try:
        async with OutboxDeliverer(
            store, [FileSender(root), webhook], lease=LEASE, poll=0.05, on_result=record
        ):
            await asyncio.wait_for(sent.wait(), 30)
    finally:
        await webhook.aclose()
    item = await store.outbox_item(key)
    assert item is not None
    return item


@pytest.mark.parametrize("kind", ["file", "webhook"])
async def test_killed_between_send_and_record_is_delivered_after_the_lease(
    tmp_path: Path, kind: str
) -> None:
    db, root, flag = tmp_path / "sessions.db", tmp_path / "deliveries", tmp_path / "sent"
    store = SQLiteSessionStore(str(db))
    try:
        async with webhook_receiver() as receiver:
            target = "file:daily.md" if kind == "file" else receiver.url
            payload = json.dumps({"text": "The daily report.", "source": "cron:daily"})
            await store.enqueue("run-1:deliver", Outgoing(target, payload, source="cron:daily"))
            await _kill_after_send(db, root, flag)

            left = await store.outbox_item("run-1:deliver")
            assert left is not None and left.status == "pending" and left.attempts == 1
            item = await _deliver_again(store, root, "run-1:deliver")
    finally:
        await store.aclose()

    assert item.status == "sent" and item.attempts == 2
    if kind == "file":
        assert (root / "daily.md").read_text().count("The daily report.") == 1
    else:
        _delivered_once(receiver)


def _delivered_once(receiver: WebhookReceiver) -> None:
    # At least once on the wire, once for a receiver that dedupes by Idempotency-Key.
    assert [r.key for r in receiver.requests] == ["run-1:deliver", "run-1:deliver"]
    assert list(receiver.accepted) == ["run-1:deliver"]
