"""`CronAdmin.preview` and `CronAdmin.edit` (the dashboard's Cron section uses them, with
the checks `seam cron add` makes): one schedule reader for all three, and an edit keeps the
job's next slot unless its schedule or zone changes."""

from __future__ import annotations

import pytest

from seam.core.cron import InMemoryCronStore
from seam.plugins.cron.admin import (
    CronAdmin,
    CronInputError,
    JobOptions,
    ScheduleSpec,
    guessed_spec,
)

NOW = 1_800_000_000.0  # 2027-01-15 08:00 UTC, a Friday


def admin() -> CronAdmin:
    return CronAdmin(InMemoryCronStore(clock=lambda: NOW), clock=lambda: NOW)


def test_preview_lists_the_slots_add_would_use() -> None:
    jobs = admin()
    assert jobs.preview(ScheduleSpec(every="2h")) == [NOW + n * 7200 for n in range(5)]
    daily = jobs.preview(ScheduleSpec(cron="0 9 * * *"))
    assert daily == [NOW + 3600 + n * 86400 for n in range(5)]
    assert jobs.preview(ScheduleSpec(at="2027-01-15T10:00")) == [NOW + 7200]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("0 0 30 2 *", "no time Seam can schedule"),  # February 30th never comes
        ("9999-12-31T23:59-12:00", "no time Seam can schedule"),
        ("0 9 * *", "not an interval .* a 5-field cron expression .* or an ISO time"),
        ("99999d", "longer than ten years"),
    ],
)
def test_a_schedule_that_never_comes_is_one_line_not_a_crash(text: str, problem: str) -> None:
    with pytest.raises(CronInputError, match=problem):
        admin().preview(guessed_spec(text, "UTC"))


async def test_edit_keeps_the_slot_unless_the_schedule_changes() -> None:
    jobs = admin()
    job = await jobs.add("plan the day", ScheduleSpec(cron="0 9 * * *"), deliver="none")
    await jobs.pause(job.id)
    kept = await jobs.edit(job.id, "plan the week", None, JobOptions(urgent=True))
    assert (kept.prompt, kept.urgent, kept.paused) == ("plan the week", True, True)
    assert (kept.next_due_at, kept.created_at, kept.deliver) == (
        job.next_due_at,
        job.created_at,
        "none",
    )
    moved = await jobs.edit(
        job.id, None, ScheduleSpec(cron="0 9 * * *", tz="Asia/Tokyo"), JobOptions()
    )
    assert moved.tz == "Asia/Tokyo" and moved.next_due_at != job.next_due_at
    with pytest.raises(CronInputError, match="5-field"):
        await jobs.edit(job.id, None, ScheduleSpec(cron="0 25 * * *"), JobOptions())
    assert (await jobs.job(job.id)).tz == "Asia/Tokyo"
