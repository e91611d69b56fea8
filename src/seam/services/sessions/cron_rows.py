"""Cron jobs and runs to and from SQL rows, the same columns on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from seam.contracts.cron import CronJob, CronRun

JOB_COLUMNS = (
    "id, prompt, schedule, schedule_kind, created_at, next_due_at, personality, tz, deliver,"
    " missed, enabled, paused, continue_session, urgent, kind, consecutive_failures"
)
RUN_COLUMNS = (
    "job_id, due_at, slot_key, submission_id, session, started_at, settled_at, outcome,"
    " delivery, note"
)


def job_params(job: CronJob) -> tuple[Any, ...]:
    return (
        job.id,
        job.prompt,
        job.schedule,
        job.schedule_kind,
        job.created_at,
        job.next_due_at,
        job.personality,
        job.tz,
        job.deliver,
        job.missed,
        bool(job.enabled),
        bool(job.paused),
        bool(job.continue_session),
        bool(job.urgent),
        job.kind,
        job.consecutive_failures,
    )


def job_from_row(row: Sequence[Any]) -> CronJob:
    (job_id, prompt, schedule, kind_of_schedule, created, next_due, personality, tz) = row[:8]
    (deliver, missed, enabled, paused, cont, urgent, kind, failures) = row[8:]
    return CronJob(
        id=job_id,
        prompt=prompt,
        schedule=schedule,
        schedule_kind=kind_of_schedule,
        created_at=created,
        next_due_at=next_due,
        personality=personality,
        tz=tz,
        deliver=deliver,
        missed=missed,
        enabled=bool(enabled),
        paused=bool(paused),
        continue_session=bool(cont),
        urgent=bool(urgent),
        kind=kind,
        consecutive_failures=failures,
    )


def run_from_row(row: Sequence[Any]) -> CronRun:
    job_id, due_at, key, sid, session, started, settled, outcome, delivery, note = row
    return CronRun(job_id, due_at, key, sid, session, started, settled, outcome, delivery, note)
