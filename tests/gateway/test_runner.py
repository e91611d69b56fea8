"""The gateway's promises as a chat user sees them, over an in-memory platform that acks
only after delivery and redelivers what was not acked."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.apps.gateway.chats import message_key
from seam.apps.gateway.pairing import PairingStore
from seam.contracts.chat import Attachment, ChatRef
from seam.contracts.model import ModelChunk, ModelRequest, TextChunk
from seam.contracts.outbox import OutboxItem, OutboxQuery
from seam.core.execution import InMemoryExecutionStore
from seam.core.scripted_model import ScriptedModel, Step, call, text_step, tool_step
from seam.core.storage import InMemoryStorage
from tests.gateway.fake_chat import FakeAdapter, FakePlatform
from tests.gateway.harness import (
    WORKDIR,
    eventually,
    gateway_running,
    make_runtime,
    section,
    until,
)


class PacedModel(ScriptedModel):
    """Streams its text a piece every 20 ms, as a real model does."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        async for chunk in super().stream(request):
            if isinstance(chunk, TextChunk):
                await asyncio.sleep(0.02)
            yield chunk


def answered(platform: FakePlatform, text: str) -> int:
    return sum(1 for shown in platform.sent_texts() if shown == text)


async def test_a_message_is_answered_after_a_read_file_round_trip(tmp_path: Path) -> None:
    storage = InMemoryStorage({f"{WORKDIR}/note.txt": "the code is 7431\n"})
    model = ScriptedModel(
        [tool_step(call("read_file", path="note.txt")), text_step("It says the code is 7431.")]
    )
    store = InMemoryExecutionStore()
    runtime = make_runtime(model, store, storage=storage, builtin_tools=True)
    platform = FakePlatform()
    async with gateway_running(runtime, platform, tmp_path):
        msg = platform.say("What does note.txt say?")
        await until(
            platform, lambda: "It says the code is 7431." in platform.sent_texts(), "answer"
        )
    sub = await store.submission(message_key(msg))
    assert sub is not None and sub.id == f"tg:42:{msg.message_id}"
    assert sub.outcome == "completed"
    tool_results = [m for m in await store.submission_messages(sub.id) if m.role == "tool"]
    assert "7431" in str(tool_results[0].content)
    # One message in the chat: the preview, edited into the answer.
    assert platform.sent_texts() == ["It says the code is 7431."]
    assert platform.offset == 2  # acknowledged
    item = await store.outbox_item(f"{sub.id}:reply:0")
    assert item is not None and item.status == "sent"


async def test_a_redelivered_message_is_answered_once(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("first answer"), text_step("never used")])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    msg = platform.say("hello")
    async with gateway_running(make_runtime(model, store), platform, tmp_path):
        await until(platform, lambda: answered(platform, "first answer") == 1, "answer")
    # The platform never heard the ack (a crash right after delivery): it gives the
    # message again to the next gateway.
    platform.offset = 0
    async with gateway_running(make_runtime(model, store), platform, tmp_path):
        await until(platform, lambda: platform.offset == 2, "the redelivery acked")
        await until(platform, lambda: len(platform.delivered) >= 2, "redelivered")
    assert platform.delivered.count(1) == 2
    assert answered(platform, "first answer") == 1
    assert model.remaining == 1
    assert len(await store.submissions()) == 1
    assert msg.message_id in message_key(msg)


