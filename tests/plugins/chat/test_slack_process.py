"""The fake Slack as its own process (how `seam gateway` subprocess tests use it): it
prints its port, and `RemoteFakeSlack` drives it over its `/_fake/...` controls."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from seam.contracts.chat import ChatRef, Inbound, InboundMessage
from seam.plugins.chat.slack.adapter import SlackAdapter
from tests.support.fake_slack import RemoteFakeSlack

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def remote() -> Iterator[RemoteFakeSlack]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.fake_slack", "--port", "0"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        yield RemoteFakeSlack(f"http://127.0.0.1:{int(process.stdout.readline())}")
    finally:
        process.terminate()
        process.wait(10)


async def test_a_fake_in_another_process_is_driven_over_http(remote: RemoteFakeSlack) -> None:
    pushed = await asyncio.to_thread(remote.push_message, "hi", channel="D9", channel_type="im")
    adapter = SlackAdapter(bot_token="xoxb-p", app_token="xapp-p", base_url=remote.base_url)
    events: asyncio.Queue[Inbound] = asyncio.Queue()
    task = asyncio.create_task(adapter.run(events.put))
    try:
        event = await asyncio.wait_for(events.get(), 10)
        assert isinstance(event, InboundMessage)
        assert event.text == "hi" and event.message_id == pushed["ts"]
        await adapter.send(ChatRef("slack", "D9"), "*answer*")
        (sent,) = await asyncio.to_thread(remote.wait_for, "chat.postMessage")
        assert sent["params"] == {"channel": "D9", "text": "*answer*"}
        (envelope,) = await asyncio.to_thread(remote.envelopes)
        assert envelope["acked"] and envelope["sent"] == 1
    finally:
        await adapter.close()
        await asyncio.wait_for(task, 10)
