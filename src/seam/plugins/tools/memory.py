"""The `memory` tool: the model's way to write MEMORY.md and USER.md.

All the rules (limits, duplicates, unique matches, injection and secret refusal) live in
the memory backend, so the CLI and the tool cannot drift apart; the tool meets it through
the `EditableMemory` contract. The reply says that a write shows only from the next
session: the current prompt is frozen on purpose.

`memory_search` finds entries by words and by meaning; its spec is here so listing the
tools loads nothing more, and its work (`memory_search.py`, the search, the embedder)
loads on its first call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from seam.contracts.memory import MEMORY_TARGETS, EditableMemory, MemoryEntryError, MemoryProvider
from seam.contracts.scanning import NO_INJECTION_SCANNER, InjectionScanner
from seam.contracts.tool_spec import SpecTool, ToolSpec, positive_integer
from seam.contracts.tools import ToolContext, ToolError, ToolRegistry

if TYPE_CHECKING:
    from seam.contracts.memory_search import MemorySearch

ACTIONS = ("add", "replace", "remove")
SEARCH_LIMIT = 5
SEARCH_MAX = 20
_DONE = {"add": "added", "replace": "replaced", "remove": "removed"}


def _needed(args: Mapping[str, Any], name: str, action: str) -> str:
    """An argument this action needs (the schema cannot say which action needs which)."""
    value: str | None = args.get(name)
    if value is None:
        raise ToolError(f"action {action!r} needs the argument {name!r}")
    return value


class MemoryTool(SpecTool):
    spec = ToolSpec(
        name="memory",
        description=(
            "Save lasting notes across sessions. target 'memory': what you learned (facts, "
            "conventions, lessons); 'user': about the person (preferences, context). Keep entries "
            "short; no secrets. replace/remove pick the entry containing `match`."
        ),
        arguments={
            "action": {"type": "string", "enum": list(ACTIONS)},
            "target": {"type": "string", "enum": list(MEMORY_TARGETS)},
            "content": {"type": "string", "description": "The entry (add, replace)."},
            "match": {
                "type": "string",
                "description": "Unique substring of the entry to change (replace, remove).",
            },
        },
        required=("action", "target"),
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        memory = ctx.memory
        if not isinstance(memory, EditableMemory):
            raise ToolError("memory is not configured")
        # `action` and `target` are checked against the schema's enums before `run`.
        action: str = args["action"]
        target = args["target"]
        try:
            if action == "add":
                usage = memory.add(target, _needed(args, "content", action))
            elif action == "replace":
                match = _needed(args, "match", action)
                usage = memory.replace(target, match, _needed(args, "content", action))
            else:
                usage = memory.remove(target, _needed(args, "match", action))
        except MemoryEntryError as exc:
            raise ToolError(str(exc)) from None
        return f"{_DONE[action]} (in your prompt from the next session on). {usage}"


# What `memory_search` takes: the question in any words, and how many entries at most.
SEARCH_ARGUMENTS = {
    "query": {"type": "string", "description": "In any words."},
    "limit": {**positive_integer(f"Default {SEARCH_LIMIT}."), "maximum": SEARCH_MAX},
}


class MemorySearchTool(SpecTool):
    spec = ToolSpec(
        name="memory_search",
        description="Search your saved notes by words and meaning; best entries first.",
        arguments=SEARCH_ARGUMENTS,
        required=("query",),
        concurrent=True,
        idempotent=True,
    )

    def __init__(
        self,
        searches: Callable[[MemoryProvider], MemorySearch | None] | None = None,
        scanner: InjectionScanner = NO_INJECTION_SCANNER,
    ) -> None:
        """`searches`: the search over a session's memory (None when it has none that
        can be searched); `scanner` flags entries to fence as untrusted data."""
        self._searches = searches
        self._scanner = scanner

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        if self._searches is None:
            raise ToolError("memory search is not configured")
        from seam.plugins.tools.memory_search import run_search

        # Types and the limit's range are checked against the schema before `run`.
        limit = int(args.get("limit", SEARCH_LIMIT))
        return await run_search(self._searches, self._scanner, args["query"], limit, ctx.memory)


def register_memory_tool(
    registry: ToolRegistry,
    searches: Callable[[MemoryProvider], MemorySearch | None] | None = None,
    scanner: InjectionScanner = NO_INJECTION_SCANNER,
) -> None:
    """`memory`, and `memory_search` over `searches` (see `MemorySearchTool`)."""
    registry.register_tool(MemoryTool())
    registry.register_tool(MemorySearchTool(searches, scanner))
