"""The scheduler on a manual clock: each schedule kind, both missed-run policies,
pause/resume, failure alerts and auto-pause, two schedulers on one store, and the
ledger scan that finishes what a crash left."""

from __future__ import annotations

import dataclasses
from typing import Any

from seam.contracts.cron import SlotClaim, slot_key
from seam.core.scripted_model import error_step, text_step
from seam.plugins.cron.admin import ScheduleSpec

from .helpers import T0, rig

HOUR = 3600.0


async def test_an_interval_job_runs_at_once_then_every_interval() -> None:
    r = rig(text_step("inbox: 3 new"), text_step("inbox: quiet"))
    job = await r.admin.add("check my inbox", ScheduleSpec(every="2h"), deliver="file:inbox.md")
    assert job.next_due_at == T0  # `--every` jobs are first due when added
    await r.cycle()
    assert r.delivery.to("file:inbox.md") == ["inbox: 3 new"]
    [run] = await r.scheduler.store.runs(job.id)
    assert (run.outcome, run.delivery, run.note) == ("completed", "queued", None)
    assert run.session == f"cron:{job.id}:2026-09-21T14:13:20Z"
    assert r.delivery.sent[0].key == f"cron:{run.slot_key}"
    assert (await r.scheduler.store.get_job(job.id)).next_due_at == T0 + 2 * HOUR  # type: ignore[union-attr]
    r.clock.now = T0 + 2 * HOUR - 1
    await r.cycle()
    assert len(r.delivery.sent) == 1  # not due yet
    r.clock.now = T0 + 2 * HOUR
    await r.cycle()
    assert r.delivery.to("file:inbox.md") == ["inbox: 3 new", "inbox: quiet"]


async def test_a_one_shot_job_runs_once() -> None:
    r = rig(text_step("Merry Christmas"))
    job = await r.admin.add(
        "greet", ScheduleSpec(at="2026-09-21T18:00", tz="Europe/Berlin"), deliver="owner"
    )
    assert job.next_due_at == T0 + 2 * HOUR - 800  # 16:00 UTC
    await r.cycle()
    assert r.delivery.sent == []
    r.clock.now = T0 + 3 * HOUR
    await r.cycle()
    await r.cycle()
    assert r.delivery.to("owner") == ["Merry Christmas"]
    assert (await r.scheduler.store.get_job(job.id)).next_due_at is None  # type: ignore[union-attr]


async def test_a_cron_job_runs_at_its_local_times() -> None:
    r = rig(text_step("standup"))
    job = await r.admin.add(
        "standup notes", ScheduleSpec(cron="0 9 * * 1-5", tz="Europe/Berlin"), deliver="owner"
    )
    # Monday 2026-09-21 16:13 in Berlin: next is Tuesday 09:00 CEST (07:00 UTC).
    assert job.next_due_at == 1_790_060_400.0
    r.clock.now = 1_790_060_400.0
    await r.cycle()
    assert r.delivery.to("owner") == ["standup"]


async def test_skip_records_missed_slots_and_runs_nothing_late() -> None:
    r = rig(text_step("first"))
    job = await r.admin.add("poll", ScheduleSpec(every="2h"), deliver="owner", missed="skip")
    await r.cycle()
    r.clock.now = T0 + 7 * HOUR  # down since: slots at +2h, +4h, +6h all passed
    await r.cycle()
    assert r.delivery.to("owner") == ["first"]
    latest = (await r.scheduler.store.runs(job.id))[0]
    assert latest.due_at == T0 + 6 * HOUR
    assert (latest.outcome, latest.delivery) == (None, "none")
    assert latest.note == "missed: skipped 3 slots"
    assert await r.runtime.store.submission(latest.submission_id) is None
    assert (await r.scheduler.store.get_job(job.id)).next_due_at == T0 + 8 * HOUR  # type: ignore[union-attr]


async def test_skip_runs_the_current_slot_and_notes_the_missed_ones() -> None:
    r = rig(text_step("first"), text_step("now"))
    job = await r.admin.add("poll", ScheduleSpec(every="2h"), deliver="owner", missed="skip")
    await r.cycle()
    r.clock.now = T0 + 6 * HOUR + 30  # the +6h slot is on time, +2h and +4h were missed
    await r.cycle()
    assert r.delivery.to("owner") == ["first", "now"]
    latest = (await r.scheduler.store.runs(job.id))[0]
    assert (latest.due_at, latest.outcome, latest.note) == (
        T0 + 6 * HOUR,
        "completed",
        "missed: skipped 2 slots",
    )


