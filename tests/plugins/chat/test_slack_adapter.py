"""The Slack adapter against a fake Slack (Web API + Socket Mode websocket) on loopback:
the real slack-bolt/slack-sdk clients, the real wire formats."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace

import pytest

from seam.contracts.chat import Button, ButtonPress, ChatAdapter, ChatRef, Inbound, InboundMessage
from seam.plugins.chat.slack import build_slack
from seam.plugins.chat.slack.adapter import SlackAdapter
from tests.support.fake_slack import BOT_USER_ID, FakeSlack


class Inbox:
    """What the adapter delivered; `hold` keeps `deliver` from returning, `fail` makes it
    raise (the store was down)."""

    def __init__(self) -> None:
        self.events: list[Inbound] = []
        self.hold: asyncio.Event | None = None
        self.fail = 0
        self.attempts = 0
        self._changed = asyncio.Condition()

    async def deliver(self, event: Inbound) -> None:
        async with self._changed:
            self.attempts += 1
            self._changed.notify_all()
            if self.fail:
                self.fail -= 1
                raise RuntimeError("the store is down")
            self.events.append(event)
        if self.hold is not None and isinstance(event, InboundMessage) and event.text == "hold":
            await self.hold.wait()

    async def until(self, predicate: Callable[[], bool]) -> None:
        async with self._changed:
            await asyncio.wait_for(self._changed.wait_for(predicate), 10)

    def messages(self) -> list[InboundMessage]:
        return [e for e in self.events if isinstance(e, InboundMessage)]


@pytest.fixture
async def fake() -> AsyncIterator[FakeSlack]:
    server = await FakeSlack().start()
    yield server
    await server.stop()


@pytest.fixture
def inbox() -> Inbox:
    return Inbox()


@pytest.fixture
async def slack(fake: FakeSlack, inbox: Inbox) -> AsyncIterator[SlackAdapter]:
    adapter = SlackAdapter(
        bot_token="xoxb-test",
        app_token="xapp-test",
        base_url=fake.base_url,
        ping_interval=0.5,
        check_interval=0.05,
        backoff=(0.05, 0.2),
    )
    task = asyncio.create_task(adapter.run(inbox.deliver))
    await fake.until(lambda: fake.connections >= 1)
    yield adapter
    await adapter.close()
    await asyncio.wait_for(task, 10)


async def until(predicate: Callable[[], bool], fake: FakeSlack) -> None:
    await fake.until(predicate)


def test_build_slack_reads_the_tokens_it_is_handed() -> None:
    section = {"bot_token_env": "MY_BOT", "app_token_env": "MY_APP", "base_url": "http://x/api/"}
    adapter = build_slack(section, {"MY_BOT": "xoxb-1", "MY_APP": "xapp-1"}, lambda: 0.0)
    assert isinstance(adapter, ChatAdapter)
    assert adapter.platform == "slack" and adapter.limits.max_text == 4000
    with pytest.raises(ValueError, match="MY_APP"):
        build_slack(section, {"MY_BOT": "xoxb-1"}, lambda: 0.0)
    # The settings object wiring has (attributes, not keys) does as well.
    as_object = SimpleNamespace(**section, allow=[])
    assert build_slack(as_object, {"MY_BOT": "b", "MY_APP": "a"}, lambda: 0.0).platform == "slack"


async def test_a_message_is_acked_only_after_deliver_returned(
    fake: FakeSlack, inbox: Inbox, slack: SlackAdapter
) -> None:
    inbox.hold = asyncio.Event()
    held = await fake.push_message("hold", channel_type="im", channel="D1")
    await inbox.until(lambda: len(inbox.events) == 1)
    # A second message on the same socket is delivered and acked while the first is held:
    # acks travel in order, so the first was not acked before its deliver returned.
    quick = await fake.push_message("quick", channel_type="im", channel="D1")
    await fake.until(lambda: quick.ack is not None)
    assert held.ack is None
    inbox.hold.set()
    await fake.until(lambda: held.ack is not None)
    assert held.ack == {"envelope_id": held.envelope_id}
    first = inbox.messages()[0]
    assert first.chat == ChatRef("slack", "D1") and first.text == "hold"
    assert first.addressed and not first.is_group and first.user_id == "U0001"
    assert first.user_name == "Alice"  # users.info, asked once per person
    assert len(fake.calls_of("users.info")) == 1
    assert first.message_id == held.payload["event"]["ts"]


async def test_a_failed_deliver_is_not_acked_and_comes_again_after_a_reconnect(
    fake: FakeSlack, inbox: Inbox, slack: SlackAdapter
) -> None:
    inbox.fail = 1
    envelope = await fake.push_message("hello", channel_type="im", channel="D1")
    await inbox.until(lambda: inbox.attempts == 1)
    later = await fake.push_message("later", channel_type="im", channel="D1")
    await fake.until(lambda: later.ack is not None)
    assert envelope.ack is None  # acks travel in order: the failed one was never acked
    await fake.drop()  # Slack sends unacked envelopes again on the next connection
    await fake.until(lambda: envelope.ack is not None)
    assert envelope.sent == 2
    assert [m.text for m in inbox.messages()] == ["later", "hello"]
    assert fake.connections >= 2


async def test_a_dropped_socket_reconnects_and_messages_keep_coming(
    fake: FakeSlack, inbox: Inbox, slack: SlackAdapter
) -> None:
    await fake.until(lambda: slack.health().state == "connected")
    before = slack.health().last_received_at
    await fake.drop()
    await fake.until(lambda: fake.connections >= 2)
    envelope = await fake.push_message("after", channel_type="im", channel="D1")
    await fake.until(lambda: envelope.ack is not None)
    assert [m.text for m in inbox.messages()] == ["after"]
    health = slack.health()
    assert health.state == "connected"
    assert health.last_received_at is not None and before is not None
    assert health.last_received_at >= before
    # Each connection asked for a fresh URL, as Slack's are single-use.
    assert len(fake.calls_of("apps.connections.open")) >= 2
    assert all(
        c.headers["Authorization"] == "Bearer xapp-test"
        for c in fake.calls_of("apps.connections.open")
    )


async def test_groups_answer_a_mention_a_dm_or_a_thread_the_bot_is_in(
    fake: FakeSlack, inbox: Inbox, slack: SlackAdapter
) -> None:
    plain = await fake.push_message("just chatting")
    mention = await fake.push_message(f"<@{BOT_USER_ID}> what time is it?")
    await fake.until(lambda: plain.ack is not None and mention.ack is not None)
    # The same post as an app_mention event is acked and not delivered twice.
    again = await fake.push_event({**mention.payload["event"], "type": "app_mention"})
    await fake.until(lambda: again.ack is not None)
    root = mention.payload["event"]["ts"]
    await slack.send(ChatRef("slack", "C0001", root), "It is noon.")
    reply = await fake.push_message("and tomorrow?", thread_ts=root)
    await fake.until(lambda: reply.ack is not None)
    edited = await fake.push_message("x", subtype="message_changed")
    await fake.until(lambda: edited.ack is not None)

    got = {m.text: m for m in inbox.messages()}
    assert list(got) == ["just chatting", "what time is it?", "and tomorrow?"]
    assert not got["just chatting"].addressed and got["just chatting"].is_group
    assert got["what time is it?"].addressed and got["what time is it?"].chat.thread_id is None
    follow = got["and tomorrow?"]
    assert follow.addressed and follow.chat == ChatRef("slack", "C0001", root)
    assert str(follow.chat) == f"slack:C0001:{root}"


async def test_send_edit_and_buttons_speak_chat_post_message_and_block_kit(
    fake: FakeSlack, inbox: Inbox, slack: SlackAdapter
) -> None:
    chat = ChatRef("slack", "C0001")
    ts = await slack.send(
        chat, "Run *ls*?", buttons=[[Button("Yes", "approve:1"), Button("No", "deny:1")]]
    )
    post = fake.calls_of("chat.postMessage")[-1]
    assert post.headers["Authorization"] == "Bearer xoxb-test"
    assert post.headers["Content-Type"].startswith("application/json")
    assert post.params["channel"] == "C0001" and post.params["text"] == "Run *ls*?"
    section, actions = post.params["blocks"]
    assert section == {"type": "section", "text": {"type": "mrkdwn", "text": "Run *ls*?"}}
    assert [(e["text"]["text"], e["value"]) for e in actions["elements"]] == [
        ("Yes", "approve:1"),
        ("No", "deny:1"),
    ]
    assert len({e["action_id"] for e in actions["elements"]}) == 2

    press = await fake.push_button(value="approve:1", message_ts=ts, user="U0002")
    await fake.until(lambda: press.ack is not None)
    pressed = [e for e in inbox.events if isinstance(e, ButtonPress)]
    assert pressed == [
        ButtonPress(
            chat=chat,
            message_id=ts,
            user_id="U0002",
            data="approve:1",
            press_id=press.payload["trigger_id"],
        )
    ]
    await slack.answer_press(pressed[0], "Only the session's owner can answer this.")
    ephemeral = fake.calls_of("chat.postEphemeral")[-1]
    assert ephemeral.params == {
        "channel": "C0001",
        "user": "U0002",
        "text": "Only the session's owner can answer this.",
    }

    await slack.edit(chat, ts, "Approved.")
    update = fake.calls_of("chat.update")[-1]
    assert update.params["ts"] == ts and update.params["text"] == "Approved."
    # The buttons are gone: the update carries only the text.
    assert update.params["blocks"] == [
        {"type": "section", "text": {"type": "mrkdwn", "text": "Approved."}}
    ]


async def test_typing_in_a_thread_sets_the_assistant_status_and_stops_when_refused(
    fake: FakeSlack, slack: SlackAdapter
) -> None:
    await slack.typing(ChatRef("slack", "C0001"))  # no thread: nothing to call
    assert fake.calls_of("assistant.threads.setStatus") == []
    thread = ChatRef("slack", "C0001", "1700000000.000001")
    fake.fail("assistant.threads.setStatus", "not_allowed_token_type")
    await slack.typing(thread)
    await slack.typing(thread)
    assert len(fake.calls_of("assistant.threads.setStatus")) == 1


async def test_an_invalid_app_token_is_down_with_a_reason(fake: FakeSlack, inbox: Inbox) -> None:
    fake.fail("apps.connections.open", "invalid_auth", times=100)
    adapter = SlackAdapter(
        bot_token="xoxb-test", app_token="xapp-bad", base_url=fake.base_url, backoff=(0.05, 0.1)
    )
    task = asyncio.create_task(adapter.run(inbox.deliver))
    await fake.until(lambda: len(fake.calls_of("apps.connections.open")) >= 2)
    health = adapter.health()
    assert health.state == "down" and "invalid_auth" in (health.last_error or "")
    await adapter.close()
    await asyncio.wait_for(task, 10)
    assert adapter.health().state == "stopped"


async def test_a_press_whose_deliver_failed_is_not_acked(
    fake: FakeSlack, inbox: Inbox, slack: SlackAdapter
) -> None:
    inbox.fail = 1
    press = await fake.push_button(value="approve:9", message_ts="1700000000.000009")
    await inbox.until(lambda: inbox.attempts == 1)
    later = await fake.push_message("later", channel_type="im", channel="D1")
    await fake.until(lambda: later.ack is not None)
    assert press.ack is None
    await fake.drop()
    await fake.until(lambda: press.ack is not None)
    assert [e.data for e in inbox.events if isinstance(e, ButtonPress)] == ["approve:9"]


async def test_a_shared_file_is_fetched_with_the_bot_token(
    fake: FakeSlack, inbox: Inbox, slack: SlackAdapter
) -> None:
    url = fake.add_file("notes.txt", b"remember the milk")
    files = [
        {
            "id": "F1",
            "name": "notes.txt",
            "mimetype": "text/plain",
            "size": 17,
            "url_private": url,
            "url_private_download": url,
        },
        {"id": "F2", "name": "memo.m4a", "mimetype": "audio/mp4", "size": 9, "url_private": url},
        {
            "id": "F3",
            "name": "clip.webm",
            "mimetype": "audio/webm",
            "subtype": "slack_audio",
            "size": 9,
            "url_private": url,
        },
    ]
    envelope = await fake.push_message(
        "see file", channel_type="im", channel="D1", subtype="file_share", files=files
    )
    await fake.until(lambda: envelope.ack is not None)
    (message,) = inbox.messages()
    text, audio, clip = message.attachments
    assert (text.kind, text.name, text.mime_type, text.size) == (
        "document",
        "notes.txt",
        "text/plain",
        17,
    )
    assert audio.kind == "audio" and clip.kind == "voice"
    assert text.fetch is not None and await text.fetch() == b"remember the milk"
    assert fake.file_requests[-1]["Authorization"] == "Bearer xoxb-test"


async def test_a_connection_slack_will_not_reopen_for_a_while_comes_back(
    fake: FakeSlack, inbox: Inbox, slack: SlackAdapter
) -> None:
    fake.fail("apps.connections.open", "internal_error", times=3)
    await fake.drop()
    await fake.until(lambda: fake.connections >= 2, timeout=20)
    assert len(fake.calls_of("apps.connections.open")) >= 5  # 1 + 3 refused + 1
    envelope = await fake.push_message("back", channel_type="im", channel="D1")
    await fake.until(lambda: envelope.ack is not None)
    assert [m.text for m in inbox.messages()] == ["back"]


async def test_slacks_refresh_request_moves_to_a_new_connection(
    fake: FakeSlack, inbox: Inbox, slack: SlackAdapter
) -> None:
    await fake.refresh()
    await fake.until(lambda: fake.connections >= 2)
    envelope = await fake.push_message("on the new socket", channel_type="im", channel="D1")
    await fake.until(lambda: envelope.ack is not None)
    assert [m.text for m in inbox.messages()] == ["on the new socket"]
    assert envelope.sent == 1  # delivered once, though two sockets may have been open


async def test_a_slash_command_is_the_message_it_stands_for(
    fake: FakeSlack, inbox: Inbox, slack: SlackAdapter
) -> None:
    envelope = await fake.push_command("/new")
    usage = await fake.push_command("/usage", "please", channel="C0001")
    await fake.until(lambda: envelope.ack is not None and usage.ack is not None)
    new, asked = inbox.messages()
    assert new.text == "/new" and new.chat == ChatRef("slack", "D0001")
    assert new.addressed and not new.is_group
    assert new.message_id == envelope.payload["trigger_id"]
    assert asked.text == "/usage please" and asked.is_group and asked.addressed
