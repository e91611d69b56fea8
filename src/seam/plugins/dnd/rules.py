"""Quiet-hour windows in wall-clock time: when one holds at an instant, and when it ends.

A rule is `start`-`end` local time on chosen weekdays in an IANA zone. The weekday is the
one the window *starts* on, so `22:00-07:00` on Friday covers Friday night into Saturday
morning. An `end` at or before `start` crosses midnight; `start == end` is a whole day.

Instants are Unix timestamps; each window is laid out on the local calendar and turned
into timestamps through zoneinfo, so a window keeps its wall-clock edges across a DST
change (22:00-07:00 is 8 hours long the night the clocks go forward, 10 the night they go
back). A wall time the change skips (02:30 in spring) or repeats (02:30 in autumn) is read
as zoneinfo does with `fold=0`: the offset in force before the change.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from seam.contracts.dnd import DndRule
from seam.contracts.zones import time_zone

WEEKDAYS: tuple[str, ...] = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_FULL_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_HHMM = re.compile(r"([01]\d|2[0-3]):([0-5]\d)")
# Chained windows (one ends where the next begins) are followed at most this far.
_MAX_CHAIN = 64


class RuleError(ValueError):
    """A rule that cannot be read (a bad time, weekday or zone); the message says which."""


def parse_clock(text: str, what: str) -> time:
    match = _HHMM.fullmatch(text.strip())
    if match is None:
        raise RuleError(f"{what} must be a time like 22:00 (HH:MM, 00:00-23:59), got {text!r}")
    return time(int(match.group(1)), int(match.group(2)))


def parse_weekday(name: str) -> int:
    """`mon`..`sun` (or the full English name, any case) as Monday = 0."""
    key = name.strip().lower()
    if key in WEEKDAYS:
        return WEEKDAYS.index(key)
    if key in _FULL_NAMES:
        return _FULL_NAMES.index(key)
    raise RuleError(f"weekday must be one of {', '.join(WEEKDAYS)}, got {name!r}")


def zone(name: str) -> ZoneInfo:
    return time_zone(name, RuleError)


def make_rule(start: str, end: str, weekdays: Iterable[str] = WEEKDAYS, tz: str = "UTC") -> DndRule:
    """A checked `DndRule` from config-style text (weekday names)."""
    parse_clock(start, "start")
    parse_clock(end, "end")
    zone(tz)
    days = tuple(sorted({parse_weekday(day) for day in weekdays}))
    if not days:
        raise RuleError("weekdays must name at least one day")
    return DndRule(start=start.strip(), end=end.strip(), weekdays=days, tz=tz)


def window_on(rule: DndRule, day: date) -> tuple[float, float]:
    """The rule's window that starts on local `day` (whatever its weekday), as timestamps."""
    tz = zone(rule.tz)
    start = parse_clock(rule.start, "start")
    end = parse_clock(rule.end, "end")
    begins = datetime.combine(day, start, tzinfo=tz)
    end_day = day if end > start else day + timedelta(days=1)
    ends = datetime.combine(end_day, end, tzinfo=tz)
    return begins.timestamp(), ends.timestamp()


def window_containing(rule: DndRule, now: float) -> tuple[float, float] | None:
    """The rule's window that holds `now` (start inclusive, end exclusive), or None."""
    today = datetime.fromtimestamp(now, zone(rule.tz)).date()
    # A window holding `now` started today or yesterday (a crossing one); two days back
    # covers the hour a DST change can shift a window by.
    for back in (0, 1, 2):
        day = today - timedelta(days=back)
        if day.weekday() not in rule.weekdays:
            continue
        begins, ends = window_on(rule, day)
        if begins <= now < ends:
            return begins, ends
    return None


def active_rules(rules: Sequence[DndRule], now: float) -> list[DndRule]:
    return [rule for rule in rules if window_containing(rule, now) is not None]


def quiet_until(rules: Sequence[DndRule], now: float, *, indefinite: bool = False) -> float | None:
    """When the quiet period holding `now` ends (None: not quiet; `math.inf`: the toggle).

    Windows that touch or overlap are one quiet period: the end is followed from window
    to window, so a delivery held until 07:00 is not released into a rule starting then.
    """
    if indefinite:
        return math.inf
    end: float | None = None
    at = now
    for _ in range(_MAX_CHAIN):
        ends = [w[1] for rule in rules if (w := window_containing(rule, at)) is not None]
        if not ends:
            return end
        end = at = max(ends)
    return end


def next_start(rules: Sequence[DndRule], now: float, *, days: int = 8) -> float | None:
    """The next instant after `now` a window begins (for `seam dnd status`), or None."""
    found: list[float] = []
    for rule in rules:
        today = datetime.fromtimestamp(now, zone(rule.tz)).date()
        for ahead in range(-1, days):
            day = today + timedelta(days=ahead)
            if day.weekday() in rule.weekdays:
                begins, _ = window_on(rule, day)
                if begins > now:
                    found.append(begins)
                    break
    return min(found) if found else None


def describe(rule: DndRule) -> str:
    """`22:00-07:00 mon,tue Europe/Berlin` (every day: `daily`)."""
    days = "daily" if len(rule.weekdays) == 7 else ",".join(WEEKDAYS[d] for d in rule.weekdays)
    return f"{rule.start}-{rule.end} {days} {rule.tz}"