async def test_catch_up_once_runs_the_latest_missed_slot_once() -> None:
    r = rig(text_step("first"), text_step("caught up"))
    job = await r.admin.add(
        "poll", ScheduleSpec(every="2h"), deliver="owner", missed="catch_up_once"
    )
    await r.cycle()
    r.clock.now = T0 + 7 * HOUR
    await r.cycle()
    await r.cycle()
    assert r.delivery.to("owner") == ["first", "caught up"]
    runs = await r.scheduler.store.runs(job.id)
    assert len(runs) == 2
    assert (runs[0].due_at, runs[0].note) == (T0 + 6 * HOUR, "caught up: 2 missed slots")


async def test_a_paused_job_waits_and_resumes() -> None:
    r = rig(text_step("back"))
    job = await r.admin.add("poll", ScheduleSpec(every="1h"), deliver="owner")
    await r.admin.pause(job.id)
    await r.cycle()
    assert r.delivery.sent == [] and await r.scheduler.store.runs(job.id) == []
    await r.admin.resume(job.id)
    await r.cycle()
    assert r.delivery.to("owner") == ["back"]


async def test_two_schedulers_claim_each_slot_once() -> None:
    r = rig(text_step("once"))
    job = await r.admin.add("poll", ScheduleSpec(every="1h"), deliver="owner")
    other = r.another_scheduler()
    claimed = [*await r.scheduler.tick(), *await other.tick()]
    assert len(claimed) == 1
    await r.runtime.drain_runnable()
    await r.scheduler.tick()
    await other.tick()
    assert r.delivery.to("owner") == ["once"]
    assert len(await r.runtime.store.submissions()) == 1
    [run] = await r.scheduler.store.runs(job.id)
    assert run.delivery == "queued"


async def test_continue_session_runs_in_the_jobs_own_session() -> None:
    r = rig(text_step("one"), text_step("two"))
    job = await r.admin.add("diary", ScheduleSpec(every="1h"), continue_session=True)
    await r.cycle()
    r.clock.now = T0 + HOUR
    await r.cycle()
    sessions = {run.session for run in await r.scheduler.store.runs(job.id)}
    assert sessions == {f"cron:{job.id}"}
    messages = await r.runtime.store.messages(r.runtime.session_key_for(f"cron:{job.id}"))
    assert [m.content for m in messages if m.role == "assistant"] == ["one", "two"]


async def test_failures_alert_the_owner_at_two_and_pause_the_job_at_ten() -> None:
    steps = [error_step("fatal", "model down") for _ in range(10)]
    r = rig(*steps, text_step("fine again"))
    job = await r.admin.add("poll", ScheduleSpec(every="1h"), deliver="file:poll.md")
    for hour in range(10):
        r.clock.now = T0 + hour * HOUR
        await r.cycle()
        failures = (await r.scheduler.store.get_job(job.id)).consecutive_failures  # type: ignore[union-attr]
        assert failures == hour + 1
        alerts = r.delivery.to("owner")
        assert len(alerts) == (0 if hour < 1 else 1 if hour < 9 else 2)
    assert "failed 2 times in a row" in alerts[0]
    assert "paused" in alerts[1] and f"seam cron resume {job.id}" in alerts[1]
    assert r.delivery.to("file:poll.md") == []  # a failure is never delivered as a reply
    runs = await r.scheduler.store.runs(job.id)
    assert {(run.outcome, run.delivery) for run in runs} == {("failed", "none")}
    paused = await r.scheduler.store.get_job(job.id)
    assert paused is not None and paused.paused
    r.clock.now = T0 + 10 * HOUR
    await r.cycle()
    assert len(await r.scheduler.store.runs(job.id)) == 10  # paused: nothing more ran
    resumed = await r.admin.resume(job.id)
    assert resumed.consecutive_failures == 0
    await r.cycle()
    assert r.delivery.to("file:poll.md") == ["fine again"]


async def test_a_delivery_that_fails_counts_as_a_failure() -> None:
    r = rig(text_step("a"), text_step("b"), text_step("c"))
    job = await r.admin.add("poll", ScheduleSpec(every="1h"), deliver="telegram:42")
    r.delivery.fail_targets.add("telegram:42")
    for hour in range(2):
        r.clock.now = T0 + hour * HOUR
        await r.cycle()
    runs = await r.scheduler.store.runs(job.id)
    assert [(run.outcome, run.delivery) for run in runs] == [("completed", "failed")] * 2
    assert len(r.delivery.to("owner")) == 1
    r.delivery.fail_targets.clear()
    r.clock.now = T0 + 2 * HOUR
    await r.cycle()
    assert (await r.scheduler.store.get_job(job.id)).consecutive_failures == 0  # type: ignore[union-attr]


async def test_a_claim_whose_submission_was_lost_is_submitted_on_the_next_tick() -> None:
    r = rig(text_step("recovered"))
    job = await r.admin.add("poll", ScheduleSpec(every="1h"), deliver="owner")
    key = slot_key(job.id, T0)
    # A scheduler claimed the slot and died before submitting.
    await r.scheduler.store.claim_slot(
        job.id, T0, SlotClaim(submission_id=f"cron:{key}", session=f"cron:{job.id}:x")
    )
    await r.scheduler.store.touch(job.id, T0 + HOUR)
    await r.cycle()
    assert r.delivery.to("owner") == ["recovered"]
    assert [s.id for s in await r.runtime.store.submissions()] == [f"cron:{key}"]


