"""The heartbeat as a cron job of kind `heartbeat`: what the scheduler asks of the kind.

Scheduled through the cron scheduler, a beat gets what every cron run gets (one claim per
slot in the run ledger, however many workers run; the missed-run policy; a durable
submission resumed with repair after a crash) and differs in two places only, which is
what this object answers for the scheduler:

- `skip_reason(job, now)`: before claiming a due slot, whether the beat is skipped (quiet
  hours; no checklist; nothing new since the last all-clear, `news.py`: no model call at
  all); the scheduler claims the slot with that note and settles it without a run, then
  calls `skipped(job, run, reason)`, which records the skip in the heartbeat ledger
  (after the claim, so once per slot). A beat that runs keeps the fingerprint of what it
  read here until `deliver` records it with the beat;
- `deliver(job, run, sub)`: after the submission settled, instead of delivering the reply
  as it is: drop the all-clear (`HEARTBEAT_OK`), deliver anything else through the
  `Delivery` under the run's key, record tokens and cost in the heartbeat ledger, and
  return the run's delivery status (`silent` for a dropped all-clear).

The job itself (id `heartbeat`, the `heartbeat` personality, `[heartbeat] every` as an
interval, missed slots skipped) is kept in step with the settings by wiring.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from seam.contracts.delivery import Delivery
from seam.contracts.dnd import DndChecker
from seam.contracts.execution import Submission
from seam.contracts.sessions import SessionStore
from seam.plugins.heartbeat.ledger import BeatDetails, HeartbeatLedger, HeartbeatRun
from seam.plugins.heartbeat.news import BeatNews
from seam.plugins.heartbeat.runner import settle_beat, skip_reason, slot_name

HEARTBEAT_JOB = "heartbeat"


class BeatJob(Protocol):
    """The fields of a `contracts.cron.CronJob` a beat reads."""

    @property
    def deliver(self) -> str: ...

    @property
    def urgent(self) -> bool: ...


class BeatRun(Protocol):
    """The fields of a `contracts.cron.CronRun` a beat reads."""

    @property
    def slot_key(self) -> str: ...

    @property
    def session(self) -> str: ...

    @property
    def due_at(self) -> float: ...

    @property
    def started_at(self) -> float: ...


@dataclass(frozen=True, slots=True)
class Reading:
    """What a beat about to run read: for slots due from `since` to `at`."""

    since: float
    at: float
    inputs: str


@dataclass
class HeartbeatKind:
    """The `heartbeat` job kind's two hooks (see the module doc)."""

    store: SessionStore
    session_key_for: Callable[[str], str]
    delivery: Delivery
    dnd: DndChecker | None
    ledger: HeartbeatLedger
    checklist: Callable[[], str]
    clock: Callable[[], float] = field(default=time.time, kw_only=True)
    # What tells whether anything is new (None: every slot runs, as before).
    news: BeatNews | None = field(default=None, kw_only=True)
    _reading: Reading | None = field(default=None, init=False, repr=False)

    async def skip_reason(self, job: BeatJob, now: float) -> str | None:
        checklist = self.checklist()
        reason = await skip_reason(self.dnd, checklist, now)
        if reason is not None or self.news is None:
            return reason
        inputs = self.news.inputs(checklist, now)
        reason = await self.news.nothing_new(self.ledger, inputs)
        if reason is None and inputs is not None:
            first: float | None = getattr(job, "next_due_at", None)  # None: this slot only
            since = now if first is None else min(first, now)
            self._reading = Reading(since, now, inputs)
        return reason

    def _read_for(self, run: BeatRun) -> BeatDetails:
        """The fingerprint read before `run` was claimed, when this process read it (a
        beat delivered by another process, or run by hand, records none: the next one
        runs)."""
        reading, self._reading = self._reading, None
        if reading is None or not reading.since <= run.due_at <= reading.at:
            return {}
        return {"inputs": reading.inputs, "inputs_at": reading.at}

    async def skipped(self, job: BeatJob, run: BeatRun, reason: str) -> None:
        now = self.clock()
        self.ledger.append(HeartbeatRun(slot_name(run.due_at), "skipped", now, now, reason=reason))

    async def deliver(self, job: BeatJob, run: BeatRun, sub: Submission) -> str:
        """The run's delivery status: `silent` (the all-clear, dropped), the Delivery's
        verdict or its item's status, `none` (the turn failed), `failed` (undeliverable)."""
        status, details = await settle_beat(
            self.store,
            self.delivery,
            session=run.session,
            session_key=self.session_key_for(run.session),
            sub=sub,
            key=f"cron:{run.slot_key}",
            target=job.deliver,
            urgent=job.urgent,
        )
        details.update(self._read_for(run))
        beat = HeartbeatRun(
            slot_name(run.due_at),
            status,
            run.started_at,
            self.clock(),
            **details,
        )
        self.ledger.append(beat)
        if status == "ok":
            return "silent"
        if status == "failed":
            return "none" if sub.outcome != "completed" else "failed"
        return beat.delivery or "queued"
