"""`UsageReport`: the usage ledger summed by day, by model or by session, in one query a
grouping, for the reports that cover many sessions at once (the dashboard's Usage
section), where summing `usage_totals` session by session would cost one query each.

Days are counted from `day_offset` seconds east of UTC (the reader's time zone), so a
call made at 23:30 local time falls on the reader's day, not UTC's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from seam.contracts.sessions import UsageTotals

UsageGrouping = Literal["day", "model", "session"]
USAGE_GROUPINGS: tuple[UsageGrouping, ...] = ("day", "model", "session")
SECONDS_PER_DAY = 86_400


@dataclass(frozen=True, slots=True)
class UsageQuery:
    """Which calls a report sums: recorded at or after `since` (seconds since the epoch),
    of sessions whose key starts with `key_prefix` ("" for all: a tenant's keys share a
    prefix); days start `day_offset` seconds after UTC midnight's epoch count."""

    since: float = 0.0
    key_prefix: str = ""
    day_offset: int = 0


@dataclass(frozen=True, slots=True)
class UsageGroup:
    """One group's totals: `group` is the day's number (days since the epoch, as a
    string), the model's name or the session's key."""

    group: str
    totals: UsageTotals


@runtime_checkable
class UsageReport(Protocol):
    async def usage_by(self, grouping: UsageGrouping, query: UsageQuery) -> list[UsageGroup]:
        """The totals of each group with at least one call in the query, ordered by
        group. ValueError for an unknown grouping."""
        ...


def check_grouping(grouping: str) -> UsageGrouping:
    """`grouping` when it is one the report knows; ValueError naming them otherwise."""
    for known in USAGE_GROUPINGS:
        if grouping == known:
            return known
    known_ones = ", ".join(USAGE_GROUPINGS)
    raise ValueError(f"usage grouping must be one of {known_ones}, not {grouping!r}")


__all__ = [
    "SECONDS_PER_DAY",
    "USAGE_GROUPINGS",
    "UsageGroup",
    "UsageGrouping",
    "UsageQuery",
    "UsageReport",
    "check_grouping",
]
