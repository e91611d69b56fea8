"""The threads the SQLite store runs its statements on, so the event loop never waits on disk.

Small writes and reads by key (a turn's journal, a claim, a settlement, a session's row)
run on the event loop's own connection (`sqlite_inline`: no thread hop, commits grouped
per turn of the loop, never waiting). Everything else, and whatever that connection could
not do without waiting, runs here.

One writer thread owns a connection for the writes (SQLite has one writer at a time
anyway). It commits in groups: whatever writes are queued when it starts a transaction run
in that one `BEGIN IMMEDIATE`, in order, each in a savepoint of its own (`sqlite_groups`:
a failing write is undone alone and hears its error, the others commit together), and
none of their callers hears back before the `COMMIT`. Each write is still atomic, gets its
own outcome and is durable when its `await` returns, while a thousand sessions writing at
once pay for a few commits instead of a thousand. Only when the transaction itself is lost
(the commit failed, or SQLite ended it after an I/O error) is each write run in a
transaction of its own. The writer thread also checkpoints the WAL (that waits for the
disk), when the loop's connection asks.

Reads run on reader threads, each with its own connection: in WAL mode they see every
committed write and never wait for the writer, so a long `search` or `export_all` holds
up neither the loop nor the writes. A read queued after a write's `await` returned sees
that write. An in-memory database (":memory:") is private to one connection, so there
every read and write goes to the writer thread.

A job for an idle thread is handed over at once; jobs for a busy one, submitted in the
same turn of the event loop, are handed over as one batch. Results come back through
`call_soon_threadsafe`, one wake-up for however many finished meanwhile: on a busy
machine every wake-up is a context switch.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from seam.services.sessions.sqlite_faults import is_outage, unavailable
from seam.services.sessions.sqlite_groups import Job, commit_group, rollback, tell
from seam.services.sessions.sqlite_inline import LoopConnection

log = logging.getLogger("seam.sqlite")

T = TypeVar("T")

# Writes a group takes before it stops taking more batches (a batch is never split): bounds
# how long a caller waits for its commit.
MAX_GROUP = 256
DEFAULT_READERS = 2
# How long a checkpoint's RESTART waits for readers (and holds writers back): `_checkpoint`.
RESTART_WAIT_MS = 50


_STOP = None
# A writer-thread job of its own: checkpoint the WAL (asked by the loop's connection).
_CHECKPOINT = object()


class _Handed:
    """How many writes the loop's connection handed to the writer thread are not answered
    yet; counted down as their outcomes are told (one subtraction per batch, where a
    callback per write's future cost a scheduled call each)."""

    __slots__ = ("count",)

    def __init__(self) -> None:
        self.count = 0


class _Deliveries:
    """Hands finished jobs' outcomes back to their loops, with one wake-up per batch."""

    def __init__(self, handed: _Handed | None = None) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[asyncio.AbstractEventLoop, list[tuple[Job, bool, Any]]] = {}
        self._handed = handed

    def put(self, job: Job, ok: bool, value: Any) -> None:
        loop = job.loop
        with self._lock:
            pending = self._waiting.get(loop)
            if pending is not None:
                pending.append((job, ok, value))
                return
            self._waiting[loop] = [(job, ok, value)]
        try:
            loop.call_soon_threadsafe(self._deliver, loop)
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            with self._lock:
                self._waiting.pop(loop, None)

    def _deliver(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            done = self._waiting.pop(loop, [])
        handed = 0
        for job, ok, value in done:
            tell(job, ok, value)
            handed += job.handed
        if handed and self._handed is not None:
            self._handed.count -= handed


class _ConnectionThread:
    """A daemon thread that runs jobs on its connection, in order (the connection stays
    its owner's to close)."""

    def __init__(
        self,
        db: sqlite3.Connection,
        name: str,
        jobs: queue.SimpleQueue[Any],
        handed: _Handed | None = None,
    ) -> None:
        self.db = db
        self._jobs = jobs
        self._deliveries = _Deliveries(handed)
        self._thread = threading.Thread(target=self._main, name=name, daemon=True)
        self._thread.start()

    def join(self) -> None:
        self._thread.join()

    def _main(self) -> None:
        while True:
            batch = self._jobs.get()
            if batch is _STOP:
                return
            self._run(batch)
            # Nothing of the last batch stays referenced here: its jobs hold the store,
            # which must stay collectable (dropping it stops these threads).
            del batch

    def _run(self, batch: list[Job]) -> None:
        for job in batch:
            try:
                value = job.work(self.db)
            except Exception as exc:
                self._done(job, False, exc)
            else:
                self._done(job, True, value)

    def _done(self, job: Job, ok: bool, value: Any) -> None:
        self._deliveries.put(job, ok, value)


class _WriterThread(_ConnectionThread):
    """Runs writes in group commits (see the module docstring) and WAL checkpoints."""

    _checkpoint_asked = False
    # Set while a checkpoint's RESTART runs: the loop's connection hands its writes over
    # meanwhile (`SQLiteThreads._writer_busy`), or, writing in a tight loop, it would
    # hold the write lock nearly all the time and the RESTART would never get it.
    restarting = False

    def ask_checkpoint(self) -> None:
        """Queue a checkpoint, unless one is queued and not started yet: asked faster than
        this thread gets round to them (the loop's Python holding the GIL), they would
        pile up and run back to back on a WAL that had not moved."""
        if not self._checkpoint_asked:
            self._checkpoint_asked = True
            self._jobs.put(_CHECKPOINT)

    def _main(self) -> None:
        stopping = False
        while not stopping:
            group, stopping = self._next_group()
            if group:
                self._run(group)
            del group  # see _ConnectionThread._main

    def _run(self, group: list[Job]) -> None:
        if len(group) == 1:
            self._commit_alone(group[0])
            return
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            # Another process held the write lock past the busy timeout: each job alone
            # would wait as long again, so they all hear it now.
            for job in group:
                self._done(job, False, exc)
            return
        if not commit_group(self.db, group, self._done):
            # The transaction itself was lost: each job alone, to hear its own error.
            for job in group:
                self._commit_alone(job)

    def _next_group(self) -> tuple[list[Job], bool]:
        """Every write queued now (waiting for the first), and whether to stop after;
        checkpoints asked meanwhile run on the way."""
        jobs = self._jobs
        group: list[Job] = []
        batch = jobs.get()
        while True:
            if batch is _STOP:
                return group, True
            if batch is _CHECKPOINT:
                self._checkpoint_asked = False
                self._checkpoint()
            else:
                group.extend(batch)
            if len(group) >= MAX_GROUP:
                return group, False
            try:
                batch = jobs.get_nowait()
            except queue.Empty:
                if group:
                    return group, False
                batch = jobs.get()

    def _checkpoint(self) -> None:
        """Copy the WAL into the database file, then have the next write start the WAL
        from its beginning.

        PASSIVE does the copying and waits for nobody but the disk (this thread may). But
        the loop's connection keeps committing meanwhile, and a WAL starts over only once
        everything in it was copied: under steady writes it never was, and the WAL grew
        without bound (200 MB after 750 benchmark turns, every read searching its index).
        So a RESTART follows, with little left to copy, while this process's writes wait
        for it here (`restarting`); it holds writers back while it waits for readers, so
        it waits `RESTART_WAIT_MS` at most and is tried again at the next checkpoint when
        readers were in the way."""
        db = self.db
        try:
            db.execute("PRAGMA wal_checkpoint(PASSIVE)")
            waited = db.execute("PRAGMA busy_timeout").fetchone()[0]
            db.execute(f"PRAGMA busy_timeout = {RESTART_WAIT_MS}")
            self.restarting = True
            try:
                db.execute("PRAGMA wal_checkpoint(RESTART)")
            finally:
                self.restarting = False
                db.execute(f"PRAGMA busy_timeout = {int(waited)}")
        except sqlite3.Error:
            log.warning("WAL checkpoint failed", exc_info=True)

    def _commit_alone(self, job: Job) -> None:
        db = self.db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                value = job.work(db)
                db.execute("COMMIT")
            except BaseException:
                rollback(db)
                raise
        except Exception as exc:
            self._done(job, False, exc)
        else:
            self._done(job, True, value)


class SQLiteThreads:
    """The writer and reader threads of one store (see the module docstring)."""

    def __init__(
        self,
        writer: sqlite3.Connection,
        open_reader: Callable[[], sqlite3.Connection] | None,
        *,
        readers: int = DEFAULT_READERS,
        label: str = "sqlite",
        open_loop: Callable[[], sqlite3.Connection] | None = None,
    ) -> None:
        self._writes: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._reads: queue.SimpleQueue[Any] = self._writes
        connections: list[sqlite3.Connection] = []
        try:
            if open_reader is not None and readers > 0:
                for _ in range(readers):
                    connections.append(open_reader())
        except BaseException:
            for db in connections:
                db.close()
            raise
        # Writes the loop's connection handed over, not answered yet (the writer thread
        # counts them down: it holds this, not the store, which must stay collectable).
        self._handed = _Handed()
        self._writer = _WriterThread(writer, f"{label}-writer", self._writes, self._handed)
        self._readers: list[_ConnectionThread] = []
        if connections:
            self._reads = queue.SimpleQueue()
            self._readers = [
                _ConnectionThread(db, f"{label}-reader-{n}", self._reads)
                for n, db in enumerate(connections)
            ]
        self._connections = connections
        # Per event loop, the jobs not handed to a thread yet, by queue; and per queue
        # how many jobs are submitted and not answered yet.
        self._outbox: dict[asyncio.AbstractEventLoop, dict[int, list[Job]]] = {}
        self._in_flight = {id(self._writes): 0, id(self._reads): 0}
        self._closed = False
        # The event loop's own connection (`sqlite_inline`), opened on first use.
        self._open_loop = open_loop
        self._loop_db: LoopConnection | None = None
        # Writes run so far, counted as each runs (`_counted`).
        self.writes = 0
        self._trace: Callable[[str], object] | None = None
        # A store dropped without `aclose` still lets its threads end (they hold no
        # reference to it, so it can be collected).
        self._finalizer = weakref.finalize(
            self, _stop, self._writes, self._reads, len(self._readers)
        )

    async def read(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(db)` on a reader connection (its statements see committed writes)."""
        return await self._submit(self._reads, work)

    async def write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(db)` as one atomic write, committed before this returns."""
        return await self._submit(self._writes, self._counted(work))

    async def read_small(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(db)`, a read of a few rows by key, on the event loop's own connection
        when the store has one (`sqlite_inline`: a thread hop costs more than such a
        read); one that would wait goes to a reader thread."""
        inline = self._loop_connection()
        if inline is not None and inline.may_read(asyncio.get_running_loop()):
            try:
                return inline.read(work)
            except sqlite3.OperationalError as exc:
                if not is_outage(exc):
                    raise
        return await self.read(work)

    async def write_small(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """`work(db)`, a write of a few rows by key, as one atomic write committed before
        this returns: with the other writes of this turn of the event loop on its own
        connection when the store has one (`sqlite_inline`), else on the writer thread."""
        work = self._counted(work)
        inline = self._loop_connection()
        if inline is None:
            return await self._submit(self._writes, work)
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        inline.submit(Job(work, loop, future))
        return await _outcome(future)

    def _counted(
        self, work: Callable[[sqlite3.Connection], T]
    ) -> Callable[[sqlite3.Connection], T]:
        """`work`, counting in `writes` each time it runs (a claim's hints serve until the
        next write runs: `claim_hints`). Never two at once: SQLite lets one connection
        write at a time, whichever thread runs it."""

        def counted(db: sqlite3.Connection) -> T:
            self.writes += 1
            return work(db)

        return counted

    def _loop_connection(self) -> LoopConnection | None:
        """The running loop's connection; None over ":memory:", once closed, or for a
        loop other than the one holding it (those go through the threads)."""
        if self._open_loop is None or self._closed:
            return None
        inline = self._loop_db
        if inline is None:
            try:
                db = self._open_loop()
            except sqlite3.Error:  # the file busy being recovered: the threads, this time
                return None
            db.set_trace_callback(self._trace)
            inline = self._loop_db = LoopConnection(
                db,
                hand_over=self._hand_over,
                writer_busy=self._writer_busy,
                checkpoint=self._writer.ask_checkpoint,
            )
        return inline if inline.held_by(asyncio.get_running_loop()) else None

    def trace(self, callback: Callable[[str], object] | None) -> None:
        """Every statement run on the store's connections to `callback` (None: stop);
        tests count transactions with it. Set before work starts: the threads run on."""
        self._trace = callback
        for db in (self._writer.db, *self._connections):
            db.set_trace_callback(callback)
        if self._loop_db is not None:
            self._loop_db.db.set_trace_callback(callback)

    def _hand_over(self, group: list[Job]) -> None:
        """Writes the loop's connection could not commit without waiting (or a burst):
        the writer thread commits them, waiting for the lock if it must."""
        self._handed.count += len(group)
        for job in group:
            job.handed = True
        self._writes.put(group)

    def _writer_busy(self) -> bool:
        """Whether the writer thread has writes of this process to do. The loop's
        connection then hands its writes over too: they stay in order, and the thread,
        which polls for the lock, is not starved by the loop taking it every turn."""
        return (
            self._handed.count > 0
            or self._in_flight[id(self._writes)] > 0
            or self._writer.restarting
        )

    async def _submit(self, jobs: queue.SimpleQueue[Any], work: Callable[..., T]) -> T:
        if self._closed:
            raise RuntimeError("the session database is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        job = Job(work, loop, future)
        key = id(jobs)
        batches = self._outbox.get(loop)
        if not self._in_flight[key] and (batches is None or key not in batches):
            # Its thread is idle: wake it now (there is nothing to batch this with).
            jobs.put([job])
        else:
            # Its thread is busy: what else this turn of the event loop submits joins
            # this job, and the thread finds them all in one batch when it is done.
            if batches is None:
                batches = self._outbox[loop] = {}
                loop.call_soon(self._post, loop)
            batches.setdefault(key, []).append(job)
        self._in_flight[key] += 1
        try:
            return await _outcome(future)
        finally:
            self._in_flight[key] -= 1

    def _post(self, loop: asyncio.AbstractEventLoop) -> None:
        batches = self._outbox.pop(loop, {})
        for jobs in (self._writes, self._reads):
            batch = batches.pop(id(jobs), None)
            if batch:
                jobs.put(batch)

    def close(self) -> None:
        """Stop the threads once the work queued before has run and close the readers'
        connections (the writer's belongs to the caller). Blocks until then."""
        if self._closed:
            return
        self._closed = True
        self._finalizer()  # runs `_stop` once
        for thread in (*self._readers, self._writer):
            thread.join()
        for db in self._connections:
            db.close()
        if self._loop_db is not None:
            self._loop_db.close()

    async def aclose(self) -> None:
        if not self._closed:
            # What was submitted runs first (a closed loop's writes too: nothing else will).
            inline = self._loop_db
            if inline is not None and inline.held_by(asyncio.get_running_loop()):
                inline.commit()
            self._post(asyncio.get_running_loop())
            await asyncio.to_thread(self.close)


async def _outcome(future: asyncio.Future[T]) -> T:
    try:
        return await future
    except sqlite3.OperationalError as exc:
        if is_outage(exc):  # locked past the busy timeout: a caller may wait it out
            raise unavailable(exc) from exc
        raise


def _stop(writes: queue.SimpleQueue[Any], reads: queue.SimpleQueue[Any], readers: int) -> None:
    if reads is not writes:
        for _ in range(readers):
            reads.put(_STOP)
    writes.put(_STOP)


@contextmanager
def snapshot(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One consistent view for several reads (a no-op inside a write's transaction)."""
    if db.in_transaction:
        yield db
        return
    db.execute("BEGIN")
    try:
        yield db
    finally:
        if db.in_transaction:
            db.execute("COMMIT")
