"""File operations on a path beneath a reach root, every step through a descriptor.

Each function opens the root, then the path beneath it with no symlink followed
(`Opener`), and works on what it opened: a read reads the fd it checked is a regular
file, a write creates a temp file in the directory fd and renames it over the name (a
rename never follows a link at its destination), a removal unlinks by name in the
directory fd. Blocking functions: `FsStorage` calls them off the event loop.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import secrets
import stat

from seam.contracts.storage import StorageEntry
from seam.services.storage.beneath import Opener, open_root, real_path

_READ = os.O_RDONLY | os.O_NONBLOCK  # a FIFO swapped in must not block the read


def _changed(rel: str) -> OSError:
    return OSError(errno.ELOOP, os.strerror(errno.ELOOP), rel)


def read_bytes(opener: Opener, root: str, rel: str) -> bytes:
    root_fd = open_root(root)
    try:
        fd = opener.open(root_fd, rel, _READ)
    finally:
        os.close(root_fd)
    with open(fd, "rb", closefd=True) as f:
        kind = os.fstat(fd).st_mode
        if stat.S_ISDIR(kind):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), rel)
        if not stat.S_ISREG(kind):
            raise OSError(errno.EINVAL, "not a regular file", rel)
        return f.read()


def write_bytes(opener: Opener, root: str, rel: str, data: bytes) -> None:
    """Temp file in the same directory fd, then rename over the name: readers never see
    half a file, and an existing file keeps its permission bits."""
    parent, name = posixpath.split(rel)
    if not name:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), root)
    try:
        root_fd = open_root(root)
    except FileNotFoundError:
        # A write root that does not exist yet (its parents lie outside every root, where
        # a session cannot write): made as a plain `mkdir -p` would.
        os.makedirs(root, exist_ok=True)  # noqa: PTH103 - a str path
        root_fd = open_root(root)
    try:
        dir_fd = opener.open_dir(root_fd, parent, create=True)
    finally:
        os.close(root_fd)
    try:
        _replace(dir_fd, name, data)
    finally:
        os.close(dir_fd)


def _replace(dir_fd: int, name: str, data: bytes) -> None:
    try:
        old = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        mode = None
    else:
        if stat.S_ISLNK(old.st_mode):
            raise _changed(name)  # resolved as a file or missing; a link now
        if stat.S_ISDIR(old.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
        mode = stat.S_IMODE(old.st_mode)
    temp = f".{name}.{secrets.token_hex(4)}.tmp"
    # O_EXCL with 0o666 lets the umask pick a new file's mode, as a plain open would.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(temp, flags, 0o666, dir_fd=dir_fd)
    try:
        with open(fd, "wb", closefd=True) as out:
            out.write(data)
            out.flush()
            if mode is not None:
                os.fchmod(out.fileno(), mode)
            os.fsync(out.fileno())
        os.replace(temp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp, dir_fd=dir_fd)
        raise


def list_entries(opener: Opener, root: str, rel: str) -> list[StorageEntry]:
    """A directory's entries, sorted by name. A symlink shows as its target only when the
    target stays beneath the same root; anything else shows like a dangling link."""
    base = f"{root.rstrip('/')}/{rel}".rstrip("/") or "/"
    root_fd = open_root(root)
    try:
        fd = opener.open(root_fd, rel, os.O_RDONLY | os.O_DIRECTORY)
        try:
            with os.scandir(fd) as it:
                found = [_entry(opener, root, root_fd, base, e) for e in it]
        finally:
            os.close(fd)
    finally:
        os.close(root_fd)
    found.sort(key=_entry_name)
    return found


def _entry(opener: Opener, root: str, root_fd: int, base: str, e: os.DirEntry[str]) -> StorageEntry:
    path = posixpath.join(base, e.name)
    try:
        if e.is_symlink():
            kind, size = _link_target(opener, root, root_fd, path)
            return StorageEntry(e.name, path, stat.S_ISDIR(kind), 0 if stat.S_ISDIR(kind) else size)
        is_dir = e.is_dir(follow_symlinks=False)
        size = 0 if is_dir else e.stat(follow_symlinks=False).st_size
    except OSError:  # a file gone mid-listing
        is_dir, size = False, 0
    return StorageEntry(e.name, path, is_dir, size)


def _link_target(opener: Opener, root: str, root_fd: int, path: str) -> tuple[int, int]:
    """Mode and size of where a link in the listing points, if beneath `root`; else
    (0, 0), so nothing about a file outside the root is shown."""
    real = real_path(path)
    prefix = root.rstrip("/") + "/"
    if real != root and not real.startswith(prefix):
        return 0, 0
    fd = opener.open(root_fd, real[len(prefix) :] if real != root else "", os.O_PATH)
    try:
        info = os.fstat(fd)
    finally:
        os.close(fd)
    return info.st_mode, info.st_size


def _entry_name(entry: StorageEntry) -> str:
    return entry.name


def exists(opener: Opener, root: str, rel: str) -> bool:
    root_fd = open_root(root)
    try:
        os.close(opener.open(root_fd, rel, os.O_PATH))
    except (FileNotFoundError, NotADirectoryError):
        return False
    finally:
        os.close(root_fd)
    return True


def remove(opener: Opener, root: str, rel: str) -> None:
    """Unlink the entry itself (a link, never what it points to); never a directory."""
    parent, name = posixpath.split(rel)
    if not name:
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), root)
    root_fd = open_root(root)
    try:
        dir_fd = opener.open_dir(root_fd, parent)
    finally:
        os.close(root_fd)
    try:
        if stat.S_ISDIR(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
        os.unlink(name, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)
