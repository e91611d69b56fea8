"""The `CronJobBook` and `CronRunLedger` conformance suites (jobs, the run ledger, one claim
per slot), and `CronStoreSuite`, both at once.

Every test takes two fixtures: `clock` (a `ManualClock`) and `cron` (a fresh, empty
`CronStore` built with that clock: a store's `cron` view).
"""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from seam.contracts.cron import (
    CronJob,
    CronJobBook,
    CronJobNotFound,
    CronRun,
    CronRunLedger,
    CronStore,
    SlotClaim,
    slot_key,
)
from seam.testing.clock import ManualClock

T0 = 1_700_000_000.0


def job(job_id: str = "j1", **changes: object) -> CronJob:
    base = CronJob(
        id=job_id,
        prompt="summarise my inbox",
        schedule="every 2h",
        schedule_kind="interval",
        created_at=T0,
        next_due_at=T0,
        personality="coder",
        tz="Europe/Berlin",
        deliver="file:out.md",
        missed="catch_up_once",
        continue_session=True,
        urgent=True,
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


async def claim(
    cron: CronRunLedger, job_id: str = "j1", due: float = T0, note: str | None = None
) -> CronRun | None:
    key = slot_key(job_id, due)
    return await cron.claim_slot(job_id, due, SlotClaim(f"cron:{key}", f"cron:{job_id}", note))


class CronJobBookSuite:
    """What `seam cron`, the cron tool and the scheduler rely on for the jobs."""

    async def test_upsert_round_trips_every_field(self, cron: CronStore) -> None:
        stored = job(
            kind="heartbeat", paused=True, consecutive_failures=3, max_tokens=5000, max_usd=0.25
        )
        assert await cron.upsert(stored) == stored
        assert await cron.get_job("j1") == stored
        checked = job("j2", check="ls inbox/new")
        await cron.upsert(checked)
        assert await cron.get_job("j2") == checked
        assert await cron.get_job("nope") is None

    async def test_upsert_replaces_and_lists_oldest_first(self, cron: CronStore) -> None:
        await cron.upsert(job("b", created_at=T0 + 1))
        await cron.upsert(job("a", created_at=T0 + 2, enabled=False))
        await cron.upsert(job("b", created_at=T0 + 1, prompt="changed"))
        assert [j.id for j in await cron.list_all()] == ["b", "a"]
        assert [j.id for j in await cron.list_enabled()] == ["b"]
        assert (await cron.get_job("b")).prompt == "changed"  # type: ignore[union-attr]

    async def test_touch_sets_next_due(self, cron: CronStore) -> None:
        await cron.upsert(job())
        assert (await cron.touch("j1", T0 + 7200)).next_due_at == T0 + 7200
        assert (await cron.touch("j1", None)).next_due_at is None
        with pytest.raises(CronJobNotFound):
            await cron.touch("nope", T0)

    async def test_pause_keeps_and_resume_clears_the_failure_streak(self, cron: CronStore) -> None:
        await cron.upsert(job(consecutive_failures=4))
        paused = await cron.set_paused("j1", True)
        assert paused.paused and paused.consecutive_failures == 4
        resumed = await cron.set_paused("j1", False)
        assert not resumed.paused and resumed.consecutive_failures == 0
        with pytest.raises(CronJobNotFound):
            await cron.set_paused("nope", True)

    async def test_delete_removes_the_job_and_its_ledger(self, cron: CronStore) -> None:
        await cron.upsert(job())
        await claim(cron)
        assert await cron.delete("j1") is True
        assert await cron.delete("j1") is False
        assert await cron.get_job("j1") is None
        assert await cron.runs("j1") == []
        assert list(await cron.open_runs()) == []


class CronRunLedgerSuite:
    """What schedulers rely on to claim each slot once and record its run."""

    async def test_a_slot_is_claimed_once(self, cron: CronStore, clock: ManualClock) -> None:
        await cron.upsert(job())
        clock.now = T0 + 5
        run = await claim(cron, note="caught up: 2 missed slots")
        assert run is not None
        assert run.slot_key == "j1@2023-11-14T22:13:20Z" == slot_key("j1", T0)
        assert (run.job_id, run.due_at, run.started_at) == ("j1", T0, T0 + 5)
        assert run.submission_id == f"cron:{run.slot_key}" and run.session == "cron:j1"
        assert (run.outcome, run.delivery, run.settled_at) == (None, "pending", None)
        assert run.note == "caught up: 2 missed slots"
        assert await claim(cron) is None
        assert await cron.runs("j1") == [run]

    async def test_concurrent_claims_of_one_slot_have_one_winner(self, cron: CronStore) -> None:
        await cron.upsert(job())
        won = await asyncio.gather(*(claim(cron) for _ in range(8)))
        assert sum(r is not None for r in won) == 1

    async def test_claiming_for_an_unknown_job_fails(self, cron: CronStore) -> None:
        with pytest.raises(CronJobNotFound):
            await claim(cron, "nope")

    async def test_runs_newest_slot_first(self, cron: CronStore) -> None:
        await cron.upsert(job())
        for due in (T0, T0 + 7200, T0 + 3600):
            await claim(cron, due=due)
        assert [r.due_at for r in await cron.runs("j1")] == [T0 + 7200, T0 + 3600, T0]
        assert len(await cron.runs("j1", limit=2)) == 2

    async def test_settle_records_once_and_counts_failures(
        self, cron: CronStore, clock: ManualClock
    ) -> None:
        await cron.upsert(job())
        for i in range(3):
            await claim(cron, due=T0 + i)
        clock.now = T0 + 100
        failed = await cron.settle_run(slot_key("j1", T0), outcome="failed", delivery="none")
        assert failed is not None
        assert (failed.outcome, failed.delivery, failed.settled_at) == ("failed", "none", T0 + 100)
        again = await cron.settle_run(slot_key("j1", T0), outcome="completed", delivery="sent")
        assert again is None
        assert (await cron.get_job("j1")).consecutive_failures == 1  # type: ignore[union-attr]
        await cron.settle_run(slot_key("j1", T0 + 1), outcome="completed", delivery="failed")
        assert (await cron.get_job("j1")).consecutive_failures == 2  # type: ignore[union-attr]
        await cron.settle_run(slot_key("j1", T0 + 2), outcome="completed", delivery="queued")
        assert (await cron.get_job("j1")).consecutive_failures == 0  # type: ignore[union-attr]

    async def test_a_skipped_slot_leaves_the_streak(self, cron: CronStore) -> None:
        await cron.upsert(job(consecutive_failures=3))
        await claim(cron, note="missed: skipped 4 slots")
        skipped = await cron.settle_run(slot_key("j1", T0), outcome=None, delivery="none")
        assert skipped is not None and skipped.note == "missed: skipped 4 slots"
        assert (await cron.get_job("j1")).consecutive_failures == 3  # type: ignore[union-attr]

    async def test_open_runs_are_those_still_being_delivered(self, cron: CronStore) -> None:
        await cron.upsert(job())
        for i in range(4):
            await claim(cron, due=T0 + i)
        await cron.settle_run(slot_key("j1", T0), outcome="completed", delivery="sent")
        await cron.settle_run(slot_key("j1", T0 + 1), outcome="completed", delivery="queued")
        await cron.settle_run(slot_key("j1", T0 + 2), outcome="completed", delivery="silent")
        still = [r.slot_key for r in await cron.open_runs()]
        assert still == [slot_key("j1", T0 + 1), slot_key("j1", T0 + 3)]

    async def test_set_delivery_follows_the_outbox(self, cron: CronStore) -> None:
        await cron.upsert(job())
        await claim(cron)
        key = slot_key("j1", T0)
        await cron.settle_run(key, outcome="completed", delivery="queued")
        sent = await cron.set_delivery(key, "sent")
        assert sent is not None and sent.delivery == "sent"
        assert await cron.set_delivery(key, "sent") is None
        assert (await cron.get_job("j1")).consecutive_failures == 0  # type: ignore[union-attr]
        failed = await cron.set_delivery(key, "failed")
        assert failed is not None and failed.outcome == "completed"
        assert (await cron.get_job("j1")).consecutive_failures == 1  # type: ignore[union-attr]
        assert await cron.set_delivery("j1@nope", "sent") is None


class CronStoreSuite(CronJobBookSuite, CronRunLedgerSuite):
    """Both cron suites, plus: the view is both protocols."""

    async def test_is_both_cron_protocols(self, cron: CronStore) -> None:
        assert isinstance(cron, CronJobBook) and isinstance(cron, CronRunLedger)
