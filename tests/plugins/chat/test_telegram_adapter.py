"""The Telegram adapter against a fake Bot API on loopback: what python-telegram-bot
really sends, and what a chat user would notice (a message answered once, never lost)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from seam.contracts.chat import Button, ButtonPress, ChatAdapter, ChatRef, Inbound, InboundMessage
from seam.plugins.chat.telegram import build_telegram
from seam.plugins.chat.telegram.adapter import TelegramAdapter
from tests.support.fake_telegram import BOT_USERNAME, DEFAULT_TOKEN, FakeTelegram

PRIVATE = ChatRef("telegram", "1001")
# PTB itself warns, while raising RetryAfter, that retry_after will become a timedelta.
pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")


def adapter_for(fake: FakeTelegram, **options: Any) -> TelegramAdapter:
    options.setdefault("poll_timeout", 1.0)
    options.setdefault("retry_initial", 0.05)
    options.setdefault("retry_cap", 0.2)
    return TelegramAdapter(
        options.pop("token", fake.token),
        base_url=fake.base_url,
        **options,
    )


@asynccontextmanager
async def running(
    adapter: TelegramAdapter, deliver: Callable[[Inbound], Any] | None = None
) -> AsyncIterator[asyncio.Queue[Inbound]]:
    events: asyncio.Queue[Inbound] = asyncio.Queue()

    async def default(event: Inbound) -> None:
        await events.put(event)

    task = asyncio.create_task(adapter.run(deliver or default))
    try:
        yield events
    finally:
        await adapter.close()
        await asyncio.wait_for(task, 10)


async def eventually(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Poll a condition the test cannot await directly (the adapter's health)."""
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


async def next_event(events: asyncio.Queue[Inbound]) -> Inbound:
    return await asyncio.wait_for(events.get(), 10)


def test_the_adapter_is_a_chat_adapter(fake_telegram: FakeTelegram) -> None:
    assert isinstance(adapter_for(fake_telegram), ChatAdapter)


async def test_a_message_is_acknowledged_only_after_deliver_returned(
    fake_telegram: FakeTelegram,
) -> None:
    fake = fake_telegram
    update = fake.push_message("hello")
    uid = update["update_id"]
    offsets_during_delivery: list[Any] = []
    delivered: list[InboundMessage] = []

    async def deliver(event: Inbound) -> None:
        offsets_during_delivery.extend(c.params.get("offset") for c in fake.calls_of("getUpdates"))
        assert isinstance(event, InboundMessage)
        delivered.append(event)

    async with running(adapter_for(fake), deliver):
        await fake.wait_for("getUpdates", lambda c: c.params.get("offset") == uid + 1)
    assert [e.text for e in delivered] == ["hello"]
    assert all(o is None or o <= uid for o in offsets_during_delivery)
    assert fake.updates == []  # confirmed


