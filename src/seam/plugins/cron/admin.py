"""Cron jobs as the surfaces use them: the scheduler started beside a worker, a gateway
or `seam serve` (`start_scheduler`), and `CronAdmin`, what `seam cron`, the `cron` tool
and `/cron` do to jobs.

The cron store is the runtime store's `cron` view (SQLite and PostgreSQL keep jobs and
the ledger in the session database, so every process that shares the store shares the
schedule); an in-memory store gets an in-memory cron store of its own, kept per store.
Whichever processes run a scheduler, each due slot is claimed once (the ledger's unique
slot key), so jobs run in all of them and in none twice.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import dataclasses
import logging
import time
import uuid
import weakref
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from seam.contracts.cron import (
    MISSED_POLICIES,
    CronJob,
    CronJobNotFound,
    CronKind,
    CronRun,
    CronStore,
    JobKind,
    ScheduleKind,
)
from seam.contracts.delivery import Delivery, DeliveryError
from seam.contracts.execution import Submission
from seam.contracts.outbox import Outbox
from seam.core.cron import InMemoryCronStore
from seam.plugins.cron.schedule import (
    ScheduleError,
    classify,
    describe,
    first_due,
    parse_schedule,
)
from seam.plugins.cron.scheduler import CronScheduler

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime
    from seam.wiring.settings import Settings

log = logging.getLogger("seam.cron")
Clock = Callable[[], float]
_MEMORY: weakref.WeakKeyDictionary[Any, InMemoryCronStore] = weakref.WeakKeyDictionary()


class CronInputError(ValueError):
    """A job that cannot be added as asked (bad schedule, zone, target, policy)."""


def cron_store_of(store: Any) -> CronStore:
    """The cron store over an execution store: its own `cron` view, or an in-memory one
    kept for as long as the store lives."""
    found = getattr(store, "cron", None)
    if isinstance(found, CronStore):
        return found
    if store not in _MEMORY:
        _MEMORY[store] = InMemoryCronStore(clock=getattr(store, "_clock", time.time))
    return _MEMORY[store]


class RuntimeSubmitter:
    """The scheduler's view of a runtime: admit a turn, read a submission back."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def submit(
        self, session: str, text: str, *, personality: str | None, submission_id: str
    ) -> Submission:
        return await self.runtime.submit(
            session, text, personality=personality, submission_id=submission_id
        )

    async def submission(self, submission_id: str) -> Submission | None:
        return await self.runtime.store.submission(submission_id)


def default_delivery(runtime: Runtime) -> Delivery:
    """The configured `Delivery` (owner, chats, files, webhooks, quiet hours)."""
    from seam.wiring.delivery import delivery_for

    return delivery_for(runtime)


def default_kinds(runtime: Runtime) -> dict[str, CronKind]:
    """The job kinds the configured runtime knows besides "prompt": the heartbeat's hooks
    (wiring/heartbeat.py), when the runtime has settings."""
    if runtime.settings is None:
        return {}
    try:
        from seam.wiring.heartbeat import heartbeat_kind

        return {"heartbeat": heartbeat_kind(runtime)}
    except Exception as exc:
        log.warning("heartbeat jobs will run as plain prompts here: %s", exc)
        return {}


def runtime_outbox(runtime: Runtime) -> Outbox | None:
    store = runtime.store
    return store if isinstance(store, Outbox) else None


def build_scheduler(
    runtime: Runtime,
    *,
    delivery: Delivery | None = None,
    outbox: Outbox | None = None,
    kinds: Mapping[str, CronKind] | None = None,
    clock: Clock | None = None,
    tick: float | None = None,
) -> CronScheduler:
    kwargs: dict[str, Any] = {}
    if tick is not None:
        kwargs["tick"] = tick
    return CronScheduler(
        cron_store_of(runtime.store),
        RuntimeSubmitter(runtime),
        delivery if delivery is not None else default_delivery(runtime),
        outbox=outbox if outbox is not None else runtime_outbox(runtime),
        kinds=kinds if kinds is not None else default_kinds(runtime),
        clock=clock or time.time,
        **kwargs,
    )


