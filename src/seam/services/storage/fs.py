"""`Storage` on the real filesystem.

No reach checks live here: `ScopedStorage` decorates this and decides what a session may
touch, using `resolve` to see where a path really points (symlinks followed), and then
the `*_beneath` methods (`BeneathStorage`) to open exactly that path beneath the reach
root that holds it, following no symlink on the way (`rooted.py`, `beneath.py`): a link
swapped in after the check raises `PathChanged` instead of being followed.

The `*_beneath` methods run in a worker thread: a path a sandboxed process controls may
be slow (or a FIFO), and the event loop serves every session. The plain path methods are
for callers without a reach (the ACP editor bridge's fallback, tests).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from seam.contracts.storage import AccessDenied, NotFound, PathChanged, StorageEntry, StorageError
from seam.services.storage import rooted
from seam.services.storage.beneath import CHANGED_ERRNOS, Opener, real_path


class FsStorage:
    """`openat2`: None uses `openat2(2)` where the kernel has it; False always walks the
    path one `O_NOFOLLOW` component at a time (what runs where `openat2` is missing).
    `opener` replaces both (a test's `Opener` whose kernel answers ENOSYS)."""

    def __init__(self, *, openat2: bool | None = None, opener: Opener | None = None) -> None:
        self._opener = opener or Opener(openat2)

    @property
    def uses_openat2(self) -> bool:
        return self._opener.openat2

    def resolve(self, path: str) -> str:
        """Canonical absolute path; relative paths are taken against the process cwd."""
        path = _valid(path)
        if not path.startswith("/"):
            path = f"{os.getcwd()}/{path}"  # noqa: PTH109 - str in, str out
        try:
            return real_path(path)
        except OSError:
            raise StorageError(f"too many levels of symbolic links: {path}") from None

    async def read_beneath(self, root: str, rel: str) -> str:
        shown = _shown(root, rel)
        with _os_errors(shown):
            data = await asyncio.to_thread(rooted.read_bytes, self._opener, root, rel)
        return _decode(data, shown)

    async def write_beneath(self, root: str, rel: str, text: str) -> None:
        data = text.encode("utf-8")
        with _os_errors(_shown(root, rel)):
            await asyncio.to_thread(rooted.write_bytes, self._opener, root, rel, data)

    async def list_beneath(self, root: str, rel: str) -> list[StorageEntry]:
        with _os_errors(_shown(root, rel)):
            return await asyncio.to_thread(rooted.list_entries, self._opener, root, rel)

    async def exists_beneath(self, root: str, rel: str) -> bool:
        with _os_errors(_shown(root, rel)):
            return await asyncio.to_thread(rooted.exists, self._opener, root, rel)

    async def remove_beneath(self, root: str, rel: str) -> None:
        with _os_errors(_shown(root, rel)):
            await asyncio.to_thread(rooted.remove, self._opener, root, rel)

    async def read_text(self, path: str) -> str:
        with _os_errors(path):
            data = _read_bytes(_valid(path))
        return _decode(data, path)

    async def write_text(self, path: str, text: str) -> None:
        # Symlinks are followed so a link keeps pointing where it did.
        target = self.resolve(path)
        with _os_errors(path):
            _write_atomic(Path(target), text.encode("utf-8"))

    async def list_dir(self, path: str) -> list[StorageEntry]:
        with _os_errors(path):
            return _list_dir(_valid(path))

    async def exists(self, path: str) -> bool:
        try:
            with _os_errors(path):
                os.stat(_valid(path))  # noqa: PTH116 - a str path; no Path object per call
        except NotFound:
            return False
        return True

    async def remove(self, path: str) -> None:
        with _os_errors(path):
            _remove_file(_valid(path))


def _shown(root: str, rel: str) -> str:
    return f"{root.rstrip('/')}/{rel}".rstrip("/") or "/"


def _decode(data: bytes, path: str) -> str:
    try:
        # Bytes, not text mode: "\r\n" survives a read/write round trip unchanged.
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise StorageError(f"{path} is not UTF-8 text (it looks binary)") from None


@contextmanager
def _os_errors(path: str) -> Iterator[None]:
    """Turn OS errors into storage errors whose message names the path."""
    try:
        yield
    except OSError as exc:
        raise _storage_error(exc, path) from None


def _storage_error(exc: OSError, path: str) -> StorageError:
    if exc.errno in CHANGED_ERRNOS:
        return PathChanged(f"{path} changed while it was opened")
    if isinstance(exc, FileNotFoundError):
        return NotFound(f"no such file or directory: {path}")
    if isinstance(exc, NotADirectoryError):
        return NotFound(f"not a directory (or a parent is a file): {path}")
    if isinstance(exc, IsADirectoryError):
        return StorageError(f"is a directory, not a file: {path}")
    if isinstance(exc, PermissionError):
        return AccessDenied(f"permission denied: {path}")
    return StorageError(f"{path}: {exc.strerror or exc}")


def _valid(path: str) -> str:
    if "\x00" in path:
        raise StorageError(f"invalid path {path!r}: contains a NUL byte")
    return path


def _read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _write_atomic(target: Path, data: bytes) -> None:
    """Write a temp file beside the target, then rename it over: readers never see a
    half-written file, and a crash leaves the old content intact."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    # O_EXCL with 0o666 lets the umask pick a new file's mode, as a plain open would.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            temp.chmod(mode)
        temp.replace(target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _list_dir(path: str) -> list[StorageEntry]:
    entries: list[StorageEntry] = []
    with os.scandir(path) as it:
        for entry in it:
            try:
                is_dir = entry.is_dir()
                size = 0 if is_dir else entry.stat().st_size
            except OSError:  # a dangling symlink or a file gone mid-listing
                is_dir, size = False, 0
            entries.append(StorageEntry(entry.name, entry.path, is_dir, size))
    entries.sort(key=_entry_name)
    return entries


def _entry_name(entry: StorageEntry) -> str:
    return entry.name


def _remove_file(path: str) -> None:
    target = Path(path)
    if stat.S_ISDIR(target.lstat().st_mode):
        raise IsADirectoryError(path)
    target.unlink()
