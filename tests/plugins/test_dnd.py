"""Quiet hours: rule windows (weekdays, zones, midnight, DST) and the indefinite toggle."""

from __future__ import annotations

import json
import math
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from seam.contracts.dnd import DndChecker, DndRule
from seam.plugins.dnd.checker import FileDndChecker
from seam.plugins.dnd.rules import RuleError, make_rule, next_start, quiet_until

BERLIN = ZoneInfo("Europe/Berlin")


def at(text: str, tz: ZoneInfo = BERLIN) -> float:
    """A wall-clock time in `tz` as a timestamp ("2026-03-28 23:00")."""
    return datetime.fromisoformat(text).replace(tzinfo=tz).timestamp()


def utc(text: str) -> float:
    return at(text, ZoneInfo("UTC"))


NIGHTS = make_rule(
    "22:00", "07:00", ["mon", "tue", "wed", "thu", "fri", "sat", "sun"], "Europe/Berlin"
)


def test_a_window_crossing_midnight_holds_until_its_end_the_next_morning() -> None:
    assert quiet_until([NIGHTS], at("2026-06-10 23:30")) == at("2026-06-11 07:00")
    assert quiet_until([NIGHTS], at("2026-06-11 03:00")) == at("2026-06-11 07:00")
    assert quiet_until([NIGHTS], at("2026-06-11 07:00")) is None  # the end is not quiet
    assert quiet_until([NIGHTS], at("2026-06-11 21:59")) is None
    assert quiet_until([NIGHTS], at("2026-06-11 22:00")) == at("2026-06-12 07:00")


def test_the_weekday_is_the_day_the_window_starts() -> None:
    friday_nights = make_rule("22:00", "07:00", ["fri"], "Europe/Berlin")
    # 2026-06-12 is a Friday: its window runs into Saturday morning...
    assert quiet_until([friday_nights], at("2026-06-13 06:00")) == at("2026-06-13 07:00")
    # ...but Saturday night is not quiet, nor is Friday morning (Thursday's window).
    assert quiet_until([friday_nights], at("2026-06-13 23:00")) is None
    assert quiet_until([friday_nights], at("2026-06-12 06:00")) is None


def test_the_zone_decides_the_wall_clock() -> None:
    tokyo = make_rule("09:00", "17:00", tz="Asia/Tokyo")
    # 09:00-17:00 in Tokyo is 00:00-08:00 UTC.
    assert quiet_until([tokyo], utc("2026-06-10 01:00")) == utc("2026-06-10 08:00")
    assert quiet_until([tokyo], utc("2026-06-10 09:00")) is None


def test_crossing_midnight_on_the_spring_forward_night() -> None:
    # Europe/Berlin skips 02:00-03:00 on Sunday 2026-03-29: the night is 8 hours long.
    start = at("2026-03-28 22:00")
    end = quiet_until([NIGHTS], start)
    assert end == at("2026-03-29 07:00") == utc("2026-03-29 05:00")
    assert end - start == 8 * 3600
    # At 01:59 CET, a minute before the change, and at 03:30 CEST, after it.
    assert quiet_until([NIGHTS], utc("2026-03-29 00:59")) == end
    assert quiet_until([NIGHTS], utc("2026-03-29 01:30")) == end
    assert quiet_until([NIGHTS], utc("2026-03-29 05:00")) is None


def test_crossing_midnight_on_the_fall_back_night() -> None:
    # Europe/Berlin repeats 02:00-03:00 on Sunday 2026-10-25: the night is 10 hours long.
    start = at("2026-10-24 22:00")
    end = quiet_until([NIGHTS], start)
    assert end == utc("2026-10-25 06:00")
    assert end - start == 10 * 3600
    for hour in ("00:30", "01:30", "02:30"):  # both 02:30s are inside
        assert quiet_until([NIGHTS], utc(f"2026-10-25 {hour}")) == end


def test_a_window_that_starts_in_the_skipped_hour() -> None:
    # 02:30 does not exist on 2026-03-29 in Berlin; read with the offset before the change
    # (zoneinfo's fold=0), it is 03:30 CEST, and the window still ends at 04:00.
    rule = make_rule("02:30", "04:00", ["sun"], "Europe/Berlin")
    assert quiet_until([rule], utc("2026-03-29 01:00")) is None  # 03:00 CEST
    assert quiet_until([rule], utc("2026-03-29 01:45")) == utc("2026-03-29 02:00")


def test_touching_windows_are_one_quiet_period() -> None:
    evening = make_rule("20:00", "22:00", tz="Europe/Berlin")
    assert quiet_until([evening, NIGHTS], at("2026-06-10 21:00")) == at("2026-06-11 07:00")


def test_the_next_window_start_is_found() -> None:
    assert next_start([NIGHTS], at("2026-06-10 12:00")) == at("2026-06-10 22:00")
    assert next_start([], at("2026-06-10 12:00")) is None


def test_bad_rules_are_refused_in_one_line() -> None:
    with pytest.raises(RuleError, match="start must be a time like 22:00"):
        make_rule("25:00", "07:00")
    with pytest.raises(RuleError, match="weekday must be one of"):
        make_rule("22:00", "07:00", ["someday"])
    with pytest.raises(RuleError, match="unknown time zone 'Mars/Olympus'"):
        make_rule("22:00", "07:00", tz="Mars/Olympus")


async def test_the_indefinite_toggle_is_quiet_until_turned_off(tmp_path: Path) -> None:
    checker = FileDndChecker([NIGHTS], tmp_path / "dnd.json", clock=lambda: 1.0)
    assert isinstance(checker, DndChecker)
    noon = at("2026-06-10 12:00")
    assert not await checker.is_quiet_now(noon)
    await checker.toggle_indefinite(True)
    assert await checker.quiet_until(noon) == math.inf
    # Another process (the worker) reading the same file sees it at once.
    other = FileDndChecker([NIGHTS], tmp_path / "dnd.json")
    assert await other.quiet_until(noon) == math.inf
    assert json.loads((tmp_path / "dnd.json").read_text())["since"] == 1.0
    await other.toggle_indefinite(False)
    assert await checker.quiet_until(noon) is None
    assert await checker.quiet_until(at("2026-06-10 23:00")) == at("2026-06-11 07:00")


async def test_added_rules_persist_and_remove_all_switches_everything_off(
    tmp_path: Path,
) -> None:
    path = tmp_path / "dnd.json"
    checker = FileDndChecker([NIGHTS], path)
    lunch = DndRule("12:00", "13:00", (0, 1, 2, 3, 4), "Europe/Berlin")
    await checker.add_rule(lunch)
    wednesday_lunch = at("2026-06-10 12:30")
    assert await FileDndChecker([], path).list_active(wednesday_lunch) == [lunch]
    assert await checker.list_active(at("2026-06-10 23:00")) == [NIGHTS]
    await checker.remove_all()
    assert await checker.list_active(wednesday_lunch) == []
    assert await checker.quiet_until(at("2026-06-10 23:00")) is None


async def test_a_damaged_state_file_reads_as_quiet(tmp_path: Path) -> None:
    path = tmp_path / "dnd.json"
    path.write_text("{not json")
    checker = FileDndChecker([], path)
    assert await checker.quiet_until(0.0) == math.inf
    await checker.toggle_indefinite(False)
    assert await checker.quiet_until(0.0) is None


async def test_without_a_file_the_state_is_kept_in_memory() -> None:
    checker = FileDndChecker([])
    await checker.toggle_indefinite(True)
    assert await checker.is_quiet_now(0.0)
