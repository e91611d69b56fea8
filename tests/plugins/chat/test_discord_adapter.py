"""The Discord adapter against a fake Discord (REST + gateway) on loopback: the real
discord.py client, the real wire formats."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace

import discord
import pytest
from discord.gateway import DiscordWebSocket
from discord.http import Route

from seam.contracts.chat import Button, ButtonPress, ChatAdapter, ChatRef, Inbound, InboundMessage
from seam.plugins.chat.discord import build_discord
from seam.plugins.chat.discord.adapter import DiscordAdapter
from tests.support.fake_discord import APP_ID, BOT_ID, FakeDiscord

DM = "1300000000000000001"
GUILD = "1400000000000000001"
CHANNEL = "1300000000000000002"


class Inbox:
    def __init__(self) -> None:
        self.events: list[Inbound] = []
        self.attempts = 0
        self.fail = 0
        self._changed = asyncio.Condition()

    async def deliver(self, event: Inbound) -> None:
        async with self._changed:
            self.attempts += 1
            self._changed.notify_all()
            if self.fail:
                self.fail -= 1
                raise RuntimeError("the store is down")
            self.events.append(event)

    async def until(self, predicate: Callable[[], bool]) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), 10)

    def texts(self) -> list[str]:
        return [e.text for e in self.events if isinstance(e, InboundMessage)]


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    base, gateway = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    server = await FakeDiscord(heartbeat_interval=50).start()
    yield server
    await server.stop()
    Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = base, gateway


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
async def bot(fake: FakeDiscord, inbox: Inbox) -> AsyncIterator[DiscordAdapter]:
    adapter = DiscordAdapter(
        token="discord-test-token",
        base_url=fake.api_base,
        gateway_url=fake.gateway_url,
        check_interval=0.05,
        backoff=(0.05, 0.2),
        guild_ready_timeout=0.0,
        identify_delay=0.0,
    )
    task = asyncio.create_task(adapter.run(inbox.deliver))
    await fake.until(lambda: fake.identified >= 1 and adapter.health().state == "connected")
    yield adapter
    await adapter.close()
    await asyncio.wait_for(task, 10)


def test_build_discord_reads_the_token_it_is_handed(fake: FakeDiscord) -> None:
    section = {
        "token_env": "MY_DISCORD",
        "base_url": fake.api_base,
        "gateway_url": fake.gateway_url,
    }
    adapter = build_discord(section, {"MY_DISCORD": "t"}, lambda: 0.0)
    assert isinstance(adapter, ChatAdapter)
    assert adapter.platform == "discord" and adapter.limits.max_text == 2000
    assert fake.api_base == Route.BASE
    with pytest.raises(ValueError, match="MY_DISCORD"):
        build_discord(section, {}, lambda: 0.0)
    as_object = SimpleNamespace(**section, allow=[])
    assert build_discord(as_object, {"MY_DISCORD": "t"}, lambda: 0.0).platform == "discord"


async def test_a_dm_and_a_mention_are_delivered_and_a_group_chat_is_not_addressed(
    fake: FakeDiscord, inbox: Inbox, bot: DiscordAdapter
) -> None:
    identify = fake.identifies[0]
    assert identify["token"] == "discord-test-token"
    assert identify["intents"] & discord.Intents(message_content=True).value
    assert fake.calls[0].headers["Authorization"] == "Bot discord-test-token"

    dm = await fake.push_message("hello there", channel_id=DM)
    await fake.push_message("people chatting", channel_id=CHANNEL, guild_id=GUILD)
    bot_user = fake.user(BOT_ID, "seam", bot=True)
    await fake.push_message(
        f"<@{BOT_ID}> what is up?", channel_id=CHANNEL, guild_id=GUILD, mentions=[bot_user]
    )
    await fake.push_message("my own echo", channel_id=CHANNEL, guild_id=GUILD, author=bot_user)
    await inbox.until(lambda: len(inbox.events) == 3)

    first, chatter, mention = inbox.events
    assert isinstance(first, InboundMessage)
    assert first.chat == ChatRef("discord", DM) and first.message_id == dm["id"]
    assert first.addressed and not first.is_group and first.user_id == dm["author"]["id"]
    assert first.user_name == "Alice"
    assert isinstance(chatter, InboundMessage) and chatter.is_group and not chatter.addressed
    assert (
        isinstance(mention, InboundMessage) and mention.addressed and mention.text == "what is up?"
    )


async def test_a_reply_to_the_bot_is_addressed(
    fake: FakeDiscord, inbox: Inbox, bot: DiscordAdapter
) -> None:
    ours = await bot.send(ChatRef("discord", CHANNEL), "I am here.")
    mine = next(m for m in fake.history[CHANNEL] if m["id"] == ours)
    await fake.push_message("thanks", channel_id=CHANNEL, guild_id=GUILD, reply_to=mine)
    await inbox.until(lambda: len(inbox.events) == 1)
    reply = inbox.events[0]
    assert isinstance(reply, InboundMessage) and reply.addressed and reply.is_group


async def test_send_edit_typing_and_buttons_speak_discords_rest(
    fake: FakeDiscord, inbox: Inbox, bot: DiscordAdapter
) -> None:
    chat = ChatRef("discord", CHANNEL)
    long_data = "approve:" + "x" * 150
    message_id = await bot.send(
        chat, "Run `ls`?", buttons=[[Button("Yes", "approve:1"), Button("Always", long_data)]]
    )
    post = fake.posted(CHANNEL)[-1]
    assert post.headers["Authorization"] == "Bot discord-test-token"
    assert post.body["content"] == "Run `ls`?"
    assert post.body["allowed_mentions"] == {"parse": []}
    (row,) = post.body["components"]
    assert row["type"] == 1
    assert [(b["type"], b["label"]) for b in row["components"]] == [(2, "Yes"), (2, "Always")]
    yes, always = (b["custom_id"] for b in row["components"])
    assert yes == "approve:1" and len(always) <= 100

    message = next(m for m in fake.history[CHANNEL] if m["id"] == message_id)
    interaction = await fake.push_button(custom_id=always, message=message, guild_id=GUILD)
    await inbox.until(lambda: len(inbox.events) == 1)
    press = inbox.events[0]
    assert press == ButtonPress(
        chat=chat,
        message_id=message_id,
        user_id=interaction["member"]["user"]["id"],
        data=long_data,
        press_id=interaction["id"],
    )
    await bot.answer_press(press, "Only the session's owner can answer this.")
    (callback,) = fake.calls_to(
        "POST", f"/interactions/{interaction['id']}/{interaction['token']}/callback"
    )
    assert callback.body["type"] == 4
    assert callback.body["data"]["content"] == "Only the session's owner can answer this."
    assert callback.body["data"]["flags"] == 64  # ephemeral: only the presser sees it

    await bot.edit(chat, message_id, "Approved.")
    (patch,) = fake.calls_to("PATCH", f"/channels/{CHANNEL}/messages/{message_id}")
    assert patch.body["content"] == "Approved." and patch.body["components"] == []

    await bot.typing(ChatRef("discord", CHANNEL, "1500000000000000001"))
    assert fake.calls_to("POST", "/channels/1500000000000000001/typing")


async def test_messages_posted_while_down_are_caught_up_from_the_history(
    fake: FakeDiscord, inbox: Inbox, bot: DiscordAdapter
) -> None:
    await fake.push_message("before", channel_id=DM)
    await inbox.until(lambda: inbox.texts() == ["before"])
    await fake.go_down()
    await fake.until(lambda: fake.connections >= 2)  # trying again, held without a HELLO
    await fake.push_message("while down 1", channel_id=DM)
    await fake.push_message("while down 2", channel_id=DM)
    await fake.come_up()
    await inbox.until(lambda: len(inbox.events) == 3)
    assert inbox.texts() == ["before", "while down 1", "while down 2"]
    assert bot.health().state == "connected"
    (read,) = fake.calls_to("GET", f"/channels/{DM}/messages")
    assert int(read.query["after"]) == int(inbox.events[0].message_id)  # type: ignore[union-attr]


async def test_a_resumed_session_catches_up_too(
    fake: FakeDiscord, inbox: Inbox, bot: DiscordAdapter
) -> None:
    fake.resumable = True
    await fake.push_message("one", channel_id=DM)
    await inbox.until(lambda: len(inbox.events) == 1)
    await fake.go_down()
    await fake.push_message("two", channel_id=DM)
    await fake.come_up()
    await inbox.until(lambda: len(inbox.events) == 2)
    assert fake.resumes >= 1 and inbox.texts() == ["one", "two"]


async def test_a_failed_deliver_is_read_again_from_the_history(
    fake: FakeDiscord, inbox: Inbox, bot: DiscordAdapter
) -> None:
    inbox.fail = 1
    await fake.push_message("first", channel_id=DM)
    await inbox.until(lambda: inbox.attempts == 1)
    await inbox.until(lambda: inbox.texts() == ["first"])
    await fake.push_message("second", channel_id=DM)
    await inbox.until(lambda: inbox.texts() == ["first", "second"])


async def test_a_thread_is_the_thread_of_its_parent_channels_chat(
    fake: FakeDiscord, inbox: Inbox
) -> None:
    thread_id = "1500000000000000001"
    fake.add_guild(GUILD, channels={CHANNEL: "general"}, threads={thread_id: CHANNEL})
    adapter = DiscordAdapter(
        token="discord-test-token",
        base_url=fake.api_base,
        gateway_url=fake.gateway_url,
        guild_ready_timeout=0.0,
    )
    task = asyncio.create_task(adapter.run(inbox.deliver))
    try:
        await fake.until(lambda: fake.identified >= 1 and adapter.health().state == "connected")
        await fake.push_message("in the thread", channel_id=thread_id, guild_id=GUILD)
        await inbox.until(lambda: len(inbox.events) == 1)
        (message,) = inbox.events
        assert isinstance(message, InboundMessage)
        assert message.chat == ChatRef("discord", CHANNEL, thread_id) and message.is_group
        assert str(message.chat) == f"discord:{CHANNEL}:{thread_id}"
        await adapter.send(message.chat, "answered in the thread")
        assert fake.posted(thread_id)[-1].body["content"] == "answered in the thread"
    finally:
        await adapter.close()
        await asyncio.wait_for(task, 10)


async def test_a_press_left_unanswered_is_deferred_and_a_later_answer_follows_up(
    fake: FakeDiscord, inbox: Inbox
) -> None:
    adapter = DiscordAdapter(
        token="discord-test-token",
        base_url=fake.api_base,
        gateway_url=fake.gateway_url,
        guild_ready_timeout=0.0,
        defer_after=0.01,
    )
    task = asyncio.create_task(adapter.run(inbox.deliver))
    try:
        await fake.until(lambda: fake.identified >= 1 and adapter.health().state == "connected")
        message_id = await adapter.send(
            ChatRef("discord", DM), "Allow?", buttons=[[Button("Yes", "y")]]
        )
        message = next(m for m in fake.history[DM] if m["id"] == message_id)
        interaction = await fake.push_button(custom_id="y", message=message)
        callback = f"/interactions/{interaction['id']}/{interaction['token']}/callback"
        await fake.until(lambda: bool(fake.calls_to("POST", callback)))
        assert fake.calls_to("POST", callback)[0].body == {"type": 6}
        (press,) = inbox.events
        assert isinstance(press, ButtonPress) and press.chat == ChatRef("discord", DM)
        await adapter.answer_press(press, "Too late, but here.")
        (follow_up,) = fake.calls_to("POST", f"/webhooks/{APP_ID}/{interaction['token']}")
        assert follow_up.body["content"] == "Too late, but here." and follow_up.body["flags"] == 64
        assert len(fake.calls_to("POST", callback)) == 1
    finally:
        await adapter.close()
        await asyncio.wait_for(task, 10)


async def test_an_attachment_is_fetched_through_discords_cdn_url(
    fake: FakeDiscord, inbox: Inbox, bot: DiscordAdapter
) -> None:
    url = fake.add_file("notes.txt", b"remember the milk")
    attachment = {
        "id": fake.snowflake(),
        "filename": "notes.txt",
        "size": 17,
        "url": url,
        "proxy_url": url,
        "content_type": "text/plain; charset=utf-8",
    }
    await fake.push_message("see file", channel_id=DM, attachments=[attachment])
    await inbox.until(lambda: len(inbox.events) == 1)
    (message,) = inbox.events
    assert isinstance(message, InboundMessage)
    (got,) = message.attachments
    assert (got.kind, got.name, got.size) == ("document", "notes.txt", 17)
    assert got.fetch is not None and await got.fetch() == b"remember the milk"


async def test_a_restarted_adapter_told_where_it_stopped_catches_up(
    fake: FakeDiscord, inbox: Inbox
) -> None:
    answered = await fake.push_message("answered before the restart", channel_id=DM)
    await fake.push_message("sent while the gateway was down", channel_id=DM)
    adapter = DiscordAdapter(
        token="discord-test-token",
        base_url=fake.api_base,
        gateway_url=fake.gateway_url,
        guild_ready_timeout=0.0,
    )
    await fake.push_message("people chatting", channel_id=CHANNEL, guild_id=GUILD)
    chatter = await fake.push_message("more chatter", channel_id=CHANNEL, guild_id=GUILD)
    adapter.catch_up_from(ChatRef("discord", DM), answered["id"])  # its kind is asked
    adapter.catch_up_from(ChatRef("discord", CHANNEL), str(int(chatter["id"]) - 1), is_dm=False)
    task = asyncio.create_task(adapter.run(inbox.deliver))
    try:
        await inbox.until(lambda: len(inbox.events) == 2)
        missed, group = sorted(inbox.events, key=lambda e: e.chat.chat_id)  # type: ignore[union-attr]
        assert isinstance(missed, InboundMessage) and isinstance(group, InboundMessage)
        assert missed.text == "sent while the gateway was down"
        assert missed.addressed and not missed.is_group
        assert group.text == "more chatter" and group.is_group and not group.addressed
        assert fake.calls_to("GET", f"/channels/{DM}")
        assert not fake.calls_to("GET", f"/channels/{CHANNEL}")
    finally:
        await adapter.close()
        await asyncio.wait_for(task, 10)
