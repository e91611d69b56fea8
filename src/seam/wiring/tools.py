"""The tool-registry builder: the one place that knows every built-in tool module."""

from __future__ import annotations

from collections.abc import Iterable

from seam.contracts.sessions import SessionStore
from seam.contracts.tools import ArgumentValidator, Tool
from seam.core.tool_registry import DefaultToolRegistry
from seam.plugins.tools.arguments import JsonSchemaValidator
from seam.plugins.tools.extra import register_extra_tools
from seam.plugins.tools.files import register_file_tools
from seam.plugins.tools.memory import register_memory_tool
from seam.plugins.tools.session_search import register_session_search_tool
from seam.plugins.tools.shell import register_shell_tools
from seam.plugins.tools.subagents import register_subagent_tools


def build_tool_registry(
    tools: Iterable[Tool] = (),
    *,
    sessions: SessionStore | None = None,
    workflows: bool = False,
    validator: ArgumentValidator | None = None,
) -> DefaultToolRegistry:
    """Built-ins, then static tools (wrapped as context-free factories).

    `sessions` is what `session_search` searches (without it the tool says it is not
    configured, so listings still show every built-in). `workflows`: some workflow is
    registered, so the `workflow` tool is offered. Every tool's arguments are checked
    against its JSON Schema before it runs (`validator`, default `JsonSchemaValidator`)."""
    registry = DefaultToolRegistry(validator=validator or JsonSchemaValidator())
    register_file_tools(registry)
    register_shell_tools(registry)
    register_extra_tools(registry)
    register_memory_tool(registry)
    register_session_search_tool(registry, sessions)
    register_subagent_tools(registry, workflows=workflows)
    for tool in tools:
        registry.register_tool(tool)
    return registry
