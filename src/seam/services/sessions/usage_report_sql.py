"""The SQL of `UsageReport`, shared by both stores: one statement a grouping, filtered by
time and by the sessions' key prefix (a tenant's), summed as each store sums
`usage_totals`. Each store says how it writes a parameter, a day number and the sums."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from seam.contracts.usage_report import UsageGroup, UsageGrouping, UsageQuery, check_grouping
from seam.services.sessions.rows import usage_totals_from


@dataclass(frozen=True, slots=True)
class UsageDialect:
    """How one store writes the report: its parameter mark, the expression of a call's
    day (with one parameter: the offset in seconds) and its usage-totals columns."""

    mark: str
    day: str
    sums: str


def usage_statement(dialect: UsageDialect, grouping: UsageGrouping) -> str:
    """The statement for `grouping` (its parameters: `usage_params`)."""
    m = dialect.mark
    group = {"day": dialect.day, "model": "model", "session": "session_key"}[
        check_grouping(grouping)
    ]
    return (
        f"SELECT {group}, {dialect.sums} FROM usage"
        f" WHERE created_at >= {m} AND substr(session_key, 1, {m}) = {m}"
        " GROUP BY 1 ORDER BY 1"
    )


def usage_params(grouping: UsageGrouping, query: UsageQuery) -> tuple[Any, ...]:
    """The parameters of `usage_statement(grouping)` for `query`."""
    where = (query.since, len(query.key_prefix), query.key_prefix)
    return (query.day_offset, *where) if grouping == "day" else where


def usage_groups(rows: list[Any]) -> list[UsageGroup]:
    """The statement's rows as groups (a day's number as text)."""
    return [UsageGroup(str(row[0]), usage_totals_from(row[1:])) for row in rows]


__all__ = ["UsageDialect", "usage_groups", "usage_params", "usage_statement"]
