"""The SQLite store's `UsageReport`: usage summed by day, model or session in one
statement. Only the dashboard asks for it, so `SQLiteSessionStore.usage_by` imports this
module on its first call: every `seam run` opens the store and must not pay for it
(`tests/cli/imports_seam_run.txt`)."""

from __future__ import annotations

import sqlite3

from seam.contracts.usage_report import UsageGroup, UsageGrouping, UsageQuery
from seam.services.sessions.sqlite_queries import USAGE_TOTALS
from seam.services.sessions.sqlite_threads import SQLiteThreads
from seam.services.sessions.usage_report_sql import (
    UsageDialect,
    usage_groups,
    usage_params,
    usage_statement,
)

_SQLITE = UsageDialect("?", "CAST((created_at + ?) / 86400 AS INTEGER)", USAGE_TOTALS)


async def usage_by(
    threads: SQLiteThreads, grouping: UsageGrouping, query: UsageQuery
) -> list[UsageGroup]:
    sql = usage_statement(_SQLITE, grouping)
    params = usage_params(grouping, query)

    def read(db: sqlite3.Connection) -> list[UsageGroup]:
        return usage_groups(db.execute(sql, params).fetchall())

    return await threads.read(read)


__all__ = ["usage_by"]
