"""Putting files back as a checkpoint had them, byte for byte.

Only the paths asked for are touched (a person's other edits stay). Each file present in
the checkpoint is rewritten through a temporary file and a rename (a crash leaves the old
or the new content, never half); its executable bit and symlink-ness come back with it.
A file absent from the checkpoint is deleted, and the directories its creation left
behind go when they are empty and the checkpoint had none there. Every path must stay
inside the directory: no `..`, no absolute path, no symlinked parent that leads out.
"""

from __future__ import annotations

import asyncio
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from seam.contracts.checkpoints import CheckpointError
from seam.services.checkpoints.git import Git

_LINK = "120000"
_EXEC = "100755"
_CHUNK = 500  # paths per ls-tree call (argument lists have limits)


@dataclass(frozen=True, slots=True)
class _Entry:
    mode: str
    blob: str
    path: str


async def restore(git: Git, work_tree: Path, checkpoint: str, paths: Sequence[str]) -> None:
    """Make each of `paths` what it was at `checkpoint` (see the module docstring)."""
    wanted = sorted({check_path(p) for p in paths})
    if not wanted:
        return
    entries = await _entries(git, checkpoint, wanted)
    blobs = await _blobs(git, [e.blob for e in entries.values()])
    gone = [p for p in wanted if p not in entries]
    await asyncio.to_thread(_write_all, work_tree, list(entries.values()), blobs)
    if gone:
        parents = sorted({str(q) for p in gone for q in PurePosixPath(p).parents if str(q) != "."})
        kept = await _dirs_in(git, checkpoint, parents)
        await asyncio.to_thread(_delete_all, work_tree, gone, kept)


def check_path(path: str) -> str:
    """`path` as a clean relative "/"-path, or `CheckpointError` when it could leave."""
    pure = PurePosixPath(path)
    if not path or pure.is_absolute() or ".." in pure.parts or str(pure) == ".":
        raise CheckpointError(f"not a path inside the directory: {path!r}")
    return str(pure)


async def _entries(git: Git, checkpoint: str, paths: list[str]) -> dict[str, _Entry]:
    found: dict[str, _Entry] = {}
    for start in range(0, len(paths), _CHUNK):
        chunk = paths[start : start + _CHUNK]
        out = await git("ls-tree", "-z", "-r", "--full-tree", checkpoint, "--", *chunk)
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, name = record.split(b"\t", 1)
            mode, kind, blob = meta.decode().split()
            path = name.decode(errors="surrogateescape")
            if kind == "blob" and path in chunk:
                found[path] = _Entry(mode=mode, blob=blob, path=path)
    return found


async def _blobs(git: Git, ids: list[str]) -> dict[str, bytes]:
    """Each blob's bytes, read in one `cat-file --batch`."""
    unique = sorted(set(ids))
    if not unique:
        return {}
    out = await git("cat-file", "--batch", stdin="".join(f"{i}\n" for i in unique).encode())
    blobs: dict[str, bytes] = {}
    at = 0
    for blob in unique:
        header_end = out.index(b"\n", at)
        name, kind, size = out[at:header_end].decode().split()
        if kind != "blob":
            raise CheckpointError(f"checkpoint object {blob} is a {kind}")
        start = header_end + 1
        blobs[name] = out[start : start + int(size)]
        at = start + int(size) + 1
    return blobs


async def _dirs_in(git: Git, checkpoint: str, dirs: list[str]) -> set[str]:
    """Which of `dirs` the checkpoint has (as directories)."""
    if not dirs:
        return set()
    query = "".join(f"{checkpoint}:{d}\n" for d in dirs).encode()
    out = await git("cat-file", "--batch-check", stdin=query)
    lines = out.decode(errors="replace").splitlines()
    return {d for d, line in zip(dirs, lines, strict=False) if line.split()[1:2] == ["tree"]}


def _inside(work_tree: Path, path: str) -> Path:
    """The file's path, once its parent is known to resolve inside the work tree."""
    target = work_tree / path
    root = os.path.realpath(work_tree)
    parent = os.path.realpath(target.parent)
    if parent != root and not parent.startswith(root + os.sep):
        raise CheckpointError(f"{path}: its directory leads outside {work_tree}")
    return target


def _write_all(work_tree: Path, entries: list[_Entry], blobs: dict[str, bytes]) -> None:
    for entry in entries:
        target = _inside(work_tree, entry.path)
        if target.is_dir() and not target.is_symlink():
            raise CheckpointError(f"{entry.path} is a directory now; not replaced")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _write_one(target, entry.mode, blobs[entry.blob])
        except OSError as exc:
            raise CheckpointError(f"cannot restore {entry.path}: {exc.strerror}") from None


def _write_one(target: Path, mode: str, content: bytes) -> None:
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=".seam-restore-")
    temp = Path(name)
    try:
        if mode == _LINK:
            os.close(fd)
            temp.unlink()
            temp.symlink_to(os.fsdecode(content))
        else:
            with os.fdopen(fd, "wb") as out:
                out.write(content)
            temp.chmod(_file_mode(target, executable=mode == _EXEC))
        temp.replace(target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _file_mode(target: Path, *, executable: bool) -> int:
    """The file's current permissions (a new file's usual ones) with the x bits as kept."""
    try:
        st = target.lstat()
        base = 0o644 if stat.S_ISLNK(st.st_mode) else st.st_mode & 0o7777
    except OSError:
        base = 0o644  # not the umask: reading it means changing it, process-wide
    base &= ~0o111
    return base | ((base & 0o444) >> 2) if executable else base


def _delete_all(work_tree: Path, paths: list[str], kept_dirs: set[str]) -> None:
    for path in paths:
        target = _inside(work_tree, path)
        try:
            if target.is_symlink() or target.is_file():
                target.unlink()
        except OSError as exc:
            raise CheckpointError(f"cannot remove {path}: {exc.strerror}") from None
        for parent in PurePosixPath(path).parents:
            name = str(parent)
            if name == "." or name in kept_dirs:
                break
            try:
                (work_tree / name).rmdir()
            except OSError:
                break  # not empty (or not ours to remove): stop climbing