def start_scheduler(
    runtime: Runtime,
    *,
    delivery: Delivery | None = None,
    outbox: Outbox | None = None,
    kinds: Mapping[str, CronKind] | None = None,
    clock: Clock | None = None,
    tick: float | None = None,
) -> asyncio.Task[None]:
    """The cron scheduler as a background task of the calling surface (`seam worker`,
    `seam gateway`, `seam serve`); cancel it to stop. Without a `delivery` the
    configured one is used; `kinds` are the hooks of job kinds other than "prompt" (the
    heartbeat's)."""
    scheduler = build_scheduler(
        runtime, delivery=delivery, outbox=outbox, kinds=kinds, clock=clock, tick=tick
    )
    return asyncio.ensure_future(scheduler.run())


class Background:
    """What a surface runs beside its own loop so cron jobs happen there: the scheduler
    and, when the runtime has settings and an outbox, the outbox's deliverer (which
    writes `file:` deliveries and POSTs webhooks). `stop()` ends both."""

    def __init__(self) -> None:
        self.scheduler: asyncio.Task[None] | None = None
        self._stack = contextlib.AsyncExitStack()

    async def stop(self) -> None:
        if self.scheduler is not None:
            self.scheduler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.scheduler
            self.scheduler = None
        await self._stack.aclose()


async def maybe_start_scheduler(
    runtime: Runtime, *, deliverer: bool = True, **kwargs: Any
) -> Background:
    """`start_scheduler` (and the deliverer) for a surface that also works without cron:
    what cannot start (no delivery configured) is logged, and the surface goes on."""
    background = Background()
    outbox = runtime_outbox(runtime)
    if deliverer and runtime.settings is not None and outbox is not None:
        from seam.wiring.outbox import running_deliverer

        try:
            await background._stack.enter_async_context(running_deliverer(runtime.settings, outbox))
        except Exception as exc:
            log.warning("deliveries will not be sent from here: %s", exc)
    if runtime.settings is not None:
        try:
            from seam.wiring.heartbeat import sync_heartbeat_job

            clock = kwargs.get("clock") or time.time
            await sync_heartbeat_job(cron_store_of(runtime.store), runtime.settings, clock())
        except Exception as exc:
            log.warning("the heartbeat will not be scheduled here: %s", exc)
    try:
        background.scheduler = start_scheduler(runtime, **kwargs)
    except Exception as exc:
        log.warning("cron jobs will not run here: %s", exc)
    return background