async def test_a_settled_run_left_undelivered_is_delivered_once_after_a_restart() -> None:
    r = rig(text_step("late but there"))
    await r.admin.add("poll", ScheduleSpec(every="1h"), deliver="owner")
    await r.scheduler.tick()
    await r.runtime.drain_runnable()
    # The scheduler that submitted it is gone; a new one (a restarted worker) scans.
    restarted = r.another_scheduler()
    await restarted.tick()
    await restarted.tick()
    await r.scheduler.tick()
    assert r.delivery.to("owner") == ["late but there"]


async def test_silent_replies_are_recorded_as_silent() -> None:
    r = rig(text_step("[SILENT]"))
    job = await r.admin.add("anything new?", ScheduleSpec(every="1h"), deliver="owner")
    await r.cycle()
    assert r.delivery.sent == []
    [run] = await r.scheduler.store.runs(job.id)
    assert (run.outcome, run.delivery) == ("completed", "silent")
    assert (await r.scheduler.store.get_job(job.id)).consecutive_failures == 0  # type: ignore[union-attr]


async def test_manual_run_claims_a_slot_of_its_own() -> None:
    r = rig(text_step("scheduled"), text_step("by hand"))
    job = await r.admin.add("poll", ScheduleSpec(every="1h"), deliver="owner")
    await r.cycle()
    r.clock.now += 5
    run = await r.scheduler.run_now(dataclasses.replace(job))
    assert run is not None and run.note == "manual"
    await r.runtime.drain_runnable()
    await r.scheduler.tick()
    assert r.delivery.to("owner") == ["scheduled", "by hand"]


async def test_run_once_drives_the_turn_it_is_handed_and_delivers_at_once() -> None:
    r = rig(text_step("by hand"))
    job = await r.admin.add("poll", ScheduleSpec(every="1h"), deliver="owner")
    driven: list[str] = []

    async def drive(submission_id: str) -> object:
        driven.append(submission_id)
        return await r.runtime.drain_runnable()

    run = await r.scheduler.run_once(job, drive)
    assert run is not None and driven == [run.submission_id]
    assert (run.outcome, run.delivery, run.note) == ("completed", "queued", "manual")
    assert r.delivery.to("owner") == ["by hand"]
    assert await r.scheduler.run_once(job, drive) is None  # the same second: claimed already
    assert len(driven) == 1


class QuietKind:
    """A job kind (as the heartbeat is) that skips some slots and delivers its own way."""

    def __init__(self) -> None:
        self.quiet = True
        self.skips: list[tuple[str, str]] = []
        self.delivered: list[str] = []

    async def skip_reason(self, job: Any, now: float) -> str | None:
        return "quiet hours" if self.quiet else None

    async def skipped(self, job: Any, run: Any, reason: str) -> None:
        self.skips.append((run.slot_key, reason))

    async def deliver(self, job: Any, run: Any, sub: Any) -> str:
        self.delivered.append(sub.result)
        return "silent"


async def test_a_job_kind_can_skip_slots_and_deliver_its_own_way() -> None:
    r = rig(text_step("HEARTBEAT_OK"))
    kind = QuietKind()
    r.scheduler.kinds["heartbeat"] = kind
    job = await r.admin.add("beat", ScheduleSpec(every="30m"), kind="heartbeat")
    await r.cycle()
    [skipped] = await r.scheduler.store.runs(job.id)
    assert (skipped.note, skipped.outcome, skipped.delivery) == ("quiet hours", None, "none")
    assert kind.skips == [(skipped.slot_key, "quiet hours")]
    assert await r.runtime.store.submissions() == []
    kind.quiet = False
    r.clock.now = T0 + 1800
    await r.cycle()
    assert kind.delivered == ["HEARTBEAT_OK"] and r.delivery.sent == []
    latest = (await r.scheduler.store.runs(job.id))[0]
    assert (latest.outcome, latest.delivery) == ("completed", "silent")


async def test_a_run_whose_personality_is_gone_fails_visibly_once() -> None:
    r = rig()
    job = await r.admin.add("poll", ScheduleSpec(every="1h"), deliver="owner")
    await r.scheduler.store.upsert(dataclasses.replace(job, personality="gone"))
    await r.cycle()
    await r.cycle()
    [run] = await r.scheduler.store.runs(job.id)
    assert (run.outcome, run.delivery) == ("failed", "none")
    assert (await r.scheduler.store.get_job(job.id)).consecutive_failures == 1  # type: ignore[union-attr]
