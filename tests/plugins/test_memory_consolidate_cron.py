"""The consolidation cron job: added by one call (`seam memory consolidate --enable`'s),
run by the real scheduler over the real SQLite store's ledger with a fake clock, with
no turn, and with no model call at all when memory has not changed since."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from seam.core.cron import InMemoryCronStore
from seam.core.scripted_model import ScriptedModel, text_step
from seam.plugins.cron.admin import CronAdmin, CronInputError, ScheduleSpec
from seam.plugins.cron.scheduler import CronScheduler
from seam.plugins.memory.markdown import render_entries
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.testing.clock import ManualClock
from seam.wiring import assemble_runtime
from seam.wiring.cron import RuntimeSubmitter, cron_store_of, default_kinds
from seam.wiring.memory_consolidate import (
    CONSOLIDATE_JOB,
    build_consolidator,
    consolidate_kind,
    disable_job,
    enable_job,
)
from seam.wiring.settings import load_settings
from tests.plugins.cron.helpers import RecordingDelivery

DAY = 86_400.0
OLD, NEW = "Lives in Berlin", "Moved to Lisbon; no longer lives in Berlin"


async def test_the_enabled_job_runs_through_the_scheduler_and_idles_for_free(
    tmp_path: Path,
) -> None:
    settings = load_settings({}, home=tmp_path / "home")
    memory = settings.home / "memory" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text(render_entries([OLD, "Prefers tea", NEW]), encoding="utf-8")
    clock = ManualClock()
    store = SQLiteSessionStore(str(tmp_path / "sessions.db"), clock=clock)
    cron = cron_store_of(store)
    drop = {"op": "drop", "id": 1, "newer": 3, "reason": "moved"}
    model = ScriptedModel([text_step(json.dumps({"operations": [drop]}))])
    turns = ScriptedModel([])  # the job is no turn: this model must never be asked
    scheduler = CronScheduler(
        cron,
        RuntimeSubmitter(assemble_runtime(model=turns)),
        RecordingDelivery(),
        kinds={"consolidate": consolidate_kind(settings, model=model, clock=clock)},
        clock=clock,
    )
    try:
        job = await enable_job(cron, ScheduleSpec(every="1d"), clock=clock)
        assert (job.id, job.kind, job.next_due_at) == (
            CONSOLIDATE_JOB,
            "consolidate",
            clock() + DAY,
        )
        assert await scheduler.tick() == []  # not due yet

        clock.advance(DAY)
        assert len(await scheduler.tick()) == 1
        assert memory.read_text(encoding="utf-8") == render_entries(["Prefers tea", NEW])
        clock.advance(DAY)
        assert len(await scheduler.tick()) == 1

        runs = await cron.runs(job.id)
        assert [(r.outcome, r.delivery) for r in runs] == [("completed", "none")] * 2
        assert len(model.requests) == 1 and turns.requests == []
        first, idle = build_consolidator(settings, model=model).book.all()
        assert first.trigger == "cron" and [c.op for c in first.operations] == ["drop"]
        assert idle.model_calls == 0
        assert idle.note == f"no memory change since run {first.id}: no model call"

        assert await disable_job(cron) and await cron.get_job(job.id) is None
        assert not await disable_job(cron)
    finally:
        await store.aclose()


async def test_a_model_that_cannot_answer_fails_the_run(tmp_path: Path) -> None:
    settings = load_settings({}, home=tmp_path / "home")
    memory = settings.home / "memory" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text(render_entries([OLD, NEW]), encoding="utf-8")
    clock = ManualClock()
    runtime = assemble_runtime(model=ScriptedModel([]))
    kinds = {"consolidate": consolidate_kind(settings, model=ScriptedModel([]))}
    scheduler = CronScheduler(
        cron_store_of(runtime.store),
        RuntimeSubmitter(runtime),
        RecordingDelivery(),
        kinds=kinds,
        clock=clock,
    )
    job = await enable_job(scheduler.store, ScheduleSpec(every="1h"), clock=clock)
    clock.advance(3600)
    await scheduler.tick()
    (run,) = await scheduler.store.runs(job.id)
    assert run.outcome == "failed" and memory.read_text(encoding="utf-8") == render_entries(
        [OLD, NEW]
    )


def test_a_configured_runtime_knows_the_kind(tmp_path: Path) -> None:
    runtime = assemble_runtime(model=ScriptedModel([]))
    runtime.settings = load_settings({}, home=tmp_path)
    assert "consolidate" in default_kinds(runtime)


async def test_each_tenant_memory_is_consolidated_on_its_own(tmp_path: Path) -> None:
    settings = load_settings({}, home=tmp_path / "home")
    tenant = settings.home / "tenants" / "alice" / "memory" / "USER.md"
    tenant.parent.mkdir(parents=True)
    tenant.write_text(render_entries(["Likes jazz", "likes JAZZ!"]), encoding="utf-8")
    record = await build_consolidator(settings, model=ScriptedModel([])).run()
    assert [(c.file, c.op) for c in record.operations] == [
        ("tenants/alice/memory/USER.md", "dedupe")
    ]
    assert tenant.read_text(encoding="utf-8") == "likes JAZZ!\n"
    assert not (settings.home / "memory" / "MEMORY.md").exists()


async def test_running_the_job_by_hand_runs_it_once_with_no_turn(tmp_path: Path) -> None:
    """`seam cron run memory-consolidate`: the scheduler's `run_once`."""
    settings = load_settings({}, home=tmp_path / "home")
    memory = settings.home / "memory" / "MEMORY.md"
    memory.parent.mkdir(parents=True)
    memory.write_text(render_entries([OLD, OLD.upper()]), encoding="utf-8")
    clock = ManualClock()
    runtime = assemble_runtime(model=ScriptedModel([]))
    kind = consolidate_kind(settings, model=ScriptedModel([]), clock=clock)
    scheduler = CronScheduler(
        cron_store_of(runtime.store),
        RuntimeSubmitter(runtime),
        RecordingDelivery(),
        kinds={"consolidate": kind},
        clock=clock,
    )
    job = await enable_job(scheduler.store, ScheduleSpec(every="1d"), clock=clock)

    async def no_turn(submission_id: str) -> object:
        raise AssertionError("a consolidation run is no turn")

    run = await scheduler.run_once(job, no_turn)
    assert run is not None and (run.outcome, run.note) == ("completed", "manual")
    (record,) = build_consolidator(settings).book.all()
    assert [c.op for c in record.operations] == ["dedupe"]


async def test_the_job_is_changed_through_its_own_command(tmp_path: Path) -> None:
    store = InMemoryCronStore(clock=ManualClock())
    job = await enable_job(store, ScheduleSpec(every="1d"))
    with pytest.raises(CronInputError, match="follows seam memory consolidate --enable"):
        await CronAdmin(store).edit(job.id, None, ScheduleSpec(every="2d"), {})
    again = await enable_job(store, ScheduleSpec(cron="0 3 * * *"))
    assert (again.id, again.schedule_kind) == (job.id, "cron")
    assert [j.id for j in await store.list_all()] == [job.id]
