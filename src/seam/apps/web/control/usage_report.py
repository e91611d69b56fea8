"""The Usage section's figures: a tenant's tokens and cost per day, per model and per
session, from the store's `UsageReport` (one query a grouping, however many sessions),
and the fixed prompt overhead each request carries before any message."""

from __future__ import annotations

import datetime
import logging
import math
import time
from collections.abc import Iterable
from typing import Any

from seam.apps.web.errors import ApiError
from seam.contracts.execution import ExecutionStore
from seam.contracts.sessions import UsageTotals, usage_to_dict
from seam.contracts.usage_report import SECONDS_PER_DAY, UsageGroup, UsageQuery, UsageReport
from seam.wiring.dashboard import tenant_key_prefix
from seam.wiring.probes import fixed_prompt_tokens, model_window
from seam.wiring.settings import Settings
from seam.wiring.web import tenant_session_name

log = logging.getLogger("seam.web")

EPOCH = datetime.date(1970, 1, 1)


def report_of(store: ExecutionStore) -> UsageReport:
    """The store's usage report; 501 for a store that has none (a custom backend)."""
    if not isinstance(store, UsageReport):
        raise ApiError(501, "this session store cannot sum usage across sessions")
    return store


def usage_query(tenant: str, days: int, tz_minutes: int, now: float) -> UsageQuery:
    """The last `days` days (today included) of the reader's calendar, for `tenant`."""
    offset = tz_minutes * 60
    today = math.floor((now + offset) / SECONDS_PER_DAY)
    since = (today - days + 1) * SECONDS_PER_DAY - offset
    return UsageQuery(since=since, key_prefix=tenant_key_prefix(tenant), day_offset=offset)


def _day(number: int) -> str:
    return (EPOCH + datetime.timedelta(days=number)).isoformat()


def per_day(groups: list[UsageGroup], query: UsageQuery, days: int) -> list[dict[str, Any]]:
    """Every day of the window, oldest first, zero where nothing was used (a chart's
    axis has no holes)."""
    found = {int(g.group): g.totals for g in groups}
    first = math.floor((query.since + query.day_offset) / SECONDS_PER_DAY)
    return [
        {"day": _day(n), **usage_to_dict(found.get(n, UsageTotals()))}
        for n in range(first, first + days)
    ]


async def tenant_usage(store: ExecutionStore, tenant: str, days: int, tz: int) -> dict[str, Any]:
    """The Usage section's tables for `tenant`: per day, per model, per session, total."""
    report = report_of(store)
    query = usage_query(tenant, days, tz, time.time())
    by_model = await report.usage_by("model", query)
    sessions = []
    for group in await report.usage_by("session", query):
        name = tenant_session_name(tenant, group.group)
        if name is not None:
            sessions.append({"session": name, **usage_to_dict(group.totals)})
    sessions.sort(key=lambda row: (-row["input_tokens"] - row["output_tokens"], row["session"]))
    return {
        "days": days,
        "since": query.since,
        "per_day": per_day(await report.usage_by("day", query), query, days),
        "per_model": [{"model": g.group, **usage_to_dict(g.totals)} for g in by_model],
        "per_session": sessions,
        "total": usage_to_dict(_sum(g.totals for g in by_model)),
    }


def _sum(parts: Iterable[UsageTotals]) -> UsageTotals:
    total = UsageTotals()
    for t in parts:
        total = UsageTotals(
            total.calls + t.calls,
            total.usage + t.usage,
            total.cost_usd + t.cost_usd,
            total.unpriced_calls + t.unpriced_calls,
        )
    return total


async def prompt_overhead(settings: Settings | None) -> dict[str, Any] | None:
    """The tokens of the default personality's system prompt and tool schemas (what
    `seam doctor` measures, with the same estimator the context fitting uses), and the
    window they take a share of; None without a home or when it cannot be measured."""
    if settings is None:
        return None
    try:
        tokens = await fixed_prompt_tokens(settings)
        window = model_window(settings)
        personality = settings.config.agent.personality
    except Exception as exc:  # a broken config.toml: the page says so, the rest still shows
        log.warning("cannot measure the fixed prompt: %s", exc)
        return None
    if tokens is None:
        return None
    return {"tokens": tokens, "window": window, "personality": personality}


__all__ = ["per_day", "prompt_overhead", "tenant_usage", "usage_query"]
