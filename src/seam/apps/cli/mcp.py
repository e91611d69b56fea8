"""`seam mcp list`: each configured MCP server, its state and the tools it offers.

Every server is started to list its tools (within its `connect_timeout`) and stopped
again; a server that cannot start is shown with its error, and the command still exits 0.
"""

from __future__ import annotations

import sys

import typer


async def list_servers() -> int:
    from seam.wiring.mcp import list_configured

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
