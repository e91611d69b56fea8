"""`StoreBudgetGate`: spending limits checked against the usage the session store keeps.

Spend is read from the store before each model call, so it counts every process's calls
(a gateway, a worker and `seam run` share one store): a session's calls from its usage
totals, the day's from the store's `UsageReport` (every session of the tenant since local
midnight in the configured time zone), a cron run's from the turn itself (the run is one
turn). Cost is the priced calls' cost: a call whose model has no known price adds tokens
but no cost, so such a model is limited by tokens only, and the line says its cost is
unknown. Only the periods that have a limit are read.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import KW_ONLY, dataclass
from datetime import datetime, tzinfo

from seam.contracts.budget import (
    NO_LIMITS,
    BudgetLimits,
    BudgetLine,
    BudgetScope,
    Period,
    Refusal,
)
from seam.contracts.messages import Usage
from seam.contracts.sessions import SessionNotFound, SessionStore, UsageTotals
from seam.contracts.usage_report import UsageQuery, UsageReport
from seam.services.budget.limits import Applicable, applicable_once, job_of, refusal_message

# (provider, model, usage) -> cost in USD, or None when the price is unknown.
Pricing = Callable[[str, str, Usage], float | None]
# A cron job's own limits (None: the job is gone or sets none).
JobLimits = Callable[[str], Awaitable[BudgetLimits | None]]


def day_start(now: float, zone: tzinfo | None) -> float:
    """Midnight of `now`'s day in `zone` (None: this machine's local time), as seconds."""
    local = datetime.fromtimestamp(now, zone) if zone is not None else datetime.fromtimestamp(now)
    return local.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()


@dataclass(frozen=True)
class StoreBudgetGate:
    """The `BudgetGate` over a session store: `config` (the `[budget]` limits), the prices,
    the day's time zone (None: local time), the clock and each cron job's own limits."""

    store: SessionStore
    config: BudgetLimits = NO_LIMITS
    _: KW_ONLY
    pricing: Pricing | None = None
    zone: tzinfo | None = None
    clock: Callable[[], float] = time.time
    job_limits: JobLimits | None = None

    async def check(self, scope: BudgetScope) -> Refusal | None:
        # Asked before every model call; with no limit anywhere `_measured` ends at one
        # cached lookup (`applicable_once`), reading nothing.
        for limit, line in await self._measured(scope):
            if line.reached:
                return Refusal(line, refusal_message(line, limit.raise_in))
        return None

    async def lines(self, scope: BudgetScope) -> list[BudgetLine]:
        """Every limit that applies to the scope, with the spend against it (for `/usage`,
        `seam usage` and the page)."""
        return [line for _, line in await self._measured(scope)]

    async def _measured(self, scope: BudgetScope) -> list[tuple[Applicable, BudgetLine]]:
        job = job_of(scope.name or scope.session_key)
        own = None if job is None or self.job_limits is None else await self.job_limits(job)
        limits = applicable_once(self.config, scope.personality, scope.limits, job, own)
        if not limits:  # no limit anywhere: nothing to read
            return []
        spent: dict[Period, UsageTotals] = {}
        measured = []
        for limit in limits:
            if limit.period not in spent:
                spent[limit.period] = await self._spent(limit.period, scope)
            totals = spent[limit.period]
            if limit.unit == "tokens":
                used, unpriced = float(totals.usage.total_tokens), False
            else:
                used, unpriced = totals.cost_usd, totals.unpriced_calls > 0
            line = BudgetLine(limit.period, limit.unit, used, limit.allowed, limit.source, unpriced)
            measured.append((limit, line))
        return measured

    async def _spent(self, period: Period, scope: BudgetScope) -> UsageTotals:
        if period == "session":
            try:
                return await self.store.usage_totals(scope.session_key)
            except SessionNotFound:
                return UsageTotals()
        if period == "day":
            return await self.day_spent(scope.tenant_prefix)
        return self._turn_spent(scope)

    async def day_spent(self, prefix: str) -> UsageTotals:
        """What the tenant whose session keys start with `prefix` has spent since
        midnight (nothing, for a store that cannot sum usage across sessions)."""
        store = self.store
        if not isinstance(store, UsageReport):
            return UsageTotals()
        query = UsageQuery(since=day_start(self.clock(), self.zone), key_prefix=prefix)
        total = UsageTotals()
        for group in await store.usage_by("model", query):
            total = add_totals(total, group.totals)
        return total

    def _turn_spent(self, scope: BudgetScope) -> UsageTotals:
        usage = scope.turn_usage
        cost = None
        if self.pricing is not None:
            cost = self.pricing(scope.provider, scope.model, usage)
        unpriced = 1 if cost is None and usage.total_tokens else 0
        return UsageTotals(1, usage, cost or 0.0, unpriced)


def add_totals(one: UsageTotals, other: UsageTotals) -> UsageTotals:
    return UsageTotals(
        one.calls + other.calls,
        one.usage + other.usage,
        one.cost_usd + other.cost_usd,
        one.unpriced_calls + other.unpriced_calls,
    )


__all__ = ["JobLimits", "Pricing", "StoreBudgetGate", "add_totals", "day_start"]
