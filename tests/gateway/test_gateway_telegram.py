"""`seam gateway` end to end: the real command as a subprocess, its Telegram adapter on
python-telegram-bot talking to a fake Bot API (its own process, on loopback), the model a
scripted OpenAI-compatible server. SIGKILL at the two places a crash can cut: after the
message was received (and acknowledged) but before the answer, and after the answer but
before its delivery; each message is answered exactly once after the restart."""

from __future__ import annotations

import json
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("seam.plugins.chat.telegram")

from tests.cli.conftest import Cli, make_cli
from tests.cli.test_postgres_workers import store_url as store_url_fixture
from tests.support.fake_telegram import DEFAULT_TOKEN, RemoteFakeTelegram
from tests.support.gateway_process import fake_process, stop, wait_for
from tests.support.openai_server import (
    OpenAIServer,
    text_reply,
    tool_call_reply,
)

store_url = store_url_fixture  # registers the fixture here
OWNER = 1001  # the allowed user (and private chat) of these tests


@pytest.fixture
def fake_telegram() -> Iterator[RemoteFakeTelegram]:
    with fake_process("tests.support.fake_telegram") as url:
        yield RemoteFakeTelegram(url)


def gateway_cli(
    tmp_path: Path, openai: OpenAIServer, fake: RemoteFakeTelegram, extra: str = ""
) -> Cli:
    cli = make_cli(
        tmp_path,
        {
            "OPENAI_BASE_URL": openai.base_url,
            "OPENAI_API_KEY": "test-key",
            "TELEGRAM_BOT_TOKEN": DEFAULT_TOKEN,
        },
    )
    cli.write_config(
        f'[gateway.telegram]\nbase_url = "{fake.base_url}"\nallow = ["{OWNER}"]\n'
        '[sandbox]\nbackend = "local"\n' + extra
    )
    return cli


def texts(fake: RemoteFakeTelegram) -> list[str]:
    """Every text the bot put in a chat: sent messages and edits, in order."""
    calls = fake.calls()
    return [
        str(c["params"].get("text"))
        for c in calls
        if c["method"] in ("sendMessage", "editMessageText")
    ]


def lines_of(process: subprocess.Popen[str]) -> list[str]:
    """The process's stderr lines as they come (read by a thread of their own)."""
    lines: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)

    threading.Thread(target=read, daemon=True).start()
    return lines


def finals(fake: RemoteFakeTelegram, answer: str) -> int:
    return sum(1 for t in texts(fake) if t == answer)


def test_a_message_is_answered_after_a_read_file_round_trip(
    tmp_path: Path, openai_server: OpenAIServer, fake_telegram: RemoteFakeTelegram
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_telegram)
    (cli.project / "note.txt").write_text("the code is 7431\n", encoding="utf-8")
    openai_server.push(
        tool_call_reply([("read_file", json.dumps({"path": "note.txt"}))]),
        text_reply("It says the code is 7431."),
    )
    gateway = cli.popen("gateway")
    try:
        fake_telegram.push_message("What does note.txt say?", chat_id=OWNER, user_id=OWNER)
        wait_for(lambda: finals(fake_telegram, "It says the code is 7431.") == 1, "answer", gateway)
    finally:
        err = stop(gateway)
    assert "running telegram" in err
    tool = [m for m in openai_server.chat_requests[1].body["messages"] if m["role"] == "tool"]
    assert "7431" in str(tool[0]["content"])
    assert fake_telegram.calls("sendChatAction")  # typing while it worked


def test_sigkill_after_receipt_then_restart_answers_once(
    tmp_path: Path, openai_server: OpenAIServer, fake_telegram: RemoteFakeTelegram
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_telegram)
    # The first model call hangs: the message is stored and acknowledged, no answer yet.
    openai_server.push(text_reply("never finished").stalled(), text_reply("Answered once."))
    gateway = cli.popen("gateway")
    try:
        fake_telegram.push_message("hello?", chat_id=OWNER, user_id=OWNER)
        wait_for(lambda: len(openai_server.chat_requests) == 1, "the model call", gateway)
        wait_for(lambda: fake_telegram.state()["offset"] >= 2, "the ack", gateway)
    finally:
        gateway.send_signal(signal.SIGKILL)
        gateway.communicate(timeout=10)
    openai_server.release()
    restarted = cli.popen("gateway")
    try:
        wait_for(lambda: finals(fake_telegram, "Answered once.") == 1, "the answer", restarted)
    finally:
        stop(restarted)
    assert finals(fake_telegram, "Answered once.") == 1
    assert not any(t == "never finished" for t in texts(fake_telegram))


def test_sigkill_before_delivery_then_restart_delivers_once(
    tmp_path: Path, openai_server: OpenAIServer, fake_telegram: RemoteFakeTelegram
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_telegram)
    openai_server.push(text_reply("Delivered once."))
    # Telegram refuses the next three messages: the preview and the answer's first
    # attempt fail before the kill, one more after the restart.
    fake_telegram.fail("sendMessage", 500, times=3)
    gateway = cli.popen("gateway")
    try:
        fake_telegram.push_message("hi", chat_id=OWNER, user_id=OWNER)
        wait_for(lambda: len(fake_telegram.calls("sendMessage")) >= 2, "failed sends", gateway)
    finally:
        gateway.send_signal(signal.SIGKILL)
        gateway.communicate(timeout=10)
    restarted = cli.popen("gateway")
    try:
        wait_for(lambda: len(_delivered(fake_telegram)) >= 1, "delivery", restarted)
    finally:
        stop(restarted)
    assert _delivered(fake_telegram) == ["Delivered once."]
    assert len(openai_server.chat_requests) == 1  # answered once, delivered after