async def test_an_answer_waiting_in_the_outbox_is_delivered_once_after_a_restart(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([text_step("the answer")])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    platform.fail_sends = True  # the platform is unreachable while the answer is ready
    msg = platform.say("question")
    key = f"{message_key(msg)}:reply:0"
    async with gateway_running(make_runtime(model, store), platform, tmp_path):
        await until(platform, lambda: platform.offset == 2, "acked")

        async def tried() -> bool:
            item = await store.outbox_item(key)
            return item is not None and item.attempts >= 1 and item.last_error is not None

        await eventually(tried, "a failed delivery attempt")
    item = await store.outbox_item(key)
    assert item is not None and item.status == "pending" and item.last_error
    platform.fail_sends = False
    async with gateway_running(make_runtime(model, store), platform, tmp_path):
        await until(platform, lambda: answered(platform, "the answer") == 1, "delivery")
    assert answered(platform, "the answer") == 1
    sent = await store.outbox_item(key)
    assert sent is not None and sent.status == "sent"


async def test_a_settled_turn_whose_reply_was_never_enqueued_is_answered_on_start(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([text_step("settled before the crash")])
    store = InMemoryExecutionStore()
    runtime = make_runtime(model, store)
    # A crash between settling and enqueueing: the submission is settled, no reply row.
    await runtime.ask("telegram:42", "hi", submission_id="tg:42:7")
    platform = FakePlatform()
    async with gateway_running(make_runtime(model, store), platform, tmp_path):
        await until(platform, lambda: platform.sent_texts() != [], "the reply")
    assert platform.sent_texts() == ["settled before the crash"]


async def test_new_starts_a_fresh_session_and_usage_and_help_answer(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("one"), text_step("two")])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    async with gateway_running(make_runtime(model, store), platform, tmp_path):
        platform.say("first")
        await until(platform, lambda: "one" in platform.sent_texts(), "one")
        platform.say("/usage")
        await until(platform, lambda: len(platform.sent_texts()) == 2, "usage")
        platform.say("/new@seam_bot")
        await until(platform, lambda: len(platform.sent_texts()) == 3, "new")
        platform.say("second")
        await until(platform, lambda: "two" in platform.sent_texts(), "two")
        platform.say("/help")
        await until(platform, lambda: len(platform.sent_texts()) == 5, "help")
    texts = platform.sent_texts()
    assert "model call" in texts[1]
    assert texts[2] == "Started a new conversation."
    assert "/new" in texts[4] and "/stop" in texts[4]
    subs = await store.submissions()
    assert [s.input for s in subs] == ["first", "second"]
    assert subs[0].session_key != subs[1].session_key
    assert "telegram:42#1" in subs[1].session_key


async def test_stop_aborts_the_running_answer(tmp_path: Path) -> None:
    model = ScriptedModel([Step(deltas=["thinking", " more"], stall=True, error_after=1)])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    async with gateway_running(make_runtime(model, store), platform, tmp_path):
        msg = platform.say("a long job")
        await until(platform, lambda: bool(platform.sent_texts()), "the preview")
        platform.say("/stop")
        await until(platform, lambda: any("Stopped" in t for t in platform.sent_texts()), "stopped")
    sub = await store.submission(message_key(msg))
    assert sub is not None and sub.outcome == "aborted"
    assert "Stopping." in platform.sent_texts()
    # What was already said stays, marked stopped (it was replaced with nothing).
    (final,) = [t for t in platform.sent_texts() if "Stopped" in t]
    assert final.startswith("thinking") and final.endswith("_Stopped._")


async def test_groups_are_answered_only_when_addressed(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("hello group")])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    async with gateway_running(make_runtime(model, store), platform, tmp_path):
        platform.say("chatter", chat="-100", group=True, addressed=False)
        platform.say("@seam_bot hi", chat="-100", group=True)
        await until(platform, lambda: "hello group" in platform.sent_texts(), "answer")
    subs = await store.submissions()
    assert [s.input for s in subs] == ["user42: @seam_bot hi"]


