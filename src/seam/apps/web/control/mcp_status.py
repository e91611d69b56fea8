"""Each MCP server's state for the dashboard, and where it comes from.

`seam serve`'s runtime holds live MCP connections (`runtime.mcp`, started when a turn first
wants their tools): the page reports those. It first applies `config.toml` as it is now
(as `/mcp reload` does: only servers whose settings changed are restarted), then starts the
servers not tried yet, as the next turn would (a failed one is retried on the runtime's own
schedule, so a hanging server does not stall every visit). A runtime without MCP servers
(an app built in-process) is answered as `seam mcp list` does: start each configured
server, list it, stop it, each bounded by its `connect_timeout`. Nothing is kept across
requests but the run in flight, which requests arriving meanwhile share.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from seam.apps.cli.mcp import configured_status
from seam.apps.web.control.mcp_config import fresh_settings
from seam.wiring.mcp import runtime_servers, server_specs

if TYPE_CHECKING:
    from seam.apps.web.control.deps import Control
    from seam.wiring.mcp import ServerStatus
    from seam.wiring.settings import McpServerSection, Settings

# The page's names for a connection's states (the CLI's "ready" is "connected").
STATES = {"ready": "connected"}


class InFlight:
    """One run at a time, shared by every caller that asks while it runs; once it ends
    nothing is kept (the next caller starts a new run)."""

    def __init__(self) -> None:
        self._task: asyncio.Future[Any] | None = None

    async def run(self, start: Callable[[], Awaitable[Any]]) -> Any:
        task = self._task
        if task is None or task.done():
            task = self._task = asyncio.ensure_future(start())
        # A caller that goes away does not cancel the run the others wait for.
        return await asyncio.shield(task)

    def forget(self) -> None:
        """The next caller starts afresh (after a change the run in flight predates)."""
        self._task = None


async def apply_config(control: Control, settings: Settings) -> bool:
    """Give the serving runtime's MCP servers the configuration in `settings`; False when
    the runtime holds none (nothing to apply)."""
    servers = runtime_servers(control.backend.runtime)
    if servers is None:
        return False
    await servers.reload(server_specs(settings))
    return True


async def server_states(control: Control, applying: asyncio.Lock) -> list[dict[str, Any]]:
    """Every configured server as the page shows it (see the module's docstring).
    `applying` is held while the file is read and given to the runtime, so an edit being
    written meanwhile is never undone by an older reading."""
    async with applying:
        settings = fresh_settings(control)
        live = await apply_config(control, settings)
    servers = runtime_servers(control.backend.runtime)
    if live and servers is not None:
        await servers.prepare(None)
        found = await servers.status(connect=False)
    elif settings.config.mcp.servers:
        found = await configured_status(settings)
    else:
        found = []
    sections = settings.config.mcp.servers
    return [server_view(status, sections.get(status.name)) for status in found]


def server_view(status: ServerStatus, section: McpServerSection | None) -> dict[str, Any]:
    """One server's card: its state and reason, its approval settings, and each tool with
    what happens when the model calls it."""
    tools = [{"name": name, "offered": True, "asks": name in status.asks} for name in status.tools]
    tools += [{"name": name, "offered": False, "asks": False} for name in status.hidden]
    return {
        "name": status.name,
        "transport": status.transport,
        "target": status.target,
        "state": STATES.get(status.state, status.state),
        "reason": status.error,
        "approval": section.approval if section else "auto",
        "allow": list(section.tools.allow) if section else [],
        "deny": list(section.tools.deny) if section else [],
        "tools": tools,
        "prompts": list(status.prompts),
        "resources": status.resources,
    }


__all__ = ["InFlight", "apply_config", "server_states", "server_view"]
