"""`/undo` in a chat gateway, end to end: the real `seam gateway` process, its Telegram
adapter talking the real wire format to the fake Bot API (a process on loopback), the
model a scripted OpenAI-compatible server, real files and checkpoints. A turn creates a
file, edits another and deletes a third with `rm` (approved with the Always button);
`/undo` puts all three back byte for byte and the next turn's request no longer holds it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("seam.plugins.chat.telegram")

from tests.gateway.test_gateway_telegram import (
    OWNER,
    _message_id_of,
    fake_telegram,  # noqa: F401  (the fixture)
    gateway_cli,
    texts,
)
from tests.support.fake_telegram import RemoteFakeTelegram
from tests.support.gateway_process import stop, wait_for
from tests.support.openai_server import OpenAIServer, text_reply, tool_call_reply

OLD = b"\x00binary old file\xff\n"


def replies_starting(fake: RemoteFakeTelegram, start: str) -> list[str]:
    return [t for t in texts(fake) if t.startswith(start)]


def approval_call(fake: RemoteFakeTelegram) -> dict[str, Any] | None:
    for c in fake.calls("sendMessage"):
        if c["params"].get("reply_markup"):
            return c
    return None


def press_always(fake: RemoteFakeTelegram, call: dict[str, Any]) -> None:
    markup = call["params"]["reply_markup"]
    markup = json.loads(markup) if isinstance(markup, str) else markup
    buttons = [b for row in markup["inline_keyboard"] for b in row]
    always = next(b for b in buttons if b["text"] == "Always")
    message_id = _message_id_of(fake, call)
    fake.push_callback(always["callback_data"], message_id=message_id, chat_id=OWNER, user_id=OWNER)


def test_undo_in_telegram_restores_three_files_and_the_model_forgets(
    tmp_path: Path,
    openai_server: OpenAIServer,
    fake_telegram: RemoteFakeTelegram,  # noqa: F811
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_telegram)
    (cli.project / "notes.txt").write_bytes(b"first version\n")
    (cli.project / "old.bin").write_bytes(OLD)
    before = {p.name: p.read_bytes() for p in cli.project.iterdir()}
    openai_server.push(
        tool_call_reply(
            [
                ("write_file", json.dumps({"path": "new.txt", "content": "created\n"})),
                ("write_file", json.dumps({"path": "notes.txt", "content": "UNDONE-EDIT\n"})),
                ("terminal", json.dumps({"command": "rm old.bin"})),
            ]
        ),
        text_reply("Tidied."),
        text_reply("Fresh answer."),
    )
    gateway = cli.popen("gateway")
    try:
        fake_telegram.push_message("tidy up", chat_id=OWNER, user_id=OWNER)
        done = lambda: "Tidied." in texts(fake_telegram)  # noqa: E731
        wait_for(lambda: approval_call(fake_telegram) is not None or done(), "rm", gateway)
        call = approval_call(fake_telegram)
        if call is not None:
            press_always(fake_telegram, call)
        wait_for(done, "the turn's answer", gateway)
        assert not (cli.project / "old.bin").exists()
        fake_telegram.push_message("/undo", chat_id=OWNER, user_id=OWNER)
        wait_for(lambda: bool(replies_starting(fake_telegram, "Undid turn 1")), "undo", gateway)
        fake_telegram.push_message("what now?", chat_id=OWNER, user_id=OWNER)
        wait_for(lambda: "Fresh answer." in texts(fake_telegram), "the next answer", gateway)
        fake_telegram.push_message("/undo", chat_id=OWNER, user_id=OWNER)
        wait_for(lambda: bool(replies_starting(fake_telegram, "Nothing to undo")), "none", gateway)
    finally:
        stop(gateway)
    assert {p.name: p.read_bytes() for p in cli.project.iterdir()} == before
    [reply] = replies_starting(fake_telegram, "Undid turn 1")
    for words in ("deleted new.txt", "restored notes.txt", "recreated old.bin"):
        assert words in reply
    sent = json.dumps(openai_server.chat_requests[-1].body["messages"])
    assert "tidy up" not in sent and "UNDONE-EDIT" not in sent and "what now?" in sent
