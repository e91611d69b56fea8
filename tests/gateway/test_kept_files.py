"""A message's files, downloaded off the adapter's path and kept for its retries
(`apps/gateway/kept_files.py`), in process over the fake platform, a loopback file
server and a real SQLite store.

- A slow download in one chat does not delay another chat's answer (it did: the
  download ran inside the adapter's delivery, one update at a time).
- A message whose first try fails (a real SQLite fault: a trigger refusing its
  submission) is retried with its document, downloaded once, and its photo refused as
  on a first try (a retry used to say the files were lost); the copies are deleted
  when it is handled, and when it is dead.
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest

from seam.apps.gateway import inbox
from seam.apps.gateway.inbox import LOST, decode, encode
from seam.apps.gateway.kept_files import KeptFiles
from seam.contracts.chat import Attachment, ChatRef, InboundMessage
from seam.core.scripted_model import ScriptedModel, text_step
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.services.storage.fs import FsStorage
from tests.gateway.fake_chat import FakePlatform
from tests.gateway.file_server import file_server
from tests.gateway.harness import gateway_running, make_runtime, section, until

NOTES = b"the notes, line one\n"
PHOTO = Attachment("image", "photo.jpg", "image/jpeg", 2048)
SID = "tg:42:1000"


def texts(platform: FakePlatform, chat: str) -> list[str]:
    shown = (platform.messages[i] for i in platform.order)
    return [m.text for m in shown if m.chat == f"telegram:{chat}"]


def kept(tmp: Path) -> list[str]:
    """What the gateway's file folder holds (files, at any depth)."""
    folder = tmp / "gateway-files"
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def work(tmp_path: Path) -> Path:
    folder = Path(os.path.realpath(tmp_path)) / "work"
    folder.mkdir()
    return folder


def runtime_over(store: SQLiteSessionStore, work: Path, *answers: str) -> object:
    model = ScriptedModel([text_step(a) for a in answers])
    return make_runtime(model, store, storage=FsStorage(), working_dir=str(work))  # type: ignore[arg-type]


async def test_a_slow_download_in_one_chat_does_not_delay_another(
    tmp_path: Path, work: Path
) -> None:
    store = SQLiteSessionStore(str(tmp_path / "sessions.db"))
    runtime = runtime_over(store, work, "for 43", "for 42")
    platform = FakePlatform()
    config = section(allow=("42", "43"))
    async with file_server() as files:
        release = files.hold("notes.txt")
        async with gateway_running(
            runtime,  # type: ignore[arg-type]
            platform,
            tmp_path,
            config=config,
            working_dir=str(work),
        ):
            platform.say("read this", user="42", attachments=[files.document("notes.txt", NOTES)])
            await files.waiting.wait()  # chat 42's download has started, and hangs
            platform.say("hello", user="43")
            await until(platform, lambda: "for 43" in texts(platform, "43"), "the other chat")
            assert texts(platform, "42") == []
            release.set()
            await until(platform, lambda: "for 42" in texts(platform, "42"), "the slow chat")
            assert not platform.pending()
    assert files.gets == ["notes.txt"]
    assert (work / "chat-files" / "1000-notes.txt").read_bytes() == NOTES
    sub = await store.submission(SID)
    assert sub is not None and "chat-files/1000-notes.txt" in sub.input
    assert kept(tmp_path) == []
    await store.aclose()


def refuse_submission(db: Path) -> None:
    """The store refuses to keep submission `SID` until `allow_submission`."""
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TRIGGER submit_fault BEFORE INSERT ON submissions "
            f"WHEN NEW.id = '{SID}' BEGIN SELECT RAISE(ABORT, 'injected store fault'); END"
        )
    conn.close()


def failing_store(
    tmp: Path, monkeypatch: pytest.MonkeyPatch, delays: tuple[float, float]
) -> SQLiteSessionStore:
    """A SQLite store refusing submission `SID` (retried after `delays`)."""
    monkeypatch.setattr(inbox, "DELAYS", delays)
    store = SQLiteSessionStore(str(tmp / "sessions.db"))
    refuse_submission(tmp / "sessions.db")
    return store


def allow_submission(db: Path) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TRIGGER submit_fault")
    conn.close()


async def test_a_retried_message_has_its_files(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = failing_store(tmp_path, monkeypatch, (0.5, 2.0))
    runtime = runtime_over(store, work, "read it")
    platform = FakePlatform()
    async with file_server() as files:
        notes = files.document("notes.txt", NOTES)
        async with gateway_running(runtime, platform, tmp_path, working_dir=str(work)):  # type: ignore[arg-type]
            platform.say("look", attachments=[notes, PHOTO])
            failed = lambda: any("could not handle" in t for t in texts(platform, "42"))  # noqa: E731
            await until(platform, failed, "the error")
            assert len(kept(tmp_path)) == 2  # the document's copy and the update's list
            allow_submission(tmp_path / "sessions.db")
            await until(platform, lambda: "read it" in texts(platform, "42"), "the answer")
    said = texts(platform, "42")
    assert said[0] == "I can't use images here yet."  # said once, on the first try
    assert "could not handle" in said[1] and "injected store fault" in said[1]
    assert said[2:] == ["read it"]
    assert files.gets == ["notes.txt"]  # downloaded once; the retry read the kept copy
    sub = await store.submission(SID)
    assert sub is not None and "lost" not in sub.input
    assert sub.input == "look\n\n[The user sent a file, saved as chat-files/1000-notes.txt]"
    assert (work / "chat-files" / "1000-notes.txt").read_bytes() == NOTES
    assert kept(tmp_path) == []
    await store.aclose()


async def test_a_dead_message_leaves_no_files(
    tmp_path: Path, work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = failing_store(tmp_path, monkeypatch, (0.1, 0.1))
    runtime = runtime_over(store, work)
    platform = FakePlatform()
    async with file_server() as files:
        notes = files.document("notes.txt", NOTES)
        async with gateway_running(runtime, platform, tmp_path, working_dir=str(work)):  # type: ignore[arg-type]
            platform.say("look", attachments=[notes])
            await until(platform, lambda: any("gave up" in t for t in texts(platform, "42")), "x")
    assert files.gets == ["notes.txt"]
    assert kept(tmp_path) == []
    await store.aclose()


def test_a_message_whose_copies_are_gone_names_its_documents_lost(tmp_path: Path) -> None:
    """After a process died mid-download (no list of copies), or with no folder to keep
    them in: the text says the documents were lost; a photo still gets its refusal."""
    notes = Attachment("document", "notes.txt", "text/plain", 20)
    sent = InboundMessage(ChatRef("telegram", "42"), "1000", "42", "u", "look")
    sent = replace(sent, attachments=(notes, PHOTO))
    parked, _ = decode(encode(sent, tried=1))
    for files in (KeptFiles(tmp_path / "gateway-files"), KeptFiles(None)):
        msg = files.restore(SID, parked)
        assert msg.text == f"look\n\n{LOST}"
        assert [a.name for a in msg.attachments] == ["photo.jpg"]
