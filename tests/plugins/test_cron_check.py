"""A cron job's `--check`: a command run in the real sandbox (bubblewrap) behind the real
guard before each slot; exit 0 with no output skips the slot with no model call and no
delivery, anything else (output, a failure, a timeout, a refusal, no sandbox) runs it."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from seam.core.scripted_model import ScriptedModel, text_step
from seam.plugins.cron.admin import CronAdmin, CronInputError, ScheduleSpec
from seam.plugins.cron.check import NOTHING_NEW, SandboxCheck
from seam.plugins.tools.cron import CronTool
from seam.services.sandbox.bwrap import bwrap_available
from seam.wiring import create_runtime
from seam.wiring.cron import admin_for, build_scheduler
from tests.plugins.cron import helpers as cron_helpers
from tests.plugins.cron.helpers import T0, Clock, RecordingDelivery
from tests.wiring.test_heartbeat_wiring import settings_with

pytestmark = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot run here")

HOUR = 3600.0


@dataclass
class Rig(cron_helpers.Rig):
    """The cron tests' rig over a configured runtime, with the folder checks look at."""

    inbox: Path

    async def slot(self) -> None:
        """The slot due now (a new job's first is due at once), then the clock moves on."""
        await self.scheduler.tick()
        await self.runtime.drain_runnable()
        await self.scheduler.tick()
        self.clock.now += HOUR

    async def last(self, job_id: str = "mail") -> tuple[str | None, str | None, str]:
        run = (await self.scheduler.store.runs(job_id, limit=1))[0]
        return run.outcome, run.note, run.delivery

    async def add(self, check: str) -> None:
        spec = ScheduleSpec(every="1h")
        await self.admin.add("Summarise the new mail", spec, check=check, job_id="mail")


@pytest.fixture
async def rig(tmp_path: Path) -> AsyncIterator[Rig]:
    settings = settings_with(tmp_path, "")
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    clock = Clock(T0)
    model = ScriptedModel()
    runtime = create_runtime(settings, model=model)
    delivery = RecordingDelivery()
    scheduler = build_scheduler(runtime, delivery=delivery, clock=clock, kinds={})
    # The guard as `seam cron add` gets it; targets checked by the recording delivery.
    classify = admin_for(runtime).classify
    admin = CronAdmin(
        scheduler.store, check_target=delivery.check_target, clock=clock, classify=classify
    )
    yield Rig(clock, runtime, model, delivery, scheduler, admin, inbox)
    await runtime.aclose()


async def test_nothing_new_skips_the_slot_and_news_runs_it(rig: Rig) -> None:
    await rig.add("ls inbox")
    for _ in range(3):
        await rig.slot()
    assert rig.model.requests == [] and rig.delivery.sent == []
    runs = await rig.scheduler.store.runs("mail")
    assert [(r.outcome, r.note, r.delivery) for r in runs] == [(None, NOTHING_NEW, "none")] * 3
    (rig.inbox / "invoice.eml").write_text("From: the landlord")
    rig.model.add(text_step("One new mail: an invoice from the landlord."))
    await rig.slot()
    assert len(rig.model.requests) == 1
    assert await rig.last() == ("completed", None, "queued")
    assert rig.delivery.to("owner") == ["One new mail: an invoice from the landlord."]
    # A skip is no failure and a run no news for the streak: the job stays healthy.
    job = await rig.admin.job("mail")
    assert job.consecutive_failures == 0 and not job.paused


@pytest.mark.parametrize(
    ("check", "note"),
    [
        ("ls no-such-folder", "check failed (exit 2): ran anyway"),
        ("test -d no-such-folder", "check failed (exit 1): ran anyway"),
    ],
)
async def test_a_failing_check_runs_the_model(rig: Rig, check: str, note: str) -> None:
    await rig.add(check)
    rig.model.add(text_step("Nothing I can see."))
    await rig.slot()
    assert len(rig.model.requests) == 1
    assert await rig.last() == ("completed", note, "queued")


async def test_a_check_that_runs_too_long_runs_the_model(rig: Rig) -> None:
    assert isinstance(rig.scheduler.checks, SandboxCheck)
    rig.scheduler.checks.timeout = 0.5
    await rig.add("sleep 30")
    rig.model.add(text_step("Checked."))
    await rig.slot()
    assert await rig.last() == ("completed", "check timed out: ran anyway", "queued")


async def test_the_guard_refuses_a_forbidden_check_when_added_and_when_run(
    rig: Rig, tmp_path: Path
) -> None:
    with pytest.raises(CronInputError, match="--check is refused by the guard"):
        await rig.add("rm -rf /")
    with pytest.raises(CronInputError, match="--check is empty"):
        await rig.add("   ")
    assert await rig.admin.list() == []
    # Stored some other way (an older Seam, a hand-edited store): refused before it runs.
    # Seam's home is protected: no command may name it.
    home = tmp_path / ".seam"
    await rig.add("ls inbox")
    job = dataclasses.replace(await rig.admin.job("mail"), check=f"touch {home}/planted")
    await rig.scheduler.store.upsert(job)
    rig.model.add(text_step("Checked."))
    await rig.slot()
    outcome, note, _ = await rig.last()
    assert outcome == "completed" and note is not None
    assert note.startswith("check refused (") and note.endswith("ran anyway")
    assert not (home / "planted").exists()


async def test_without_a_sandbox_the_job_runs_every_slot(rig: Rig) -> None:
    await rig.add("ls inbox")
    rig.scheduler.checks = None
    rig.model.add(text_step("Checked."))
    await rig.slot()
    assert await rig.last() == (
        "completed",
        "check not run (no sandbox here): ran anyway",
        "queued",
    )


async def test_a_run_by_hand_does_not_run_the_check(rig: Rig) -> None:
    await rig.add("ls inbox")
    rig.model.add(text_step("Nothing new in the inbox."))
    run = await rig.scheduler.run_now(await rig.admin.job("mail"))
    assert run is not None and run.note == "manual"
    await rig.runtime.drain_runnable()
    await rig.scheduler.tick()
    assert len(rig.model.requests) == 1


async def test_an_edit_keeps_the_check_and_the_cron_tool_takes_none(rig: Rig) -> None:
    await rig.add("ls inbox")
    edited = await rig.admin.edit("mail", "Summarise the new letters", None, {})
    assert edited.check == "ls inbox"
    # The model schedules through the cron tool, which has no way to give a check: a
    # command that runs unattended is the person's to add (`seam cron add --check`).
    assert "check" not in CronTool.spec.arguments
