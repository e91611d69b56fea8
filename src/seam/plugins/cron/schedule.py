"""Reading a job's schedule: `30m` / `every 2h` intervals, 5-field cron expressions in a
time zone, and ISO timestamps for one-shot jobs.

Cron expressions are read in the job's wall-clock time and each local time is one slot:
- **Spring forward** (a local time that does not exist, e.g. 02:30 in Europe/Berlin on
  2026-03-29): the slot runs once, at the first instant after the gap (03:00 local), so a
  daily job is not lost on that day.
- **Fall back** (a local time that happens twice, e.g. 02:30 on 2026-10-25): the slot
  runs once, at its first occurrence; the repeated hour adds no slot.
Intervals are absolute time (every 7200 s from when the job was created), so a DST change
moves nothing; a naive ISO timestamp is read in the job's time zone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from croniter import croniter

from seam.contracts.cron import ScheduleKind
from seam.contracts.zones import time_zone

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_INTERVAL = re.compile(r"^(?:every\s+)?(\d+)\s*([smhd])$", re.IGNORECASE)
# A cron slot is at least a minute after the last; the gap search steps by a minute.
_MINUTE = 60.0
# Missed slots of a calendar schedule counted one by one at most.
MAX_MISSED_COUNT = 10_000
# Seconds of the shortest interval a job may have, and of the longest (ten years: a
# longer one's slots soon pass the last date a calendar can show, the year 9999).
MIN_INTERVAL = 60
MAX_INTERVAL = 3653 * 86400


class ScheduleError(ValueError):
    """A schedule Seam cannot read, named in one line."""


def zone(tz: str) -> ZoneInfo:
    return time_zone(tz, ScheduleError)


def interval_seconds(text: str) -> int | None:
    found = _INTERVAL.match(text.strip())
    if found is None:
        return None
    return int(found.group(1)) * _UNITS[found.group(2).lower()]


@dataclass(frozen=True, slots=True)
class Interval:
    seconds: float
    anchor: float

    def next_after(self, t: float) -> float | None:
        if t < self.anchor:
            return self.anchor
        return self.anchor + (int((t - self.anchor) // self.seconds) + 1) * self.seconds


@dataclass(frozen=True, slots=True)
class Once:
    at: float

    def next_after(self, t: float) -> float | None:
        return self.at if t < self.at else None


@dataclass(frozen=True, slots=True)
class Cron:
    expression: str
    tz: str

    def next_after(self, t: float) -> float | None:
        tzinfo = zone(self.tz)
        local = datetime.fromtimestamp(t, tzinfo).replace(tzinfo=None)
        it = croniter(self.expression, local)
        for _ in range(1000):  # the slot after t is at most one (naive) step or gap away
            candidate = it.get_next(datetime)
            at = instant(candidate, tzinfo)
            if at > t:
                return at
        return None


def instant(local: datetime, tzinfo: ZoneInfo) -> float:
    """The epoch time of a naive wall-clock `local` in `tzinfo`: its first occurrence when
    it happens twice, the end of the gap when it does not happen at all."""
    first = local.replace(tzinfo=tzinfo, fold=0)
    at = first.timestamp()
    if datetime.fromtimestamp(at, tzinfo).replace(tzinfo=None) == local:
        return at
    # In a gap: from the earlier reading step forward to the first instant whose wall
    # time has passed `local` (the transition).
    probe = local.replace(tzinfo=tzinfo, fold=1).timestamp()
    probe -= probe % _MINUTE
    while datetime.fromtimestamp(probe, tzinfo).replace(tzinfo=None) < local:
        probe += _MINUTE
    return probe


def parse_at(text: str, tz: str) -> float:
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ScheduleError(f"{text!r} is not an ISO timestamp (e.g. 2026-12-24T18:00)") from None
    if when.tzinfo is None:
        return instant(when, zone(tz))
    return when.astimezone(UTC).timestamp()


def classify(text: str) -> ScheduleKind:
    """Which kind of schedule `text` is (without checking it fully)."""
    if interval_seconds(text) is not None:
        return "interval"
    if len(text.split()) == 5:
        return "cron"
    return "once"


Schedule = Interval | Once | Cron


def parse_schedule(text: str, kind: ScheduleKind, tz: str, anchor: float) -> Schedule:
    """The schedule `text` of `kind` in time zone `tz`; `anchor` is when an interval
    counts from. Raises ScheduleError."""
    zone(tz)
    if kind == "interval":
        seconds = interval_seconds(text)
        if seconds is None:
            raise ScheduleError(f"{text!r} is not an interval (e.g. 30m, every 2h, 1d)")
        if seconds < MIN_INTERVAL:
            raise ScheduleError(f"interval {text!r} is shorter than a minute")
        if seconds > MAX_INTERVAL:
            raise ScheduleError(f"interval {text!r} is longer than ten years")
        return Interval(float(seconds), anchor)
    if kind == "cron":
        fields = text.split()
        if len(fields) != 5 or not croniter.is_valid(text):
            raise ScheduleError(
                f"{text!r} is not a 5-field cron expression (minute hour day month weekday)"
            )
        return Cron(" ".join(fields), tz)
    return Once(parse_at(text, tz))


def first_due(schedule: Schedule, now: float) -> float | None:
    """When a new job is first due: an interval job at once (its first slot is the time
    it was added), a cron job at its next slot, a one-shot job at its time (even when
    that has passed: it runs once, late)."""
    if isinstance(schedule, Interval):
        return schedule.anchor
    if isinstance(schedule, Once):
        return schedule.at
    return schedule.next_after(now)


@dataclass(frozen=True, slots=True)
class Due:
    """What is due of a job at `now`: the slot to run (the latest that has come), how
    many earlier slots were missed, and when the job is due next after it."""

    slot: float
    missed: int
    next_due_at: float | None


def due_slots(schedule: Schedule, next_due_at: float, now: float) -> Due | None:
    """None when `next_due_at` has not come; else the latest due slot, how many slots
    before it were missed, and the first slot after `now`."""
    if next_due_at > now:
        return None
    if isinstance(schedule, Interval):
        steps = int((now - next_due_at) // schedule.seconds)
        latest = next_due_at + steps * schedule.seconds
        return Due(latest, steps, latest + schedule.seconds)
    latest, missed = next_due_at, 0
    while missed < MAX_MISSED_COUNT:
        following = schedule.next_after(latest)
        if following is None or following > now:
            break
        latest, missed = following, missed + 1
    return Due(latest, missed, schedule.next_after(max(latest, now)))


def describe(at: float | None, tz: str) -> str:
    if at is None:
        return "-"
    return datetime.fromtimestamp(at, zone(tz)).strftime("%Y-%m-%d %H:%M %Z")