async def stop_scheduler(background: Background | None) -> None:
    if background is not None:
        await background.stop()


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

    async def add(self, prompt: str, spec: ScheduleSpec, **options: Any) -> CronJob:
        """Check and store a new job; raises CronInputError."""
        return await self.store.upsert(await self.prepare(prompt, spec, **options))

    async def prepare(
        self,
        prompt: str,
        spec: ScheduleSpec,
        *,
        deliver: str = "owner",
        personality: str | None = None,
        missed: str = "skip",
        continue_session: bool = False,
        urgent: bool = False,
        kind: JobKind = "prompt",
        job_id: str | None = None,
    ) -> CronJob:
        if not prompt.strip():
            raise CronInputError("the prompt is empty")
        if missed not in MISSED_POLICIES:
            raise CronInputError(f"--missed must be skip or catch_up_once, not {missed!r}")
        text, schedule_kind = spec.text_and_kind()
        now = self.clock()
        try:
            schedule = parse_schedule(text, schedule_kind, spec.tz, now)
        except ScheduleError as exc:
            raise CronInputError(str(exc)) from None
        target = deliver.strip()
        if self.check_target is not None:
            try:
                target = self.check_target(target)
            except DeliveryError as exc:
                raise CronInputError(str(exc)) from None
        return CronJob(
            id=job_id or uuid.uuid4().hex[:8],
            prompt=prompt.strip(),
            schedule=text,
            schedule_kind=schedule_kind,
            created_at=now,
            next_due_at=first_due(schedule, now),
            personality=personality,
            tz=spec.tz,
            deliver=target,
            missed=missed,
            continue_session=continue_session,
            urgent=urgent,
            kind=kind,
        )

    # What the `cron` tool uses (plugins/tools/cron.py: CronJobs).

    async def prepare_job(
        self,
        prompt: str,
        *,
        every: str | None,
        cron: str | None,
        at: str | None,
        tz: str,
        deliver: str,
        personality: str | None,
        missed: str,
    ) -> CronJob:
        spec = ScheduleSpec(every=every, cron=cron, at=at, tz=tz)
        return await self.prepare(
            prompt, spec, deliver=deliver, personality=personality, missed=missed
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


def admin_for(runtime: Runtime, *, clock: Clock = time.time) -> CronAdmin:
    """The `CronAdmin` of a configured runtime (targets checked by its `Delivery`)."""
    return CronAdmin(
        cron_store_of(runtime.store), check_target=lambda t: _check(runtime, t), clock=clock
    )


def tool_jobs(store: Any, settings: Settings | None) -> CronAdmin:
    """What the `cron` tool schedules through: the store's cron jobs, targets checked by
    the configured delivery (with no settings, as in a test runtime, any target)."""

    def check(target: str) -> str:
        try:
            from seam.wiring.delivery import build_delivery
        except ImportError as exc:
            raise DeliveryError(f"cannot check the delivery target: {exc}") from None
        assert settings is not None
        return build_delivery(settings, store).check_target(target)

    return CronAdmin(cron_store_of(store), check_target=check if settings is not None else None)


def _check(runtime: Runtime, target: str) -> str:
    try:
        delivery = default_delivery(runtime)
    except (ImportError, LookupError, ValueError) as exc:
        raise DeliveryError(f"cannot check the delivery target: {exc}") from None
    return delivery.check_target(target)


async def cron_lines(runtime: Runtime) -> list[str]:
    """`/cron` in chat: one line per job (manage them with `seam cron`)."""
    jobs = await cron_store_of(runtime.store).list_all()
    if not jobs:
        return ['no cron jobs (add one: seam cron add --every 2h "...", or ask the agent)']
    return [job_line(job) for job in jobs]


def job_line(job: CronJob) -> str:
    state = "paused" if job.paused else ("on" if job.enabled else "off")
    when = describe(job.next_due_at, job.tz)
    failures = f" · {job.consecutive_failures} failures" if job.consecutive_failures else ""
    return (
        f"{job.id}  {state:6}  {job.schedule} ({job.tz})  next {when}  -> {job.deliver}"
        f"{failures}  {job.prompt[:60]!r}"
    )


def run_line(run: CronRun, tz: str) -> str:
    outcome = run.outcome or ("skipped" if run.delivery == "none" else "running")
    note = f"  ({run.note})" if run.note else ""
    return (
        f"{describe(run.due_at, tz)}  {outcome:9}  delivery {run.delivery:7}  {run.session}{note}"
    )


def job_dict(job: CronJob) -> dict[str, Any]:
    return dataclasses.asdict(job)


def run_dict(run: CronRun) -> dict[str, Any]:
    return dataclasses.asdict(run)


async def run_job_now(
    runtime: Runtime,
    job_id: str,
    *,
    delivery: Delivery | None = None,
    kinds: Mapping[str, CronKind] | None = None,
    on_event: Callable[[Any], None] | None = None,
) -> CronRun:
    """`seam cron run JOB`: one run now, driven here, its reply delivered as a scheduled
    run's would be; returns its ledger row."""
    scheduler = build_scheduler(runtime, delivery=delivery, kinds=kinds)
    job = await CronAdmin(scheduler.store).job(job_id)
    run = await scheduler.run_now(job)
    if run is None:
        raise CronInputError(f"cron job {job_id} was started this very second; try again")
    await runtime.coordinator.run(run.submission_id, runtime.factory.resolve, on_event)
    await scheduler.look_after([run])
    for stored in await scheduler.store.runs(job_id, limit=5):
        if stored.slot_key == run.slot_key:
            return stored
    return run
