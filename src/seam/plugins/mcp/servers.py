"""`McpServers`: the configured MCP servers, as one `ToolSource` for the tool registry.

When the tool list is known: a server is started and listed the first time a turn's
toolset may include its tools (the default personality's does; a personality's `toolset`
does when one of its names or patterns can match `mcp__<server>__...`), and the listing
is kept for the life of the connection. A server that failed to start is tried again on a
later turn after `RETRY_AFTER` seconds (so a hanging one does not stall every turn), or
at once by `seam mcp list` / `/mcp reload`. A crashed server keeps its tools on offer and
is restarted by the next call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from seam.contracts.tools import Tool, ToolContext, ToolFactory

if TYPE_CHECKING:
    from seam.plugins.mcp.connection import ServerConnection
    from seam.plugins.mcp.prompts import PromptCommand
    from seam.plugins.mcp.spec import ServerSpec
    from seam.plugins.mcp.tools import Answers, StandingAnswers

# The client itself (connection, tools, prompts, resources) is imported when a server is
# first configured or used: every runtime holds an `McpServers`, most with no server.

RETRY_AFTER = 300.0  # seconds before a turn tries a server that failed to start again
_GLOB = frozenset("*?[")


@dataclass(frozen=True)
class ServerStatus:
    name: str
    transport: str  # stdio | http
    target: str  # the command line or the URL
    state: str
    error: str = ""
    tools: tuple[str, ...] = ()  # offered, as the model sees them
    hidden: tuple[str, ...] = ()  # listed by the server, filtered out by allow/deny
    asks: tuple[str, ...] = field(default=())  # offered tools that need approval
    prompts: tuple[str, ...] = ()  # its prompts as chat commands (`/server:prompt arg=…`)
    resources: bool = False  # whether it offers resources (mcp__resources)


class McpServers:
    def __init__(
        self,
        specs: Iterable[ServerSpec] = (),
        *,
        clock: Callable[[], float] = time.monotonic,
        standing: StandingAnswers | None = None,
    ) -> None:
        """`standing`: where `always` / `always_deny` answers are kept across runs
        (None: for this process only)."""
        self._clock = clock
        self._connections: dict[str, ServerConnection] = {}
        self._failed_at: dict[str, float] = {}
        self._standing = standing
        self._factories: dict[str, ToolFactory] = {}
        self._built_from: tuple[tuple[str, int], ...] = ()
        for spec in specs:
            self._connections[spec.name] = _connection(spec)

    @cached_property
    def _answers(self) -> Answers:
        from seam.plugins.mcp.tools import Answers

        return Answers(self._standing)

    def names(self) -> list[str]:
        return sorted(self._connections)

    # ToolSource

    def factories(self) -> Mapping[str, ToolFactory]:
        listed = tuple((name, id(conn.tools)) for name, conn in sorted(self._connections.items()))
        if listed != self._built_from:
            self._factories = self._build()
            self._built_from = listed
        return self._factories

    async def prepare(self, names: Sequence[str] | None) -> None:
        now = self._clock()
        due = [
            conn
            for name, conn in self._connections.items()
            if conn.tools is None
            and _wanted(name, names)
            and now - self._failed_at.get(name, -RETRY_AFTER) >= RETRY_AFTER
        ]
        if due:
            await asyncio.gather(*(self._list(conn) for conn in due))

    async def _list(self, conn: ServerConnection) -> None:
        from seam.plugins.mcp.connection import ServerError

        try:
            await conn.client()
        except ServerError:
            self._failed_at[conn.spec.name] = self._clock()
        else:
            self._failed_at.pop(conn.spec.name, None)

    def _build(self) -> dict[str, ToolFactory]:
        from seam.plugins.mcp.resources import LIST_NAME, READ_NAME, ListResources, ReadResource
        from seam.plugins.mcp.tools import McpTool

        out: dict[str, ToolFactory] = {}
        for _, conn in sorted(self._connections.items()):
            for listed in conn.tools or ():
                if conn.spec.offers(listed.name):
                    tool = McpTool(conn, listed, self._answers)
                    out.setdefault(tool.name, _static(tool))
        if any(conn.resources for conn in self._connections.values()):
            out.setdefault(LIST_NAME, _static(ListResources(self._live)))
            out.setdefault(READ_NAME, _static(ReadResource(self._live)))
        return out

    def _live(self) -> Mapping[str, ServerConnection]:
        return dict(self._connections)

    # Prompts (chat commands)

    async def prompt(self, command: PromptCommand) -> str:
        """The text of a turn from `command`'s prompt; `PromptError` says what is wrong."""
        from seam.plugins.mcp.prompts import PromptError, get_prompt

        conn = self._connections.get(command.server)
        if conn is None:
            names = ", ".join(self.names()) or "none"
            raise PromptError(f"no MCP server {command.server!r} (servers: {names})")
        return await get_prompt(conn, command)

    # Listings and lifecycle (seam mcp list, /mcp, /mcp reload)

    async def status(self, *, connect: bool = False) -> list[ServerStatus]:
        """Each server's state and tools; `connect` starts (or retries) every server
        whose tools are not known yet, so the listing is complete."""
        from seam.plugins.mcp.prompts import usage
        from seam.plugins.mcp.tools import McpTool

        if connect:
            pending = [c for c in self._connections.values() if c.tools is None or not c.ready]
            await asyncio.gather(*(self._list(conn) for conn in pending))
        out = []
        for name, conn in sorted(self._connections.items()):
            spec = conn.spec
            listed = conn.tools or []
            offered = [t for t in listed if spec.offers(t.name)]
            tools = [McpTool(conn, t, self._answers) for t in offered]
            out.append(
                ServerStatus(
                    name=name,
                    transport=spec.transport,
                    target=" ".join(spec.command) if spec.command else spec.url,
                    state="crashed" if conn.state == "ready" and not conn.alive else conn.state,
                    error=conn.error,
                    tools=tuple(tool.name for tool in tools),
                    hidden=tuple(t.name for t in listed if not spec.offers(t.name)),
                    asks=tuple(tool.name for tool in tools if tool.asks),
                    prompts=tuple(usage(name, prompt) for prompt in conn.prompts),
                    resources=conn.resources,
                )
            )
        return out

    async def reload(self, specs: Iterable[ServerSpec]) -> list[str]:
        """Take a new configuration: changed and removed servers are stopped, new and
        changed ones start on next use. Returns one line per change."""
        wanted = {spec.name: spec for spec in specs}
        changes: list[str] = []
        for name, conn in list(self._connections.items()):
            if wanted.get(name) != conn.spec:
                await conn.aclose()
                del self._connections[name]
                self._failed_at.pop(name, None)
                changes.append(f"{name}: {'changed' if name in wanted else 'removed'}")
        for name, spec in wanted.items():
            if name not in self._connections:
                self._connections[name] = _connection(spec)
                if not any(line.startswith(f"{name}:") for line in changes):
                    changes.append(f"{name}: added")
        self._built_from = ()  # rebuild the factories on next use
        return changes

    async def add(self, spec: ServerSpec) -> None:
        """Offer one more server (an editor's, over ACP), replacing one of the same name."""
        old = self._connections.pop(spec.name, None)
        if old is not None:
            await old.aclose()
        self._failed_at.pop(spec.name, None)
        self._connections[spec.name] = _connection(spec)
        self._built_from = ()

    async def aclose(self) -> None:
        await asyncio.gather(*(conn.aclose() for conn in self._connections.values()))


def _connection(spec: ServerSpec) -> ServerConnection:
    from seam.plugins.mcp.connection import ServerConnection

    return ServerConnection(spec)


def _static(tool: Tool) -> ToolFactory:
    def factory(ctx: ToolContext) -> Tool:
        return tool

    return factory


def _wanted(server: str, names: Sequence[str] | None) -> bool:
    """Whether a toolset of `names` may include a tool of `server`."""
    if names is None:
        return True
    from seam.plugins.mcp.tools import tool_name

    prefix = tool_name(server, "")
    for name in names:
        cut = min((name.find(c) for c in _GLOB if c in name), default=-1)
        if cut < 0:
            if name.startswith(prefix):
                return True
        elif name[:cut].startswith(prefix) or prefix.startswith(name[:cut]):
            return True
    return False


# The client's own names (PREFIX, PromptCommand, PromptError) live in its modules.
__all__ = ["McpServers", "ServerStatus"]
