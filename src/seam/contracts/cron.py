"""Cron jobs: work the agent does on its own time, and the ledger of every run.

A `CronJob` says what to ask (a prompt, a personality), when (a schedule: an interval, a
5-field cron expression in a time zone, or one ISO timestamp), where the reply goes (a
delivery target, see `contracts.delivery`) and what to do about slots missed while
nothing ran (`skip` or `catch_up_once`).

A `CronRun` is one row of the run ledger: one due slot of one job. Its `slot_key`
(`f"{job_id}@{due_at_iso}"`) is unique in the store, and `claim_slot` is the only way a
run row comes to be, so however many schedulers run (two workers, a gateway and a
`seam serve`), each slot is claimed once: the unique key is the guard, not a lock.
A run's `outcome` (how its submission settled) and its `delivery` status (what became of
the reply) are kept apart, so a run that answered but could not deliver is never shown
as a success.

Time is the store's injected clock (seconds since the epoch).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal, Protocol, runtime_checkable

from seam.contracts.execution import Submission

ScheduleKind = Literal["interval", "cron", "once"]
MissedPolicy = Literal["skip", "catch_up_once"]
JobKind = Literal["prompt", "heartbeat", "consolidate"]
RunOutcome = Literal["completed", "failed", "aborted"]
# What became of the reply, kept apart from the outcome: not yet known, in the outbox,
# held for quiet hours, dropped as [SILENT], sent, failed for good, or nothing to deliver
# (target `none`, or the run failed).
DeliveryStatus = Literal["pending", "queued", "held", "silent", "sent", "failed", "none"]

MISSED_POLICIES: tuple[MissedPolicy, ...] = ("skip", "catch_up_once")
# Consecutive failures after which the owner is told, and after which the job pauses.
ALERT_AFTER = 2
PAUSE_AFTER = 10


class CronJobNotFound(KeyError):
    pass


@dataclass(frozen=True, slots=True)
class CronJob:
    id: str
    prompt: str
    schedule: str  # as the person wrote it: "30m", "every 2h", "0 9 * * 1-5", an ISO time
    schedule_kind: ScheduleKind
    created_at: float
    next_due_at: float | None  # None: nothing more is due (a one-shot job that ran)
    personality: str | None = None
    tz: str = "UTC"  # an IANA zone: cron fields and naive ISO timestamps are read in it
    deliver: str = "owner"  # a delivery target (`Delivery.check_target` canonical form)
    missed: MissedPolicy = "skip"
    enabled: bool = True
    paused: bool = False
    continue_session: bool = False  # run in the job's own session instead of a fresh one
    urgent: bool = False  # deliver through quiet hours
    kind: JobKind = "prompt"
    consecutive_failures: int = 0
    # A command run before each slot (plugins/cron/check.py): when it exits 0 and prints
    # nothing, there is nothing new and the model is not called. None: every slot runs.
    check: str | None = None
    # Spending limits of each run (`--max-tokens`, `--max-usd`; 0: none), beside [budget].
    max_tokens: int = 0
    max_usd: float = 0.0


@dataclass(frozen=True, slots=True)
class CronRun:
    job_id: str
    due_at: float
    slot_key: str
    submission_id: str
    session: str  # the public session name the run's turn went to
    started_at: float  # when the slot was claimed
    settled_at: float | None = None
    outcome: RunOutcome | None = None
    delivery: DeliveryStatus = "pending"
    note: str | None = None  # e.g. "missed: skipped 3 slots", "caught up", "manual"


@dataclass(frozen=True, slots=True)
class JobDraft:
    """A job as the `cron` tool asks for it, before it is checked: exactly one of
    `every`, `cron`, `at` (checked by whoever prepares it, not here)."""

    prompt: str
    every: str | None = None
    cron: str | None = None
    at: str | None = None
    tz: str = "UTC"
    deliver: str = "owner"
    personality: str | None = None
    missed: str = "skip"


def due_iso(due_at: float) -> str:
    """A slot's time in its key: UTC, to the second, so every process spells it alike."""
    return datetime.fromtimestamp(round(due_at), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def slot_key(job_id: str, due_at: float) -> str:
    return f"{job_id}@{due_iso(due_at)}"


@dataclass(frozen=True, slots=True)
class SlotClaim:
    """What a claimed slot's run is, past its job and slot: the submission it runs as,
    the session that takes it, and a note (why it was skipped, "caught up", ...)."""

    submission_id: str
    session: str
    note: str | None = None

    def run(self, job_id: str, due_at: float, started_at: float) -> CronRun:
        """The ledger row this claim makes for the slot, started at `started_at`."""
        key = slot_key(job_id, due_at)
        return CronRun(
            job_id, due_at, key, self.submission_id, self.session, started_at, note=self.note
        )


def run_session(job: CronJob, key: str) -> str:
    """The public session name a run of `job` at slot `key` talks in: the job's own with
    `continue_session`, else a fresh one per slot."""
    return f"cron:{job.id}" if job.continue_session else f"cron:{job.id}:{key.split('@', 1)[1]}"


def run_submission_id(key: str) -> str:
    """The submission id of a slot's run: derived from the slot key, so two schedulers
    that both got as far as submitting admit one submission."""
    return f"cron:{key}"


def is_failure(outcome: RunOutcome | None, delivery: DeliveryStatus) -> bool | None:
    """Whether a run counts as a failure (True), a success (False), or neither (None: a
    slot skipped as missed never ran)."""
    if outcome is None:
        return None
    return outcome != "completed" or delivery == "failed"


@runtime_checkable
class CronJobBook(Protocol):
    """The jobs themselves: what to run and when it is next due.

    For `seam cron` and the cron tool (add, list, pause, remove) and the scheduler (the
    enabled jobs, and moving each one's next due time on)."""

    async def upsert(self, job: CronJob) -> CronJob:
        """Create the job, or replace the stored one with the same id."""
        ...

    async def get_job(self, job_id: str) -> CronJob | None: ...

    async def list_all(self) -> list[CronJob]:
        """Every job, oldest first."""
        ...

    async def list_enabled(self) -> list[CronJob]:
        """Enabled jobs (paused ones included: the caller decides), oldest first."""
        ...

    async def delete(self, job_id: str) -> bool:
        """Remove the job and its run ledger; False when there was none."""
        ...

    async def touch(self, job_id: str, next_due_at: float | None) -> CronJob:
        """Set when the job is next due. Raises CronJobNotFound."""
        ...

    async def set_paused(self, job_id: str, paused: bool) -> CronJob:
        """Pause or resume; resuming also clears the failure streak. Raises CronJobNotFound."""
        ...


@runtime_checkable
class CronRunLedger(Protocol):
    """The run ledger: one row per due slot, claimed once by whichever scheduler is first.

    For the scheduler (claim a slot, record how its run ended and what became of its
    reply) and `seam cron runs` / the web API (a job's history)."""

    async def claim_slot(self, job_id: str, due_at: float, claim: SlotClaim) -> CronRun | None:
        """Record a run for the slot (`slot_key(job_id, due_at)`), started now; None when
        the slot is already claimed (by anyone, ever)."""
        ...

    async def settle_run(
        self,
        slot: str,
        *,
        outcome: RunOutcome | None,
        delivery: DeliveryStatus,
    ) -> CronRun | None:
        """Record how a run ended, once: only a run whose delivery is still `pending` is
        changed (else None: another scheduler recorded it first). In the same transaction
        the job's `consecutive_failures` goes up by one when the run failed (outcome not
        completed, or delivery failed) and back to 0 when it succeeded (`is_failure`); a
        slot skipped as missed (outcome None) leaves it as it is."""
        ...

    async def set_delivery(self, slot: str, delivery: DeliveryStatus) -> CronRun | None:
        """Update a settled run's delivery status as the outbox learns more (queued ->
        sent); a change to `failed` counts one failure as `settle_run` does. None when
        the run is unknown or already has that status."""
        ...

    async def runs(self, job_id: str, *, limit: int = 50) -> list[CronRun]:
        """The job's runs, newest slot first."""
        ...

    async def open_runs(self, *, limit: int = 500) -> Sequence[CronRun]:
        """Runs whose delivery is still pending or on its way (`pending`, `queued`,
        `held`), oldest first: what a scheduler looks after on start and every tick."""
        ...


@runtime_checkable
class CronStore(CronJobBook, CronRunLedger, Protocol):
    """Jobs and their run ledger together, as every backend keeps them (a store's
    `cron` view)."""


class CronKind(Protocol):
    """What a job kind other than "prompt" changes in the scheduler (the heartbeat is one:
    plugins/heartbeat). Registered with the scheduler by the kind's name."""

    async def skip_reason(self, job: CronJob, now: float) -> str | None:
        """Before a due slot is claimed: a reason to skip it (quiet hours, nothing to
        check), or None to run it. A skipped slot is claimed with the reason as its note
        and settled without a run (outcome None, delivery `none`)."""
        ...

    async def skipped(self, job: CronJob, run: CronRun, reason: str) -> None:
        """Called once per skipped slot, after its claim."""
        ...

    async def deliver(self, job: CronJob, run: CronRun, sub: Submission) -> str:
        """Deliver the settled run's reply the kind's way (e.g. drop an all-clear) and
        return its `DeliveryStatus`."""
        ...


@runtime_checkable
class InlineCronKind(CronKind, Protocol):
    """A kind whose run is no turn: the kind does the work itself, in the scheduler's
    process, after the slot is claimed (memory consolidation is one). The scheduler
    settles the run with the outcome `run_inline` returns (delivery `none`); an
    exception settles it failed, counted like any failure."""

    async def run_inline(self, job: CronJob, run: CronRun) -> RunOutcome: ...
