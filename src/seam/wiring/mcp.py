"""The MCP client's configuration: `[mcp.servers.NAME]` into `ServerSpec`s, and reports.

`$VAR` and `${VAR}` in `env` and `headers` are expanded from Seam's environment here (the
only layer that reads it); a variable that is not set makes that server report the
problem instead of starting with an empty secret. Surfaces (`seam mcp list`, `/mcp`) use
the builders here and `reload_mcp`, never the plugin; what they print is apps/cli/mcp.py.
Every chat surface turns `/server:prompt ...` into a turn's text with `command_text`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from seam.contracts.guardrail import ApprovalDecision
from seam.contracts.personality import PersonalityRegistry
from seam.plugins.guardrail.approvals import ApprovalCache
from seam.plugins.mcp.prompts import PromptError, command_text, is_command, parse_command
from seam.plugins.mcp.servers import McpServers, ServerStatus
from seam.plugins.mcp.spec import ServerSpec
from seam.wiring.default_tools import DefaultGets
from seam.wiring.guard import APPROVALS_FILE
from seam.wiring.settings import ConfigError, McpServerSection, Settings, load_settings

__all__ = [
    "MCP_TOOLS",
    "McpServers",
    "PromptError",
    "ServerStatus",
    "build_mcp",
    "command_text",
    "default_gets_mcp",
    "is_command",
    "parse_command",
    "reload_mcp",
    "runtime_servers",
    "server_specs",
]

_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def expand(value: str, env: Mapping[str, str]) -> tuple[str, list[str]]:
    """`value` with `$VAR` / `${VAR}` replaced from `env`, and the names that were unset
    (`$$` stays a literal `$`)."""
    missing: list[str] = []

    def one(match: re.Match[str]) -> str:
        name = match.group(1) or match.group(2)
        if name not in env:
            missing.append(name)
            return ""
        return env[name]

    parts = value.split("$$")
    return "$".join(_VAR.sub(one, part) for part in parts), missing


def server_spec(name: str, section: McpServerSection, settings: Settings) -> ServerSpec:
    env, headers, missing = {}, {}, []
    for key, raw in section.env.items():
        env[key], unset = expand(raw, settings.env)
        missing += [f"env {key}: ${var}" for var in unset]
    for key, raw in section.headers.items():
        headers[key], unset = expand(raw, settings.env)
        missing += [f"header {key}: ${var}" for var in unset]
    problem = ""
    if missing:
        problem = "not set in Seam's environment: " + ", ".join(missing)
    return ServerSpec(
        name=name,
        command=tuple(section.command or ()),
        url=section.url or "",
        env=env,
        headers=headers,
        allow=tuple(section.tools.allow),
        deny=tuple(section.tools.deny),
        approval=section.approval,
        connect_timeout=section.connect_timeout,
        call_timeout=section.call_timeout,
        cwd=section.cwd or str(settings.working_dir),
        errlog=str(settings.home / "logs" / f"mcp-{name}.log"),
        problem=problem,
    )


def server_specs(settings: Settings) -> list[ServerSpec]:
    servers = settings.config.mcp.servers
    return [server_spec(name, servers[name], settings) for name in sorted(servers)]


def build_mcp(settings: Settings | None, *, configured: bool = True) -> McpServers:
    """The configured servers (none with `configured=False`), none started yet (an empty
    set still takes `/mcp reload`). `always` / `always_deny` answers for their tools are
    kept where the command guard keeps its own: `$SEAM_HOME/approvals.json`."""
    if settings is None:
        return McpServers()
    specs = server_specs(settings) if configured else []
    return McpServers(specs, standing=SavedAnswers(settings.home / APPROVALS_FILE))


@dataclass(frozen=True)
class SavedAnswers:
    """The guard's `ApprovalCache` on `path`, opened on first use: a damaged file then
    refuses the MCP calls that need an answer (saying why) instead of stopping start-up."""

    path: Path

    @cached_property
    def _answers(self) -> ApprovalCache:
        """Opened on first use; an error is raised again by every use (nothing cached)."""
        return ApprovalCache(self.path)

    def is_denied(self, command: str) -> bool:
        return self._answers.is_denied(command)

    def is_approved(self, session_key: str, command: str) -> bool:
        return self._answers.is_approved(session_key, command)

    def cache(self, session_key: str, command: str, decision: ApprovalDecision) -> None:
        self._answers.cache(session_key, command, decision)


def runtime_servers(runtime: Any) -> McpServers | None:
    """The MCP servers a runtime was built with; None when it was built without."""
    servers = getattr(runtime, "mcp", None)
    return servers if isinstance(servers, McpServers) else None


async def reload_mcp(runtime: Any) -> list[str]:
    """`/mcp reload`: read the config again and apply its `[mcp]` section."""
    servers = runtime_servers(runtime)
    if servers is None:
        return ["this runtime was built without MCP servers; start it from the config"]
    settings = runtime.settings
    try:
        fresh = (
            load_settings(settings.env, home=settings.home, working_dir=settings.working_dir)
            if settings is not None
            else load_settings()
        )
    except ConfigError as exc:
        return [f"not reloaded: {exc}"]
    changes = await servers.reload(server_specs(fresh))
    return changes or ["no changes"]


MCP_TOOLS = "mcp__*"


def default_gets_mcp(inner: PersonalityRegistry) -> DefaultGets:
    """The default personality gets every MCP tool; others only what their `toolset` names."""
    return DefaultGets(inner, (MCP_TOOLS,))
