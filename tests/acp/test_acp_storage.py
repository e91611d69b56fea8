"""ACP editor sessions open files beneath the reach root too: `ClientStorage` (the editor
bridge) is a `BeneathStorage`, so what the editor does not serve itself goes to disk
through a directory descriptor, and a symlink swapped in between the check and the open
reads and writes nothing outside the session's working directory.

Two ways of swapping: deterministic (the inner storage swaps right after the check, the
hook of tests/plugins/test_fs_beneath.py), and for real (the bubblewrap flipper of
tests/plugins/test_file_tools_race.py, 200 rounds of every file tool).

Measured before `ClientStorage` had the `*_beneath` methods (ScopedStorage fell back to
check-then-open by name under it): the deterministic swaps read the outside file and
overwrote the outside `SOUL.md`, and the race leaked in 8 and 31 of 200 rounds (the two
open modes); after: 0 in both.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from seam.apps.acp.storage import CURRENT_SESSION, ClientStorage
from seam.contracts.storage import AccessDenied, BeneathStorage
from seam.contracts.tools import ToolContext
from seam.core.storage import ScopedStorage
from seam.services.sandbox.bwrap import DEFAULT_BWRAP, bwrap_available
from seam.services.storage.fs import FsStorage
from tests.plugins.test_file_tools_race import (  # noqa: F401  (fixtures, used by name)
    ROUNDS,
    Outcome,
    _round,
    assert_nothing_leaked,
    flipper,
    layout,
)
from tests.plugins.test_fs_beneath import SwappingFs, _link_over, make_tree

RACE = pytest.mark.skipif(
    not Path(DEFAULT_BWRAP).exists() or not bwrap_available(),
    reason="bubblewrap cannot run here: the flipper needs it",
)
MODES = pytest.mark.parametrize("openat2", [None, False], ids=["openat2", "nofollow-walk"])
# Which file operations the editor serves (ACP `fs` capabilities); the rest go to disk.
# "off-turn": an editor serving both, asked outside any ACP turn (no session).
EDITORS = pytest.mark.parametrize(
    "editor", ["none", "reads-only", "writes-only", "off-turn"], ids=str
)


class Editor:
    """The editor's side of `fs/read_text_file` and `fs/write_text_file`: records paths."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.writes: dict[str, str] = {}

    async def read(self, session_id: str, path: str) -> str:
        self.reads.append(path)
        return "the editor's buffer"

    async def write(self, session_id: str, path: str, text: str) -> None:
        self.writes[path] = text


@contextmanager
def acp_turn(session: str | None = "acp-1") -> Iterator[None]:
    token = CURRENT_SESSION.set(session)
    try:
        yield
    finally:
        CURRENT_SESSION.reset(token)


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    """The storage tests' tree (`tests/plugins/test_fs_beneath.py`), plus a SOUL.md inside."""
    found = make_tree(tmp_path)
    (found["work"] / "SOUL.md").write_text("mine")
    return found


def bridge(inner: FsStorage, editor: str) -> tuple[ClientStorage, Editor]:
    client = ClientStorage(inner)
    files = Editor()
    if editor == "reads-only":
        client.use_client(files, read=True, write=False)
    elif editor == "writes-only":
        client.use_client(files, read=False, write=True)
    elif editor == "off-turn":
        client.use_client(files, read=True, write=True)
    return client, files


def test_the_editor_bridge_opens_beneath_a_root() -> None:
    assert isinstance(ClientStorage(FsStorage()), BeneathStorage)


def swapper(outside: Path) -> Callable[[str, str], None]:
    """Right after each check, the first component of the checked path becomes a link to
    its outside twin (once): every open below meets a link the check did not see."""
    twins = {"f.txt": outside / "secret.txt", "SOUL.md": outside / "SOUL.md", "d": outside}

    def swap(root: str, rel: str) -> None:
        first = rel.split("/")[0]
        path = Path(root) / first
        if first not in twins or path.is_symlink():
            return
        if path.is_dir():
            path.rename(path.with_name(f"{first}.old"))
            path.symlink_to(twins[first])
        else:
            _link_over(path, twins[first])

    return swap


@MODES
@EDITORS
async def test_a_swapped_link_is_never_followed_by_what_the_disk_serves(
    tree: dict[str, Path], openat2: bool | None, editor: str
) -> None:
    work, outside = tree["work"], tree["outside"]
    inner = SwappingFs(swapper(outside), openat2=openat2)
    client, files = bridge(inner, editor)
    storage = ScopedStorage(client, working_dir=str(work))
    with acp_turn(None if editor == "off-turn" else "acp-1"):
        if editor != "reads-only":
            with pytest.raises(AccessDenied, match=r"secret\.txt is outside"):
                await storage.read_text("f.txt")
            with pytest.raises(AccessDenied, match="outside the allowed read roots"):
                await storage.read_text("d/x.txt")
        if editor != "writes-only":
            with pytest.raises(AccessDenied, match="outside the allowed write roots"):
                await storage.write_text("SOUL.md", "overwritten")
    # Each operation the disk served met its swap between the check and the open.
    assert inner.opens == {"none": 3, "off-turn": 3, "writes-only": 2, "reads-only": 1}[editor]
    assert (outside / "SOUL.md").read_text() == "soul"
    assert sorted(p.name for p in outside.iterdir()) == ["SOUL.md", "secret.txt", "x.txt"]
    assert (files.reads, files.writes) == ([], {})


async def test_what_the_editor_serves_it_opens_itself(tree: dict[str, Path]) -> None:
    """The editor gets the checked, resolved path; the disk is not touched."""
    work = tree["work"]
    (work / "alias.txt").symlink_to("f.txt")  # a link inside the reach: followed
    client, files = bridge(FsStorage(), "off-turn")
    storage = ScopedStorage(client, working_dir=str(work))
    with acp_turn("acp-1"):
        assert await storage.read_text("alias.txt") == "the editor's buffer"
        await storage.write_text("d/x.txt", "edited")
        with pytest.raises(AccessDenied, match="outside the allowed read roots"):
            await storage.read_text(str(tree["outside"] / "secret.txt"))
    assert files.reads == [f"{work}/f.txt"]
    assert files.writes == {f"{work}/d/x.txt": "edited"}
    assert (work / "d" / "x.txt").read_text() == "inside d"


@RACE
@pytest.mark.parametrize("openat2", [None, False], ids=["openat2", "nofollow-walk"])
async def test_symlink_swaps_from_the_sandbox_reach_nothing_outside_an_acp_session(
    layout: dict[str, Path],  # noqa: F811
    flipper: subprocess.Popen[str],  # noqa: F811
    openat2: bool | None,
) -> None:
    """Every file tool of an ACP session whose editor serves no files, 200 rounds."""
    work, home = layout["work"], layout["home"]
    outside_before = sorted(p.name for p in home.iterdir())
    storage = ScopedStorage(ClientStorage(FsStorage(openat2=openat2)), working_dir=str(work))
    ctx = ToolContext(session_key="acp-race", storage=storage, working_dir=str(work))
    outcome = Outcome()
    with acp_turn("acp-race"):
        for _ in range(ROUNDS):
            await _round(ctx, home, outcome)
    assert flipper.poll() is None, "the flipper stopped: the race did not run"
    assert_nothing_leaked(outcome, home, outside_before)
