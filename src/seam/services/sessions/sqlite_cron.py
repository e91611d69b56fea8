"""The `CronStore` on SQLite: jobs and the run ledger in the session database.

A view over the store's own connection threads (`SQLiteSessionStore.cron`), not a mixin:
the session store already has a `delete` and a `touch` of its own. `claim_slot` is one
`INSERT OR IGNORE` on the ledger's unique `slot_key`: SQLite has one writer at a time,
so of two processes claiming a slot exactly one inserts the row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from functools import partial

from seam.contracts.cron import (
    CronJob,
    CronJobNotFound,
    CronRun,
    DeliveryStatus,
    RunOutcome,
    SlotClaim,
    is_failure,
)
from seam.services.sessions.cron_rows import (
    JOB_COLUMNS,
    CronSQL,
    job_from_row,
    job_params,
    new_run_params,
    run_from_row,
)
from seam.services.sessions.sqlite_threads import SQLiteThreads

# Appended to the store's MIGRATIONS (services/sessions/sqlite.py).
CRON_MIGRATION: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS cron_jobs (
        id TEXT PRIMARY KEY,
        prompt TEXT NOT NULL,
        schedule TEXT NOT NULL,
        schedule_kind TEXT NOT NULL,
        created_at REAL NOT NULL,
        next_due_at REAL,
        personality TEXT,
        tz TEXT NOT NULL,
        deliver TEXT NOT NULL,
        missed TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        paused INTEGER NOT NULL,
        continue_session INTEGER NOT NULL,
        urgent INTEGER NOT NULL,
        kind TEXT NOT NULL,
        consecutive_failures INTEGER NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE IF NOT EXISTS cron_runs (
        slot_key TEXT PRIMARY KEY,
        job_id TEXT NOT NULL REFERENCES cron_jobs (id) ON DELETE CASCADE,
        due_at REAL NOT NULL,
        submission_id TEXT NOT NULL,
        session TEXT NOT NULL,
        started_at REAL NOT NULL,
        settled_at REAL,
        outcome TEXT,
        delivery TEXT NOT NULL,
        note TEXT
    )""",
    "CREATE INDEX IF NOT EXISTS cron_runs_job ON cron_runs (job_id, due_at)",
    "CREATE INDEX IF NOT EXISTS cron_runs_open ON cron_runs (started_at)"
    " WHERE delivery IN ('pending', 'queued', 'held')",
)


_SQL = CronSQL.in_style("?")


class SQLiteCronStore:
    def __init__(self, threads: SQLiteThreads, clock: Callable[[], float]) -> None:
        self._threads = threads
        self._clock = clock

    async def upsert(self, job: CronJob) -> CronJob:
        def write(db: sqlite3.Connection) -> CronJob:
            marks = ", ".join("?" * len(job_params(job)))
            db.execute(
                f"INSERT OR REPLACE INTO cron_jobs ({JOB_COLUMNS}) VALUES ({marks})",
                job_params(job),
            )
            return job

        return await self._threads.write(write)

    @staticmethod
    def _job_in(db: sqlite3.Connection, job_id: str) -> CronJob | None:
        row = db.execute(_SQL.job_by_id, (job_id,)).fetchone()
        return None if row is None else job_from_row(row)

    def _must(self, db: sqlite3.Connection, job_id: str) -> CronJob:
        job = self._job_in(db, job_id)
        if job is None:
            raise CronJobNotFound(f"no cron job {job_id!r}")
        return job

    async def get_job(self, job_id: str) -> CronJob | None:
        return await self._threads.read(partial(self._job_in, job_id=job_id))

    async def list_all(self) -> list[CronJob]:
        return await self._jobs(_SQL.jobs)

    async def list_enabled(self) -> list[CronJob]:
        return await self._jobs(_SQL.enabled_jobs)

    async def _jobs(self, query: str) -> list[CronJob]:
        def read(db: sqlite3.Connection) -> list[CronJob]:
            rows = db.execute(query).fetchall()
            return [job_from_row(r) for r in rows]

        return await self._threads.read(read)

    async def delete(self, job_id: str) -> bool:
        def write(db: sqlite3.Connection) -> bool:
            db.execute(_SQL.delete_runs, (job_id,))
            return db.execute(_SQL.delete_job, (job_id,)).rowcount > 0

        return await self._threads.write(write)

    async def touch(self, job_id: str, next_due_at: float | None) -> CronJob:
        def write(db: sqlite3.Connection) -> CronJob:
            db.execute(_SQL.touch, (next_due_at, job_id))
            return self._must(db, job_id)

        return await self._threads.write(write)

    async def set_paused(self, job_id: str, paused: bool) -> CronJob:
        def write(db: sqlite3.Connection) -> CronJob:
            db.execute(_SQL.pause, (paused, paused, job_id))
            return self._must(db, job_id)

        return await self._threads.write(write)

    async def claim_slot(self, job_id: str, due_at: float, claim: SlotClaim) -> CronRun | None:
        def write(db: sqlite3.Connection) -> CronRun | None:
            self._must(db, job_id)
            run = claim.run(job_id, due_at, self._clock())
            inserted = db.execute(_SQL.new_run, new_run_params(run)).rowcount
            return run if inserted else None

        return await self._threads.write(write)

    @staticmethod
    def _run_in(db: sqlite3.Connection, slot: str) -> CronRun | None:
        row = db.execute(_SQL.run_by_slot, (slot,)).fetchone()
        return None if row is None else run_from_row(row)

    @staticmethod
    def _count(db: sqlite3.Connection, job_id: str, failed: bool | None) -> None:
        if failed is None:
            return
        db.execute(_SQL.count_failure, (failed, job_id))

    async def settle_run(
        self, slot: str, *, outcome: RunOutcome | None, delivery: DeliveryStatus
    ) -> CronRun | None:
        def write(db: sqlite3.Connection) -> CronRun | None:
            changed = db.execute(_SQL.settle_run, (outcome, delivery, self._clock(), slot)).rowcount
            run = self._run_in(db, slot)
            if not changed or run is None:
                return None
            self._count(db, run.job_id, is_failure(outcome, delivery))
            return run

        return await self._threads.write(write)

    async def set_delivery(self, slot: str, delivery: DeliveryStatus) -> CronRun | None:
        def write(db: sqlite3.Connection) -> CronRun | None:
            changed = db.execute(_SQL.set_delivery, (delivery, slot, delivery)).rowcount
            run = self._run_in(db, slot)
            if not changed or run is None:
                return None
            if delivery == "failed":
                self._count(db, run.job_id, True)
            return run

        return await self._threads.write(write)

    async def runs(self, job_id: str, *, limit: int = 50) -> list[CronRun]:
        def read(db: sqlite3.Connection) -> list[CronRun]:
            rows = db.execute(_SQL.runs, (job_id, limit)).fetchall()
            return [run_from_row(r) for r in rows]

        return await self._threads.read(read)

    async def open_runs(self, *, limit: int = 500) -> Sequence[CronRun]:
        def read(db: sqlite3.Connection) -> list[CronRun]:
            rows = db.execute(_SQL.open_runs, (limit,)).fetchall()
            return [run_from_row(r) for r in rows]

        return await self._threads.read(read)


class SQLiteCron:
    """Mixed into `SQLiteSessionStore`: its `cron` is the `CronStore` over the same file."""

    _threads: SQLiteThreads
    _clock: Callable[[], float]

    @property
    def cron(self) -> SQLiteCronStore:
        return SQLiteCronStore(self._threads, self._clock)
