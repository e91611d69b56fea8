"""The `CronStore` on PostgreSQL: jobs and the run ledger, shared by every worker.

A view over the store's pool (`PostgresStore.cron`), not a mixin: the session store
already has a `delete` and a `touch` of its own. `claim_slot` is one
`INSERT ... ON CONFLICT (slot_key) DO NOTHING`: of any number of workers claiming a slot
at once, the unique key lets exactly one insert it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from psycopg import AsyncConnection

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
    RUN_COLUMNS,
    CronSQL,
    job_from_row,
    job_params,
    new_run_params,
    run_from_row,
)

# Appended to the store's MIGRATIONS (services/sessions/postgres_schema.py).
CRON_MIGRATION: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS cron_jobs (
        id text PRIMARY KEY,
        prompt text NOT NULL,
        schedule text NOT NULL,
        schedule_kind text NOT NULL,
        created_at double precision NOT NULL,
        next_due_at double precision,
        personality text,
        tz text NOT NULL,
        deliver text NOT NULL,
        missed text NOT NULL,
        enabled boolean NOT NULL,
        paused boolean NOT NULL,
        continue_session boolean NOT NULL,
        urgent boolean NOT NULL,
        kind text NOT NULL,
        consecutive_failures integer NOT NULL DEFAULT 0
    )""",
    """CREATE TABLE IF NOT EXISTS cron_runs (
        slot_key text PRIMARY KEY,
        job_id text NOT NULL REFERENCES cron_jobs (id) ON DELETE CASCADE,
        due_at double precision NOT NULL,
        submission_id text NOT NULL,
        session text NOT NULL,
        started_at double precision NOT NULL,
        settled_at double precision,
        outcome text,
        delivery text NOT NULL,
        note text
    )""",
    "CREATE INDEX IF NOT EXISTS cron_runs_job ON cron_runs (job_id, due_at)",
    "CREATE INDEX IF NOT EXISTS cron_runs_open ON cron_runs (started_at)"
    " WHERE delivery IN ('pending', 'queued', 'held')",
)

_JOB_MARKS = ", ".join(["%s"] * len(JOB_COLUMNS.split(",")))
_UPDATE_JOB = ", ".join(f"{c.strip()} = EXCLUDED.{c.strip()}" for c in JOB_COLUMNS.split(",")[1:])


_SQL = CronSQL.in_style("%s")


class _Pool(Protocol):
    """What the view needs of `PostgresStore`."""

    _clock: Callable[[], float]

    def _tx(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

    async def _one(self, query: Any, params: Any = None) -> Any: ...

    async def _all(self, query: Any, params: Any = None) -> list[Any]: ...


class PostgresCronStore:
    def __init__(self, pool: _Pool) -> None:
        self._pool = pool

    async def upsert(self, job: CronJob) -> CronJob:
        await self._pool._one(
            f"INSERT INTO cron_jobs ({JOB_COLUMNS}) VALUES ({_JOB_MARKS})"
            f" ON CONFLICT (id) DO UPDATE SET {_UPDATE_JOB} RETURNING id",
            job_params(job),
        )
        return job

    async def get_job(self, job_id: str) -> CronJob | None:
        row = await self._pool._one(_SQL.job_by_id, (job_id,))
        return None if row is None else job_from_row(row)

    async def list_all(self) -> list[CronJob]:
        rows = await self._pool._all(_SQL.jobs)
        return [job_from_row(r) for r in rows]

    async def list_enabled(self) -> list[CronJob]:
        rows = await self._pool._all(_SQL.enabled_jobs)
        return [job_from_row(r) for r in rows]

    async def delete(self, job_id: str) -> bool:
        async with self._pool._tx() as conn:
            await conn.execute(_SQL.delete_runs, (job_id,))
            cur = await conn.execute(_SQL.delete_job, (job_id,))
            return cur.rowcount > 0

    async def _update_job(self, query: str, params: Sequence[Any], job_id: str) -> CronJob:
        row = await self._pool._one(f"{query} RETURNING {JOB_COLUMNS}", params)
        if row is None:
            raise CronJobNotFound(f"no cron job {job_id!r}")
        return job_from_row(row)

    async def touch(self, job_id: str, next_due_at: float | None) -> CronJob:
        return await self._update_job(_SQL.touch, (next_due_at, job_id), job_id)

    async def set_paused(self, job_id: str, paused: bool) -> CronJob:
        return await self._update_job(_SQL.pause, (paused, paused, job_id), job_id)

    async def claim_slot(self, job_id: str, due_at: float, claim: SlotClaim) -> CronRun | None:
        run = claim.run(job_id, due_at, self._pool._clock())
        async with self._pool._tx() as conn:
            cur = await conn.execute("SELECT 1 FROM cron_jobs WHERE id = %s", (job_id,))
            if await cur.fetchone() is None:
                raise CronJobNotFound(f"no cron job {job_id!r}")
            cur = await conn.execute(_SQL.new_run, new_run_params(run))
            if cur.rowcount == 0:
                return None
        return run

    @staticmethod
    async def _count(conn: AsyncConnection[Any], job_id: str, failed: bool | None) -> None:
        if failed is None:
            return
        await conn.execute(_SQL.count_failure, (failed, job_id))

    async def settle_run(
        self, slot: str, *, outcome: RunOutcome | None, delivery: DeliveryStatus
    ) -> CronRun | None:
        async with self._pool._tx() as conn:
            cur = await conn.execute(
                f"{_SQL.settle_run} RETURNING {RUN_COLUMNS}",
                (outcome, delivery, self._pool._clock(), slot),
            )
            row = await cur.fetchone()
            if row is None:
                return None
            run = run_from_row(row)
            await self._count(conn, run.job_id, is_failure(outcome, delivery))
            return run

    async def set_delivery(self, slot: str, delivery: DeliveryStatus) -> CronRun | None:
        async with self._pool._tx() as conn:
            cur = await conn.execute(
                f"{_SQL.set_delivery} RETURNING {RUN_COLUMNS}", (delivery, slot, delivery)
            )
            row = await cur.fetchone()
            if row is None:
                return None
            run = run_from_row(row)
            if delivery == "failed":
                await self._count(conn, run.job_id, True)
            return run

    async def runs(self, job_id: str, *, limit: int = 50) -> list[CronRun]:
        rows = await self._pool._all(_SQL.runs, (job_id, limit))
        return [run_from_row(r) for r in rows]

    async def open_runs(self, *, limit: int = 500) -> Sequence[CronRun]:
        rows = await self._pool._all(_SQL.open_runs, (limit,))
        return [run_from_row(r) for r in rows]


class PostgresCron:
    """Mixed into `PostgresStore`: its `cron` is the `CronStore` over the same database."""

    @property
    def cron(self) -> PostgresCronStore:
        return PostgresCronStore(self)  # type: ignore[arg-type]
