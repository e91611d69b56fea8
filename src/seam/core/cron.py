"""The in-memory `CronStore` (the empty stack's). Schedules (croniter, time zones) and
the scheduler live in `plugins/cron/`."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence

from seam.contracts.cron import (
    CronJob,
    CronJobNotFound,
    CronRun,
    DeliveryStatus,
    RunOutcome,
    SlotClaim,
    is_failure,
)

OPEN_DELIVERIES: tuple[DeliveryStatus, ...] = ("pending", "queued", "held")


class InMemoryCronStore:
    """A `CronStore` in a dict: real, for tests and the empty stack."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._jobs: dict[str, CronJob] = {}
        self._runs: dict[str, CronRun] = {}

    async def upsert(self, job: CronJob) -> CronJob:
        self._jobs[job.id] = job
        return job

    async def get_job(self, job_id: str) -> CronJob | None:
        return self._jobs.get(job_id)

    async def list_all(self) -> list[CronJob]:
        return sorted(self._jobs.values(), key=lambda j: (j.created_at, j.id))

    async def list_enabled(self) -> list[CronJob]:
        return [j for j in await self.list_all() if j.enabled]

    async def delete(self, job_id: str) -> bool:
        self._runs = {k: r for k, r in self._runs.items() if r.job_id != job_id}
        return self._jobs.pop(job_id, None) is not None

    def _job(self, job_id: str) -> CronJob:
        job = self._jobs.get(job_id)
        if job is None:
            raise CronJobNotFound(f"no cron job {job_id!r}")
        return job

    async def touch(self, job_id: str, next_due_at: float | None) -> CronJob:
        job = dataclasses.replace(self._job(job_id), next_due_at=next_due_at)
        self._jobs[job_id] = job
        return job

    async def set_paused(self, job_id: str, paused: bool) -> CronJob:
        job = self._job(job_id)
        failures = job.consecutive_failures if paused else 0
        job = dataclasses.replace(job, paused=paused, consecutive_failures=failures)
        self._jobs[job_id] = job
        return job

    async def claim_slot(self, job_id: str, due_at: float, claim: SlotClaim) -> CronRun | None:
        self._job(job_id)
        run = claim.run(job_id, due_at, self._clock())
        if run.slot_key in self._runs:
            return None
        self._runs[run.slot_key] = run
        return run

    def _count(self, job_id: str, failed: bool | None) -> None:
        job = self._jobs.get(job_id)
        if job is not None and failed is not None:
            failures = job.consecutive_failures + 1 if failed else 0
            self._jobs[job_id] = dataclasses.replace(job, consecutive_failures=failures)

    async def settle_run(
        self, slot: str, *, outcome: RunOutcome | None, delivery: DeliveryStatus
    ) -> CronRun | None:
        run = self._runs.get(slot)
        if run is None or run.delivery != "pending":
            return None
        run = dataclasses.replace(run, outcome=outcome, delivery=delivery, settled_at=self._clock())
        self._runs[slot] = run
        self._count(run.job_id, is_failure(outcome, delivery))
        return run

    async def set_delivery(self, slot: str, delivery: DeliveryStatus) -> CronRun | None:
        run = self._runs.get(slot)
        if run is None or run.delivery == delivery:
            return None
        run = dataclasses.replace(run, delivery=delivery)
        self._runs[slot] = run
        if delivery == "failed":
            self._count(run.job_id, True)
        return run

    async def runs(self, job_id: str, *, limit: int = 50) -> list[CronRun]:
        found = [r for r in self._runs.values() if r.job_id == job_id]
        return sorted(found, key=lambda r: r.due_at, reverse=True)[:limit]

    async def open_runs(self, *, limit: int = 500) -> Sequence[CronRun]:
        found = [r for r in self._runs.values() if r.delivery in OPEN_DELIVERIES]
        return sorted(found, key=lambda r: (r.started_at, r.slot_key))[:limit]
