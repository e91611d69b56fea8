"""Gateways never jam (issue 26), on Telegram: the real `seam gateway` as a subprocess,
python-telegram-bot against the fake Bot API in its own process, the model a scripted
OpenAI-compatible server.

`/new` then `/usage` answers (it raised `SessionNotFound`, the update was retried forever
and every other chat waited behind it). A poisoned update (text with a lone UTF-16
surrogate, which no store can keep) is answered with a one-line error, retried three
times in all across a restart, then recorded as dead, while the other chat goes on; the
dead update shows in `seam gateway status` and `seam doctor`."""

from __future__ import annotations

import pytest

pytest.importorskip("seam.plugins.chat.telegram")

from pathlib import Path

from tests.gateway.test_gateway_telegram import (
    OWNER,
    fake_telegram,
    gateway_cli,
)
from tests.support.fake_telegram import RemoteFakeTelegram
from tests.support.gateway_process import stop, wait_for
from tests.support.openai_server import OpenAIServer, text_reply

fake_telegram = fake_telegram  # the fixture, registered here
OTHER = 1002  # a second allowed user, in a private chat of their own
POISON = "tell me \ud800 about it"


def said(fake: RemoteFakeTelegram, chat: int) -> list[str]:
    """What the bot wrote in `chat` (sent messages and edits, in order)."""
    return [
        str(c["params"].get("text"))
        for c in fake.calls()
        if c["method"] in ("sendMessage", "editMessageText") and c["params"].get("chat_id") == chat
    ]


def has(fake: RemoteFakeTelegram, chat: int, part: str) -> bool:
    return any(part in text for text in said(fake, chat))


def test_new_usage_and_a_poisoned_update_never_jam_across_a_restart(
    tmp_path: Path, openai_server: OpenAIServer, fake_telegram: RemoteFakeTelegram
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_telegram)
    cli.write_config(
        f'[gateway.telegram]\nbase_url = "{fake_telegram.base_url}"\n'
        f'allow = ["{OWNER}", "{OTHER}"]\n[sandbox]\nbackend = "local"\n'
    )
    openai_server.push(text_reply("Hi owner."), text_reply("Hi other."))
    gateway = cli.popen("gateway")
    try:
        fake_telegram.push_message("/new", chat_id=OWNER, user_id=OWNER)
        fake_telegram.push_message("/usage", chat_id=OWNER, user_id=OWNER)
        wait_for(lambda: has(fake_telegram, OWNER, "No model calls"), "/usage", gateway)
        assert has(fake_telegram, OWNER, "Started a new conversation.")
        fake_telegram.push_message("/new", chat_id=OTHER, user_id=OTHER)
        fake_telegram.push_message("/usage", chat_id=OTHER, user_id=OTHER)
        wait_for(lambda: has(fake_telegram, OTHER, "No model calls"), "their /usage", gateway)
        fake_telegram.push_message(POISON, chat_id=OTHER, user_id=OTHER)
        wait_for(lambda: has(fake_telegram, OTHER, "could not handle"), "the error", gateway)
        # The poisoned chat waits for its retries; the owner's does not.
        fake_telegram.push_message("hello", chat_id=OWNER, user_id=OWNER)
        wait_for(lambda: has(fake_telegram, OWNER, "Hi owner."), "the owner's answer", gateway)
        assert not has(fake_telegram, OTHER, "gave up")
    finally:
        stop(gateway)
    # While the gateway is down: one more message from each.
    fake_telegram.push_message("hello again", chat_id=OTHER, user_id=OTHER)
    fake_telegram.push_message("/usage", chat_id=OWNER, user_id=OWNER)
    restarted = cli.popen("gateway")
    try:
        wait_for(lambda: has(fake_telegram, OWNER, "1 model call(s)"), "/usage", restarted)
        wait_for(lambda: has(fake_telegram, OTHER, "gave up"), "the dead notice", restarted)
        wait_for(lambda: has(fake_telegram, OTHER, "Hi other."), "the other's answer", restarted)
        status = cli("gateway", "status")
    finally:
        stop(restarted)
    assert status.returncode == 0, status.stderr
    assert "1 dead" in status.stdout and "telegram:1002" in status.stdout
    # The poisoned update's error came once, its dead notice once; nothing repeats.
    assert sum("could not handle" in t for t in said(fake_telegram, OTHER)) == 1
    assert sum("gave up" in t for t in said(fake_telegram, OTHER)) == 1
    assert len(openai_server.chat_requests) == 2
    doctor = cli("doctor")
    assert "✗ gateway updates: 1 dead" in doctor.stdout
    cleared = cli("gateway", "clear")
    assert cleared.returncode == 0 and "cleared 1" in cleared.stdout
    assert "✓ gateway updates" in cli("doctor").stdout
