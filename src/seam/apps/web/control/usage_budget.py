"""The Usage section's spending limits: today's spend against each day limit, and the
session and cron-run limits that are set (their spend is per session and per run: the
per-session table shows it), each with where it is set (docs/budgets.md)."""

from __future__ import annotations

from typing import Any

from seam.wiring.budget import gate_of, line_dict, set_limits, tenant_scope
from seam.wiring.runtime import Runtime


async def tenant_budget(runtime: Runtime, tenant: str) -> dict[str, Any]:
    """`today`: the day limits with today's spend (the default personality's own count
    too); `set`: the session and cron-run limits, without a spend of their own."""
    gate = gate_of(runtime)
    scope = tenant_scope(runtime, tenant)
    today = [line_dict(line) for line in await gate.lines(scope) if line.period == "day"]
    return {
        "today": today,
        "set": [
            {"period": s.period, "unit": s.unit, "allowed": s.allowed, "source": s.source}
            for s in set_limits(gate, scope)
        ],
    }


__all__ = ["tenant_budget"]
