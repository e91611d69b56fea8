"""The `cron` tool's jobs, built the first time the tool is used.

Every runtime offers the `cron` tool, but few turns call it: building its `CronAdmin`
(schedules through croniter and dateutil, delivery targets through the outbox, the chat
platforms and the heartbeat) costs a one-shot `seam run` about 60 modules it never uses.
`DeferredCronJobs` is what the tool is handed instead; its first call builds the real
jobs (`cron.tool_jobs`), with the same store and settings.
"""

from __future__ import annotations

from typing import Any

from seam.contracts.cron import CronJob, JobDraft
from seam.plugins.tools.cron import CronJobs
from seam.wiring.settings import Settings


class DeferredCronJobs:
    """`CronJobs` that builds the real ones on first use."""

    def __init__(self, store: Any, settings: Settings | None) -> None:
        self._store = store
        self._settings = settings
        self._built: CronJobs | None = None

    def _jobs(self) -> CronJobs:
        if self._built is None:
            from seam.wiring.cron import tool_jobs

            self._built = tool_jobs(self._store, self._settings)
        return self._built

    async def prepare_job(self, draft: JobDraft) -> CronJob:
        return await self._jobs().prepare_job(draft)

    async def save_job(self, job: CronJob) -> CronJob:
        return await self._jobs().save_job(job)

    async def list(self) -> list[CronJob]:
        return await self._jobs().list()

    async def pause(self, job_id: str) -> CronJob:
        return await self._jobs().pause(job_id)

    async def resume(self, job_id: str) -> CronJob:
        return await self._jobs().resume(job_id)

    async def remove(self, job_id: str) -> bool:
        return await self._jobs().remove(job_id)

    async def job(self, job_id: str) -> CronJob:
        return await self._jobs().job(job_id)
