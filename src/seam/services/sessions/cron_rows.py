"""Cron jobs and runs to and from SQL rows, the same columns on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

from seam.contracts.cron import CronJob, CronRun

JOB_COLUMNS = (
    "id, prompt, schedule, schedule_kind, created_at, next_due_at, personality, tz, deliver,"
    " missed, enabled, paused, continue_session, urgent, kind, consecutive_failures,"
    " check_command, max_tokens, max_usd"
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
        job.check,
        job.max_tokens,
        job.max_usd,
    )


def job_from_row(row: Sequence[Any]) -> CronJob:
    (job_id, prompt, schedule, kind_of_schedule, created, next_due, personality, tz) = row[:8]
    (deliver, missed, enabled, paused, cont, urgent, kind, failures) = row[8:16]
    check = row[16]
    max_tokens, max_usd = row[17:19]
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
        check=check,
        max_tokens=max_tokens or 0,
        max_usd=max_usd or 0.0,
    )


def run_from_row(row: Sequence[Any]) -> CronRun:
    job_id, due_at, key, sid, session, started, settled, outcome, delivery, note = row
    return CronRun(job_id, due_at, key, sid, session, started, settled, outcome, delivery, note)


def new_run_params(run: CronRun) -> tuple[Any, ...]:
    """`CronSQL.new_run`'s parameters for a claimed, not yet settled run."""
    run_id = (run.job_id, run.due_at, run.slot_key)
    return (*run_id, run.submission_id, run.session, run.started_at, run.note)


@dataclass(frozen=True, slots=True)
class CronSQL:
    """The statements both cron stores run, written once; `in_style` spells their
    placeholders for a driver (`?` for sqlite3, `%s` for psycopg). Where the dialects
    differ (upserts, claiming a slot, returning rows) each store keeps its own."""

    job_by_id: str = f"SELECT {JOB_COLUMNS} FROM cron_jobs WHERE id = ?"
    jobs: str = f"SELECT {JOB_COLUMNS} FROM cron_jobs ORDER BY created_at, id"
    enabled_jobs: str = f"SELECT {JOB_COLUMNS} FROM cron_jobs WHERE enabled ORDER BY created_at, id"
    delete_runs: str = "DELETE FROM cron_runs WHERE job_id = ?"
    delete_job: str = "DELETE FROM cron_jobs WHERE id = ?"
    touch: str = "UPDATE cron_jobs SET next_due_at = ? WHERE id = ?"
    # Pausing keeps the failure streak; resuming clears it.
    pause: str = (
        "UPDATE cron_jobs SET paused = ?,"
        " consecutive_failures = CASE WHEN ? THEN consecutive_failures ELSE 0 END"
        " WHERE id = ?"
    )
    count_failure: str = (
        "UPDATE cron_jobs SET consecutive_failures ="
        " CASE WHEN ? THEN consecutive_failures + 1 ELSE 0 END WHERE id = ?"
    )
    new_run: str = (
        f"INSERT INTO cron_runs ({RUN_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, NULL, NULL, 'pending', ?)"
        " ON CONFLICT (slot_key) DO NOTHING"
    )
    settle_run: str = (
        "UPDATE cron_runs SET outcome = ?, delivery = ?, settled_at = ?"
        " WHERE slot_key = ? AND delivery = 'pending'"
    )
    set_delivery: str = "UPDATE cron_runs SET delivery = ? WHERE slot_key = ? AND delivery <> ?"
    run_by_slot: str = f"SELECT {RUN_COLUMNS} FROM cron_runs WHERE slot_key = ?"
    runs: str = f"SELECT {RUN_COLUMNS} FROM cron_runs WHERE job_id = ? ORDER BY due_at DESC LIMIT ?"
    open_runs: str = (
        f"SELECT {RUN_COLUMNS} FROM cron_runs WHERE delivery IN ('pending', 'queued', 'held')"
        " ORDER BY started_at, slot_key LIMIT ?"
    )

    @classmethod
    def in_style(cls, mark: str) -> CronSQL:
        """The statements with `?` spelled `mark` (none of them holds a literal `?`)."""
        return cls(**{f.name: getattr(cls(), f.name).replace("?", mark) for f in fields(cls)})
