"""`UsageReport` of the PostgreSQL store: usage summed by day, model or session in one
statement (a mixin of `PostgresStore`)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from seam.contracts.usage_report import UsageGroup, UsageGrouping, UsageQuery
from seam.services.sessions.postgres_upkeep import _USAGE_SUMS as USAGE_SUMS
from seam.services.sessions.usage_report_sql import (
    UsageDialect,
    usage_groups,
    usage_params,
    usage_statement,
)

if TYPE_CHECKING:
    from psycopg import AsyncConnection

_POSTGRES = UsageDialect("%s", "floor((created_at + %s) / 86400)::bigint", USAGE_SUMS)


class PostgresUsageReport:
    if TYPE_CHECKING:

        def _snapshot(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

    async def usage_by(self, grouping: UsageGrouping, query: UsageQuery) -> list[UsageGroup]:
        sql = usage_statement(_POSTGRES, grouping)
        async with self._snapshot() as conn:
            cur = await conn.execute(sql, usage_params(grouping, query))
            return usage_groups(await cur.fetchall())


__all__ = ["PostgresUsageReport"]
