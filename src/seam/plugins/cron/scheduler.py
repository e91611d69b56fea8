"""The cron scheduler: turns due slots into durable submissions and their replies into
deliveries, exactly once per slot however many schedulers run.

Each tick:
1. For every enabled, unpaused job whose `next_due_at` has come, work out the latest due
   slot and how many before it were missed, and claim that one slot in the ledger
   (`CronStore.claim_slot`: the slot's unique key is the guard, so of two schedulers one
   wins and the other moves on). The missed-run policy decides what the claim means:
   `catch_up_once` runs it (note "caught up: N missed slots" when there were any);
   `skip` runs it when it is on time (due within `grace` seconds, the usual case: note
   "missed: skipped N slots" when earlier ones were missed) and otherwise records it as
   skipped without running it, so a restart after downtime shows in the ledger instead of
   silently dropping or piling up runs. A one-shot job runs even when late: it has one
   slot. Then `next_due_at` advances. Before the claim, a job kind may skip the slot
   (the heartbeat's quiet hours, nothing new), and so may a job's check: a command that
   exits 0 and prints nothing means nothing new (plugins/cron/check.py); a skipped slot
   is claimed with the reason as its note and settled without a run.
2. A claimed slot is submitted as a durable submission whose id is derived from the slot
   key (`cron:<slot key>`), in a fresh session (`cron:<job>:<slot>`) or the job's own
   (`cron:<job>`, with `continue_session`). A worker runs it like any turn, so a crash
   mid-run is resumed with repair, never blindly re-run.
3. Every run whose delivery is still open is looked after: one whose submission is missing
   (a crash between claim and submit) is submitted again (idempotent by id); one that has
   settled has its reply delivered (`Delivery.deliver`, idempotent by the key
   `cron:<slot key>`) and its outcome and delivery status recorded, once
   (`settle_run`). This is also what finds settled-but-undelivered runs after a crash.
   With an outbox at hand, queued deliveries are followed until sent or failed for good.

Failures (a failed or aborted run, or a delivery that failed for good) are counted per
job; the owner is told at `ALERT_AFTER` in a row and the job pauses at `PAUSE_AFTER`. A
success resets the count.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Protocol, cast

from seam.contracts.cron import (
    ALERT_AFTER,
    PAUSE_AFTER,
    CronJob,
    CronKind,
    CronRun,
    CronStore,
    DeliveryStatus,
    InlineCronKind,
    SlotClaim,
    run_session,
    run_submission_id,
    slot_key,
)
from seam.contracts.delivery import Delivery, DeliveryError, Notice
from seam.contracts.execution import Submission
from seam.contracts.outbox import Outbox
from seam.plugins.cron.check import CheckRun, check_verdict
from seam.plugins.cron.schedule import Due, ScheduleError, due_slots, parse_schedule

log = logging.getLogger("seam.cron")

# Seconds between ticks of `run()`.
TICK_SECONDS = 1.0
# Seconds late a slot may be and still count as on time under the `skip` policy.
GRACE_SECONDS = 120.0


class Submitter(Protocol):
    """What the scheduler needs of the runtime: admitting a turn and reading it back."""

    async def submit(
        self, session: str, text: str, *, personality: str | None, submission_id: str
    ) -> Submission: ...

    async def submission(self, submission_id: str) -> Submission | None: ...


class CronScheduler:
    def __init__(
        self,
        store: CronStore,
        runtime: Submitter,
        delivery: Delivery,
        *,
        outbox: Outbox | None = None,
        kinds: Mapping[str, CronKind] | None = None,
        clock: Callable[[], float] = time.time,
        tick: float = TICK_SECONDS,
        grace: float = GRACE_SECONDS,
        checks: CheckRun | None = None,
    ) -> None:
        self.store = store
        self.runtime = runtime
        self.delivery = delivery
        self.outbox = outbox
        # Hooks of job kinds other than "prompt" (the heartbeat), by kind.
        self.kinds: dict[str, CronKind] = dict(kinds or {})
        self.clock = clock
        self.tick_seconds = tick
        self.grace = grace
        # Runs a job's check (None: no sandbox here, a job with a check runs every slot).
        self.checks = checks

    async def run(self) -> None:
        """Tick until cancelled; a failing tick is logged and the next one tries again."""
        while True:
            try:
                await self.tick()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("cron tick failed")
            await asyncio.sleep(self.tick_seconds)

    async def tick(self) -> list[CronRun]:
        """Claim what is due now and look after open runs; returns the runs claimed."""
        now = self.clock()
        claimed: list[CronRun] = []
        for job in await self.store.list_enabled():
            if job.paused or job.next_due_at is None or job.next_due_at > now:
                continue
            try:
                run = await self._claim_due(job, now)
            except asyncio.CancelledError:
                raise
            except Exception:  # one job's trouble (removed meanwhile, ...) spares the rest
                log.exception("cron job %s: claiming its due slot failed", job.id)
                continue
            if run is not None:
                claimed.append(run)
        await self.look_after(await self.store.open_runs())
        return claimed

    # Claiming

    async def _claim_due(self, job: CronJob, now: float) -> CronRun | None:
        assert job.next_due_at is not None
        try:
            schedule = parse_schedule(job.schedule, job.schedule_kind, job.tz, job.created_at)
        except ScheduleError as exc:
            log.warning("cron job %s has a schedule Seam cannot read (%s): paused", job.id, exc)
            await self.store.set_paused(job.id, True)
            return None
        due = due_slots(schedule, job.next_due_at, now)
        if due is None:
            return None
        kind = self.kinds.get(job.kind)
        reason = await kind.skip_reason(job, now) if kind is not None else None
        skip, note = self._missed(job, due, now)
        if reason is None and not skip and job.check:
            reason, checked = await check_verdict(self.checks, job)
            note = "; ".join(n for n in (note, checked) if n) or None
        if reason is not None:
            run = await self._claim(job, due.slot, reason)
            await self.store.touch(job.id, due.next_due_at)
            if run is not None:
                await self.store.settle_run(run.slot_key, outcome=None, delivery="none")
                if kind is not None:
                    await kind.skipped(job, run, reason)
            return run
        run = await self._claim(job, due.slot, note)
        await self.store.touch(job.id, due.next_due_at)
        if run is None:
            return None
        if skip:
            await self.store.settle_run(run.slot_key, outcome=None, delivery="none")
            return run
        await self._submit(job, run)
        return run

    def _missed(self, job: CronJob, due: Due, now: float) -> tuple[bool, str | None]:
        """Whether the missed-run policy skips the slot, and the run's note about it."""
        late = now - due.slot > self.grace and job.schedule_kind != "once"
        skip = job.missed == "skip" and late
        if skip:
            return True, f"missed: skipped {due.missed + 1} slots"
        if due.missed and job.missed == "skip":
            return False, f"missed: skipped {due.missed} slots"
        if job.missed == "catch_up_once" and (due.missed or late):
            return False, f"caught up: {due.missed} missed slots"
        return False, None

    async def _claim(self, job: CronJob, due_at: float, note: str | None) -> CronRun | None:
        key = slot_key(job.id, due_at)
        return await self.store.claim_slot(
            job.id,
            due_at,
            SlotClaim(
                submission_id=run_submission_id(key), session=run_session(job, key), note=note
            ),
        )

    async def run_now(self, job: CronJob) -> CronRun | None:
        """Claim and submit a slot at this moment (`seam cron run`); None when a run of
        this job was already claimed for this very second."""
        run = await self._claim(job, float(int(self.clock())), "manual")
        if run is not None:
            await self._submit(job, run)
        return run

    async def run_once(
        self, job: CronJob, drive: Callable[[str], Awaitable[object]]
    ) -> CronRun | None:
        """`seam cron run JOB`: one run now, its turn driven by `drive(submission_id)` in
        this process and its reply delivered as a scheduled run's would be; returns its
        ledger row (None: a run of this job was already claimed this very second)."""
        run = await self.run_now(job)
        if run is None:
            return None
        if not isinstance(self.kinds.get(job.kind), InlineCronKind):  # else: ran in run_now
            await drive(run.submission_id)
            await self.look_after([run])
        for stored in await self.store.runs(job.id, limit=5):
            if stored.slot_key == run.slot_key:
                return stored
        return run

    async def _submit(self, job: CronJob, run: CronRun) -> Submission | None:
        """Admit the run's turn; a turn that can never be admitted (its personality is
        gone, its session name refused) settles the run failed, counted like any failure,
        instead of being tried again every tick. Anything else (the store is down) is
        tried again by the next tick's look at open runs. A kind that runs inline does
        its work here instead, with no turn."""
        kind = self.kinds.get(job.kind)
        if isinstance(kind, InlineCronKind):
            await self._run_inline(kind, job, run)
            return None
        try:
            return await self.runtime.submit(
                run.session,
                job.prompt,
                personality=job.personality,
                submission_id=run.submission_id,
            )
        except (KeyError, ValueError) as exc:
            log.warning("cron run %s cannot be submitted: %s", run.slot_key, exc)
            settled = await self.store.settle_run(run.slot_key, outcome="failed", delivery="none")
            if settled is not None:
                await self._after(settled)
            return None

    async def _run_inline(self, kind: InlineCronKind, job: CronJob, run: CronRun) -> None:
        try:
            outcome = await kind.run_inline(job, run)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("cron run %s failed", run.slot_key)
            outcome = "failed"
        settled = await self.store.settle_run(run.slot_key, outcome=outcome, delivery="none")
        if settled is not None:
            await self._after(settled)

    # Settling and delivering

    async def look_after(self, runs: Sequence[CronRun]) -> None:
        for run in runs:
            try:
                await self._look_after(run)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("cron run %s: looking after it failed", run.slot_key)

    async def _look_after(self, run: CronRun) -> None:
        if run.delivery != "pending":
            await self._follow_delivery(run)
            return
        job = await self.store.get_job(run.job_id)
        if job is None:
            return
        sub = await self.runtime.submission(run.submission_id)
        if sub is None:  # claimed, then the process died before it submitted
            await self._submit(job, run)
            return
        if sub.state != "settled":
            return
        kind = self.kinds.get(job.kind)
        if kind is not None:
            status: DeliveryStatus | None = cast(DeliveryStatus, await kind.deliver(job, run, sub))
        else:
            status = await self._deliver(job, run, sub)
        if status is None:
            return  # a transient problem: the next tick tries again, under the same key
        settled = await self.store.settle_run(run.slot_key, outcome=sub.outcome, delivery=status)
        if settled is not None:
            await self._after(settled)

    async def _deliver(self, job: CronJob, run: CronRun, sub: Submission) -> DeliveryStatus | None:
        if sub.outcome != "completed":
            return "none"
        try:
            result = await self.delivery.deliver(
                job.deliver,
                sub.result or "",
                Notice(key=f"cron:{run.slot_key}", source=run.slot_key, urgent=job.urgent),
            )
        except DeliveryError as exc:
            log.warning("cron run %s: cannot deliver to %s: %s", run.slot_key, job.deliver, exc)
            return "failed"
        except Exception:
            log.exception("cron run %s: delivery failed; trying again", run.slot_key)
            return None
        status: DeliveryStatus = result.verdict
        if result.item is not None and result.item.status in ("sent", "failed"):
            status = result.item.status
        return status

    async def _follow_delivery(self, run: CronRun) -> None:
        if self.outbox is None:
            return
        item = await self.outbox.outbox_item(f"cron:{run.slot_key}")
        if item is None or item.status == "pending":
            return
        changed = await self.store.set_delivery(run.slot_key, item.status)
        if changed is not None and item.status == "failed":
            await self._after(changed)

    async def _after(self, run: CronRun) -> None:
        """Alert the owner at `ALERT_AFTER` failures in a row, pause at `PAUSE_AFTER`."""
        job = await self.store.get_job(run.job_id)
        if job is None or job.consecutive_failures < ALERT_AFTER:
            return
        failures = job.consecutive_failures
        what = run.outcome if run.outcome != "completed" else f"delivery {run.delivery}"
        if failures >= PAUSE_AFTER and not job.paused:
            await self.store.set_paused(job.id, True)
            await self._alert(
                f"cron:alert:{run.slot_key}",
                f"Cron job {job.id} failed {failures} times in a row (last: {what}); it is "
                f"paused now. Resume it with: seam cron resume {job.id}",
            )
        elif failures == ALERT_AFTER:
            await self._alert(
                f"cron:alert:{run.slot_key}",
                f"Cron job {job.id} failed {failures} times in a row (last: {what}): "
                f"{job.prompt[:80]!r}. See: seam cron runs {job.id}",
            )

    async def _alert(self, key: str, text: str) -> None:
        try:
            await self.delivery.deliver("owner", text, Notice(key=key, source=key, urgent=False))
        except Exception as exc:
            log.warning("cron: could not alert the owner (%s): %s", exc, text)
