"""`Storage` on the real filesystem.

No reach checks live here: `ScopedStorage` decorates this and decides what a session may
touch, using `resolve` to see where a path really points (symlinks followed).

The async methods call plain blocking functions on purpose: for ordinary files a direct
syscall is faster than a hop to a worker thread, and a tool waits for the result anyway.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from seam.contracts.storage import AccessDenied, NotFound, StorageEntry, StorageError


class FsStorage:
    def resolve(self, path: str) -> str:
        """Canonical absolute path; relative paths are taken against the process cwd."""
        return os.path.realpath(_valid(path))

    async def read_text(self, path: str) -> str:
        with _os_errors(path):
            data = _read_bytes(_valid(path))
        try:
            # Bytes, not text mode: "\r\n" survives a read/write round trip unchanged.
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise StorageError(f"{path} is not UTF-8 text (it looks binary)") from None

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


@contextmanager
def _os_errors(path: str) -> Iterator[None]:
    """Turn OS errors into storage errors whose message names the path."""
    try:
        yield
    except FileNotFoundError:
        raise NotFound(f"no such file or directory: {path}") from None
    except NotADirectoryError:
        raise NotFound(f"not a directory (or a parent is a file): {path}") from None
    except IsADirectoryError:
        raise StorageError(f"is a directory, not a file: {path}") from None
    except PermissionError:
        raise AccessDenied(f"permission denied: {path}") from None
    except OSError as exc:
        raise StorageError(f"{path}: {exc.strerror or exc}") from None


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
