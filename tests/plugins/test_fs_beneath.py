"""Opening beneath a reach root: `real_path`, the `Opener` (openat2 and the O_NOFOLLOW
walk), and `ScopedStorage(FsStorage)` when a link is swapped in between check and open.

The swaps here are deterministic: a storage that makes the change right after the
check (inside its `*_beneath` call, before the open) stands in for the racing process
that tests/plugins/test_file_tools_race.py runs for real under bubblewrap.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from seam.contracts.storage import AccessDenied, BeneathStorage, PathChanged, StorageError
from seam.core.storage import OPEN_ATTEMPTS, ScopedStorage
from seam.services.storage.beneath import MAX_SYMLINKS, Opener, open_root, real_path
from seam.services.storage.fs import FsStorage

MODES = pytest.mark.parametrize("openat2", [None, False], ids=["openat2", "nofollow-walk"])


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    return make_tree(tmp_path)


def make_tree(tmp_path: Path) -> dict[str, Path]:
    """A work dir (`f.txt`, `d/x.txt`) and an outside dir of canaries beside it."""
    root = Path(os.path.realpath(tmp_path))
    work, outside = root / "work", root / "outside"
    (work / "d").mkdir(parents=True)
    outside.mkdir()
    (work / "f.txt").write_text("inside")
    (work / "d" / "x.txt").write_text("inside d")
    (outside / "secret.txt").write_text("top secret")
    (outside / "x.txt").write_text("top secret")
    (outside / "SOUL.md").write_text("soul")
    return {"root": root, "work": work, "outside": outside}


@pytest.fixture
def root_fd(tree: dict[str, Path]) -> Iterator[int]:
    fd = open_root(str(tree["work"]))
    yield fd
    os.close(fd)


# --- real_path ------------------------------------------------------------------------


def test_real_path_agrees_with_realpath(tree: dict[str, Path]) -> None:
    work = tree["work"]
    (work / "rel").symlink_to("d")
    (work / "abs").symlink_to(work / "d")
    (work / "d" / "up").symlink_to("..")
    (work / "chain").symlink_to("rel/up/abs")
    for path in ("rel/x.txt", "abs/x.txt", "d/up/f.txt", "chain/x.txt", "rel/../f.txt", "nope/a"):
        full = f"{work}/{path}"
        assert real_path(full) == os.path.realpath(full), path


def test_real_path_gives_up_on_a_loop(tree: dict[str, Path]) -> None:
    (tree["work"] / "a").symlink_to("b")
    (tree["work"] / "b").symlink_to("a")
    with pytest.raises(OSError) as info:
        real_path(f"{tree['work']}/a/x")
    assert info.value.errno == errno.ELOOP
    assert MAX_SYMLINKS == 40


# --- Opener ---------------------------------------------------------------------------


@pytest.mark.parametrize("openat2", [None, False])
def test_opener_opens_plain_paths_and_refuses_any_link(
    tree: dict[str, Path], root_fd: int, openat2: bool | None
) -> None:
    opener = Opener(openat2)
    assert opener.openat2 is (openat2 is None)
    fd = opener.open(root_fd, "d/x.txt", os.O_RDONLY)
    assert os.read(fd, 100) == b"inside d"
    os.close(fd)
    (tree["work"] / "inner").symlink_to("d")  # even a link that stays inside
    (tree["work"] / "out").symlink_to(tree["outside"])
    (tree["work"] / "last").symlink_to("f.txt")
    for rel, flags in [
        ("inner/x.txt", os.O_RDONLY),
        ("out/secret.txt", os.O_RDONLY),
        ("last", os.O_RDONLY),
        ("last", os.O_PATH),
        ("out", os.O_RDONLY | os.O_DIRECTORY),
    ]:
        with pytest.raises(OSError) as info:
            opener.open(root_fd, rel, flags)
        assert info.value.errno == errno.ELOOP, rel
    with pytest.raises(OSError) as info:
        opener.open(root_fd, "../outside/secret.txt", os.O_RDONLY)
    assert info.value.errno == errno.EXDEV
    with pytest.raises(FileNotFoundError):
        opener.open(root_fd, "d/missing", os.O_RDONLY)


@pytest.mark.parametrize("openat2", [None, False])
def test_open_dir_creates_missing_dirs_but_never_through_a_link(
    tree: dict[str, Path], root_fd: int, openat2: bool | None
) -> None:
    opener = Opener(openat2)
    os.close(opener.open_dir(root_fd, "new/deeper", create=True))
    assert (tree["work"] / "new" / "deeper").is_dir()
    (tree["work"] / "out").symlink_to(tree["outside"])
    with pytest.raises(OSError) as info:
        opener.open_dir(root_fd, "out/planted", create=True)
    assert info.value.errno == errno.ELOOP
    assert not (tree["outside"] / "planted").exists()


# --- a swap between the check and the open ----------------------------------------------


class SwappingFs(FsStorage):
    """Runs `swap(root, rel)` after the check and before each open: the racing process."""

    def __init__(self, swap: Callable[[str, str], None], *, openat2: bool | None) -> None:
        super().__init__(openat2=openat2)
        self.swap = swap
        self.opens = 0

    async def read_beneath(self, root: str, rel: str) -> str:
        self.opens += 1
        self.swap(root, rel)
        return await super().read_beneath(root, rel)

    async def write_beneath(self, root: str, rel: str, text: str) -> None:
        self.opens += 1
        self.swap(root, rel)
        await super().write_beneath(root, rel, text)


def _once(action: Callable[[], None]) -> Callable[[str, str], None]:
    done: list[bool] = []

    def swap(root: str, rel: str) -> None:
        if not done:
            done.append(True)
            action()

    return swap


def _link_over(path: Path, target: Path) -> None:
    tmp = path.with_name(f"{path.name}.swap")
    tmp.symlink_to(target)
    tmp.replace(path)


@MODES
async def test_a_file_swapped_for_a_link_out_is_never_read(
    tree: dict[str, Path], openat2: bool | None
) -> None:
    work, outside = tree["work"], tree["outside"]
    fs = SwappingFs(
        _once(lambda: _link_over(work / "f.txt", outside / "secret.txt")), openat2=openat2
    )
    storage = ScopedStorage(fs, working_dir=str(work))
    with pytest.raises(AccessDenied, match=r"read 'f\.txt' refused: .*secret\.txt is outside"):
        await storage.read_text("f.txt")
    assert fs.opens == 1  # the open failed on the link; the second check refused it


@MODES
async def test_a_directory_swapped_for_a_link_out_is_never_entered(
    tree: dict[str, Path], openat2: bool | None
) -> None:
    work, outside = tree["work"], tree["outside"]

    def swap() -> None:
        (work / "d").rename(work / "d.old")
        (work / "d").symlink_to(outside)

    fs = SwappingFs(_once(swap), openat2=openat2)
    storage = ScopedStorage(fs, working_dir=str(work))
    with pytest.raises(AccessDenied, match="outside the allowed read roots"):
        await storage.read_text("d/x.txt")


@MODES
async def test_a_write_never_lands_through_a_swapped_link(
    tree: dict[str, Path], openat2: bool | None
) -> None:
    work, outside = tree["work"], tree["outside"]
    (work / "SOUL.md").write_text("mine")
    fs = SwappingFs(
        _once(lambda: _link_over(work / "SOUL.md", outside / "SOUL.md")), openat2=openat2
    )
    storage = ScopedStorage(fs, working_dir=str(work))
    with pytest.raises(AccessDenied, match="outside the allowed write roots"):
        await storage.write_text("SOUL.md", "overwritten")
    assert (outside / "SOUL.md").read_text() == "soul"
    assert sorted(p.name for p in outside.iterdir()) == ["SOUL.md", "secret.txt", "x.txt"]


@MODES
async def test_a_path_that_keeps_changing_is_refused(
    tree: dict[str, Path], openat2: bool | None
) -> None:
    """Each check finds a plain file inside; each open finds a link there instead."""
    work = tree["work"]
    count: list[int] = []

    def swap(root: str, rel: str) -> None:
        count.append(1)
        fresh = work / f"fresh{len(count)}.txt"
        fresh.write_text("inside")
        _link_over(Path(root) / rel, fresh)

    fs = SwappingFs(swap, openat2=openat2)
    storage = ScopedStorage(fs, working_dir=str(work))
    with pytest.raises(AccessDenied, match=r"read 'f\.txt' refused: .* kept changing") as info:
        await storage.read_text("f.txt")
    assert "\n" not in str(info.value)
    assert fs.opens == OPEN_ATTEMPTS


@MODES
async def test_links_inside_the_reach_are_still_followed(
    tree: dict[str, Path], openat2: bool | None
) -> None:
    work = tree["work"]
    ref = tree["root"] / "reference"
    ref.mkdir()
    (ref / "doc.txt").write_text("docs")
    (work / "alias.txt").symlink_to("f.txt")
    (work / "dlink").symlink_to(work / "d")
    (work / "docs").symlink_to(ref)  # into another root of the reach
    fs = FsStorage(openat2=openat2)
    storage = ScopedStorage(fs, working_dir=str(work), read=[".", str(ref)])
    assert await storage.read_text("alias.txt") == "inside"
    assert await storage.read_text("dlink/x.txt") == "inside d"
    assert await storage.read_text("docs/doc.txt") == "docs"
    await storage.write_text("alias.txt", "changed")
    assert (work / "alias.txt").is_symlink()  # the link keeps pointing where it did
    assert (work / "f.txt").read_text() == "changed"
    await storage.write_text("dlink/new.txt", "made")
    assert (work / "d" / "new.txt").read_text() == "made"
    entries = {e.name: (e.is_dir, e.size) for e in await storage.list_dir(".")}
    assert entries["alias.txt"] == (False, 7)
    assert entries["dlink"] == (True, 0)
    assert await storage.exists("dlink/x.txt")
    assert not await storage.exists("dlink/missing")


@MODES
async def test_listing_shows_nothing_of_a_link_target_outside(
    tree: dict[str, Path], openat2: bool | None
) -> None:
    work, outside = tree["work"], tree["outside"]
    (work / "leak").symlink_to(outside / "secret.txt")
    (work / "leakdir").symlink_to(outside)
    storage = ScopedStorage(FsStorage(openat2=openat2), working_dir=str(work))
    entries = {e.name: (e.is_dir, e.size) for e in await storage.list_dir(".")}
    assert entries["leak"] == (False, 0)
    assert entries["leakdir"] == (False, 0)


@MODES
async def test_fifo_is_refused_without_blocking(
    tree: dict[str, Path], openat2: bool | None
) -> None:
    os.mkfifo(tree["work"] / "pipe")
    storage = ScopedStorage(FsStorage(openat2=openat2), working_dir=str(tree["work"]))
    with pytest.raises(Exception, match="not a regular file"):
        await storage.read_text("pipe")


async def test_fs_storage_is_a_beneath_storage_and_maps_changes(tree: dict[str, Path]) -> None:
    fs = FsStorage()
    assert isinstance(fs, BeneathStorage)
    (tree["work"] / "l").symlink_to("f.txt")
    with pytest.raises(PathChanged, match="changed while it was opened"):
        await fs.read_beneath(str(tree["work"]), "l")


@MODES
async def test_a_write_root_that_does_not_exist_yet_is_made(
    tree: dict[str, Path], openat2: bool | None
) -> None:
    work = tree["work"]
    fs = FsStorage(openat2=openat2)
    storage = ScopedStorage(fs, working_dir=str(work), read=["build"], write=["build"])
    await storage.write_text("build/out/report.txt", "done")
    assert (work / "build" / "out" / "report.txt").read_text() == "done"


@MODES
async def test_remove_unlinks_the_entry_and_never_through_a_swapped_parent(
    tree: dict[str, Path], openat2: bool | None
) -> None:
    work, outside = tree["work"], tree["outside"]
    storage = ScopedStorage(FsStorage(openat2=openat2), working_dir=str(work))
    await storage.remove("d/x.txt")
    assert not (work / "d" / "x.txt").exists()
    with pytest.raises(StorageError, match="is a directory"):
        await storage.remove("d")
    (work / "d").rmdir()
    (work / "d").symlink_to(outside)  # the parent is now a way out
    with pytest.raises(AccessDenied, match="outside the allowed write roots"):
        await storage.remove("d/x.txt")
    assert (outside / "x.txt").exists()


@pytest.mark.parametrize("code", [errno.ENOSYS, errno.EPERM], ids=["ENOSYS", "EPERM"])
async def test_a_kernel_without_openat2_falls_back_to_the_walk(
    tree: dict[str, Path], code: int
) -> None:
    """An old kernel (ENOSYS) or a seccomp filter (EPERM): the first call says so, every
    later one walks, and the walk refuses links the same way."""
    calls: list[str] = []

    def refusing(dir_fd: int, path: str, flags: int, mode: int) -> int:
        calls.append(path)
        raise OSError(code, os.strerror(code), path)

    opener = Opener(None, call=refusing)
    assert opener.openat2
    work, outside = tree["work"], tree["outside"]
    (work / "out").symlink_to(outside)
    storage = ScopedStorage(FsStorage(opener=opener), working_dir=str(work))
    assert await storage.read_text("d/x.txt") == "inside d"
    assert not opener.openat2
    assert calls == ["d/x.txt"]
    with pytest.raises(AccessDenied, match="outside the allowed read roots"):
        await storage.read_text("out/secret.txt")
    await storage.write_text("d/y.txt", "made")
    assert calls == ["d/x.txt"]
