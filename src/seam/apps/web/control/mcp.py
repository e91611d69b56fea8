"""The dashboard's MCP section: each server's state (connected, failed with its reason), its
tools and their approval settings, and the server's `approval` changed in `config.toml`.

Owner-only (`access.OWNER_PREFIXES` refuses `/api/mcp` to anyone else). Where the states
come from is `mcp_status.py`; the file edit is `mcp_config.py`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from fastapi import APIRouter
from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict

from seam.apps.web.control.deps import Control
from seam.apps.web.control.mcp_config import fresh_settings, set_approval
from seam.apps.web.control.mcp_status import InFlight, apply_config, server_states

SERVER_NAME = PathParam(min_length=1, max_length=100, description="The server's name.")


class ApprovalChange(BaseModel):
    """`always`: every tool asks; `never`: none does; `auto`: a tool asks unless the server
    marks it read-only or not destructive."""

    model_config = ConfigDict(extra="forbid")
    approval: Literal["always", "never", "auto"]


def add_routes(api: APIRouter, control: Control) -> None:
    """`GET /api/mcp/servers` and `PUT /api/mcp/servers/{name}/approval`."""
    listing = InFlight()
    # One edit of config.toml at a time (they share a temp file), and no reading of it
    # given to the runtime while one is being written and applied.
    applying = asyncio.Lock()

    @api.get("/mcp/servers")
    async def mcp_servers() -> dict[str, Any]:
        """Each MCP server in `config.toml`: its state (connected, failed with the reason,
        not started...), its tools with whether each is offered (`tools = { allow, deny }`)
        and asks for approval, and its `approval` setting. The serving runtime's own
        connections are reported after it takes the file as it is now (like `/mcp
        reload`); servers it has not tried yet are started, each within its
        `connect_timeout`."""
        return {"servers": await listing.run(lambda: server_states(control, applying))}

    @api.put("/mcp/servers/{name}/approval")
    async def mcp_set_approval(change: ApprovalChange, name: str = SERVER_NAME) -> dict[str, Any]:
        """Set a server's `approval` (always, never, auto) in `config.toml`, keeping the
        file's comments; the serving runtime takes it at once (the server is restarted),
        and so does `seam mcp list`. 404 when the file has no such server."""
        settings = control.need_settings()
        async with applying:
            await asyncio.to_thread(set_approval, settings.config_path, name, change.approval)
            listing.forget()
            await apply_config(control, fresh_settings(control))
        return {"name": name, "approval": change.approval}


__all__ = ["add_routes"]
