"""The fake Discord as its own process (how `seam gateway` subprocess tests use it): it
prints its port, and `RemoteFakeDiscord` drives it over its `/_fake/...` controls."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from discord.gateway import DiscordWebSocket
from discord.http import Route

from seam.contracts.chat import ChatRef, Inbound, InboundMessage
from seam.plugins.chat.discord.adapter import DiscordAdapter
from tests.support.fake_discord import RemoteFakeDiscord

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def remote() -> Iterator[RemoteFakeDiscord]:
    base, gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_discord", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield RemoteFakeDiscord(f"http://127.0.0.1:{int(process.stdout.readline())}")
    finally:
        process.terminate()
        process.wait(10)
        Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = base, gateway


async def test_a_fake_in_another_process_is_driven_over_http(remote: RemoteFakeDiscord) -> None:
    adapter = DiscordAdapter(
        token="t", base_url=remote.api_base, gateway_url=remote.gateway_url, guild_ready_timeout=0
    )
    events: asyncio.Queue[Inbound] = asyncio.Queue()
    task = asyncio.create_task(adapter.run(events.put))
    try:
        # Messages arrive live once the client is on the gateway (before that, only
        # channels it has heard from are caught up).
        await asyncio.to_thread(remote.wait_identified)
        pushed = await asyncio.to_thread(
            remote.push_message, "hi", channel_id="1300000000000000009"
        )
        event = await asyncio.wait_for(events.get(), 10)
        assert isinstance(event, InboundMessage)
        assert event.text == "hi" and event.message_id == pushed["id"]
        await adapter.send(ChatRef("discord", "1300000000000000009"), "**answer**")
        (sent,) = await asyncio.to_thread(
            remote.wait_for, "POST", "/channels/1300000000000000009/messages"
        )
        assert sent["body"]["content"] == "**answer**"
    finally:
        await adapter.close()
        await asyncio.wait_for(task, 10)
