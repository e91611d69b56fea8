"""One gateway process holds each chat adapter: on a store without a lock of its own
(SQLite) the lock is `flock` on a file, so gateways sharing a home on one machine take
turns; the kernel frees it when the holder dies."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path


class FileLock:
    """`flock` on `path` (`$SEAM_HOME/gateway-<name>.lock`), holding the holder's pid."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    async def acquire(self) -> bool:
        if self._fd is not None:
            return True
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    async def held(self) -> bool:
        return self._fd is not None

    async def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
