"""The default tool registry: name -> factory, built per session context."""

from __future__ import annotations

from collections.abc import Sequence

from seam.contracts.model import ToolDefinition
from seam.contracts.tools import Tool, ToolContext, ToolFactory


class DefaultToolRegistry:
    """Registration order is irrelevant: definitions are sorted by name for cache stability."""

    def __init__(self) -> None:
        self._factories: dict[str, ToolFactory] = {}
        self._definitions: dict[int, ToolDefinition] = {}

    def register(self, name: str, factory: ToolFactory) -> None:
        if name in self._factories:
            raise ValueError(f"tool {name!r} is already registered")
        self._factories[name] = factory

    def register_tool(self, tool: Tool) -> None:
        """A static tool: wrapped as a context-free factory."""

        def static(ctx: ToolContext) -> Tool:
            return tool

        self.register(tool.name, static)

    def names(self) -> list[str]:
        return sorted(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories

    def build(self, names: Sequence[str] | None, ctx: ToolContext) -> list[Tool]:
        factories = self._factories
        wanted = sorted(factories) if names is None else names
        return [factories[n](ctx) for n in wanted if n in factories]

    def definitions(self, tools: Sequence[Tool]) -> list[ToolDefinition]:
        cache = self._definitions
        out: list[ToolDefinition] = []
        for tool in sorted(tools, key=_tool_name):
            definition = cache.get(id(tool))
            if definition is None or definition.name != tool.name:
                definition = ToolDefinition(tool.name, tool.description, tool.parameters)
                if len(cache) > 4096:
                    cache.clear()
                cache[id(tool)] = definition
            out.append(definition)
        return out


def _tool_name(tool: Tool) -> str:
    return tool.name
