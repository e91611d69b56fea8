"""Paired strangers are tenants, never the owner: over the real Telegram adapter talking to
the fake Bot API on loopback (the wire format python-telegram-bot really sends), a paired
user's turns run in a tenant of their own, the owner's commands and lasting approval
answers are refused to them with one line, and the owner keeps every one of them.

The owner here is user 1001: on the `allow` list and named by `[gateway] owner`. User
2002 got in by pairing.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("seam.plugins.chat.telegram")

from seam.apps.gateway.approvals import LASTING_REFUSAL
from seam.apps.gateway.chat_commands import OWNER_ONLY
from seam.apps.gateway.pairing import PairingStore
from seam.apps.gateway.runner import Gateway
from seam.apps.gateway.tenants import chat_tenant
from seam.contracts.chat import ChatAdapter
from seam.core.execution import InMemoryExecutionStore
from seam.core.identity import parse_session_storage_key
from seam.core.scripted_model import ScriptedModel, call, text_step, tool_step
from seam.plugins.chat.telegram.adapter import TelegramAdapter
from seam.wiring import Runtime
from tests.gateway.fake_chat import FakePlatform
from tests.gateway.harness import gateway_running, make_runtime, section
from tests.support.fake_telegram import FakeTelegram

pytestmark = pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")

OWNER = 1001
STRANGER = 2002
WAIT = 15.0


@asynccontextmanager
async def telegram_gateway(
    runtime: Runtime, fake: FakeTelegram, tmp: Path
) -> AsyncIterator[Gateway]:
    """The gateway with the real Telegram adapter against `fake`; user 2002 is paired."""
    pairing = PairingStore(tmp / "pairing.json")
    pairing.approve(pairing.request("telegram", str(STRANGER), "Bo", f"telegram:{STRANGER}").code)
    config = section(allow=(str(OWNER),), owner=f"telegram:{OWNER}")

    def build(_: FakePlatform) -> ChatAdapter:
        return TelegramAdapter(
            fake.token, base_url=fake.base_url, poll_timeout=1.0, retry_initial=0.05, retry_cap=0.2
        )

    async with gateway_running(runtime, FakePlatform(), tmp, config=config, build=build) as running:
        yield running.gateway


async def until(fake: FakeTelegram, condition: Callable[[], Any], what: str) -> Any:
    """Wait for `condition()` to be truthy, looking again whenever the fake is called."""
    try:
        async with asyncio.timeout(WAIT):
            while not (found := condition()):
                await fake._until(lambda: bool(condition()))
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None
    return found


def shown(fake: FakeTelegram, chat: int) -> list[str]:
    """Every text the bot put in `chat`: sent messages and edits (an answer streams into a
    preview that is edited), in order."""
    return [
        str(c.params.get("text"))
        for c in fake.calls
        if c.method in ("sendMessage", "editMessageText") and c.params.get("chat_id") == chat
    ]


def said(fake: FakeTelegram, chat: int, text: str) -> bool:
    return text in shown(fake, chat)


def approval_keyboard(fake: FakeTelegram, chat: int) -> tuple[int, list[str]] | None:
    """The message id and button data of the approval request shown in `chat`."""
    for sent in fake.calls_of("sendMessage"):
        markup = sent.params.get("reply_markup")
        if sent.params.get("chat_id") == chat and markup:
            datas = [b["callback_data"] for row in markup["inline_keyboard"] for b in row]
            message = next(
                m for (c, mid), m in fake.messages.items() if c == chat and m.get("reply_markup")
            )
            return int(message["message_id"]), datas
    return None


def toasts(fake: FakeTelegram) -> list[str]:
    return [str(c.params.get("text")) for c in fake.calls_of("answerCallbackQuery")]


def tenant_of(key: str) -> str:
    return parse_session_storage_key(key)[0]


async def test_a_paired_users_turns_run_in_a_tenant_of_their_own(tmp_path: Path) -> None:
    model = ScriptedModel([text_step("hello owner"), text_step("hello stranger")])
    store = InMemoryExecutionStore()
    runtime = make_runtime(model, store)
    async with FakeTelegram() as fake, telegram_gateway(runtime, fake, tmp_path):
        fake.push_message("hi", chat_id=OWNER, user_id=OWNER)
        await until(fake, lambda: said(fake, OWNER, "hello owner"), "the owner's answer")
        fake.push_message("hi", chat_id=STRANGER, user_id=STRANGER, first_name="Bo")
        await until(fake, lambda: said(fake, STRANGER, "hello stranger"), "the stranger's answer")
    keys = sorted(tenant_of(sub.session_key) for sub in await store.submissions())
    assert keys == sorted([runtime.tenant_id, "telegram-2002"])
    assert chat_tenant("telegram", str(STRANGER)) == "telegram-2002"


async def test_the_owners_commands_are_refused_to_a_paired_user(tmp_path: Path) -> None:
    from seam.wiring import assemble_runtime
    from seam.wiring.settings import load_settings

    home = tmp_path / ".seam"
    home.mkdir()
    settings = load_settings({"HOME": str(tmp_path)}, home=home, working_dir=tmp_path)
    runtime = assemble_runtime(
        model=ScriptedModel([]), store=InMemoryExecutionStore(), settings=settings
    )
    async with FakeTelegram() as fake, telegram_gateway(runtime, fake, tmp_path):
        for text, refusal in (
            ("/cron", OWNER_ONLY["cron"]),
            ("/dnd on", "Only the owner can turn quiet hours on or off."),
        ):
            fake.push_message(text, chat_id=STRANGER, user_id=STRANGER)
            await until(fake, lambda r=refusal: said(fake, STRANGER, r), f"refusing {text}")
            before = len(fake.sent_texts(OWNER))
            fake.push_message(text, chat_id=OWNER, user_id=OWNER)
            await until(fake, lambda b=before: len(fake.sent_texts(OWNER)) > b, text)
        owners = fake.sent_texts(OWNER)
    assert "no cron jobs" in owners[0]
    assert "on" in owners[1].lower() and "only the owner" not in owners[1].lower()
    strangers = fake.sent_texts(STRANGER)
    assert strangers == [OWNER_ONLY["cron"], "Only the owner can turn quiet hours on or off."]
    assert all(len(line.splitlines()) == 1 for line in strangers)


async def test_always_and_never_are_the_owners_answers(tmp_path: Path) -> None:
    model = ScriptedModel(
        [
            tool_step(call("danger")),
            text_step("done for Bo"),
            tool_step(call("danger")),
            text_step("done for the owner"),
        ]
    )
    store = InMemoryExecutionStore()
    async with FakeTelegram() as fake, telegram_gateway(make_runtime(model, store), fake, tmp_path):
        fake.push_message("clean up", chat_id=STRANGER, user_id=STRANGER)
        message_id, datas = await until(
            fake, lambda: approval_keyboard(fake, STRANGER), "the stranger's approval request"
        )
        assert [d.rsplit(":", 1)[1] for d in datas] == ["once", "session", "deny"]
        rid = datas[0].rsplit(":", 1)[0]
        for lasting in ("always", "never"):  # crafted: no such button was shown
            fake.push_callback(
                f"{rid}:{lasting}", message_id=message_id, chat_id=STRANGER, user_id=STRANGER
            )
        await until(fake, lambda: toasts(fake).count(LASTING_REFUSAL) == 2, "the refusals")
        fake.push_callback(datas[0], message_id=message_id, chat_id=STRANGER, user_id=STRANGER)
        await until(fake, lambda: said(fake, STRANGER, "done for Bo"), "the stranger's answer")

        fake.push_message("clean up", chat_id=OWNER, user_id=OWNER)
        message_id, datas = await until(
            fake, lambda: approval_keyboard(fake, OWNER), "the owner's approval request"
        )
        assert [d.rsplit(":", 1)[1] for d in datas] == [
            "once",
            "session",
            "always",
            "deny",
            "never",
        ]
        fake.push_callback(datas[2], message_id=message_id, chat_id=OWNER, user_id=OWNER)
        await until(fake, lambda: said(fake, OWNER, "done for the owner"), "the owner's answer")
    assert toasts(fake)[-1] == "Always"
    results = {}
    for sub in await store.submissions():
        tool = [m for m in await store.submission_messages(sub.id) if m.role == "tool"]
        results[tenant_of(sub.session_key)] = str(tool[0].content)
    assert results["telegram-2002"] == "decision: once"
    assert "decision: always" in [v for k, v in results.items() if k != "telegram-2002"]


async def test_a_turn_admitted_under_the_owner_before_the_rule_is_still_answered(
    tmp_path: Path,
) -> None:
    """A paired user's message stored before this version (in the owner's tenant, as it
    was) is driven where it was admitted and answered; their next one goes to their own."""
    model = ScriptedModel([text_step("old answer"), text_step("new answer")])
    store = InMemoryExecutionStore()
    runtime = make_runtime(model, store)
    old = await runtime.submit(f"telegram:{STRANGER}", "old question", submission_id="tg:2002:1")
    async with FakeTelegram() as fake, telegram_gateway(runtime, fake, tmp_path):
        await until(fake, lambda: said(fake, STRANGER, "old answer"), "the old turn's answer")
        fake.push_message("new question", chat_id=STRANGER, user_id=STRANGER, message_id=2)
        await until(fake, lambda: said(fake, STRANGER, "new answer"), "the new turn's answer")
    subs = {sub.input: sub for sub in await store.submissions()}
    assert subs["old question"].session_key == old.session_key
    assert tenant_of(old.session_key) == runtime.tenant_id
    assert subs["old question"].state == "settled"
    assert tenant_of(subs["new question"].session_key) == "telegram-2002"
