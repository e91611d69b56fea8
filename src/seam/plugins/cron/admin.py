"""What a person (`seam cron`) and the agent (the `cron` tool) do to cron jobs: add,
list, pause, resume, remove, with the checks they get at once (schedule, zone, delivery
target, missed-run policy) rather than at the first run.

The checks of a delivery target are handed in (`check_target`: the configured
`Delivery`'s), so this module knows no configuration; wiring/cron.py builds a `CronAdmin`
over the runtime's cron store.
"""

from __future__ import annotations

import builtins
import dataclasses
import time
import uuid
from collections.abc import Callable
from typing import TypedDict, Unpack

from seam.contracts.cron import (
    MISSED_POLICIES,
    CronJob,
    CronJobNotFound,
    CronRun,
    CronStore,
    JobDraft,
    JobKind,
    ScheduleKind,
)
from seam.contracts.delivery import DeliveryError
from seam.plugins.cron.schedule import ScheduleError, classify, first_due, parse_schedule

Clock = Callable[[], float]


class CronInputError(ValueError):
    """A job that cannot be added as asked (bad schedule, zone, target, policy)."""


@dataclasses.dataclass(frozen=True, slots=True)
class ScheduleSpec:
    """How a job is to be scheduled, as `seam cron add` and the `cron` tool take it:
    exactly one of `every`, `cron`, `at`."""

    every: str | None = None
    cron: str | None = None
    at: str | None = None
    tz: str = "UTC"

    def text_and_kind(self) -> tuple[str, ScheduleKind]:
        options: tuple[tuple[str | None, ScheduleKind], ...] = (
            (self.every, "interval"),
            (self.cron, "cron"),
            (self.at, "once"),
        )
        given = [(v, k) for v, k in options if v]
        if len(given) != 1:
            raise CronInputError("give exactly one schedule: --every, --cron or --at")
        text, kind = given[0]
        assert text is not None
        if kind == "interval" and classify(text) != "interval":
            raise CronInputError(f"--every {text!r} is not an interval (e.g. 30m, 2h, 1d)")
        return text.strip(), kind


class JobOptions(TypedDict, total=False):
    """What a job says besides its prompt and schedule, as `seam cron add` takes it
    (defaults: deliver to the owner, the default personality, missed slots skipped, a
    fresh session per run, quiet hours respected, a "prompt" job, a new id)."""

    deliver: str
    personality: str | None
    missed: str
    continue_session: bool
    urgent: bool
    kind: JobKind
    job_id: str | None


class CronAdmin:
    """Adding, listing, pausing, resuming, removing and running jobs, with the checks a
    person gets at once (schedule, zone, delivery target) rather than at the first run."""

    def __init__(
        self,
        store: CronStore,
        *,
        check_target: Callable[[str], str] | None = None,
        clock: Clock = time.time,
    ) -> None:
        self.store = store
        self.check_target = check_target
        self.clock = clock

    async def add(self, prompt: str, spec: ScheduleSpec, **options: Unpack[JobOptions]) -> CronJob:
        """Check and store a new job; raises CronInputError."""
        return await self.store.upsert(await self.prepare(prompt, spec, **options))

    async def prepare(
        self, prompt: str, spec: ScheduleSpec, **options: Unpack[JobOptions]
    ) -> CronJob:
        """The job as it would be stored, checked; raises CronInputError."""
        if not prompt.strip():
            raise CronInputError("the prompt is empty")
        missed = options.get("missed", "skip")
        if missed not in MISSED_POLICIES:
            raise CronInputError(f"--missed must be skip or catch_up_once, not {missed!r}")
        text, schedule_kind = spec.text_and_kind()
        now = self.clock()
        try:
            schedule = parse_schedule(text, schedule_kind, spec.tz, now)
        except ScheduleError as exc:
            raise CronInputError(str(exc)) from None
        target = self._target(options.get("deliver", "owner"))
        return CronJob(
            id=options.get("job_id") or uuid.uuid4().hex[:8],
            prompt=prompt.strip(),
            schedule=text,
            schedule_kind=schedule_kind,
            created_at=now,
            next_due_at=first_due(schedule, now),
            personality=options.get("personality"),
            tz=spec.tz,
            deliver=target,
            missed=missed,
            continue_session=options.get("continue_session", False),
            urgent=options.get("urgent", False),
            kind=options.get("kind", "prompt"),
        )

    def _target(self, deliver: str) -> str:
        target = deliver.strip()
        if self.check_target is None:
            return target
        try:
            return self.check_target(target)
        except DeliveryError as exc:
            raise CronInputError(str(exc)) from None

    # What the `cron` tool uses (plugins/tools/cron.py: CronJobs).

    async def prepare_job(self, draft: JobDraft) -> CronJob:
        spec = ScheduleSpec(every=draft.every, cron=draft.cron, at=draft.at, tz=draft.tz)
        return await self.prepare(
            draft.prompt,
            spec,
            deliver=draft.deliver,
            personality=draft.personality,
            missed=draft.missed,
        )

    async def save_job(self, job: CronJob) -> CronJob:
        return await self.store.upsert(job)

    async def list(self) -> list[CronJob]:
        return await self.store.list_all()

    async def job(self, job_id: str) -> CronJob:
        found = await self.store.get_job(job_id)
        if found is None:
            raise CronJobNotFound(f"no cron job {job_id!r} (see: seam cron list)")
        return found

    # `builtins.list`: in this class `list` names the method above.
    async def runs(self, job_id: str, *, limit: int = 20) -> builtins.list[CronRun]:
        await self.job(job_id)
        return await self.store.runs(job_id, limit=limit)

    async def pause(self, job_id: str) -> CronJob:
        await self.job(job_id)
        return await self.store.set_paused(job_id, True)

    async def resume(self, job_id: str) -> CronJob:
        """Resume; a job whose next slot has long passed is due again from now on (its
        missed policy applies to what it missed while paused)."""
        await self.job(job_id)
        return await self.store.set_paused(job_id, False)

    async def remove(self, job_id: str) -> bool:
        return await self.store.delete(job_id)
