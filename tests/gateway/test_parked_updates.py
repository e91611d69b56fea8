"""Updates that fail (`apps/gateway/inbox.py`, `retries.py`), in process over the fake
platform and a real SQLite store: the poison is a lone UTF-16 surrogate, which SQLite
cannot keep. Acknowledged at once, told in one line, tried three times, then dead; the
chat's later message waits behind it, another chat's does not."""

from __future__ import annotations

from pathlib import Path

import pytest

from seam.apps.gateway import inbox
from seam.apps.gateway.inbox import Inbox
from seam.core.scripted_model import ScriptedModel, text_step
from seam.services.sessions.sqlite import SQLiteSessionStore
from tests.gateway.fake_chat import FakePlatform
from tests.gateway.harness import gateway_running, make_runtime, section, until

POISON = "tell me \ud800 about it"


def said(platform: FakePlatform, chat: str) -> list[str]:
    """What chat `chat` shows, in the order the messages were sent."""
    shown = (platform.messages[i] for i in platform.order)
    return [m.text for m in shown if m.chat == f"telegram:{chat}"]


def has(platform: FakePlatform, chat: str, part: str) -> bool:
    return any(part in text for text in said(platform, chat))


async def test_a_poisoned_update_ends_dead_and_only_its_own_chat_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inbox, "DELAYS", (0.5, 2.0))
    model = ScriptedModel([text_step("for 43"), text_step("for 42")])
    store = SQLiteSessionStore(str(tmp_path / "sessions.db"))
    runtime = make_runtime(model, store)  # type: ignore[arg-type]
    platform = FakePlatform()
    config = section(allow=("42", "43"))
    async with gateway_running(runtime, platform, tmp_path, config=config):
        platform.say(POISON, user="42")
        await until(platform, lambda: has(platform, "42", "could not handle"), "the error")
        platform.say("next", user="42")  # waits behind the poison
        platform.say("hello", user="43")  # does not
        await until(platform, lambda: has(platform, "43", "for 43"), "the other chat")
        assert not has(platform, "42", "gave up")
        await until(platform, lambda: has(platform, "42", "for 42"), "the queued message")
        assert not platform.pending()  # every update was acknowledged
        report = await Inbox(store).report()
    texts = said(platform, "42")
    assert next(t for t in texts if "could not handle" in t).count("\n") == 0  # one line
    gave_up = next(i for i, t in enumerate(texts) if "gave up" in t)
    assert "after 3 tries" in texts[gave_up]
    assert gave_up < next(i for i, t in enumerate(texts) if "for 42" in t)
    assert sum("could not handle" in t for t in texts) == 1
    (dead,) = report.dead
    assert dead.source == "tg:42:1000" and dead.attempts == 2  # and the first, at once
    assert "UnicodeEncodeError" in (dead.last_error or "")
    assert not report.stuck
    assert await Inbox(store).clear() == 1
    assert not (await Inbox(store).report()).dead
    await store.aclose()
