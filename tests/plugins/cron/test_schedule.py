"""Schedules on their own: intervals, cron expressions in time zones across both DST
changes, one-shot timestamps, and the missed-slot count."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from seam.plugins.cron.schedule import (
    Cron,
    Interval,
    ScheduleError,
    classify,
    due_slots,
    first_due,
    parse_schedule,
)

BERLIN = ZoneInfo("Europe/Berlin")


def at(*parts: int, tz: ZoneInfo = BERLIN, fold: int = 0) -> float:
    return datetime(*parts, tzinfo=tz, fold=fold).timestamp()  # type: ignore[misc]


def local(t: float, tz: ZoneInfo = BERLIN) -> str:
    return datetime.fromtimestamp(t, tz).strftime("%Y-%m-%d %H:%M %z")


def slots(schedule: Cron, start: float, n: int) -> list[str]:
    out = []
    t = start
    for _ in range(n):
        nxt = schedule.next_after(t)
        assert nxt is not None and nxt > t
        out.append(local(nxt))
        t = nxt
    return out


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30m", 1800), ("every 2h", 7200), ("Every 1d", 86400), ("90s", 90), ("every 45 m", 2700)],
)
def test_intervals(text: str, seconds: int) -> None:
    assert classify(text) == "interval"
    schedule = parse_schedule(text, "interval", "UTC", anchor=1000.0)
    assert schedule == Interval(float(seconds), 1000.0)
    assert first_due(schedule, 1000.0) == 1000.0
    assert schedule.next_after(1000.0) == 1000.0 + seconds


@pytest.mark.parametrize(
    ("text", "kind", "problem"),
    [
        ("10s", "interval", "shorter than a minute"),
        ("99999d", "interval", "longer than ten years"),
        ("2 weeks", "interval", "not an interval"),
        ("0 9 * *", "cron", "5-field"),
        ("0 9 * * * *", "cron", "5-field"),
        ("61 9 * * *", "cron", "5-field"),
        ("next tuesday", "once", "ISO"),
    ],
)
def test_bad_schedules_are_named(text: str, kind: str, problem: str) -> None:
    with pytest.raises(ScheduleError, match=problem):
        parse_schedule(text, kind, "UTC", 0.0)  # type: ignore[arg-type]


def test_unknown_zone() -> None:
    with pytest.raises(ScheduleError, match="time zone 'Mars/Base'"):
        parse_schedule("0 9 * * *", "cron", "Mars/Base", 0.0)


def test_cron_weekdays_in_a_zone() -> None:
    schedule = parse_schedule("0 9 * * 1-5", "cron", "America/New_York", 0.0)
    assert isinstance(schedule, Cron)
    ny = ZoneInfo("America/New_York")
    friday = at(2026, 9, 25, 12, 0, tz=ny)
    nxt = schedule.next_after(friday)
    assert nxt is not None
    assert local(nxt, ny) == "2026-09-28 09:00 -0400"  # Monday, skipping the weekend


def test_spring_forward_runs_a_vanished_time_once_at_the_end_of_the_gap() -> None:
    # 2026-03-29 in Berlin: 02:00 CET jumps to 03:00 CEST, so 02:30 does not exist.
    daily = Cron("30 2 * * *", "Europe/Berlin")
    assert slots(daily, at(2026, 3, 28, 12, 0), 3) == [
        "2026-03-29 03:00 +0200",
        "2026-03-30 02:30 +0200",
        "2026-03-31 02:30 +0200",
    ]
    # Two slots in the gap (02:00, 02:30) become one run at 03:00, not two.
    half_hourly = Cron("*/30 * * * *", "Europe/Berlin")
    assert slots(half_hourly, at(2026, 3, 29, 1, 15), 4) == [
        "2026-03-29 01:30 +0100",
        "2026-03-29 03:00 +0200",
        "2026-03-29 03:30 +0200",
        "2026-03-29 04:00 +0200",
    ]


def test_fall_back_never_runs_a_repeated_time_twice() -> None:
    # 2026-10-25 in Berlin: 03:00 CEST goes back to 02:00 CET, so 02:30 happens twice.
    daily = Cron("30 2 * * *", "Europe/Berlin")
    assert slots(daily, at(2026, 10, 24, 12, 0), 2) == [
        "2026-10-25 02:30 +0200",
        "2026-10-26 02:30 +0100",
    ]
    # From inside the repeated hour (the second 02:15) the next slot is 03:00, not 02:30.
    hourly = Cron("*/30 * * * *", "Europe/Berlin")
    second_pass = at(2026, 10, 25, 2, 15, fold=1)
    assert slots(hourly, second_pass, 2) == ["2026-10-25 03:00 +0100", "2026-10-25 03:30 +0100"]


def test_intervals_ignore_dst() -> None:
    anchor = at(2026, 3, 29, 1, 0)
    schedule = Interval(3600.0, anchor)
    nxt = schedule.next_after(anchor)
    assert nxt is not None and local(nxt) == "2026-03-29 03:00 +0200"  # one hour later


def test_one_shot_naive_times_are_read_in_the_jobs_zone() -> None:
    berlin = parse_schedule("2026-12-24T18:00", "once", "Europe/Berlin", 0.0)
    assert first_due(berlin, 0.0) == datetime(2026, 12, 24, 17, 0, tzinfo=UTC).timestamp()
    explicit = parse_schedule("2026-12-24T18:00+00:00", "once", "Europe/Berlin", 0.0)
    assert first_due(explicit, 0.0) == datetime(2026, 12, 24, 18, 0, tzinfo=UTC).timestamp()
    assert berlin.next_after(first_due(berlin, 0.0) or 0.0) is None


def test_due_slots_counts_what_was_missed() -> None:
    schedule = Interval(3600.0, 0.0)
    assert due_slots(schedule, 3600.0, 3599.0) is None
    due = due_slots(schedule, 3600.0, 5 * 3600.0 + 10)
    assert due is not None and (due.slot, due.missed, due.next_due_at) == (
        5 * 3600.0,
        4,
        6 * 3600.0,
    )
    daily = Cron("0 9 * * *", "Europe/Berlin")
    first = at(2026, 9, 1, 9, 0)
    due = due_slots(daily, first, at(2026, 9, 4, 10, 0))
    assert due is not None and due.missed == 3
    assert local(due.slot) == "2026-09-04 09:00 +0200"
    assert due.next_due_at is not None and local(due.next_due_at) == "2026-09-05 09:00 +0200"
