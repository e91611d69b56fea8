"""Cron jobs and runs as people read them: one line a job or run (`seam cron list`,
`seam cron runs`, `/cron` in a chat) and the plain dicts `--json` prints."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from seam.contracts.cron import CronJob, CronRun
from seam.contracts.outbox import Outbox
from seam.plugins.cron.schedule import describe

NO_JOBS = 'no cron jobs (add one: seam cron add --every 2h "...", or ask the agent)'


def job_lines(jobs: Sequence[CronJob]) -> list[str]:
    """`/cron` in chat: one line per job, or how to add one."""
    return [job_line(job) for job in jobs] if jobs else [NO_JOBS]


def job_line(job: CronJob) -> str:
    state = "paused" if job.paused else ("on" if job.enabled else "off")
    when = describe(job.next_due_at, job.tz)
    failures = f" · {job.consecutive_failures} failures" if job.consecutive_failures else ""
    check = f"  check {job.check[:40]!r}" if job.check else ""
    return (
        f"{job.id}  {state:6}  {job.schedule} ({job.tz})  next {when}  -> {job.deliver}"
        f"{failures}{limits_text(job)}  {job.prompt[:60]!r}{check}"
    )


def limits_text(job: CronJob) -> str:
    """ " · max 5,000 tokens, $0.50 a run", or nothing for a job without limits."""
    limits = [f"{job.max_tokens:,} tokens"] if job.max_tokens else []
    limits += [f"${job.max_usd:g}"] if job.max_usd else []
    return f" · max {', '.join(limits)} a run" if limits else ""


def run_line(run: CronRun, tz: str, delivery_error: str | None = None) -> str:
    """One run; `delivery_error` (the outbox's reason a delivery failed) ends the line."""
    outcome = run_outcome(run)
    delivery = "failed" if delivery_error else run.delivery
    note = f"  ({run.note})" if run.note else ""
    error = f"  delivery failed: {delivery_error}" if delivery_error else ""
    return (
        f"{describe(run.due_at, tz)}  {outcome:9}  delivery {delivery:7}  {run.session}{note}"
        f"{error}"
    )


def run_outcome(run: CronRun) -> str:
    """How a run ended, or "skipped" (a missed slot that never ran) or "running"."""
    return run.outcome or ("skipped" if run.delivery == "none" else "running")


async def delivery_errors(outbox: Outbox | None, runs: Sequence[CronRun]) -> dict[str, str]:
    """Why each run's delivery failed for good (slot key -> the outbox's last error, one
    line): the outbox knows before the scheduler copies the status to the ledger."""
    errors: dict[str, str] = {}
    if outbox is None:
        return errors
    for run in runs:
        if run.delivery not in ("queued", "failed"):
            continue
        item = await outbox.outbox_item(f"cron:{run.slot_key}")
        if item is not None and item.status == "failed":
            errors[run.slot_key] = " ".join((item.last_error or "unknown error").split())
    return errors


def job_dict(job: CronJob) -> dict[str, Any]:
    return dataclasses.asdict(job)


def run_dict(run: CronRun) -> dict[str, Any]:
    return dataclasses.asdict(run)
