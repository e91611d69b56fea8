"""Cron jobs as the surfaces build them: the scheduler started beside a worker, a gateway
or `seam serve` (`maybe_start_scheduler`), the `CronAdmin` that `seam cron`, the `cron`
tool and `/cron` use, and `seam cron run`.

What the scheduler does is plugins/cron/scheduler.py, what adding or pausing a job checks
is plugins/cron/admin.py, how a job reads is plugins/cron/text.py; here the runtime's
parts are handed to them. The cron store is the runtime store's `cron` view (SQLite and
PostgreSQL keep jobs and the ledger in the session database, so every process that shares
the store shares the schedule); an in-memory store gets an in-memory cron store of its
own, kept per store. Whichever processes run a scheduler, each due slot is claimed once
(the ledger's unique slot key), so jobs run in all of them and in none twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypedDict, Unpack

from seam.contracts.cron import CronKind, CronRun, CronStore
from seam.contracts.delivery import Delivery, DeliveryError
from seam.contracts.execution import Submission
from seam.contracts.outbox import Outbox
from seam.core.coordinator import Coordinator, OnEvent
from seam.core.cron import InMemoryCronStore
from seam.core.session_factory import SessionFactory
from seam.plugins.cron.admin import (
    Clock,
    CronAdmin,
    CronInputError,
    JobOptions,
    ScheduleSpec,
    guessed_spec,
    spec_of,
)
from seam.plugins.cron.background import Background, stop_background
from seam.plugins.cron.schedule import describe
from seam.plugins.cron.scheduler import CronScheduler
from seam.plugins.cron.text import (
    delivery_errors,
    job_dict,
    job_line,
    job_lines,
    run_dict,
    run_line,
    run_outcome,
)
from seam.wiring.cron_check import check_classifier, check_runner
from seam.wiring.delivery import build_delivery, delivery_for
from seam.wiring.heartbeat import HeartbeatRuntime, heartbeat_kind, sync_heartbeat_job
from seam.wiring.memory_consolidate import consolidate_kind
from seam.wiring.outbox import running_deliverer
from seam.wiring.settings import Settings

log = logging.getLogger("seam.cron")
_MEMORY: weakref.WeakKeyDictionary[Any, InMemoryCronStore] = weakref.WeakKeyDictionary()

__all__ = [
    "Background",
    "CronAdmin",
    "CronInputError",
    "CronRuntime",
    "JobOptions",
    "ScheduleSpec",
    "admin_for",
    "build_scheduler",
    "check_personality",
    "cron_lines",
    "cron_store_of",
    "delivery_errors_of",
    "describe",
    "guessed_spec",
    "job_dict",
    "job_line",
    "maybe_start_scheduler",
    "run_dict",
    "run_job_now",
    "run_line",
    "run_outcome",
    "spec_of",
    "start_scheduler",
    "stop_scheduler",
    "tool_jobs",
]


class CronRuntime(HeartbeatRuntime, Protocol):
    """What cron needs of a runtime (`wiring.runtime.Runtime` is one): what a beat needs,
    admitting a turn, and (for `seam cron run`) driving one here."""

    @property
    def coordinator(self) -> Coordinator: ...

    @property
    def factory(self) -> SessionFactory: ...

    # As the scheduler admits a run's turn (`Runtime.submit` also takes fewer arguments).
    async def submit(
        self, session: str, text: str, *, personality: str | None, submission_id: str
    ) -> Submission: ...


class SchedulerOptions(TypedDict, total=False):
    """What a caller may hand the scheduler instead of the configured parts: without a
    `delivery` the configured one is used; `kinds` are the hooks of job kinds other than
    "prompt" (default: the heartbeat's)."""

    delivery: Delivery | None
    outbox: Outbox | None
    kinds: Mapping[str, CronKind] | None
    clock: Clock | None
    tick: float | None


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

    def __init__(self, runtime: CronRuntime) -> None:
        self.runtime = runtime

    async def submit(
        self, session: str, text: str, *, personality: str | None, submission_id: str
    ) -> Submission:
        return await self.runtime.submit(
            session, text, personality=personality, submission_id=submission_id
        )

    async def submission(self, submission_id: str) -> Submission | None:
        return await self.runtime.store.submission(submission_id)


def default_kinds(runtime: CronRuntime) -> dict[str, CronKind]:
    """The job kinds the configured runtime knows besides "prompt": the heartbeat's hooks
    (wiring/heartbeat.py) and memory consolidation's (wiring/memory_consolidate.py),
    when the runtime has settings."""
    if runtime.settings is None:
        return {}
    kinds: dict[str, CronKind] = {"consolidate": consolidate_kind(runtime.settings)}
    try:
        return {
            "heartbeat": heartbeat_kind(runtime, cron=cron_store_of(runtime.store)),
            **kinds,
        }
    except Exception as exc:
        log.warning("heartbeat jobs will run as plain prompts here: %s", exc)
        return kinds


def runtime_outbox(runtime: CronRuntime) -> Outbox | None:
    store = runtime.store
    return store if isinstance(store, Outbox) else None


def build_scheduler(runtime: CronRuntime, **options: Unpack[SchedulerOptions]) -> CronScheduler:
    delivery, outbox, kinds = options.get("delivery"), options.get("outbox"), options.get("kinds")
    tick = options.get("tick")
    return CronScheduler(
        cron_store_of(runtime.store),
        RuntimeSubmitter(runtime),
        delivery if delivery is not None else delivery_for(runtime),
        outbox=outbox if outbox is not None else runtime_outbox(runtime),
        kinds=kinds if kinds is not None else default_kinds(runtime),
        clock=options.get("clock") or time.time,
        **({"tick": tick} if tick is not None else {}),
        checks=check_runner(runtime),
    )


def start_scheduler(
    runtime: CronRuntime, **options: Unpack[SchedulerOptions]
) -> asyncio.Task[None]:
    """The cron scheduler as a background task of the calling surface (`seam worker`,
    `seam gateway`, `seam serve`); cancel it to stop."""
    return asyncio.ensure_future(build_scheduler(runtime, **options).run())


async def maybe_start_scheduler(
    runtime: CronRuntime, *, deliverer: bool = True, **options: Unpack[SchedulerOptions]
) -> Background:
    """`start_scheduler`, the outbox's deliverer (`file:` deliveries, webhooks) and the
    heartbeat's job, for a surface that also works without cron: what cannot start (no
    delivery configured) is logged, and the surface goes on."""
    background = Background()
    outbox = runtime_outbox(runtime)
    settings = runtime.settings
    if deliverer and settings is not None and outbox is not None:
        try:
            await background.stack.enter_async_context(running_deliverer(settings, outbox))
        except Exception as exc:
            log.warning("deliveries will not be sent from here: %s", exc)
    if settings is not None:
        try:
            now = (options.get("clock") or time.time)()
            await sync_heartbeat_job(cron_store_of(runtime.store), settings, now)
        except Exception as exc:
            log.warning("the heartbeat will not be scheduled here: %s", exc)
    try:
        background.scheduler = start_scheduler(runtime, **options)
    except Exception as exc:
        log.warning("cron jobs will not run here: %s", exc)
    return background


async def stop_scheduler(background: Background | None) -> None:
    await stop_background(background)


def _target_checker(make: Callable[[], Delivery]) -> Callable[[str], str]:
    """A delivery target check by the configured `Delivery` (built when first asked)."""

    def check(target: str) -> str:
        try:
            delivery = make()
        except (ImportError, LookupError, ValueError) as exc:
            raise DeliveryError(f"cannot check the delivery target: {exc}") from None
        return delivery.check_target(target)

    return check


def admin_for(runtime: CronRuntime, *, clock: Clock = time.time) -> CronAdmin:
    """The `CronAdmin` of a configured runtime (targets checked by its `Delivery`)."""
    check = _target_checker(lambda: delivery_for(runtime))
    return CronAdmin(
        cron_store_of(runtime.store),
        check_target=check,
        clock=clock,
        classify=check_classifier(runtime),
    )


def check_personality(runtime: CronRuntime, personality: str | None) -> None:
    """A job's personality must exist when the job is added or changed (`seam cron add`,
    the dashboard), not at its first run; raises CronInputError naming the known ones."""
    if personality is None:
        return
    known = {p.id for p in runtime.personalities.list()}
    if personality not in known:
        raise CronInputError(f"no personality {personality!r} (known: {sorted(known)})")


def tool_jobs(store: Any, settings: Settings | None) -> CronAdmin:
    """What the `cron` tool schedules through: the store's cron jobs, targets checked by
    the configured delivery (with no settings, as in a test runtime, any target)."""
    check = None
    if settings is not None:
        check = _target_checker(lambda: build_delivery(settings, store))
    return CronAdmin(cron_store_of(store), check_target=check)


async def cron_lines(runtime: CronRuntime) -> list[str]:
    """`/cron` in chat: one line per job (manage them with `seam cron`)."""
    return job_lines(await cron_store_of(runtime.store).list_all())


async def run_job_now(
    runtime: CronRuntime,
    job_id: str,
    *,
    delivery: Delivery | None = None,
    kinds: Mapping[str, CronKind] | None = None,
    on_event: OnEvent | None = None,
) -> CronRun:
    """`seam cron run JOB`: one run now, driven here, its reply delivered as a scheduled
    run's would be; returns its ledger row."""
    scheduler = build_scheduler(runtime, delivery=delivery, kinds=kinds)
    job = await CronAdmin(scheduler.store).job(job_id)

    async def drive(submission_id: str) -> object:
        return await runtime.coordinator.run(submission_id, runtime.factory.resolve, on_event)

    run = await scheduler.run_once(job, drive)
    if run is None:
        raise CronInputError(f"cron job {job_id} was started this very second; try again")
    return run


async def delivery_errors_of(runtime: CronRuntime, runs: list[CronRun]) -> dict[str, str]:
    """Why each of `runs` failed delivery for good, from the runtime's outbox."""
    return await delivery_errors(runtime_outbox(runtime), runs)
