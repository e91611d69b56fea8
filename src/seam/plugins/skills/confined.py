"""Reading a file of a skill folder that a sandboxed command may be changing.

Project skills live in the working directory, where a command in the sandbox can swap a
file for a symlink at any moment, also between the check that a path stays inside the
skill and the read. So the read opens the resolved path with no link followed at its
last component, then asks the kernel where the descriptor really is
(`/proc/self/fd/N`): if that is not the path that was checked (a directory on the way
became a link), nothing is read. What is read is then the file that was checked.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC  # a FIFO must not block


def read_confined(root: Path, target: Path, limit: int | None = None) -> bytes:
    """The bytes of `target` (resolved, inside the resolved `root`). OSError (ELOOP) when
    the path changed after it was resolved; ValueError when it is over `limit` bytes or
    not a regular file; other OSErrors as `open` raises them."""
    if target != root and root not in target.parents:
        raise OSError(errno.EXDEV, "outside the skill folder", str(target))
    fd = os.open(target, _FLAGS)
    with open(fd, "rb", closefd=True) as f:
        if os.readlink(f"/proc/self/fd/{fd}") != str(target):  # noqa: PTH115 - a str path
            raise OSError(errno.ELOOP, "the path changed while it was opened", str(target))
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"{target.name} is not a regular file")
        data = f.read() if limit is None else f.read(limit + 1)
    if limit is not None and len(data) > limit:
        raise ValueError(f"{target.name} is over {limit:,} bytes")
    return data


def text_of(data: bytes) -> str:
    """UTF-8 text with newlines as a text-mode read gives them (`\r\n` and `\r` as `\n`).
    Raises UnicodeDecodeError."""
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
