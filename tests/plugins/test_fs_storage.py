"""FsStorage on real files, and ScopedStorage(FsStorage) refusing every way out of reach."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from seam.contracts.storage import AccessDenied, NotFound, Storage, StorageError
from seam.core.storage import ScopedStorage
from seam.services.storage.fs import FsStorage


@pytest.fixture
def fs() -> FsStorage:
    return FsStorage()


def test_satisfies_the_storage_protocol(fs: FsStorage) -> None:
    assert isinstance(fs, Storage)


async def test_write_then_read_round_trips_text_exactly(fs: FsStorage, tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "notes.md"
    text = "héllo\r\nwörld\n"
    await fs.write_text(str(target), text)
    assert target.read_bytes() == text.encode("utf-8")
    assert await fs.read_text(str(target)) == text


async def test_write_is_atomic_and_leaves_no_temp_files(fs: FsStorage, tmp_path: Path) -> None:
    target = tmp_path / "f.txt"
    target.write_text("old")
    target.chmod(0o640)
    inode_before = target.stat().st_ino
    await fs.write_text(str(target), "new")
    assert target.read_text() == "new"
    # Replaced by rename (a new inode), keeping the user's permissions, no litter left.
    assert target.stat().st_ino != inode_before
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.txt"]


async def test_failed_write_keeps_old_content(fs: FsStorage, tmp_path: Path) -> None:
    target = tmp_path / "d"
    target.mkdir()
    with pytest.raises(StorageError, match="is a directory"):
        await fs.write_text(str(target), "x")
    assert target.is_dir()
    assert list(target.iterdir()) == []
    assert [p.name for p in tmp_path.iterdir()] == ["d"]


async def test_write_through_symlink_updates_the_target(fs: FsStorage, tmp_path: Path) -> None:
    real = tmp_path / "real.txt"
    real.write_text("a")
    link = tmp_path / "link.txt"
    link.symlink_to(real)
    await fs.write_text(str(link), "b")
    assert link.is_symlink()
    assert real.read_text() == "b"


async def test_read_errors_name_the_path(fs: FsStorage, tmp_path: Path) -> None:
    missing = tmp_path / "missing.txt"
    with pytest.raises(NotFound, match=r"no such file or directory: .*missing\.txt"):
        await fs.read_text(str(missing))
    with pytest.raises(StorageError, match="is a directory"):
        await fs.read_text(str(tmp_path))
    binary = tmp_path / "img.png"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00")
    with pytest.raises(StorageError, match=r"img\.png is not UTF-8 text \(it looks binary\)"):
        await fs.read_text(str(binary))


def test_permission_denied_maps_to_access_denied(tmp_path: Path) -> None:
    # Tests run as root here, where file modes deny nothing, so the OS error is raised
    # directly into the mapping every FsStorage call goes through.
    from seam.services.storage.fs import _os_errors

    locked = str(tmp_path / "locked.txt")
    with (
        pytest.raises(AccessDenied, match=r"permission denied: .*locked\.txt"),
        _os_errors(locked),
    ):
        raise PermissionError(13, "Permission denied", locked)


async def test_list_dir_is_sorted_with_sizes(fs: FsStorage, tmp_path: Path) -> None:
    (tmp_path / "b.txt").write_text("12345")
    (tmp_path / "a").mkdir()
    (tmp_path / "c.txt").write_text("")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    entries = await fs.list_dir(str(tmp_path))
    assert [(e.name, e.is_dir, e.size) for e in entries] == [
        ("a", True, 0),
        ("b.txt", False, 5),
        ("c.txt", False, 0),
        ("dangling", False, 0),
    ]
    assert entries[1].path == str(tmp_path / "b.txt")
    with pytest.raises(NotFound, match="not a directory"):
        await fs.list_dir(str(tmp_path / "b.txt"))
    with pytest.raises(NotFound, match="no such file"):
        await fs.list_dir(str(tmp_path / "nope"))


async def test_exists_and_remove(fs: FsStorage, tmp_path: Path) -> None:
    f = tmp_path / "f.txt"
    f.write_text("x")
    assert await fs.exists(str(f))
    assert await fs.exists(str(tmp_path))
    assert not await fs.exists(str(tmp_path / "nope"))
    assert not await fs.exists(str(f / "under-a-file"))
    await fs.remove(str(f))
    assert not f.exists()
    with pytest.raises(NotFound):
        await fs.remove(str(f))
    with pytest.raises(StorageError, match="is a directory, not a file"):
        await fs.remove(str(tmp_path))
    assert tmp_path.is_dir()


def test_resolve_is_canonical(fs: FsStorage, tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    canonical = os.path.realpath(tmp_path)
    assert fs.resolve(str(tmp_path / "alias" / ".." / "alias" / "x")) == f"{canonical}/real/x"
    assert fs.resolve("relative") == os.path.realpath(Path.cwd() / "relative")
    with pytest.raises(StorageError, match="NUL byte"):
        fs.resolve("a\x00b")


# --- ScopedStorage over the real filesystem -------------------------------------------


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    work = tmp_path / "work"
    outside = tmp_path / "outside"
    ref = tmp_path / "reference"
    for d in (work, outside, ref):
        d.mkdir()
    (work / "inside.txt").write_text("in")
    (outside / "secret.txt").write_text("top secret")
    (ref / "doc.txt").write_text("docs")
    return {"work": work, "outside": outside, "ref": ref}


def scoped(tree: dict[str, Path], **reach: list[str]) -> ScopedStorage:
    return ScopedStorage(FsStorage(), working_dir=str(tree["work"]), **reach)


async def test_scoped_reads_and_writes_inside_the_working_dir(tree: dict[str, Path]) -> None:
    storage = scoped(tree)
    assert await storage.read_text("inside.txt") == "in"
    await storage.write_text("sub/new.txt", "made")
    assert (tree["work"] / "sub" / "new.txt").read_text() == "made"


async def test_scoped_refuses_dotdot_escape(tree: dict[str, Path]) -> None:
    storage = scoped(tree)
    with pytest.raises(AccessDenied, match=r"read '\.\./outside/secret\.txt' refused: .*outside"):
        await storage.read_text("../outside/secret.txt")
    with pytest.raises(AccessDenied, match="outside the allowed write roots"):
        await storage.write_text("../outside/new.txt", "x")
    assert not (tree["outside"] / "new.txt").exists()


async def test_scoped_refuses_absolute_path_outside(tree: dict[str, Path]) -> None:
    storage = scoped(tree)
    secret = str(tree["outside"] / "secret.txt")
    with pytest.raises(AccessDenied, match="outside the allowed read roots"):
        await storage.read_text(secret)
    with pytest.raises(AccessDenied, match="outside the allowed read roots"):
        await storage.list_dir(str(tree["outside"]))


async def test_scoped_refuses_symlink_pointing_outside(tree: dict[str, Path]) -> None:
    work, outside = tree["work"], tree["outside"]
    (work / "innocent.txt").symlink_to(outside / "secret.txt")
    (work / "docs").symlink_to(outside)
    storage = scoped(tree)
    refusal = r"read 'innocent\.txt' refused: .*secret\.txt is outside"
    with pytest.raises(AccessDenied, match=refusal):
        await storage.read_text("innocent.txt")
    with pytest.raises(AccessDenied, match="outside the allowed write roots"):
        await storage.write_text("innocent.txt", "overwritten")
    with pytest.raises(AccessDenied, match="outside the allowed write roots"):
        await storage.write_text("docs/planted.txt", "x")
    assert (outside / "secret.txt").read_text() == "top secret"
    assert not (outside / "planted.txt").exists()


async def test_scoped_read_root_is_not_writable(tree: dict[str, Path]) -> None:
    storage = scoped(tree, read=[".", str(tree["ref"])], write=["."])
    doc = str(tree["ref"] / "doc.txt")
    assert await storage.read_text(doc) == "docs"
    with pytest.raises(AccessDenied, match="outside the allowed write roots"):
        await storage.write_text(doc, "changed")
    with pytest.raises(AccessDenied, match="outside the allowed write roots"):
        await storage.remove(doc)
    assert (tree["ref"] / "doc.txt").read_text() == "docs"


async def test_scoped_always_denies_credentials(tree: dict[str, Path]) -> None:
    ssh = tree["work"] / ".ssh"
    ssh.mkdir()
    (ssh / "id_ed25519").write_text("PRIVATE KEY")
    storage = scoped(tree)
    with pytest.raises(AccessDenied, match=r"id_ed25519 is always denied"):
        await storage.read_text(".ssh/id_ed25519")
    with pytest.raises(AccessDenied, match="always denied"):
        await storage.list_dir(".ssh")
    with pytest.raises(AccessDenied, match="always denied"):
        await storage.write_text(".ssh/authorized_keys", "attacker key")
    assert not (ssh / "authorized_keys").exists()


async def test_scoped_remove_unlinks_a_symlink_not_its_target(tree: dict[str, Path]) -> None:
    work = tree["work"]
    (work / "real.txt").write_text("keep me", encoding="utf-8")
    (work / "link.txt").symlink_to(work / "real.txt")
    await scoped(tree).remove("link.txt")
    assert not (work / "link.txt").is_symlink()
    assert (work / "real.txt").read_text(encoding="utf-8") == "keep me"
