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
from datetime import datetime
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
from seam.plugins.cron.check import Classify, check_command
from seam.plugins.cron.schedule import (
    Schedule,
    ScheduleError,
    classify,
    describe,
    first_due,
    parse_schedule,
)

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


def read_schedule(spec: ScheduleSpec, now: float) -> tuple[str, ScheduleKind, Schedule]:
    """The schedule `spec` names (its text, kind and reading, anchored at `now`), as
    `add`, `edit` and `preview` check it; raises CronInputError."""
    text, kind = spec.text_and_kind()
    try:
        schedule = parse_schedule(text, kind, spec.tz, now)
        first = first_due(schedule, now)
        if first is not None:
            describe(first, spec.tz)  # past the year 9999 in its zone: fails here
    except ScheduleError as exc:
        raise CronInputError(str(exc)) from None
    except (ValueError, OverflowError):  # croniter finds no such date; out of range
        raise CronInputError(
            f"{text!r} names no time Seam can schedule (no such date, or out of range)"
        ) from None
    return text, kind, schedule


_SPEC_FIELD: dict[ScheduleKind, str] = {"interval": "every", "cron": "cron", "once": "at"}


def spec_for(text: str, kind: ScheduleKind, tz: str) -> ScheduleSpec:
    """The spec of schedule `text` read as `kind` (e.g. as `classify` reads it)."""
    return ScheduleSpec(**{_SPEC_FIELD[kind]: text}, tz=tz)


def guessed_spec(text: str, tz: str) -> ScheduleSpec:
    """A schedule given as one text (the dashboard's field), read by its form as
    `classify` reads it: an interval, five cron fields, else an ISO time; raises
    CronInputError naming the three forms when it is none of them."""
    text = text.strip()
    kind = classify(text)
    if kind == "once":
        try:
            datetime.fromisoformat(text)
        except ValueError:
            raise CronInputError(
                f"{text!r} is not an interval (30m, every 2h), a 5-field cron expression"
                " (0 9 * * 1-5) or an ISO time (2026-12-24T18:00)"
            ) from None
    return spec_for(text, kind, tz)


def spec_of(job: CronJob) -> ScheduleSpec:
    """The schedule a stored job was added with, as `add` takes it."""
    return spec_for(job.schedule, job.schedule_kind, job.tz)


def same_schedule(a: ScheduleSpec, b: ScheduleSpec) -> bool:
    return a.text_and_kind() == b.text_and_kind() and a.tz == b.tz


# Where a job of a kind other than "prompt" is set up (`edit` sends a person there).
_OWNED_BY: dict[str, str] = {
    "heartbeat": "[heartbeat] in config.toml",
    "consolidate": "seam memory consolidate --enable",
}


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
    check: str | None  # a command that says whether a slot has anything new (check.py)
    # Each run's spending limits (0: none beside [budget]; docs/budgets.md).
    max_tokens: int
    max_usd: float


def run_limits(options: JobOptions) -> tuple[int, float]:
    """`--max-tokens` and `--max-usd`, checked; raises CronInputError."""
    tokens, usd = options.get("max_tokens", 0), options.get("max_usd", 0.0)
    if tokens < 0:
        raise CronInputError(f"--max-tokens must be 0 (no limit) or more, not {tokens}")
    if not usd >= 0 or usd == float("inf"):
        raise CronInputError(f"--max-usd must be 0 (no limit) or more, not {usd}")
    return tokens, usd


class CronAdmin:
    """Adding, listing, pausing, resuming, removing and running jobs, with the checks a
    person gets at once (schedule, zone, delivery target) rather than at the first run."""

    def __init__(
        self,
        store: CronStore,
        *,
        check_target: Callable[[str], str] | None = None,
        clock: Clock = time.time,
        classify: Classify | None = None,
    ) -> None:
        self.store = store
        self.check_target = check_target
        self.clock = clock
        # The guard's classification of a job's check command (None: not classified).
        self.classify = classify

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
        now = self.clock()
        text, schedule_kind, schedule = read_schedule(spec, now)
        target = self._target(options.get("deliver", "owner"))
        check = options.get("check")
        max_tokens, max_usd = run_limits(options)
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
            check=None if check is None else self._check(check),
            max_tokens=max_tokens,
            max_usd=max_usd,
        )

    def preview(self, spec: ScheduleSpec, count: int = 5) -> builtins.list[float]:
        """When a job with this schedule would run, if added now: its first `count` slots
        (fewer for a one-shot job). Raises CronInputError as `add` would."""
        now = self.clock()
        schedule = read_schedule(spec, now)[2]
        slots: builtins.list[float] = []
        at = first_due(schedule, now)
        while at is not None and len(slots) < count:
            slots.append(at)
            at = schedule.next_after(at)
        return slots

    async def edit(
        self, job_id: str, prompt: str | None, spec: ScheduleSpec | None, options: JobOptions
    ) -> CronJob:
        """Change a job with the checks `add` makes (None and absent options: as it is).
        A new schedule or zone is due anew as a new job would be; otherwise the job keeps
        its next slot. Paused, the failure streak and the kind are kept."""
        old = await self.job(job_id)
        if old.kind != "prompt":
            raise CronInputError(
                f"cron job {job_id} follows {_OWNED_BY.get(old.kind, old.kind)}: change it there"
            )
        current = spec_of(old)
        wanted = spec or current
        merged = JobOptions(deliver=old.deliver, personality=old.personality, missed=old.missed)
        merged |= JobOptions(continue_session=old.continue_session, urgent=old.urgent)
        merged["check"] = old.check
        merged |= JobOptions(max_tokens=old.max_tokens, max_usd=old.max_usd)
        merged.update(options)
        merged["kind"], merged["job_id"] = old.kind, old.id
        job = await self.prepare(old.prompt if prompt is None else prompt, wanted, **merged)
        if same_schedule(wanted, current):
            job = dataclasses.replace(job, created_at=old.created_at, next_due_at=old.next_due_at)
        return await self.store.upsert(
            dataclasses.replace(
                job,
                paused=old.paused,
                enabled=old.enabled,
                consecutive_failures=old.consecutive_failures,
            )
        )

    def _check(self, command: str) -> str:
        try:
            return check_command(command, self.classify)
        except ValueError as exc:
            raise CronInputError(str(exc)) from None

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
