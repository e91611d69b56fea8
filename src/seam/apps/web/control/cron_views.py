"""What the Cron section does with the jobs: the same `CronAdmin` (checks of schedule,
zone, target, policy) and ledger `seam cron` uses, read fresh from the store on every
request, so the CLI, the scheduler and the page see one set of jobs.

A job's JSON is `seam cron list --json`'s with what the page shows beside it: the next run
in the job's zone and its last run. A run's is `seam cron runs --json`'s with its delivered
message (the reply of its submission) and why its delivery failed, if it did.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from seam.apps.web.control.deps import Control
from seam.apps.web.errors import ApiError
from seam.contracts.cron import CronJob, CronJobNotFound, CronRun
from seam.contracts.outbox import Outbox
from seam.wiring.cron import (
    CronAdmin,
    CronInputError,
    build_scheduler,
    check_personality,
    delivery_errors_of,
    describe,
    job_dict,
    run_dict,
    run_outcome,
    tool_jobs,
)
from seam.wiring.delivery import build_delivery


@contextlib.contextmanager
def cron_errors() -> Iterator[None]:
    """A job that is not there is 404; input the admin refuses is 400; one line each."""
    try:
        yield
    except CronJobNotFound as exc:
        raise ApiError(404, one_line(str(exc.args[0] if exc.args else exc))) from None
    except CronInputError as exc:
        raise ApiError(400, one_line(str(exc))) from None


def one_line(text: str) -> str:
    return " ".join(text.split())


def admin_of(control: Control) -> CronAdmin:
    """The jobs of the server's store, targets checked by the configured delivery (the
    `CronAdmin` `seam cron` builds from the same home)."""
    return tool_jobs(control.backend.runtime.store, control.need_settings())


def check_personality_of(control: Control, personality: str | None) -> None:
    check_personality(control.backend.runtime, personality)


def run_summary(run: CronRun, tz: str) -> dict[str, Any]:
    """A job's last run as its row shows it: how it ended, and when."""
    when = run.settled_at if run.settled_at is not None else run.started_at
    return {
        "outcome": run_outcome(run),
        "delivery": run.delivery,
        "due_at": run.due_at,
        "at": when,
        "when": describe(when, tz),
        "note": run.note,
    }


async def job_view(admin: CronAdmin, job: CronJob) -> dict[str, Any]:
    last = await admin.store.runs(job.id, limit=1)
    return {
        **job_dict(job),
        "state": "paused" if job.paused else ("on" if job.enabled else "off"),
        "next_run": describe(job.next_due_at, job.tz) if job.next_due_at is not None else None,
        "last_run": run_summary(last[0], job.tz) if last else None,
    }


async def run_views(control: Control, job_id: str, limit: int) -> list[dict[str, Any]]:
    """A job's runs, newest first, each with its delivered message."""
    runtime = control.backend.runtime
    admin = admin_of(control)
    with cron_errors():
        job = await admin.job(job_id)
        runs = await admin.runs(job_id, limit=limit)
    errors = await delivery_errors_of(runtime, runs)
    views = []
    for run in runs:
        sub = await runtime.store.submission(run.submission_id)
        error = errors.get(run.slot_key)
        done = sub is not None and sub.outcome == "completed"
        views.append(
            {
                **run_dict(run),
                "outcome_text": run_outcome(run),
                "due": describe(run.due_at, job.tz),
                "delivery": "failed" if error else run.delivery,
                "delivery_error": error,
                "message": sub.result if sub is not None and done else None,
                "error": sub.error if sub is not None and sub.outcome and not done else None,
            }
        )
    return views


async def start_now(control: Control, job_id: str) -> CronRun:
    """Run now: claim a slot at this moment and admit its turn as the scheduler does
    (`CronScheduler.run_now`, as `seam cron run` does), then drive it in the background
    here; the scheduler running beside this server delivers the reply."""
    runtime = control.backend.runtime
    store = runtime.store
    if not isinstance(store, Outbox):
        raise ApiError(503, "this server's store has no outbox to deliver a run's reply")
    delivery = build_delivery(control.need_settings(), store)
    scheduler = build_scheduler(runtime, delivery=delivery)
    with cron_errors():
        job = await admin_of(control).job(job_id)
    run = await scheduler.run_now(job)
    if run is None:
        raise ApiError(409, f"cron job {job_id} was started this very second; try again")
    control.backend.turns.drive(run.submission_id)
    return run


__all__ = [
    "admin_of",
    "check_personality_of",
    "cron_errors",
    "job_view",
    "run_views",
    "start_now",
]
