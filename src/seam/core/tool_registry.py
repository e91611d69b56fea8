"""The default tool registry: name -> factory, built per session context."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from seam.contracts.model import ToolDefinition
from seam.contracts.tools import (
    ArgumentError,
    ArgumentValidator,
    Tool,
    ToolContext,
    ToolError,
    ToolFactory,
    ToolSource,
)
from seam.core.read_through import ReadThrough

_GLOB = frozenset("*?[")

# Checked wrappers kept per built tool, so a static tool keeps one wrapper (and one cached
# definition) across turns; the cache is dropped whole when factories churn past this.
_MAX_CHECKED = 4096


class DefaultToolRegistry:
    """Registration order is irrelevant: definitions are sorted by name for cache stability.

    With a `validator`, every tool it builds checks its arguments against its own
    `parameters` before `run`: a call that breaks the schema fails with one message naming
    the argument, and the tool never runs. Without one (the empty stack), tools get the
    arguments as the model sent them.
    """

    def __init__(self, validator: ArgumentValidator | None = None) -> None:
        self._factories: dict[str, ToolFactory] = {}
        self._definitions: dict[int, ToolDefinition] = {}
        self._validator = validator
        # id(tool) -> (tool, its wrapper); holding the tool keeps its id from being reused.
        self._checked: dict[int, tuple[Tool, CheckedTool]] = {}
        self._sources: list[ToolSource] = []

    def register(self, name: str, factory: ToolFactory) -> None:
        if name in self._factories:
            raise ValueError(f"tool {name!r} is already registered")
        self._factories[name] = factory

    def register_tool(self, tool: Tool) -> None:
        """A static tool: wrapped as a context-free factory."""

        def static(ctx: ToolContext) -> Tool:
            return tool

        self.register(tool.name, static)

    def add_source(self, source: ToolSource) -> None:
        self._sources.append(source)

    async def prepare(self, names: Sequence[str] | None) -> None:
        """Let every source learn the tools `names` may ask for (sources never raise)."""
        for source in self._sources:
            await source.prepare(names)

    def names(self) -> list[str]:
        return sorted(self._all())

    def __contains__(self, name: object) -> bool:
        return name in self._all()

    def _all(self) -> Mapping[str, ToolFactory]:
        if not self._sources:
            return self._factories
        merged: dict[str, ToolFactory] | None = None
        for source in self._sources:
            found = source.factories()
            if not found:
                continue
            merged = dict(self._factories) if merged is None else merged
            for name, factory in found.items():
                merged.setdefault(name, factory)  # a built-in name is never shadowed
        return self._factories if merged is None else merged

    def build(self, names: Sequence[str] | None, ctx: ToolContext) -> list[Tool]:
        factories = self._all()
        wanted = sorted(factories) if names is None else expand(names, factories)
        made = (factories[n](ctx) for n in wanted if n in factories)
        built = [tool for tool in made if tool is not None]
        if self._validator is None:
            return built
        return [self._check(tool) for tool in built]

    def _check(self, tool: Tool) -> Tool:
        if isinstance(tool, CheckedTool):
            return tool
        known = self._checked.get(id(tool))
        if known is not None and known[0] is tool:
            return known[1]
        assert self._validator is not None
        checked = CheckedTool(tool, self._validator)
        if len(self._checked) >= _MAX_CHECKED:
            self._checked.clear()
        self._checked[id(tool)] = (tool, checked)
        return checked

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


class CheckedTool:
    """A tool whose `run` first checks the arguments against the tool's `parameters`.

    Everything else is the wrapped tool's own, read through, so a tool that changes its
    description or schema is seen as it is now. The error is an ordinary `ToolError`, so
    the model reads it like any other tool error: "invalid arguments for read_file:
    'offset' must be >= 1 (got 0)".
    """

    __slots__ = ("_validator", "tool")

    name: ReadThrough[str] = ReadThrough("tool")
    description: ReadThrough[str] = ReadThrough("tool")
    parameters: ReadThrough[Mapping[str, Any]] = ReadThrough("tool")
    concurrent: ReadThrough[bool] = ReadThrough("tool")
    idempotent: ReadThrough[bool] = ReadThrough("tool")

    def __init__(self, tool: Tool, validator: ArgumentValidator) -> None:
        self.tool = tool
        self._validator = validator

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        tool = self.tool
        try:
            args = self._validator.validate(tool.parameters, args)
        except ArgumentError as exc:
            raise ToolError(f"invalid arguments for {tool.name}: {exc}") from None
        except ValueError as exc:
            raise ToolError(
                f"{tool.name} cannot be called: its parameter schema is invalid ({exc})"
            ) from None
        return await tool.run(args, ctx)

    def __repr__(self) -> str:
        return f"CheckedTool({self.tool!r})"


def expand(names: Sequence[str], known: Mapping[str, object]) -> Sequence[str]:
    """`names` with each glob pattern replaced by the known names it matches (sorted),
    each name once; `names` itself when it has no pattern (the usual case)."""
    if not any(_GLOB.intersection(name) for name in names):
        return names
    out: dict[str, None] = {}
    for name in names:
        if _GLOB.intersection(name):
            out.update(dict.fromkeys(n for n in sorted(known) if fnmatchcase(n, name)))
        else:
            out[name] = None
    return list(out)


def _tool_name(tool: Tool) -> str:
    return tool.name