async def test_an_update_whose_delivery_failed_comes_again(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    uid = fake.push_message("first")["update_id"]
    fake.push_message("second")
    seen: list[str] = []

    async def deliver(event: Inbound) -> None:
        assert isinstance(event, InboundMessage)
        seen.append(event.text)
        if seen.count("first") == 1:
            raise RuntimeError("store unavailable")

    adapter = adapter_for(fake)
    async with running(adapter, deliver):
        await fake.wait_for("getUpdates", lambda c: c.params.get("offset") == uid + 2)
        assert "delivering update" in (adapter.health().last_error or "")
    assert seen == ["first", "first", "second"]
    # The failed delivery left the offset where it was: the second poll asked again.
    offsets = [c.params.get("offset") for c in fake.calls_of("getUpdates")]
    assert offsets[:3] == [None, None, uid + 2]


async def test_close_acknowledges_what_was_delivered(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    async with running(adapter_for(fake, poll_timeout=30)) as events:
        uid = fake.push_message("bye")["update_id"]
        await next_event(events)
    assert fake.confirmed_offset == uid + 1
    assert fake.updates == []


async def test_messages_sent_while_down_are_delivered_on_start(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    fake.push_message("while you were out", message_id=41)
    fake.push_message("and this", message_id=42)
    async with running(adapter_for(fake)) as events:
        first, second = await next_event(events), await next_event(events)
    assert isinstance(first, InboundMessage) and isinstance(second, InboundMessage)
    assert [(first.message_id, first.text), (second.message_id, second.text)] == [
        ("41", "while you were out"),
        ("42", "and this"),
    ]


async def test_a_private_message_as_the_gateway_sees_it(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    fake.push_message("hi there", chat_id=1001, user_id=1001, username="ann")
    async with running(adapter_for(fake, clock=lambda: 1234.5)) as events:
        event = await next_event(events)
    assert event == InboundMessage(
        chat=PRIVATE,
        message_id=event.message_id,
        user_id="1001",
        user_name="ann",
        text="hi there",
        is_group=False,
        addressed=True,
        attachments=(),
        received_at=1234.5,
    )


async def test_in_a_group_only_mentions_replies_and_commands_address_the_bot(
    fake_telegram: FakeTelegram,
) -> None:
    fake = fake_telegram
    group = {"chat_id": -100, "chat_type": "group", "user_id": 7, "username": "bob"}
    async with running(adapter_for(fake)) as events:
        sent = await adapter_for(fake).send(ChatRef("telegram", "-100"), "I am the bot")
        fake.push_message("just chatting", **group)
        fake.push_message(f"@{BOT_USERNAME} what time is it?", **group)
        fake.push_message("and you?", reply_to=int(sent), **group)
        fake.push_message(f"/help@{BOT_USERNAME}", **group)
        fake.push_message("/help@other_bot", **group)
        got = [await next_event(events) for _ in range(5)]
    assert all(isinstance(e, InboundMessage) and e.is_group for e in got)
    assert [(e.text, e.addressed) for e in got if isinstance(e, InboundMessage)] == [
        ("just chatting", False),
        ("what time is it?", True),
        ("and you?", True),
        ("/help", True),
        ("/help@other_bot", False),
    ]


async def test_a_forum_topic_is_its_own_thread(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    fake.push_message(f"@{BOT_USERNAME} hi", chat_id=-1005, chat_type="supergroup", thread_id=7)
    adapter = adapter_for(fake)
    async with running(adapter) as events:
        event = await next_event(events)
        assert str(event.chat) == "telegram:-1005:7"
        await adapter.send(event.chat, "in the topic")
    call = (await fake.wait_for("sendMessage"))[0]
    assert call.params["chat_id"] == -1005 and call.params["message_thread_id"] == 7


async def test_a_document_is_fetched_through_get_file(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    document = fake.add_file(b"line one\nline two\n", file_name="notes.txt")
    fake.push_message(caption="read this", document=document)
    async with running(adapter_for(fake)) as events:
        event = await next_event(events)
        assert isinstance(event, InboundMessage)
        assert event.text == "read this"
        (attachment,) = event.attachments
        assert (attachment.kind, attachment.name, attachment.mime_type, attachment.size) == (
            "document",
            "notes.txt",
            "text/plain",
            18,
        )
        assert attachment.fetch is not None
        assert await attachment.fetch() == b"line one\nline two\n"
    assert [c.params["file_id"] for c in fake.calls_of("getFile")] == [document["file_id"]]
    assert len(fake.calls_of("file")) == 1


async def test_voice_and_photo_arrive_as_their_kinds(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    fake.push_message(voice={"file_id": "v1", "file_unique_id": "uv1", "duration": 3})
    small = {"file_id": "p1", "file_unique_id": "up1", "width": 90, "height": 90}
    big = {"file_id": "p2", "file_unique_id": "up2", "width": 800, "height": 600}
    fake.push_message(photo=[small, big])
    async with running(adapter_for(fake)) as events:
        voice, photo = await next_event(events), await next_event(events)
    assert isinstance(voice, InboundMessage) and isinstance(photo, InboundMessage)
    assert [(a.kind, a.name) for a in voice.attachments] == [("voice", "voice.ogg")]
    assert [(a.kind, a.name) for a in photo.attachments] == [("image", "photo_up2.jpg")]


async def test_send_edit_typing_and_buttons_on_the_wire(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    adapter = adapter_for(fake)
    long_data = "approve:" + "x" * 100
    buttons = [[Button("Once", "approve:once"), Button("Always", long_data)], [Button("Deny", "d")]]
    message_id = await adapter.send(PRIVATE, "<b>Run</b> <code>ls</code>?", buttons=buttons)
    await adapter.edit(PRIVATE, message_id, "<b>Running</b>")
    await adapter.edit(PRIVATE, message_id, "<b>Running</b>")  # not modified: fine
    await adapter.typing(PRIVATE)
    await adapter.close()

    (send,) = fake.calls_of("sendMessage")
    assert send.params["chat_id"] == 1001
    assert send.params["text"] == "<b>Run</b> <code>ls</code>?"
    assert send.params["parse_mode"] == "HTML"
    keyboard = send.params["reply_markup"]["inline_keyboard"]
    assert [[b["text"] for b in row] for row in keyboard] == [["Once", "Always"], ["Deny"]]
    datas = [b["callback_data"] for row in keyboard for b in row]
    assert datas[0] == "approve:once" and datas[2] == "d"
    assert len(datas[1].encode()) <= 64
    edits = fake.calls_of("editMessageText")
    assert [(e.params["message_id"], e.params["text"]) for e in edits] == [
        (int(message_id), "<b>Running</b>")
    ] * 2
    assert "reply_markup" not in edits[0].params  # the buttons go with the edit
    (typing,) = fake.calls_of("sendChatAction")
    assert typing.params == {"chat_id": 1001, "action": "typing"}


async def test_a_button_press_carries_its_data_back(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    adapter = adapter_for(fake)
    long_data = "approve:" + "y" * 100
    message_id = await adapter.send(PRIVATE, "Allow?", buttons=[[Button("Yes", long_data)]])
    short = fake.calls_of("sendMessage")[0].params["reply_markup"]["inline_keyboard"][0][0]
    fake.push_callback(short["callback_data"], message_id=int(message_id), user_id=55)
    async with running(adapter) as events:
        press = await next_event(events)
        assert isinstance(press, ButtonPress)
        assert (press.chat, press.message_id, press.user_id, press.data) == (
            PRIVATE,
            message_id,
            "55",
            long_data,
        )
        await adapter.answer_press(press, "not yours")
    (answer,) = fake.calls_of("answerCallbackQuery")
    assert answer.params == {"callback_query_id": press.press_id, "text": "not yours"}


async def test_markup_telegram_refuses_is_resent_as_plain_text(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    adapter = adapter_for(fake)
    await adapter.send(PRIVATE, "<b>bold but never closed &amp; more")
    await adapter.close()
    first, second = fake.calls_of("sendMessage")
    assert first.params["parse_mode"] == "HTML"
    assert "parse_mode" not in second.params
    assert second.params["text"] == "bold but never closed & more"


async def test_formatted_parts_are_accepted_by_telegram(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    adapter = adapter_for(fake)
    answer = "# Result\n\n" + "Some **bold** text, a_b_c & <tags>. " * 300
    answer += "\n\n```python\nprint('<hi>')\n```"
    parts = adapter.format(answer)
    assert len(parts) > 1
    for part in parts:
        await adapter.send(PRIVATE, part)
    await adapter.close()
    calls = fake.calls_of("sendMessage")
    assert len(calls) == len(parts)  # none needed the plain-text fallback
    assert fake.messages[(1001, len(parts))]["text"] == "print('<hi>')"


async def test_flood_control_is_honoured(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    adapter = adapter_for(fake)
    fake.fail("sendMessage", 429, retry_after=1)
    started = time.monotonic()
    await adapter.send(PRIVATE, "after the wait")
    first, second = fake.calls_of("sendMessage")
    assert second.at - first.at >= 0.95
    assert time.monotonic() - started >= 0.95
    await adapter.close()


async def test_flood_control_on_the_poll_waits_then_continues(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    fake.fail("getUpdates", 429, retry_after=1)
    fake.push_message("eventually")
    async with running(adapter_for(fake)) as events:
        event = await next_event(events)
    assert isinstance(event, InboundMessage) and event.text == "eventually"
    first, second = fake.calls_of("getUpdates")[:2]
    assert second.at - first.at >= 0.95


async def test_server_errors_and_dropped_connections_reconnect(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    fake.fail("getUpdates", 502, "Bad Gateway", times=2)
    fake.drop("getUpdates")
    fake.push_message("still here")
    adapter = adapter_for(fake)
    async with running(adapter) as events:
        event = await next_event(events)
        assert isinstance(event, InboundMessage) and event.text == "still here"
        assert adapter.health().state == "connected"
    assert len(fake.calls_of("getMe")) >= 2  # each failure rebuilt the connection


async def test_reconnects_after_the_server_restarts(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    adapter = adapter_for(fake)
    async with running(adapter) as events:
        await eventually(lambda: adapter.health().state == "connected")
        await fake.stop()
        await eventually(lambda: adapter.health().state == "reconnecting")
        assert adapter.health().last_error
        fake.push_message("back again")
        await fake.start()
        event = await next_event(events)
        assert isinstance(event, InboundMessage) and event.text == "back again"
        await eventually(lambda: adapter.health().state == "connected")


async def test_a_dead_long_poll_is_abandoned_and_rebuilt(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    adapter = adapter_for(fake, poll_timeout=1.0, poll_grace=1.0)
    async with running(adapter) as events:
        await eventually(lambda: adapter.health().last_received_at is not None)
        fake.hang_polls()
        await eventually(lambda: adapter.health().state == "reconnecting")
        stale = adapter.health().last_received_at
        assert "no answer from Telegram" in (adapter.health().last_error or "")
        fake.release_polls()
        fake.push_message("alive")
        event = await next_event(events)
        assert isinstance(event, InboundMessage) and event.text == "alive"
        assert (adapter.health().last_received_at or 0) > (stale or 0)


async def test_last_received_moves_on_empty_polls(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    ticks = iter(range(1, 1000))
    adapter = adapter_for(fake, poll_timeout=1.0, clock=lambda: float(next(ticks)))
    async with running(adapter):
        await fake.wait_for("getUpdates", count=3)
        await eventually(lambda: (adapter.health().last_received_at or 0) >= 3)
    assert fake.updates == []


async def test_a_rejected_token_is_down_with_a_one_line_error(fake_telegram: FakeTelegram) -> None:
    adapter = adapter_for(fake_telegram, token="999:WRONG-secret")
    async with running(adapter):
        await eventually(lambda: adapter.health().state == "down")
        error = adapter.health().last_error or ""
        assert "rejected the bot token" in error
        assert "WRONG-secret" not in error and "\n" not in error
    assert adapter.health().state == "stopped"


def test_build_telegram_takes_the_token_from_the_named_variable() -> None:
    section = {"token_env": "MY_TG_TOKEN", "base_url": "http://127.0.0.1:9/bot"}
    adapter = build_telegram(section, {"MY_TG_TOKEN": DEFAULT_TOKEN}, time.time)
    assert adapter.platform == "telegram" and adapter.limits.max_text == 4096
    with pytest.raises(ValueError, match="MY_TG_TOKEN"):
        build_telegram(section, {}, time.time)


def test_format_gives_html_parts_within_the_limit(fake_telegram: FakeTelegram) -> None:
    adapter = adapter_for(fake_telegram)
    assert adapter.format("**hi** `x<y`") == ["<b>hi</b> <code>x&lt;y</code>"]
    assert all(len(p) <= 4096 for p in adapter.format("word " * 5000))


async def test_a_cancelled_run_can_be_started_again(fake_telegram: FakeTelegram) -> None:
    """What a watchdog does to a stuck adapter: cancel `run` and start it again."""
    fake = fake_telegram
    adapter = adapter_for(fake)
    events: asyncio.Queue[Inbound] = asyncio.Queue()

    async def deliver(event: Inbound) -> None:
        await events.put(event)

    task = asyncio.create_task(adapter.run(deliver))
    fake.push_message("one")
    assert isinstance(await next_event(events), InboundMessage)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    fake.push_message("two")
    async with running(adapter, deliver):
        event = await next_event(events)
    assert isinstance(event, InboundMessage) and event.text == "two"  # "one" not repeated


async def test_a_closed_adapter_does_not_run(fake_telegram: FakeTelegram) -> None:
    adapter = adapter_for(fake_telegram)
    await adapter.close()

    async def deliver(event: Inbound) -> None:
        raise AssertionError(event)

    await asyncio.wait_for(adapter.run(deliver), 5)
    assert adapter.health().state == "stopped"
    assert fake_telegram.calls == []


async def test_service_messages_are_skipped_but_acknowledged(fake_telegram: FakeTelegram) -> None:
    fake = fake_telegram
    fake.push_update(
        {
            "message": {
                "message_id": 5,
                "date": 0,
                "chat": {"id": -100, "type": "group", "title": "g"},
                "from": {"id": 7, "is_bot": False, "first_name": "Bob"},
                "new_chat_members": [{"id": 8, "is_bot": False, "first_name": "Cy"}],
            }
        }
    )
    last = fake.push_message("real one")["update_id"]
    async with running(adapter_for(fake)) as events:
        event = await next_event(events)
        assert isinstance(event, InboundMessage) and event.text == "real one"
        await fake.wait_for("getUpdates", lambda c: c.params.get("offset") == last + 1)
    assert events.empty()


async def test_a_short_poll_timeout_still_long_polls(fake_telegram: FakeTelegram) -> None:
    async with running(adapter_for(fake_telegram, poll_timeout=0.2)):
        (call,) = await fake_telegram.wait_for("getUpdates")
    assert call.params["timeout"] == 1
    assert call.params["allowed_updates"] == ["message", "callback_query"]


async def test_a_send_with_a_rejected_token_does_not_quote_it(fake_telegram: FakeTelegram) -> None:
    from telegram.error import InvalidToken

    adapter = adapter_for(fake_telegram, token="999:WRONG-secret")
    with pytest.raises(InvalidToken) as caught:
        await adapter.send(PRIVATE, "hello")
    assert "WRONG-secret" not in str(caught.value)
    await adapter.close()
