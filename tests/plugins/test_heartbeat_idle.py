"""An idle day costs nothing: a beat with nothing new since the last all-clear makes no
model call, through the real cron scheduler, the real SQLite store and a fake clock; and
anything new (a message, a changed checklist or memory, a failed cron run, a new day for
a checklist about days) makes the next beat call the model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from seam.contracts.messages import Usage
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.scripted_model import ScriptedModel, error_step, text_step
from seam.plugins.cron.admin import CronAdmin, ScheduleSpec
from seam.plugins.cron.scheduler import CronScheduler
from seam.plugins.heartbeat.activity import StoreActivity, beat_memory
from seam.plugins.heartbeat.cron_kind import HeartbeatKind
from seam.plugins.heartbeat.ledger import HeartbeatLedger, totals
from seam.plugins.heartbeat.news import BeatNews
from seam.plugins.heartbeat.personality import HeartbeatPersonalities
from seam.plugins.heartbeat.runner import run_heartbeat
from seam.plugins.heartbeat.schedule import heartbeat_job
from seam.plugins.heartbeat.status import HeartbeatSetting, status_lines
from seam.plugins.memory.markdown import MarkdownMemory
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.testing.clock import ManualClock
from seam.wiring import Runtime, assemble_runtime
from seam.wiring.cron import RuntimeSubmitter
from tests.plugins.cron.helpers import RecordingDelivery

# 2026-06-10 00:00 UTC, a Wednesday.
MIDNIGHT = 1_781_049_600.0
EVERY = 1800.0
CHECKLIST = "- Is the backup disk over 90% full?\n- Anything on my watch list in memory?"
OK = Usage(input_tokens=180, output_tokens=4)


class Idle:
    """A runtime over SQLite with the heartbeat job, its kind and a scheduler, all on one
    manual clock; the model is scripted one step at a time."""

    def __init__(self, tmp_path: Path, store: SQLiteSessionStore, clock: ManualClock) -> None:
        self.clock = clock
        self.store = store
        self.model = ScriptedModel()
        self.memory = MarkdownMemory(tmp_path / "memory")
        self.memory.add("memory", "Watch list: the backup disk at /mnt/backup")
        self.checklist = CHECKLIST
        self.tools: tuple[str, ...] = ()
        self.personalities = HeartbeatPersonalities(
            StaticPersonalityRegistry(), lambda _: self.checklist
        )
        self.runtime: Runtime = assemble_runtime(
            model=self.model, personalities=self.personalities, memory=self.memory, store=store
        )
        self.delivery = RecordingDelivery()
        self.ledger = HeartbeatLedger(tmp_path / "heartbeat.jsonl")
        self.news = BeatNews(
            beat_memory(self.memory), StoreActivity(store, store.cron), tools=self.tools
        )
        self.kind = HeartbeatKind(
            store,
            self.runtime.session_key_for,
            self.delivery,
            None,
            self.ledger,
            self.personalities.checklist_text,
            clock=clock,
            news=self.news,
        )
        self.scheduler = CronScheduler(
            store.cron,
            RuntimeSubmitter(self.runtime),
            self.delivery,
            kinds={"heartbeat": self.kind},
            clock=clock,
        )

    async def start(self) -> None:
        job = heartbeat_job("30m", EVERY, "owner", self.clock())
        assert job is not None
        await self.store.cron.upsert(job)

    async def slot(self) -> None:
        """The clock moves to the next slot; the scheduler ticks, the turn runs, it ticks."""
        self.clock.advance(EVERY)
        await self.scheduler.tick()
        await self.runtime.drain_runnable()
        await self.scheduler.tick()

    def beats(self) -> int:
        """Model calls the heartbeat made (its soul is in the system prompt)."""
        return sum("This is a heartbeat" in r.system for r in self.model.requests)

    def last(self) -> tuple[str, str]:
        run = self.ledger.recent(1)[0]
        return run.status, run.reason


@pytest.fixture
async def idle(tmp_path: Path) -> AsyncIterator[Idle]:
    clock = ManualClock(MIDNIGHT)
    store = SQLiteSessionStore(str(tmp_path / "sessions.db"), clock=clock)
    rig = Idle(tmp_path, store, clock)
    await rig.start()
    yield rig
    await rig.runtime.aclose()


async def test_an_idle_day_of_heartbeats_makes_no_model_call(idle: Idle) -> None:
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()  # the first beat has nothing to compare with: it runs
    assert idle.beats() == 1 and idle.last()[0] == "ok"
    for _ in range(48):  # a whole day, every 30 minutes, nothing new
        await idle.slot()
    assert len(idle.model.requests) == 1  # no call at all (a call would fail: no script)
    day = idle.ledger.recent(48)
    assert [run.status for run in day] == ["skipped"] * 48
    assert {run.reason for run in day} == {"nothing new since 2026-06-10 00:30 UTC"}
    assert totals(day) == (0, None)
    runs = await idle.store.cron.runs("heartbeat", limit=48)
    assert {run.note for run in runs} == {"nothing new since 2026-06-10 00:30 UTC"}
    assert {run.outcome for run in runs} == {None}
    assert idle.delivery.sent == []


async def test_a_new_message_makes_the_next_beat_call_the_model(idle: Idle) -> None:
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()
    await idle.slot()
    assert idle.last() == ("skipped", "nothing new since 2026-06-10 00:30 UTC")
    idle.model.add(text_step("Noted."))
    await idle.runtime.ask("chat", "The backup disk is making a clicking noise.")
    idle.model.add(text_step("The backup disk may be failing: it clicks."))
    await idle.slot()
    assert idle.beats() == 2
    assert idle.last()[0] == "delivered"
    assert idle.delivery.to("owner") == ["The backup disk may be failing: it clicks."]
    # A finding is not an all-clear: the next beat runs too, and after its all-clear the
    # one after that is skipped again.
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()
    await idle.slot()
    assert idle.beats() == 3
    assert idle.last() == ("skipped", "nothing new since 2026-06-10 02:00 UTC")


@pytest.mark.parametrize("change", ["checklist", "memory"])
async def test_a_changed_checklist_or_memory_makes_the_next_beat_run(
    idle: Idle, change: str
) -> None:
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()
    await idle.slot()
    assert idle.beats() == 1
    if change == "checklist":
        idle.checklist += "\n- Is the printer out of paper?"
    else:
        idle.memory.add("memory", "The printer is on the watch list too")
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()
    assert idle.beats() == 2 and idle.last()[0] == "ok"
    await idle.slot()
    assert idle.beats() == 2 and idle.last()[0] == "skipped"


async def test_a_failed_cron_run_makes_the_next_beat_run(idle: Idle) -> None:
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()
    admin = CronAdmin(idle.store.cron, clock=idle.clock)
    await admin.add("Summarise the backups", ScheduleSpec(every="1h"), job_id="backups")
    idle.clock.advance(EVERY)  # the job's first slot is one hour on
    idle.model.add(error_step("fatal", "the backup API is down"))
    await idle.slot()  # the job fails in this slot, after the beat was skipped
    [run] = await idle.store.cron.runs("backups")
    assert run.outcome == "failed"
    assert idle.beats() == 1 and idle.last()[0] == "skipped"
    idle.model.add(text_step("The backup summary job failed."))
    await idle.slot()
    assert idle.beats() == 2 and idle.last()[0] == "delivered"


async def test_a_failed_or_delivered_beat_is_no_all_clear(idle: Idle) -> None:
    idle.model.add(error_step("fatal", "the model is gone"))
    await idle.slot()
    assert idle.last()[0] == "failed"
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()
    assert idle.beats() == 2 and idle.last()[0] == "ok"


@pytest.mark.parametrize(
    "checklist",
    [
        CHECKLIST + "\n- Any meeting in the next hour?",
        CHECKLIST + "\n- Remind me at 9:00 to call the bank.",
        "every-beat: true\n" + CHECKLIST,
    ],
)
async def test_a_checklist_about_the_time_of_day_runs_every_slot(
    idle: Idle, checklist: str
) -> None:
    idle.checklist = checklist
    for _ in range(3):
        idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
        await idle.slot()
    assert idle.beats() == 3
    assert [run.status for run in idle.ledger.recent()] == ["ok"] * 3


async def test_tools_that_reach_outside_make_every_slot_run(idle: Idle) -> None:
    idle.news.tools = ("web_fetch",)
    for _ in range(2):
        idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
        await idle.slot()
    assert idle.beats() == 2
    # Tools whose reading the fingerprint covers: the first beat records one (the beats
    # before kept none), and the next is skipped.
    idle.news.tools = ("memory", "session_search")
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()
    await idle.slot()
    assert idle.beats() == 3 and idle.last()[0] == "skipped"


async def test_a_checklist_about_days_runs_once_a_new_day(idle: Idle) -> None:
    idle.checklist = CHECKLIST + "\n- Is it anyone's birthday today?"
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()
    for _ in range(46):  # to 23:30 the same day
        await idle.slot()
    assert idle.beats() == 1
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()  # 00:00 the next day
    assert idle.beats() == 2 and idle.last()[0] == "ok"


async def test_a_beat_run_by_hand_runs_and_lets_the_next_one_skip(idle: Idle) -> None:
    idle.clock.advance(60)
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK), text_step("HEARTBEAT_OK", usage=OK))
    checklist = idle.personalities.checklist_text()
    for _ in range(2):  # by hand: never skipped as "nothing new"
        run = await run_heartbeat(
            idle.runtime, idle.delivery, None, idle.clock, ledger=idle.ledger,
            checklist=checklist, news=idle.news,
        )  # fmt: skip
        assert run.status == "ok" and run.inputs
        idle.clock.advance(1)
    await idle.slot()
    assert idle.beats() == 2
    assert idle.last() == ("skipped", "nothing new since 2026-06-10 00:01 UTC")


async def test_status_shows_the_skips_and_the_rule(idle: Idle, tmp_path: Path) -> None:
    path = tmp_path / "HEARTBEAT.md"
    path.write_text(CHECKLIST, encoding="utf-8")
    setting = HeartbeatSetting("30m", EVERY, "default", "owner", path, tmp_path / "config.toml")
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    for _ in range(4):
        await idle.slot()
    text = "\n".join(status_lines(setting, idle.ledger, idle.clock()))
    rule = "idle beats: skipped, no model call, when nothing is new since the last all-clear"
    assert rule in text
    assert "2026-06-10T02:00:00Z  skipped    nothing new since 2026-06-10 00:30 UTC" in text
    assert "last 4 runs: 184 tokens (3 skipped with nothing new, 0 tokens)" in text
    path.write_text("every-beat: true\n" + CHECKLIST, encoding="utf-8")
    text = "\n".join(status_lines(setting, idle.ledger, idle.clock()))
    assert "idle beats: every slot runs (every-beat: true)" in text


async def test_activity_sees_a_settled_cron_run_but_not_the_heartbeats_own(idle: Idle) -> None:
    from seam.contracts.cron import SlotClaim, slot_key

    activity = StoreActivity(idle.store, idle.store.cron)
    since = idle.clock()
    cron = idle.store.cron
    await cron.claim_slot("heartbeat", since, SlotClaim("s1", "cron:heartbeat:x"))
    key = slot_key("heartbeat", since)
    own = await cron.settle_run(key, outcome="completed", delivery="silent")
    assert own is not None and own.outcome == "completed"
    admin = CronAdmin(cron, clock=idle.clock)
    await admin.add("Check the backups", ScheduleSpec(every="1h"), job_id="backups")
    assert await activity.since(since) is None
    run = await cron.claim_slot("backups", since, SlotClaim("s2", "cron:backups:x"))
    assert run is not None
    assert await activity.since(since) is None  # claimed, not settled: nothing yet
    await cron.settle_run(run.slot_key, outcome="failed", delivery="none")
    assert await activity.since(since) == "cron job backups ran (failed)"
    assert await activity.since(since + 1) is None


async def test_the_configured_heartbeat_skips_idle_beats(tmp_path: Path) -> None:
    from seam.plugins.heartbeat.cron_kind import HEARTBEAT_JOB
    from seam.wiring.cron import build_scheduler, cron_store_of
    from seam.wiring.heartbeat import sync_heartbeat_job, with_heartbeat
    from tests.wiring.test_heartbeat_wiring import settings_with

    settings = settings_with(tmp_path, '[heartbeat]\nevery = "30m"\ndeliver = "none"\n')
    (settings.home / "HEARTBEAT.md").write_text(CHECKLIST)
    clock = ManualClock(MIDNIGHT)
    model = ScriptedModel([text_step("HEARTBEAT_OK", usage=OK)])
    runtime = assemble_runtime(
        model=model,
        personalities=with_heartbeat(StaticPersonalityRegistry(), settings),
        settings=settings,
    )
    store = cron_store_of(runtime.store)
    await sync_heartbeat_job(store, settings, clock())
    scheduler = build_scheduler(runtime, clock=clock)
    for _ in range(4):
        clock.advance(EVERY)
        await scheduler.tick()
        await runtime.drain_runnable()
        await scheduler.tick()
    assert len(model.requests) == 1
    notes = [run.note for run in await store.runs(HEARTBEAT_JOB)]
    assert notes == ["nothing new since 2026-06-10 00:30 UTC"] * 3 + [None]


async def test_dates_in_memory_and_a_new_tool_count_as_news(idle: Idle) -> None:
    idle.memory.add("memory", "The dentist is on 2026-06-11")
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()
    for _ in range(46):
        await idle.slot()
    assert idle.beats() == 1
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()  # a new day: the memory's date may be today now
    assert idle.beats() == 2
    idle.news.tools = ("session_search",)
    idle.model.add(text_step("HEARTBEAT_OK", usage=OK))
    await idle.slot()
    assert idle.beats() == 3
