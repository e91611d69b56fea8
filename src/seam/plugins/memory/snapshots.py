"""The memory block a new session starts with, read again only when a file changed.

Every new session freezes a snapshot of MEMORY.md and USER.md (see `MarkdownMemory.
prefetch`); a server starting a thousand conversations would read and parse both files
a thousand times, on the event loop. Here each snapshot is kept under what `os.stat`
says of the files (inode, size, mtime_ns and ctime_ns; a missing file is None): one
stat per file per new session finds an unchanged pair, and any change is read again.

An edit is seen by the next session whichever way it is made: the `memory` tool and the
CLI write through a temp file and a rename (a new inode), an editor that rewrites in
place changes the size or the times. The one edit a stat cannot see is one in place that
keeps the size within the file system's timestamp tick; it shows once the file is
touched again, or after a restart.

A read (a cache miss) runs in a worker thread, never on the event loop, and sessions
starting together while it is under way share it rather than each starting their own.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from pathlib import Path

# (inode, size, mtime_ns, ctime_ns) of each file, None for one that is missing.
Signature = tuple[tuple[int, int, int, int] | None, ...]


def signature_of(paths: Sequence[str | Path]) -> Signature:
    """What a change to any of `paths` changes: one `os.stat` each."""
    found: list[tuple[int, int, int, int] | None] = []
    for path in paths:
        try:
            stat = os.stat(path)  # noqa: PTH116  # a str: no Path object per call
        except OSError:  # missing or unreadable: the read says which
            found.append(None)
            continue
        found.append((stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns))
    return tuple(found)


class StatCachedText:
    """`read()` (blocking: it opens files) kept under the signature of `paths`."""

    __slots__ = ("_kept", "_paths", "_read", "_reading")

    def __init__(self, paths: Sequence[Path], read: Callable[[], str | None]) -> None:
        self._paths = tuple(str(path) for path in paths)
        self._read = read
        self._kept: tuple[Signature, str | None] | None = None
        self._reading: dict[Signature, asyncio.Future[str | None]] = {}

    async def current(self) -> str | None:
        """The text as the files are now: kept, or read in a thread (shared)."""
        signature = signature_of(self._paths)
        kept = self._kept
        if kept is not None and kept[0] == signature:
            return kept[1]
        pending = self._reading.get(signature)
        if pending is None:
            pending = asyncio.ensure_future(asyncio.to_thread(self._read))
            self._reading[signature] = pending
            pending.add_done_callback(lambda done: self._keep(signature, done))
        return await asyncio.shield(pending)

    def _keep(self, signature: Signature, done: asyncio.Future[str | None]) -> None:
        """Keep a finished read under the signature taken before it (a change while it
        ran gives the next stat another signature, so it is read again)."""
        self._reading.pop(signature, None)
        if not done.cancelled() and done.exception() is None:
            self._kept = (signature, done.result())


__all__ = ["Signature", "StatCachedText", "signature_of"]
