"""Documents sent in a chat are saved beneath the working directory on the real disk, and
never through a link a sandboxed command planted there: at `chat-files` itself, at the
exact file name, or into a denied `$SEAM_HOME` inside the working directory. The sender
gets one line saying so, one line is logged, and the turn goes on.

Before the gateway wrote through a confined storage, each of the three links had the
sender's text written outside (`SOUL.md` overwritten, or a new file in `$SEAM_HOME`).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from seam.contracts.chat import Attachment
from seam.core.execution import InMemoryExecutionStore
from seam.core.scripted_model import ScriptedModel, text_step
from seam.services.storage.fs import FsStorage
from tests.gateway.fake_chat import FakePlatform
from tests.gateway.harness import gateway_running, make_runtime, until

SOUL = "the personality, never to be overwritten\n"
SENT = "the sender's document\n"
REFUSAL = "I could not save notes.txt in my working directory."


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    root = Path(os.path.realpath(tmp_path))
    work, home, inner_home = root / "work", root / "seam-home", root / "work" / ".seam"
    for folder in (work, home, inner_home):
        folder.mkdir()
    (home / "SOUL.md").write_text(SOUL)
    (inner_home / "SOUL.md").write_text(SOUL)
    return {"root": root, "work": work, "home": home, "inner_home": inner_home}


def document() -> Attachment:
    async def fetch() -> bytes:
        return SENT.encode()

    return Attachment("document", "notes.txt", "text/plain", len(SENT), fetch)


def plant(tree: dict[str, Path], where: str) -> None:
    """The links a sandboxed command could leave in the working directory."""
    folder = tree["work"] / "chat-files"
    if where == "folder":
        folder.symlink_to(tree["home"])
        return
    folder.mkdir()
    target = tree["home"] if where == "file" else tree["inner_home"]
    (folder / "1000-notes.txt").symlink_to(target / "SOUL.md")


def snapshot(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("where", ["folder", "file", "into-denied-home"])
async def test_a_planted_link_never_gets_the_document_written_through_it(
    tree: dict[str, Path], where: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    plant(tree, where)
    homes = {name: snapshot(tree[name]) for name in ("home", "inner_home")}
    store = InMemoryExecutionStore()
    runtime = make_runtime(
        ScriptedModel([text_step("got it")]),
        store,
        storage=FsStorage(),
        working_dir=str(tree["work"]),
        fs_deny=(str(tree["inner_home"]),),
    )
    platform = FakePlatform()
    with caplog.at_level(logging.WARNING, logger="seam.gateway"):
        async with gateway_running(runtime, platform, tmp_path, working_dir=str(tree["work"])):
            msg = platform.say("read this", attachments=[document()])
            await until(platform, lambda: "got it" in platform.sent_texts(), "the answer")
    assert msg.message_id == "1000"  # the name the links were planted at
    assert {name: snapshot(tree[name]) for name in ("home", "inner_home")} == homes
    assert platform.sent_texts() == [REFUSAL, "got it"]
    [sub] = await store.submissions()
    assert sub.input == "read this"  # no file named to the model
    [line] = [r.getMessage() for r in caplog.records if "not saving" in r.getMessage()]
    assert line.startswith("not saving notes.txt: write ") and "\n" not in line


async def test_a_document_is_saved_on_disk_and_links_inside_are_followed(
    tree: dict[str, Path], tmp_path: Path
) -> None:
    (tree["work"] / "inbox").mkdir()
    (tree["work"] / "chat-files").symlink_to("inbox")  # stays inside: allowed
    store = InMemoryExecutionStore()
    runtime = make_runtime(
        ScriptedModel([text_step("got it")]),
        store,
        storage=FsStorage(),
        working_dir=str(tree["work"]),
    )
    platform = FakePlatform()
    async with gateway_running(runtime, platform, tmp_path, working_dir=str(tree["work"])):
        msg = platform.say("read this", attachments=[document()])
        await until(platform, lambda: "got it" in platform.sent_texts(), "the answer")
    assert (tree["work"] / "inbox" / f"{msg.message_id}-notes.txt").read_text() == SENT
    [sub] = await store.submissions()
    assert f"chat-files/{msg.message_id}-notes.txt" in sub.input
    assert platform.sent_texts() == ["got it"]
