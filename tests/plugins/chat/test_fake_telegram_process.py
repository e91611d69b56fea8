"""The fake Bot API as its own process (how `seam gateway` subprocess tests use it): it
prints its port, and `RemoteFakeTelegram` drives it over its `/_fake/...` controls."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from telegram.error import NetworkError

from seam.contracts.chat import ChatRef, InboundMessage
from seam.plugins.chat.telegram.adapter import TelegramAdapter
from tests.support.fake_telegram import RemoteFakeTelegram

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def remote_fake() -> Iterator[RemoteFakeTelegram]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_telegram", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        port = int(process.stdout.readline())
        yield RemoteFakeTelegram(f"http://127.0.0.1:{port}")
    finally:
        process.terminate()
        process.wait(10)


async def test_a_fake_in_another_process_is_driven_over_http(
    remote_fake: RemoteFakeTelegram,
) -> None:
    fake = remote_fake
    document = await asyncio.to_thread(fake.add_file, b"hello file", file_name="a.txt")
    await asyncio.to_thread(fake.push_message, "hi", document=document)
    adapter = TelegramAdapter(fake.token, base_url=fake.base_url, poll_timeout=1.0)
    events: asyncio.Queue[InboundMessage] = asyncio.Queue()

    async def deliver(event: object) -> None:
        assert isinstance(event, InboundMessage)
        await events.put(event)

    task = asyncio.create_task(adapter.run(deliver))
    try:
        event = await asyncio.wait_for(events.get(), 10)
        assert event.text == "hi"
        assert event.attachments[0].fetch is not None
        assert await event.attachments[0].fetch() == b"hello file"
        await adapter.send(ChatRef("telegram", event.chat.chat_id), "<b>answer</b>")
        (sent,) = await asyncio.to_thread(fake.wait_for, "sendMessage")
        assert sent["params"]["text"] == "<b>answer</b>"
        assert sent["params"]["parse_mode"] == "HTML"
    finally:
        await adapter.close()
        await asyncio.wait_for(task, 10)
    state = await asyncio.to_thread(fake.state)
    assert state["pending"] == [] and state["offset"] == 2


async def test_faults_are_scripted_over_http(remote_fake: RemoteFakeTelegram) -> None:
    fake = remote_fake
    await asyncio.to_thread(fake.fail, "sendMessage", 502)
    await asyncio.to_thread(fake.push_callback, "yes", message_id=1)
    adapter = TelegramAdapter(fake.token, base_url=fake.base_url, poll_timeout=1.0)
    try:
        with pytest.raises(NetworkError):  # what PTB makes of a 5xx
            await adapter.send(ChatRef("telegram", "1001"), "first try")
        assert await adapter.send(ChatRef("telegram", "1001"), "second try")
    finally:
        await adapter.close()
    sends = await asyncio.to_thread(fake.calls, "sendMessage")
    assert [c["params"]["text"] for c in sends] == ["first try", "second try"]
    assert (await asyncio.to_thread(fake.state))["pending"] == [1]
