"""`seam mcp list`: each configured MCP server, its state and the tools it offers; and
`/server:prompt arg=value` in chat, a turn from one of a server's prompts.

Every server is started to list its tools (within its `connect_timeout`) and stopped
again; a server that cannot start is shown with its error, and the command still exits 0.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from seam.wiring.mcp import ServerStatus
    from seam.wiring.settings import Settings

NONE_CONFIGURED = "no MCP servers configured ([mcp.servers.NAME] in config.toml)"


async def mcp_report(runtime: Any, *, connect: bool = True) -> list[str]:
    """Lines for `/mcp`: each of the runtime's servers, its state and its tools."""
    from seam.wiring.mcp import runtime_servers

    servers = runtime_servers(runtime)
    if servers is None or not servers.names():
        return [NONE_CONFIGURED]
    return format_status(await servers.status(connect=connect))


def format_status(found: list[ServerStatus]) -> list[str]:
    lines: list[str] = []
    for server in found:
        head = f"{server.name}  {server.state}  {server.transport}  {server.target}"
        lines.append(head)
        if server.error:
            lines.append(f"  error: {server.error}")
        for tool in server.tools:
            lines.append(f"  {tool}" + ("  (asks for approval)" if tool in server.asks else ""))
        if server.resources:
            lines.append("  resources: listed by mcp__resources, read by mcp__read_resource")
        lines += [f"  prompt: {command}" for command in server.prompts]
        if server.hidden:
            lines.append(f"  not offered (tools allow/deny): {', '.join(server.hidden)}")
    return lines


def is_prompt_command(name: str) -> bool:
    """Whether a chat line's first word is `/server:prompt` (an MCP prompt)."""
    from seam.wiring.mcp import is_command

    return is_command(name)


async def prompt_turn_text(runtime: Any, name: str, rest: str) -> str:
    """The text of the turn `/server:prompt rest` asks for; a `CliError` (one line)
    when the server, the prompt or the arguments are wrong."""
    from seam.apps.cli.runner import CliError
    from seam.wiring.mcp import PromptError, command_text, runtime_servers

    try:
        return await command_text(runtime_servers(runtime), f"{name} {rest}")
    except PromptError as exc:
        raise CliError(str(exc)) from None


async def configured_status(settings: Settings) -> list[ServerStatus]:
    """Start every server `settings` configure, list it and stop it again: what `seam mcp
    list` shows, and the dashboard when its runtime holds no MCP servers of its own. Each
    start is bounded by the server's `connect_timeout`; they start side by side."""
    from seam.wiring.mcp import build_mcp

    servers = build_mcp(settings)
    try:
        return await servers.status(connect=True)
    finally:
        await servers.aclose()


async def list_configured(settings: Settings | None = None) -> list[str]:
    """`seam mcp list`: start every configured server, report it, and stop it again."""
    from seam.wiring.settings import load_settings

    settings = settings or load_settings()
    if not settings.config.mcp.servers:
        return [NONE_CONFIGURED]
    return format_status(await configured_status(settings))


async def list_servers() -> int:
    for line in await list_configured():
        sys.stdout.write(line + "\n")
    return 0


def register(app: typer.Typer) -> None:
    """Add the `mcp` command group to the `seam` app."""
    mcp_app = typer.Typer(help="MCP servers and their tools.", no_args_is_help=True)

    @mcp_app.command("list")
    def list_command() -> None:
        """Start each configured server, show its state and tools, stop it again."""
        from seam.apps.cli.runner import execute

        execute(list_servers())

    app.add_typer(mcp_app, name="mcp")
