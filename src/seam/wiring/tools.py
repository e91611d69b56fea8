"""The tool-registry builder: the one place that knows every built-in tool module."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from seam.contracts.sessions import SessionStore
from seam.contracts.tools import ArgumentValidator, ForeignSchema, Tool, ToolSource
from seam.core.tool_registry import DefaultToolRegistry
from seam.plugins.safety import injection
from seam.plugins.skills.catalog import SkillCatalog
from seam.plugins.skills.tools import register_skill_tools
from seam.plugins.tools.arguments import JsonSchemaValidator
from seam.plugins.tools.cron import CronJobs, register_cron_tool
from seam.plugins.tools.extra import register_extra_tools
from seam.plugins.tools.files import register_file_tools
from seam.plugins.tools.memory import register_memory_tool
from seam.plugins.tools.session_search import register_session_search_tool
from seam.plugins.tools.shell import register_shell_tools
from seam.plugins.tools.subagents import register_subagent_tools
from seam.wiring.memory import memory_searches

if TYPE_CHECKING:
    from seam.contracts.session_recall import SessionRecall


def build_tool_registry(
    tools: Iterable[Tool] = (),
    *,
    sessions: SessionStore | None = None,
    recall: Callable[[], SessionRecall] | None = None,
    workflows: bool = False,
    validator: ArgumentValidator | None = None,
    sources: Iterable[ToolSource] = (),
    skills: SkillCatalog | None = None,
    cron: CronJobs | None = None,
    allow_private: Collection[str] = (),
    memory_recall: bool = True,
) -> DefaultToolRegistry:
    """Built-ins, then static tools (wrapped as context-free factories).

    `sessions` is what `session_search` searches (without it the tool says it is not
    configured, so listings still show every built-in); `recall` builds its search by
    words and meaning on first use (None: full text). `workflows`: some workflow is
    registered, so the `workflow` tool is offered. Every tool's arguments are checked
    against its JSON Schema before it runs (`validator`, default `JsonSchemaValidator` for
    our own schemas and an interpreting one for `ForeignSchema`s). `sources` add tools
    known at run time (MCP servers). `skills`: the Agent Skills catalog `skill_view` and
    `skill_write` serve (without it neither is offered). `cron`: the jobs the `cron` tool
    schedules (without it the tool is not offered). `allow_private`: the non-public
    hosts, addresses or networks `web_fetch` may reach (`[network] allow_private`).
    `memory_recall`: `memory_search` adds search by meaning to full text (`[recall] enabled`)."""
    registry = DefaultToolRegistry(validator=validator or ByOrigin(JsonSchemaValidator()))
    register_file_tools(registry)
    register_shell_tools(registry)
    register_extra_tools(registry, web_allowed=allow_private)
    register_memory_tool(registry, memory_searches(memory_recall), injection)
    register_session_search_tool(registry, sessions, recall)
    register_subagent_tools(registry, workflows=workflows)
    if skills is not None:
        register_skill_tools(registry, skills)
    if cron is not None:
        register_cron_tool(registry, cron)
    for tool in tools:
        registry.register_tool(tool)
    for source in sources:
        registry.add_source(source)
    return registry


class ByOrigin:
    """Our tools' schemas go to `own` (compiled); a `ForeignSchema` (from an MCP server)
    is interpreted, never compiled into code."""

    def __init__(self, own: ArgumentValidator) -> None:
        self._own = own
        self._foreign: ArgumentValidator | None = None

    def validate(self, schema: Mapping[str, Any], args: Mapping[str, Any]) -> Mapping[str, Any]:
        if not isinstance(schema, ForeignSchema):
            return self._own.validate(schema, args)
        if self._foreign is None:
            from seam.plugins.mcp.schema import InterpretingValidator

            self._foreign = InterpretingValidator()
        return self._foreign.validate(schema, args)
