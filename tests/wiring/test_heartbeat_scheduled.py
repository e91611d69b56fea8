"""`[heartbeat] every` as the cron scheduler runs it: the built-in job is kept in step with
the config, each beat is one claimed slot, an all-clear is dropped and anything else is
delivered through the real outbox and file sender."""

from __future__ import annotations

from pathlib import Path

from seam.core.personalities import StaticPersonalityRegistry
from seam.core.scripted_model import ScriptedModel, text_step
from seam.plugins.heartbeat.cron_kind import HEARTBEAT_JOB
from seam.wiring import assemble_runtime
from seam.wiring.cron import build_scheduler, cron_store_of
from seam.wiring.heartbeat import ledger, sync_heartbeat_job, with_heartbeat
from seam.wiring.outbox import running_deliverer
from tests.wiring.test_heartbeat_wiring import NOON, settings_with

HALF_HOUR = 1800.0


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_the_configured_heartbeat_runs_once_per_slot_and_drops_the_all_clear(
    tmp_path: Path,
) -> None:
    settings = settings_with(tmp_path, '[heartbeat]\nevery = "30m"\ndeliver = "file:beats.md"\n')
    (settings.home / "HEARTBEAT.md").write_text("- Is the disk full?")
    clock = Clock(NOON)
    runtime = assemble_runtime(
        model=ScriptedModel([text_step("HEARTBEAT_OK"), text_step("The disk is 97% full.")]),
        personalities=with_heartbeat(StaticPersonalityRegistry(), settings),
        settings=settings,
    )
    store = cron_store_of(runtime.store)
    job = await sync_heartbeat_job(store, settings, clock())
    assert job is not None and job.kind == "heartbeat" and job.next_due_at == NOON + HALF_HOUR
    # A second process starting changes nothing: one job, its next slot kept.
    assert await sync_heartbeat_job(store, settings, clock() + 60) == job
    scheduler = build_scheduler(runtime, clock=clock)

    async def beat_at(when: float) -> None:
        clock.now = when
        await scheduler.tick()
        await runtime.drain_runnable()
        await scheduler.tick()

    await beat_at(NOON + HALF_HOUR)
    # Something new for the second beat (else it is skipped: nothing new since the
    # all-clear, tests/plugins/test_heartbeat_idle.py).
    (settings.home / "HEARTBEAT.md").write_text("- Is the disk full?\n- Is /data full?")
    await beat_at(NOON + 2 * HALF_HOUR)
    await beat_at(NOON + 2 * HALF_HOUR + 5)  # nothing new is due
    runs = await store.runs(HEARTBEAT_JOB)
    assert sorted(r.delivery for r in runs) == ["queued", "silent"]
    async with running_deliverer(settings, runtime.store) as deliverer:  # type: ignore[arg-type]
        await deliverer.deliver_due()
    text = (settings.home / "deliveries" / "beats.md").read_text()
    assert "The disk is 97% full." in text and "HEARTBEAT_OK" not in text
    assert len(ledger(settings).recent()) == 2


async def test_turning_the_heartbeat_off_removes_its_job(tmp_path: Path) -> None:
    on = settings_with(tmp_path, '[heartbeat]\nevery = "30m"\n')
    runtime = assemble_runtime(model=ScriptedModel([]), settings=on)
    store = cron_store_of(runtime.store)
    assert await sync_heartbeat_job(store, on, NOON) is not None
    off = settings_with(tmp_path, "")
    assert await sync_heartbeat_job(store, off, NOON) is None
    assert await store.get_job(HEARTBEAT_JOB) is None
