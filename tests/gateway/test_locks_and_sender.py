"""One process holds each adapter (file lock on SQLite, advisory lock on PostgreSQL), and
the chat sender turns outbox items into platform messages."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from seam.apps.gateway.sender import AdapterSlot, ChatSender
from seam.contracts.chat import ChatLimits, ChatRef
from seam.contracts.outbox import OutboxItem
from seam.plugins.delivery.senders import DeliveryFailed
from seam.wiring.gateway import FileLock, PostgresLock
from tests.gateway.fake_chat import FakeAdapter, FakePlatform


async def test_a_file_lock_is_held_by_one_holder_at_a_time(tmp_path: Path) -> None:
    first, second = FileLock(tmp_path / "gw.lock"), FileLock(tmp_path / "gw.lock")
    assert await first.acquire()
    assert not await second.acquire()
    await first.release()
    assert await second.acquire()
    assert await second.held()


async def test_an_advisory_lock_is_held_by_one_connection_at_a_time(postgres_url: str) -> None:
    first, second = PostgresLock(postgres_url, "telegram"), PostgresLock(postgres_url, "telegram")
    other = PostgresLock(postgres_url, "slack")
    try:
        assert await first.acquire()
        assert not await second.acquire()
        assert await other.acquire()  # another adapter's lock is another key
        await first.release()  # as a killed holder's connection ends
        assert await second.acquire() and await second.held()
    finally:
        for lock in (first, second, other):
            await lock.release()


def item(payload: dict[str, object], target: str = "telegram:42") -> OutboxItem:
    now = time.time()
    return OutboxItem("k", target, json.dumps(payload), "pending", now, now)


async def test_the_sender_sends_edits_and_formats() -> None:
    platform = FakePlatform()
    adapter = FakeAdapter(platform, limits=ChatLimits(max_text=10, min_edit_interval=0))
    sender = ChatSender("telegram", AdapterSlot(adapter))
    assert sender.prefix == "telegram:"
    first = await sender.send(item({"text": "hello", "edit": None, "buttons": []}))
    assert first is not None and platform.messages[first].text == "hello"
    # The first part of an answer replaces the streamed preview.
    assert await sender.send(item({"text": "final", "edit": first, "buttons": []})) == first
    assert platform.messages[first].text == "final"
    # A preview that cannot be edited any more: the text comes as a new message.
    again = await sender.send(item({"text": "x", "edit": "gone", "buttons": []}))
    assert again != first and platform.messages[str(again)].text == "x"
    # Another producer's Markdown (cron output, an alert) is split here.
    await sender.send(item({"text": "0123456789abcdef", "source": "cron"}))
    assert platform.sent_texts()[-2:] == ["0123456789", "abcdef"]
    thread = await sender.send(item({"text": "t", "edit": None}, target="telegram:-100:7"))
    assert platform.messages[str(thread)].chat == str(ChatRef("telegram", "-100", "7"))


async def test_a_send_that_fails_is_retried_and_a_bad_payload_is_not() -> None:
    platform = FakePlatform()
    sender = ChatSender("telegram", AdapterSlot(FakeAdapter(platform)))
    platform.fail_sends = True
    with pytest.raises(DeliveryFailed) as failed:
        await sender.send(item({"text": "hi", "edit": None}))
    assert not failed.value.permanent
    with pytest.raises(DeliveryFailed) as bad:
        await sender.send(item({"nope": 1}))
    assert bad.value.permanent
    with pytest.raises(DeliveryFailed, match="not running"):
        await ChatSender("telegram", AdapterSlot()).send(item({"text": "hi", "edit": None}))
