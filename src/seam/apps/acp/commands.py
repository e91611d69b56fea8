"""A session's slash commands for the editor, and the MCP prompts among them.

ACP's `available_commands_update` tells the editor what it may offer after `/`: the
skills found in the session's `cwd` (`/<skill-name>`), `/undo` when checkpoints are on,
and every prompt of the session's MCP servers (`/<server>:<prompt>`, the configured ones
and the editor's own), with its arguments as the input hint (`city=… [state=…]`); Seam's
own are sent at once, then the whole list again once the servers have listed their
prompts, so a slow server never holds up the rest. The editor sends the chosen command
back as an ordinary prompt; `prompt_turn` turns an MCP prompt's line into the turn's text
through `command_text`, the one place every chat surface does it (terminal, gateways and
here).
"""

from __future__ import annotations

import asyncio

from acp.schema import AvailableCommand, UnstructuredCommandInput

from seam.apps.acp.sessions import skill_commands
from seam.apps.acp.undo import COMMAND as UNDO_COMMAND
from seam.wiring.mcp import PromptError, command_text, is_command, runtime_servers
from seam.wiring.runtime import Runtime

SKILL_HINT = "what to do (optional)"


async def local_commands(runtime: Runtime, cwd: str) -> list[AvailableCommand]:
    """The commands Seam itself offers a session in `cwd`: its skills and `/undo`. Sent
    first: the MCP prompts follow once the servers have started (a slow one waits)."""
    listed = await asyncio.to_thread(skill_commands, runtime, cwd)
    if runtime.checkpoints is not None:
        listed = [*listed, UNDO_COMMAND]
    commands = [
        AvailableCommand(
            name=name, description=description, input=UnstructuredCommandInput(hint=SKILL_HINT)
        )
        for name, description in listed
    ]
    return commands


async def mcp_prompts(runtime: Runtime) -> list[AvailableCommand]:
    """The MCP servers' prompts (each server started to list them, as `/mcp` does)."""
    servers = runtime_servers(runtime)
    if servers is None or not servers.names():
        return []
    commands = []
    for server in await servers.status(connect=True):
        for usage in server.prompts:  # "/server:prompt city=… [state=…]"
            name, _, hint = usage.partition(" ")
            commands.append(
                AvailableCommand(
                    name=name.removeprefix("/"),
                    description=f"prompt of the MCP server {server.name}",
                    input=UnstructuredCommandInput(hint=hint) if hint else None,
                )
            )
    return commands


async def prompt_turn(runtime: Runtime, text: str) -> tuple[str, str] | None:
    """For a `/server:prompt ...` prompt, (the turn's text, "") or ("", the problem as
    one line); None for any other prompt."""
    if not is_command(text):
        return None
    try:
        return await command_text(runtime_servers(runtime), text), ""
    except PromptError as exc:
        return "", str(exc)


__all__ = ["local_commands", "mcp_prompts", "prompt_turn"]
