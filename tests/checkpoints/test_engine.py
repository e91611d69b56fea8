"""`ShadowCheckpoints` against a real git on temporary directories: what a snapshot keeps,
byte-exact restore, diffs, the project's own `.git` left alone, prune and budget."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from seam.contracts.checkpoints import CheckpointEngine, CheckpointError, CheckpointSettings
from seam.services.checkpoints import ShadowCheckpoints

GIT_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent"}


def engine(tmp_path: Path, **settings: object) -> ShadowCheckpoints:
    return ShadowCheckpoints(
        tmp_path / "checkpoints",
        CheckpointSettings(**settings),
        base_env=GIT_ENV,  # type: ignore[arg-type]
    )


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_bytes(b"print('hi')\r\n")
    (root / "data.bin").write_bytes(bytes(range(256)))
    (root / "run.sh").write_bytes(b"#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    (root / "link").symlink_to("src/main.py")
    return root


def tree(root: Path) -> dict[str, tuple[bytes, int] | str]:
    """Every file's bytes and mode, every symlink's target (the project's .git aside)."""
    out: dict[str, tuple[bytes, int] | str] = {}
    for path in sorted(root.rglob("*")):
        rel = str(path.relative_to(root))
        if rel == ".git" or rel.startswith(".git/"):
            continue
        if path.is_symlink():
            out[rel] = os.readlink(path)
        elif path.is_file():
            out[rel] = (path.read_bytes(), path.stat().st_mode & 0o777)
    return out


async def test_a_snapshot_is_a_commit_reused_while_nothing_changes(tmp_path: Path) -> None:
    cps = engine(tmp_path)
    assert isinstance(cps, CheckpointEngine)
    root = project(tmp_path)
    first = await cps.snapshot(str(root), session_key="s")
    assert len(first) == 40
    assert await cps.snapshot(str(root), session_key="s") == first
    (root / "src" / "main.py").write_bytes(b"print('bye')\n")
    second = await cps.snapshot(str(root), session_key="s")
    assert second != first
    diff = await cps.diff(str(root), first, second)
    assert [(c.kind, c.path) for c in diff.changes] == [("M", "src/main.py")]
    assert "-print('hi')" in diff.text and "+print('bye')" in diff.text


async def test_restore_is_byte_exact(tmp_path: Path) -> None:
    cps = engine(tmp_path)
    root = project(tmp_path)
    before = tree(root)
    cp = await cps.snapshot(str(root), session_key="s")
    (root / "src" / "main.py").write_bytes(b"changed")
    (root / "data.bin").unlink()
    (root / "run.sh").chmod(0o644)
    (root / "link").unlink()
    (root / "link").symlink_to("elsewhere")
    (root / "made" / "deep").mkdir(parents=True)
    (root / "made" / "deep" / "new.txt").write_text("new")
    diff = await cps.diff(str(root), cp)
    assert {c.path: c.kind for c in diff.changes} == {
        "src/main.py": "M",
        "data.bin": "D",
        "run.sh": "M",
        "link": "M",
        "made/deep/new.txt": "A",
    }
    await cps.restore(str(root), cp, [c.path for c in diff.changes])
    assert tree(root) == before
    assert not (root / "made").exists()  # the directories the new file needed go too
    assert (await cps.diff(str(root), cp)).changes == ()


async def test_restore_touches_only_the_paths_given(tmp_path: Path) -> None:
    cps = engine(tmp_path)
    root = project(tmp_path)
    cp = await cps.snapshot(str(root), session_key="s")
    (root / "src" / "main.py").write_bytes(b"agent")
    (root / "data.bin").write_bytes(b"person")
    await cps.restore(str(root), cp, ["src/main.py"])
    assert (root / "src" / "main.py").read_bytes() == b"print('hi')\r\n"
    assert (root / "data.bin").read_bytes() == b"person"


async def test_restore_refuses_paths_that_leave_the_directory(tmp_path: Path) -> None:
    cps = engine(tmp_path)
    root = project(tmp_path)
    cp = await cps.snapshot(str(root), session_key="s")
    for bad in ("../outside", "/etc/passwd", "src/../../x", ""):
        with pytest.raises(CheckpointError):
            await cps.restore(str(root), cp, [bad])
    (tmp_path / "outside").mkdir()
    (root / "src").rename(root / "src-real")
    (root / "src").symlink_to(tmp_path / "outside")
    with pytest.raises(CheckpointError, match="outside"):
        await cps.restore(str(root), cp, ["src/main.py"])
    assert list((tmp_path / "outside").iterdir()) == []


async def test_what_is_kept(tmp_path: Path) -> None:
    cps = engine(tmp_path, max_file_mb=0.001, ignore=("node_modules", "*.log"))
    root = project(tmp_path)
    (root / "node_modules" / "pkg").mkdir(parents=True)
    (root / "node_modules" / "pkg" / "index.js").write_text("x")
    (root / "debug.log").write_text("log")
    (root / "big.bin").write_bytes(b"x" * 5000)
    (root / ".gitignore").write_text(".env\n")
    (root / ".env").write_text("SECRET=1\n")  # the project ignores it; undo must not
    cp = await cps.snapshot(str(root), session_key="s")
    listed = _git(cps, root, "ls-tree", "-r", "--name-only", cp).split()
    assert ".env" in listed and "src/main.py" in listed and "link" in listed
    assert not [
        p for p in listed if p.startswith("node_modules") or p.endswith((".log", "big.bin"))
    ]
    # A kept file that grows over the limit is dropped from later checkpoints.
    (root / "data.bin").write_bytes(b"y" * 5000)
    later = await cps.snapshot(str(root), session_key="s")
    assert "data.bin" not in _git(cps, root, "ls-tree", "-r", "--name-only", later).split()


async def test_the_projects_own_git_is_never_touched(tmp_path: Path) -> None:
    root = project(tmp_path)
    env = {**GIT_ENV, "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "p", "GIT_AUTHOR_EMAIL": "p@x"}
    env |= {"GIT_COMMITTER_NAME": "p", "GIT_COMMITTER_EMAIL": "p@x"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "mine"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    hooks = root / ".git" / "hooks" / "pre-commit"
    hooks.write_text("#!/bin/sh\ntouch HOOK_RAN\n")
    hooks.chmod(0o755)
    own = _snapshot_of(root / ".git")
    # An inherited GIT_DIR naming the project's repository must not be followed.
    cps = ShadowCheckpoints(
        tmp_path / "checkpoints",
        base_env={**GIT_ENV, "GIT_DIR": str(root / ".git"), "GIT_INDEX_FILE": "x"},
    )
    cp = await cps.snapshot(str(root), session_key="s")
    (root / "src" / "main.py").write_text("edited")
    await cps.restore(str(root), cp, ["src/main.py"])
    assert _snapshot_of(root / ".git") == own
    assert not (root / "HOOK_RAN").exists()
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=root, env=env, capture_output=True
    )
    assert status.stdout == b""


async def test_concurrent_snapshots_of_one_directory(tmp_path: Path) -> None:
    cps = engine(tmp_path)
    root = project(tmp_path)
    ids = await asyncio.gather(*(cps.snapshot(str(root), session_key=f"s{i}") for i in range(5)))
    assert len(set(ids)) == 1
    assert await cps.sessions() == [f"s{i}" for i in range(5)]


async def test_prune_by_session_and_budget(tmp_path: Path) -> None:
    cps = engine(tmp_path, budget_mb=1000)
    root = project(tmp_path)
    (root / "a.bin").write_bytes(os.urandom(200_000))
    old = await cps.snapshot(str(root), session_key="old")
    (root / "a.bin").write_bytes(os.urandom(200_000))
    await cps.snapshot(str(root), session_key="new")
    used = await cps.disk_usage()
    assert used > 400_000
    assert await cps.sessions() == ["new", "old"]
    await cps.prune(["old"])
    assert await cps.sessions() == ["new"]
    assert await cps.disk_usage() < used
    with pytest.raises(CheckpointError):
        await cps.diff(str(root), old)
    tight = engine(tmp_path, budget_mb=0.01)
    await tight.prune_to_budget(keep=["new"])
    assert await tight.sessions() == ["new"]  # kept though over budget: it was asked for
    await tight.prune_to_budget()
    assert await tight.sessions() == []


async def test_errors_are_checkpoint_errors(tmp_path: Path) -> None:
    cps = engine(tmp_path)
    root = project(tmp_path)
    with pytest.raises(CheckpointError, match="no such directory"):
        await cps.snapshot(str(tmp_path / "missing"), session_key="s")
    with pytest.raises(CheckpointError, match="absolute"):
        await cps.snapshot("relative/dir", session_key="s")
    await cps.snapshot(str(root), session_key="s")
    for bad in ("0" * 40, "not-an-id"):
        with pytest.raises(CheckpointError):
            await cps.diff(str(root), bad)


def _git(cps: ShadowCheckpoints, root: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", f"--git-dir={cps.git_dir_for(str(root))}", *args],
        capture_output=True,
        check=True,
        env=GIT_ENV,
    )
    return out.stdout.decode()


def _snapshot_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


async def test_a_directory_too_big_to_keep_is_refused(tmp_path: Path) -> None:
    cps = engine(tmp_path, max_files=3)
    with pytest.raises(CheckpointError, match=r"more than 3\); add its big folders"):
        await cps.snapshot(str(project(tmp_path)), session_key="s")


async def test_the_projects_gitattributes_change_no_byte(tmp_path: Path) -> None:
    cps = engine(tmp_path)
    root = project(tmp_path)
    (root / ".gitattributes").write_text("* text=auto eol=crlf ident\n")
    (root / "mixed.txt").write_bytes(b"unix\nwindows\r\n$Id$\n")
    before = tree(root)
    cp = await cps.snapshot(str(root), session_key="s")
    (root / "mixed.txt").write_bytes(b"gone")
    await cps.restore(str(root), cp, ["mixed.txt", "src/main.py"])
    assert tree(root) == before


async def test_a_deleted_projects_checkpoints_go_entirely(tmp_path: Path) -> None:
    import shutil

    cps = engine(tmp_path)
    root = project(tmp_path)
    await cps.snapshot(str(root), session_key="s")
    shutil.rmtree(root)
    later = engine(tmp_path)  # another process: it finds the repository on disk
    assert await later.sessions() == ["s"]
    await later.prune(["s"])
    assert await later.sessions() == []
    assert list((tmp_path / "checkpoints").iterdir()) == []


async def test_a_linked_session_keeps_its_snapshots_when_the_old_key_is_pruned(
    tmp_path: Path,
) -> None:
    # A rename: the snapshots are named for the new key, then the old key's names go;
    # what the session took before the rename is still there to undo to.
    cps = engine(tmp_path)
    root = project(tmp_path)
    (root / "a.bin").write_bytes(os.urandom(50_000))
    before = await cps.snapshot(str(root), session_key="agent-session:old")
    await cps.link_session("agent-session:old", "agent-session:new")
    assert await cps.sessions() == ["agent-session:new", "agent-session:old"]
    await cps.prune(["agent-session:old"])
    assert await cps.sessions() == ["agent-session:new"]
    (root / "a.bin").write_bytes(b"changed")
    assert "a.bin" in [change.path for change in (await cps.diff(str(root), before)).changes]
