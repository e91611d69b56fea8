"""The event loop's own connection: small writes committed in groups, small reads at once.

A thread hop costs more than a small statement: two context switches, the GIL passed back
and forth, a wake-up of the loop. So the store's small writes (a turn's journal, a claim, a
settlement: a few rows found by key) are committed on the event loop's thread, the writes
one turn of the loop submits in one transaction at the end of that turn (no wake-up at all
for a single turn's write), and its small reads by key run there at once. A burst of
writes (`THREAD_GROUP` or more in one loop turn) goes to the writer thread as one group
instead, and a burst of reads to the reader threads: one hop for many is cheap, and the
threads' SQLite work (which releases the GIL) then runs beside the loop's Python on
another core.

Why this never blocks the loop: the connection has `busy_timeout` 0, so a `BEGIN
IMMEDIATE` that would wait for another connection's write lock (another process's, or the
store's writer thread's) fails at once and the group goes to the writer thread, which may
wait (while the thread has writes of this process to do, the loop hands its own over too:
they keep their order, and the thread is not starved). The file is in WAL mode with
`synchronous = NORMAL`: a commit appends to the WAL and does not wait for the disk, and a
read never waits for a writer (one that would all the same goes to a reader thread). The
automatic WAL checkpoint, which does wait for the disk, is off here; the writer thread
checkpoints instead, asked every `CHECKPOINT_CHANGES` rows changed here. A group whose
transaction is lost (an I/O error, a full disk) goes to the writer thread too, which
commits each write alone so every caller hears its own error.
Durability is the same as on the writer thread: nobody hears back before the `COMMIT`.
"""

from __future__ import annotations

import asyncio
import sqlite3
import weakref
from collections.abc import Callable
from typing import TypeVar

from seam.services.sessions.sqlite_groups import Job, commit_group, tell

T = TypeVar("T")

# Rows changed here between two WAL checkpoints (the WAL grows by a page or so per row).
CHECKPOINT_CHANGES = 5000
# A group this big goes to the writer thread: one hop for many writes is cheap, and the
# thread's SQLite work (which releases the GIL) runs beside the loop's Python on another
# core, where on the loop's thread it would hold up every session in the process.
THREAD_GROUP = 8


class LoopConnection:
    """One connection used only on the thread of the event loop that holds it."""

    def __init__(
        self,
        db: sqlite3.Connection,
        *,
        hand_over: Callable[[list[Job]], None],
        writer_busy: Callable[[], bool],
        checkpoint: Callable[[], None],
    ) -> None:
        self.db = db
        self.loop: asyncio.AbstractEventLoop | None = None
        self._hand_over = hand_over
        self._writer_busy = writer_busy
        self._checkpoint = checkpoint
        self._pending: list[Job] = []
        self._reads = 0  # small reads run here in this turn of the loop
        self._changes_at_checkpoint = db.total_changes

    def held_by(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether `loop` may use this connection: the first loop to ask holds it, and a
        closed loop lets the next one have it (`asyncio.run` twice, as tests do)."""
        if self.loop is loop:
            return True
        if self.loop is None or (self.loop.is_closed() and not self._pending):
            self.loop = loop
            return True
        return False

    def submit(self, job: Job) -> None:
        """Queue a write for the commit at the end of this turn of the loop (`call_soon`
        runs after the callbacks already due, so their writes join the group)."""
        self._pending.append(job)
        if len(self._pending) == 1:
            job.loop.call_soon(self.commit)

    def may_read(self, loop: asyncio.AbstractEventLoop) -> bool:
        """Whether a small read may run here now: not past `THREAD_GROUP` of them in this
        turn of the loop (a burst's reads go to the reader threads, beside the loop)."""
        self._reads += 1
        if self._reads == 1:  # by weak reference: this must not keep a dropped store alive
            loop.call_soon(_new_turn, weakref.ref(self))
        return self._reads <= THREAD_GROUP

    def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(db)` now; raises `sqlite3.OperationalError` (busy) when it would wait."""
        return work(self.db)

    def commit(self) -> None:
        """Commit what is pending here, or hand it to the writer thread: a group too big
        to be worth committing on the loop's thread, one that would have to wait, or any
        while the thread has writes to do (they stay in order; see `writer_busy`)."""
        group, self._pending = self._pending, []
        if not group:
            return
        if len(group) >= THREAD_GROUP or self._writer_busy() or not self._commit(group):
            self._hand_over(group)
            return
        if self.db.total_changes - self._changes_at_checkpoint >= CHECKPOINT_CHANGES:
            self._changes_at_checkpoint = self.db.total_changes
            self._checkpoint()

    def _commit(self, group: list[Job]) -> bool:
        """True when the group committed and its callers were told (a failing write
        undone alone); False when nothing was kept and nobody told."""
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error:  # another connection writes: never wait for it here
            return False
        return commit_group(self.db, group, tell)

    def close(self) -> None:
        self.db.close()


def _new_turn(ref: weakref.ref[LoopConnection]) -> None:
    connection = ref()
    if connection is not None:
        connection._reads = 0