def _delivered(fake: RemoteFakeTelegram) -> list[str]:
    """The texts of the messages Telegram accepted (the first three were refused)."""
    return [str(c["params"].get("text")) for c in fake.calls("sendMessage")[3:]]


def test_a_strangers_button_is_refused_and_the_owners_press_answers(
    tmp_path: Path, openai_server: OpenAIServer, fake_telegram: RemoteFakeTelegram
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_telegram)
    openai_server.push(
        tool_call_reply([("terminal", json.dumps({"command": "touch made.txt"}))]),
        text_reply("Made it."),
    )
    gateway = cli.popen("gateway")
    try:
        fake_telegram.push_message("make a file", chat_id=OWNER, user_id=OWNER)

        def asking() -> dict[str, Any] | None:
            for c in fake_telegram.calls("sendMessage"):
                if c["params"].get("reply_markup"):
                    return c
            return None

        wait_for(lambda: asking() is not None, "the approval buttons", gateway)
        call = asking()
        assert call is not None
        markup = call["params"]["reply_markup"]
        markup = json.loads(markup) if isinstance(markup, str) else markup
        buttons = [b for row in markup["inline_keyboard"] for b in row]
        assert [b["text"] for b in buttons] == ["Once", "This session", "Always", "Deny", "Never"]
        message_id = _message_id_of(fake_telegram, call)
        fake_telegram.push_callback(
            buttons[0]["callback_data"], message_id=message_id, chat_id=OWNER, user_id=666
        )
        wait_for(lambda: bool(fake_telegram.calls("answerCallbackQuery")), "the refusal", gateway)
        refusal = fake_telegram.calls("answerCallbackQuery")[0]["params"]
        assert refusal.get("text") == "not yours"
        assert not (cli.project / "made.txt").exists()
        fake_telegram.push_callback(
            buttons[0]["callback_data"], message_id=message_id, chat_id=OWNER, user_id=OWNER
        )
        wait_for(lambda: finals(fake_telegram, "Made it.") == 1, "the answer", gateway)
    finally:
        stop(gateway)
    assert (cli.project / "made.txt").exists()


def _message_id_of(fake: RemoteFakeTelegram, call: dict[str, Any]) -> int:
    """The id the fake gave the message `call` sent (its sends are numbered per chat)."""
    sends = [c for c in fake.calls("sendMessage") if c["params"].get("chat_id") == OWNER]
    return sends.index(call) + 1


def test_pairing_a_stranger(
    tmp_path: Path, openai_server: OpenAIServer, fake_telegram: RemoteFakeTelegram
) -> None:
    """The stranger's first message waits for the approval, and is answered then."""
    cli = gateway_cli(tmp_path, openai_server, fake_telegram)
    openai_server.push(text_reply("Hello, new friend."), text_reply("Welcome back."))
    gateway = cli.popen("gateway")
    try:
        fake_telegram.push_message("hi", chat_id=2002, user_id=2002)
        wait_for(
            lambda: any("seam pairing approve" in t for t in texts(fake_telegram)),
            "the code",
            gateway,
        )
        assert any("once you are approved" in t for t in texts(fake_telegram))
        listed = cli("pairing", "list")
        code = listed.stdout.split("\t")[1]
        assert "telegram:2002" in listed.stdout
        approved = cli("pairing", "approve", code)
        assert approved.returncode == 0, approved.stderr
        wait_for(lambda: finals(fake_telegram, "Hello, new friend.") == 1, "the answer", gateway)
        assert openai_server.chat_requests[0].body["messages"][-1]["content"] == "hi"
        fake_telegram.push_message("hi again", chat_id=2002, user_id=2002)
        wait_for(lambda: finals(fake_telegram, "Welcome back.") == 1, "the next", gateway)
    finally:
        stop(gateway)
    assert len(openai_server.chat_requests) == 2
    assert finals(fake_telegram, "Hello, new friend.") == 1


@pytest.mark.parametrize("backend", ["postgres", "sqlite"])
def test_two_gateways_one_takes_over_when_the_holder_is_killed(
    tmp_path: Path,
    openai_server: OpenAIServer,
    fake_telegram: RemoteFakeTelegram,
    backend: str,
    request: pytest.FixtureRequest,
) -> None:
    """PostgreSQL: an advisory lock (gateways on several machines); SQLite: a file lock
    (gateways sharing a home)."""
    cli = gateway_cli(tmp_path, openai_server, fake_telegram, "[store]\nlease_seconds = 2\n")
    if backend == "postgres":
        cli.env["SEAM_STORE_URL"] = request.getfixturevalue("store_url")
    openai_server.push(text_reply("never finished").stalled(), text_reply("Taken over."))
    first = cli.popen("gateway")
    status = cli.home / "gateway-status.json"

    def holding(process: subprocess.Popen[str]) -> bool:
        try:
            entry = json.loads(status.read_text())["adapters"]["telegram"]
        except (FileNotFoundError, ValueError, KeyError):
            return False
        return bool(entry["pid"] == process.pid and entry["state"] == "connected")

    second: subprocess.Popen[str] | None = None
    try:
        wait_for(lambda: holding(first), "the first gateway holding telegram", first)
        second = cli.popen("gateway")
        said = lines_of(second)
        wait_for(lambda: any("standing by" in line for line in said), "a standby", second)
        fake_telegram.push_message("still there?", chat_id=OWNER, user_id=OWNER)
        wait_for(lambda: len(openai_server.chat_requests) == 1, "the model call", first)
        first.send_signal(signal.SIGKILL)
        first.communicate(timeout=10)
        openai_server.release()
        wait_for(lambda: finals(fake_telegram, "Taken over.") == 1, "the answer", second)
        wait_for(lambda: holding(second), "the status file naming the new holder", second)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
        if second is not None:
            stop(second)
    assert finals(fake_telegram, "Taken over.") == 1
