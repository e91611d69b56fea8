"""The spending gate a runtime's loop asks before each model call, built from `[budget]`
(its limits and the time zone whose midnight starts the day), the store (the usage it
keeps, and each cron job's own limits) and the prices (`[prices]`).

A one-shot `seam run` or a chat with no limit anywhere gets no gate at all
(`budget_wanted` in wiring/configure.py): nothing budget-related is imported on its path.
Long-running runtimes (the server, a gateway, a worker: they run cron jobs, whose limits
live in the store) always get one.
"""

from __future__ import annotations

from datetime import tzinfo
from typing import TYPE_CHECKING, Any

from seam.contracts.budget import NO_LIMITS, BudgetLimits, BudgetScope
from seam.services.budget.gate import JobLimits, Pricing, StoreBudgetGate
from seam.services.budget.limits import Applicable, applicable
from seam.services.budget.report import Spend, line_dict, line_text, spend_of
from seam.wiring.settings import BudgetSection, Settings

if TYPE_CHECKING:
    from seam.wiring.runtime import Runtime


def config_limits(section: BudgetSection) -> BudgetLimits:
    """The `[budget]` limits of config.toml."""
    return BudgetLimits.of(section.model_dump(exclude={"tz"}))


def zone_of(section: BudgetSection) -> tzinfo | None:
    """The day's time zone (None: this machine's local time)."""
    if not section.tz:
        return None
    from zoneinfo import ZoneInfo

    return ZoneInfo(section.tz)


def job_limits_of(store: Any) -> JobLimits:
    """A cron job's own limits, read from the store's cron jobs when a run asks."""
    from seam.wiring.cron import cron_store_of

    async def job_limits(job_id: str) -> BudgetLimits | None:
        job = await cron_store_of(store).get_job(job_id)
        if job is None:
            return None
        limits = BudgetLimits.of({"job_tokens": job.max_tokens, "job_usd": job.max_usd})
        return limits if limits.any() else None

    return job_limits


def build_budget(settings: Settings, store: Any, pricing: Pricing | None) -> StoreBudgetGate:
    """The gate over `store` with the configured limits, day and prices."""
    section = settings.config.budget
    return StoreBudgetGate(
        store,
        config_limits(section),
        pricing=pricing,
        zone=zone_of(section),
        job_limits=job_limits_of(store),
    )


def gate_of(runtime: Runtime) -> StoreBudgetGate:
    """The runtime's own gate, or one built to show spend against the limits where the
    runtime has none (no limit was set when it started)."""
    gate = runtime.loop.budget
    if isinstance(gate, StoreBudgetGate):
        return gate
    if runtime.settings is None:
        return StoreBudgetGate(runtime.store, pricing=runtime.loop.pricing)
    return build_budget(runtime.settings, runtime.store, runtime.loop.pricing)


def scope_of(runtime: Runtime, session_key: str, personality: str | None) -> BudgetScope:
    """What a call of the session as `personality` (None: the default) would be for."""
    from seam.core.budget_step import names_of

    found = runtime.loop.personality_for(personality, session_key)
    model = found.model or getattr(runtime.model, "model", "") or ""
    limits = found.budget or BudgetLimits()
    name, prefix = names_of(session_key)
    return BudgetScope(
        session_key,
        found.id,
        runtime.model.name,
        str(model),
        limits,
        name=name,
        tenant_prefix=prefix,
    )


def tenant_scope(runtime: Runtime, tenant: str) -> BudgetScope:
    """A scope for `tenant`'s day (the page's Usage section): its session is never
    stored, so only the day's limits and spend mean anything."""
    from seam.core.identity import create_session_storage_key

    return scope_of(runtime, create_session_storage_key(tenant, "web", ""), None)


def set_limits(gate: StoreBudgetGate, scope: BudgetScope) -> list[Applicable]:
    """The session and cron-run limits set for the scope's personality (their spend is
    per session and per run), with where each is set."""
    found = applicable(gate.config, scope.personality, scope.limits, "JOB", NO_LIMITS)
    return [limit for limit in found if limit.period != "day"]


__all__ = [
    "Spend",
    "build_budget",
    "config_limits",
    "gate_of",
    "job_limits_of",
    "line_dict",
    "line_text",
    "scope_of",
    "set_limits",
    "spend_of",
    "tenant_scope",
    "zone_of",
]
