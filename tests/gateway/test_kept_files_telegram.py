"""A document survives its message's retry on Telegram: the real `seam gateway` as a
subprocess, python-telegram-bot against the fake Bot API in its own process, the model a
scripted OpenAI-compatible server. The first try fails for real: a trigger added to the
gateway's own SQLite file refuses the submission; once it is dropped, the retry reads
the kept copy (the file is fetched from Telegram once), and the copy is deleted after.
A retried message used to tell the model its files were lost."""

from __future__ import annotations

import pytest

pytest.importorskip("seam.plugins.chat.telegram")

from pathlib import Path

from seam.apps.gateway.kept_files import KEPT_DIR
from tests.gateway.test_gateway_telegram import OWNER, fake_telegram, gateway_cli
from tests.gateway.test_never_jam_telegram import has
from tests.support.fake_telegram import RemoteFakeTelegram
from tests.support.gateway_process import sql, stop, wait_for
from tests.support.openai_server import OpenAIServer, text_reply

fake_telegram = fake_telegram  # the fixture, registered here
NOTES = b"remember the milk\n"


def test_a_retried_message_on_telegram_still_has_its_document(
    tmp_path: Path, openai_server: OpenAIServer, fake_telegram: RemoteFakeTelegram
) -> None:
    cli = gateway_cli(tmp_path, openai_server, fake_telegram)
    openai_server.push(text_reply("Read your notes."))
    document = fake_telegram.add_file(NOTES, file_name="notes.txt")
    gateway = cli.popen("gateway")
    try:
        fake_telegram.push_message("/help", chat_id=OWNER, user_id=OWNER)
        wait_for(lambda: has(fake_telegram, OWNER, "/usage"), "the store up", gateway)
        db = cli.home / "sessions.db"
        sql(
            db,
            "CREATE TRIGGER refuse BEFORE INSERT ON submissions WHEN NEW.input LIKE '%notes%' "
            "BEGIN SELECT RAISE(ABORT, 'injected store fault'); END",
        )
        fake_telegram.push_message("read this", chat_id=OWNER, user_id=OWNER, document=document)
        wait_for(lambda: has(fake_telegram, OWNER, "could not handle"), "the error", gateway)
        sql(db, "DROP TRIGGER refuse")
        wait_for(lambda: has(fake_telegram, OWNER, "Read your notes."), "the answer", gateway)
    finally:
        stop(gateway)
    downloads = [c for c in fake_telegram.calls() if c["method"] == "file"]
    assert len(downloads) == 1  # the retry read the kept copy
    [request] = openai_server.chat_requests
    assert "chat-files/" in str(request.body) and "lost" not in str(request.body)
    saved = list((cli.project / "chat-files").iterdir())
    assert [p.read_bytes() for p in saved] == [NOTES]
    kept = cli.home / KEPT_DIR
    assert not kept.exists() or not [p for p in kept.rglob("*") if p.is_file()]