async def test_a_stranger_gets_a_pairing_code_and_is_answered_once_approved(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([text_step("nice to meet you"), text_step("hello again")])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    # The retry loop's tick never falls within the test: the first message is run because
    # the paired stranger wrote again, before the new one.
    runtime = make_runtime(model, store)
    async with gateway_running(runtime, platform, tmp_path, retry_tick=3600.0):
        platform.say("hi", user="99")
        await until(platform, lambda: bool(platform.sent_texts()), "the code")
        pairing = PairingStore(tmp_path / "pairing.json")
        [request] = pairing.pending()
        assert request.user_id == "99" and len(request.code) == 8
        assert f"seam pairing approve {request.code}" in platform.sent_texts()[0]
        assert await store.submissions() == []
        pairing.approve(request.code)
        platform.say("hi again", user="99")
        await until(platform, lambda: "hello again" in platform.sent_texts(), "answers")
    subs = await store.submissions()
    assert [s.input for s in subs] == ["hi", "hi again"]
    assert all(s.session_key.endswith('"telegram:99"]') for s in subs)
    answers = [t for t in platform.sent_texts() if t in ("nice to meet you", "hello again")]
    assert answers == ["nice to meet you", "hello again"]


async def test_a_strangers_waiting_message_waits_for_their_own_pairing(tmp_path: Path) -> None:
    """In a group, a paired user's message does not run the message a stranger left
    there waiting for a code: only the stranger's own pairing does."""
    model = ScriptedModel([text_step("hello, paired friend")])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    pairing = PairingStore(tmp_path / "pairing.json")
    pairing.approve(pairing.request("telegram", "77", "Pat", "telegram:-100").code)
    runtime = make_runtime(model, store)
    async with gateway_running(runtime, platform, tmp_path, retry_tick=3600.0) as running:
        stranger = platform.say("@seam_bot hi", chat="-100", group=True, user="99")
        await until(platform, lambda: bool(platform.sent_texts()), "the code")
        assert "seam pairing approve" in platform.sent_texts()[0]
        # Asked to run it directly (a pairing revoked as the loop looked), the retries
        # leave it waiting too.
        await running.gateway.retries.run_waiting(running.adapters[0], stranger.chat)
        assert await store.submissions() == []
        platform.say("@seam_bot hello", chat="-100", group=True, user="77")
        await until(platform, lambda: "hello, paired friend" in platform.sent_texts(), "answer")
    subs = await store.submissions()
    assert [s.input for s in subs] == ["user77: @seam_bot hello"]
    [request] = pairing.pending()
    assert request.user_id == "99"


async def test_a_pairing_revoked_as_the_waiting_message_is_claimed_leaves_it_waiting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Paired when the gateway looked, revoked before it claimed the message: the
    writer is checked again once the message is claimed, and it is not run."""
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    pairing = PairingStore(tmp_path / "pairing.json")
    runtime = make_runtime(ScriptedModel([]), store)
    async with gateway_running(runtime, platform, tmp_path, retry_tick=3600.0) as running:
        stranger = platform.say("hi", user="99")
        await until(platform, lambda: bool(platform.sent_texts()), "the code")
        [request] = pairing.pending()
        pairing.approve(request.code)
        inbox = running.gateway.inbox
        claim = inbox.claim

        async def revoked_first(target: str, owner: str) -> OutboxItem | None:
            pairing.revoke("telegram:99")
            return await claim(target, owner)

        monkeypatch.setattr(inbox, "claim", revoked_first)
        await running.gateway.retries.run_waiting(running.adapters[0], stranger.chat)
    assert await store.submissions() == []
    assert await inbox.waiting_for_pairing(stranger.chat) == stranger


async def test_only_the_owner_can_press_an_approval_button(tmp_path: Path) -> None:
    model = ScriptedModel([tool_step(call("danger")), text_step("cleaned up")])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    config = section(allow=("42", "7"))
    async with gateway_running(make_runtime(model, store), platform, tmp_path, config=config):
        platform.say("clean up", chat="-100", group=True)
        await until(
            platform,
            lambda: any(m.buttons for m in platform.messages.values()),
            "the approval request",
        )
        asking = next(m for m in platform.messages.values() if m.buttons)
        assert "rm -r build" in asking.text
        labels = [b.label for row in asking.buttons for b in row]
        assert labels == ["Once", "This session", "Always", "Deny", "Never"]
        once = asking.buttons[0][0].data
        platform.press(asking.id, once, user="7", chat="-100")  # allowed, but not the owner
        await until(platform, lambda: bool(platform.answers), "the refusal")
        assert platform.answers[0] == ("p7", "not yours")
        platform.press(asking.id, once, user="42", chat="-100")
        await until(platform, lambda: "cleaned up" in platform.sent_texts(), "the answer")
    assert platform.answers[1] == ("p42", "Once")
    [sub] = await store.submissions()
    results = [m for m in await store.submission_messages(sub.id) if m.role == "tool"]
    assert "decision: once" in str(results[0].content)


async def test_a_text_document_is_saved_in_the_working_directory_and_named(
    tmp_path: Path,
) -> None:
    storage = InMemoryStorage()
    model = ScriptedModel([text_step("got it"), text_step("unused")])
    store = InMemoryExecutionStore()
    platform = FakePlatform()

    async def fetch() -> bytes:
        return b"line one\n"

    doc = Attachment("document", "../../etc/notes.txt", "text/plain", 9, fetch)
    voice = Attachment("voice", "voice.ogg", "audio/ogg", 2000, None)
    runtime = make_runtime(model, store, storage=storage)
    async with gateway_running(runtime, platform, tmp_path):
        msg = platform.say("read this", attachments=[doc])
        await until(platform, lambda: "got it" in platform.sent_texts(), "answer")
        platform.say("", attachments=[voice])
        await until(platform, lambda: len(platform.sent_texts()) == 2, "the refusal")
    saved = f"{WORKDIR}/chat-files/{msg.message_id}-notes.txt"
    assert await storage.read_text(saved) == "line one\n"
    [sub] = await store.submissions()
    assert f"chat-files/{msg.message_id}-notes.txt" in sub.input
    assert platform.sent_texts()[1] == "I can't use voice messages here yet."


async def test_a_silent_adapter_is_rebuilt_by_the_watchdog(tmp_path: Path) -> None:
    from seam.apps.gateway.supervisor import WatchOptions

    model = ScriptedModel([text_step("back again")])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    built: list[int] = []

    def build(side: FakePlatform) -> FakeAdapter:
        built.append(1)
        return FakeAdapter(side, stall=len(built) == 1)  # the first connection goes dead

    options = WatchOptions(stall_after=0.5, check_every=0.05)
    async with gateway_running(
        make_runtime(model, store), platform, tmp_path, build=build, options=options
    ) as running:
        platform.say("are you there?")
        await until(platform, lambda: "back again" in platform.sent_texts(), "the answer")
        assert running.supervisor.rebuilds == 1
        assert running.adapters[0].closed

        async def shown() -> bool:
            status = json.loads((tmp_path / "gateway-status.json").read_text())
            return status["adapters"]["telegram"]["last_received_at"] is not None

        await eventually(shown, "the status file showing the new connection")
    status = json.loads((tmp_path / "gateway-status.json").read_text())
    assert status["adapters"]["telegram"]["state"] == "connected"
    assert status["adapters"]["telegram"]["last_received_at"] is not None


async def test_the_owner_is_told_when_an_adapter_stays_down(tmp_path: Path) -> None:
    from seam.apps.gateway.supervisor import WatchOptions

    model = ScriptedModel([])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    options = WatchOptions(stall_after=0.2, check_every=0.05, alert_after=0.3)
    config = section(owner="telegram:42")

    def build(side: FakePlatform) -> FakeAdapter:
        return FakeAdapter(side, stall=True)

    async with gateway_running(
        make_runtime(model, store),
        platform,
        tmp_path,
        config=config,
        build=build,
        options=options,
    ):
        await eventually(
            lambda: store.outbox_items(OutboxQuery(target_prefix="telegram:42")), "the alert"
        )
    [alert] = await store.outbox_items(OutboxQuery(target_prefix="telegram:42"))
    assert "telegram has been down" in json.loads(alert.payload)["text"]


async def test_the_answer_streams_into_one_message_no_faster_than_the_platform_allows(
    tmp_path: Path,
) -> None:
    from seam.contracts.chat import ChatLimits

    deltas = [f"word{i} " for i in range(40)]
    model = PacedModel([Step(deltas=deltas)])
    store = InMemoryExecutionStore()
    platform = FakePlatform()

    def build(side: FakePlatform) -> FakeAdapter:
        return FakeAdapter(side, limits=ChatLimits(max_text=4000, min_edit_interval=0.25))

    async with gateway_running(make_runtime(model, store), platform, tmp_path, build=build):
        platform.say("count")
        final = "".join(deltas).strip()
        await until(platform, lambda: final in platform.sent_texts(), "the answer")
    [message] = platform.messages.values()  # one message, edited as the text grew
    assert message.text == final
    gaps = [b - a for a, b in zip(message.edited_at, message.edited_at[1:], strict=False)]
    previews = gaps[:-1]  # the last edit is the final answer, sent when it is ready
    assert message.edits >= 2
    assert all(gap >= 0.24 for gap in previews), gaps
    assert platform.typing >= 1


async def test_a_forum_thread_is_a_session_of_its_own(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("in the thread"), text_step("in the chat")])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    async with gateway_running(make_runtime(model, store), platform, tmp_path):
        msg = platform.say("hi", chat="-100", group=True, thread="7")
        await until(platform, lambda: "in the thread" in platform.sent_texts(), "answer")
        platform.say("hi", chat="-100", group=True)
        await until(platform, lambda: "in the chat" in platform.sent_texts(), "answer")
    first, second = await store.submissions()
    assert first.id == f"tg:-100:7:{msg.message_id}"
    assert first.session_key.endswith('"telegram:-100:7"]')
    assert second.session_key.endswith('"telegram:-100"]')
    shown = {m.text: m.chat for m in platform.messages.values()}
    assert shown["in the thread"] == "telegram:-100:7"


class CatchingUp(FakeAdapter):
    """An adapter without redelivery: it reads missed history from where it is told."""

    def __init__(self, side: FakePlatform) -> None:
        super().__init__(side)
        self.catch_ups: list[tuple[str, str, bool]] = []

    def catch_up_from(self, chat: ChatRef, message_id: str, *, is_dm: bool = False) -> None:
        self.catch_ups.append((str(chat), message_id, is_dm))


async def test_a_restarted_gateway_tells_a_history_adapter_where_each_chat_left_off(
    tmp_path: Path,
) -> None:
    model = ScriptedModel([text_step("one"), text_step("two")])
    store = InMemoryExecutionStore()
    platform = FakePlatform()
    built: list[CatchingUp] = []

    def build(side: FakePlatform) -> FakeAdapter:
        built.append(CatchingUp(side))
        return built[-1]

    async with gateway_running(make_runtime(model, store), platform, tmp_path, build=build):
        platform.say("hi")
        last = platform.say("@bot hi", chat="-100", group=True)
        await until(platform, lambda: len(platform.sent_texts()) == 2, "answers")
    assert built[0].catch_ups == []
    async with gateway_running(make_runtime(model, store), platform, tmp_path, build=build):
        await until(platform, lambda: len(built) == 2, "the adapter built again")
    assert sorted(built[1].catch_ups) == [
        ("telegram:-100", last.message_id, False),
        ("telegram:42", str(int(last.message_id) - 1), True),
    ]


async def test_cron_lists_the_jobs_and_only_the_owner_turns_quiet_hours_on(
    tmp_path: Path,
) -> None:
    import time

    from seam.wiring import assemble_runtime
    from seam.wiring.delivery import build_dnd
    from seam.wiring.settings import load_settings

    home = tmp_path / ".seam"
    home.mkdir()
    settings = load_settings({"HOME": str(tmp_path)}, home=home, working_dir=tmp_path)
    runtime = assemble_runtime(
        model=ScriptedModel([]),
        store=InMemoryExecutionStore(),
        storage=InMemoryStorage(),
        working_dir=WORKDIR,
        settings=settings,
    )
    platform = FakePlatform()
    config = section(allow=("42", "7"), owner="telegram:42")
    async with gateway_running(runtime, platform, tmp_path, config=config):
        for n, (text, user) in enumerate(
            [("/cron", "42"), ("/dnd on", "7"), ("/dnd on", "42"), ("/dnd", "7")], start=1
        ):
            platform.say(text, user=user)
            await until(platform, lambda n=n: len(platform.sent_texts()) == n, text)  # type: ignore[misc]
    texts = platform.sent_texts()
    assert "no cron jobs" in texts[0]
    assert texts[1] == "Only the owner can turn quiet hours on or off."
    assert "on" in texts[2].lower() and "on" in texts[3].lower()
    assert await build_dnd(settings).is_quiet_now(time.time())
