"""Spend against the limits, for a person to read: today's, a session's, and per day.

`/usage` in the chat, `seam usage` and the page's Usage section all show the same lines
(`BudgetLine`: what is spent against each limit that applies, and where the limit is
set), so the numbers a refusal quotes are the numbers a person sees before it comes.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import asdict, dataclass
from typing import Any

from seam.contracts.budget import BudgetLine, BudgetScope
from seam.contracts.sessions import SessionNotFound, UsageTotals, usage_to_dict
from seam.contracts.usage_report import SECONDS_PER_DAY, UsageQuery, UsageReport
from seam.services.budget.gate import StoreBudgetGate
from seam.services.budget.limits import spent_of

EPOCH = dt.date(1970, 1, 1)
PERIOD_NAMES = {"session": "session", "day": "today", "job": "cron run"}


def line_text(line: BudgetLine) -> str:
    """ "today: 10,214 of 50,000 tokens ([budget] day_tokens)", with "reached" and a
    note when the cost of some calls is unknown."""
    text = f"{PERIOD_NAMES[line.period]}: {spent_of(line.unit, line.spent, line.allowed)}"
    text += f" ({line.source})"
    if line.unit == "usd" and line.unpriced:
        text += ", cost unknown for some calls (their model has no price)"
    if line.reached:
        text += " - reached"
    return text


def line_dict(line: BudgetLine) -> dict[str, Any]:
    """The line as JSON: period, unit, spent, allowed, source, reached, cost_unknown."""
    body = asdict(line)
    body["cost_unknown"] = body.pop("unpriced")
    body["reached"] = line.reached
    return body


@dataclass(frozen=True, slots=True)
class Spend:
    """Today's totals (the tenant's), the session's (None: no session asked, or none
    yet), the limits that apply with their spend, and the totals of each recent day."""

    today: UsageTotals
    session: UsageTotals | None
    lines: list[BudgetLine]
    per_day: list[tuple[str, UsageTotals]]

    def as_dict(self) -> dict[str, Any]:
        return {
            "today": usage_to_dict(self.today),
            "session": None if self.session is None else usage_to_dict(self.session),
            "limits": [line_dict(line) for line in self.lines],
            "per_day": [{"day": day, **usage_to_dict(t)} for day, t in self.per_day],
        }


async def spend_of(gate: StoreBudgetGate, scope: BudgetScope, days: int) -> Spend:
    """What `scope`'s session (and its tenant, today and over `days` days) spent, and the
    limits that apply to it. A session not stored yet has spent nothing."""
    try:
        session: UsageTotals | None = await gate.store.usage_totals(scope.session_key)
    except SessionNotFound:
        session = None
    lines = await gate.lines(scope)
    today = await gate.day_spent(scope.tenant_prefix)
    return Spend(today, session, lines, await per_day(gate, scope.tenant_prefix, days))


async def per_day(gate: StoreBudgetGate, prefix: str, days: int) -> list[tuple[str, UsageTotals]]:
    """The totals of the tenant (its keys start with `prefix`) on each of the last `days`
    days (today included, days in the gate's time zone), oldest first, zero where
    nothing was spent."""
    store = gate.store
    if not isinstance(store, UsageReport) or days < 1:
        return []
    now = gate.clock()
    local = (
        dt.datetime.fromtimestamp(now, gate.zone)
        if gate.zone
        else dt.datetime.fromtimestamp(now).astimezone()
    )
    offset = int((local.utcoffset() or dt.timedelta()).total_seconds())
    today = math.floor((now + offset) / SECONDS_PER_DAY)
    since = (today - days + 1) * SECONDS_PER_DAY - offset
    query = UsageQuery(since=since, key_prefix=prefix, day_offset=offset)
    found = {int(g.group): g.totals for g in await store.usage_by("day", query)}
    first = today - days + 1
    return [
        ((EPOCH + dt.timedelta(days=n)).isoformat(), found.get(n, UsageTotals()))
        for n in range(first, today + 1)
    ]


__all__ = ["Spend", "line_dict", "line_text", "per_day", "spend_of"]
