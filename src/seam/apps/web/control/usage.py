"""The dashboard's Usage section: tokens and cost per day, per model and per session; the fixed
prompt overhead per request.

Not owner-only: every answer is the caller's tenant's (the owner sees its own tenant).
Figures come from the store on each request, so a turn just finished anywhere shows.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from seam.apps.web.auth import Principal
from seam.apps.web.control.deps import Control
from seam.apps.web.control.usage_budget import tenant_budget
from seam.apps.web.control.usage_report import prompt_overhead, tenant_usage

MAX_DAYS = 366
# Minutes east of UTC: the widest time zones are UTC-12 and UTC+14.
MAX_TZ_MINUTES = 14 * 60


def add_routes(api: APIRouter, control: Control) -> None:
    @api.get("/usage", tags=["control"])
    async def usage(
        request: Request,
        days: Annotated[int, Query(ge=1, le=MAX_DAYS)] = 30,
        tz: Annotated[int, Query(ge=-MAX_TZ_MINUTES, le=MAX_TZ_MINUTES)] = 0,
    ) -> dict[str, Any]:
        """The caller's tenant's tokens (in, out, cached) and cost over the last `days`
        days (today included, days in the reader's time zone: `tz` minutes east of UTC):
        per day (every day, zero where nothing was used), per model, per session, and in
        total; and the fixed prompt overhead every request carries (the default
        personality's system prompt and tool schemas, estimated as the context fitting
        does), against the context window; and the spending limits (`budget`: today's
        spend against each day limit, and the session and cron-run limits set)."""
        who: Principal = request.state.principal
        store = control.backend.runtime.store
        body = await tenant_usage(store, who.tenant, days, tz)
        body["tz"] = tz
        body["overhead"] = await prompt_overhead(control.settings)
        body["budget"] = await tenant_budget(control.backend.runtime, who.tenant)
        return body


__all__ = ["MAX_DAYS", "add_routes"]
