"""The `memory` tool: the model's way to write MEMORY.md and USER.md.

All the rules (limits, duplicates, unique matches, injection and secret refusal) live in
the memory backend, so the CLI and the tool cannot drift apart. The reply says that a
write shows only from the next session: the current prompt is frozen on purpose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seam.contracts.tools import ToolContext, ToolError, ToolRegistry
from seam.plugins.memory.markdown import FILES, MarkdownMemory, MemoryEntryError

ACTIONS = ("add", "replace", "remove")


def _arg(args: Mapping[str, Any], name: str) -> str:
    value = args.get(name)
    if value is None or value == "":
        raise ToolError(f"missing required argument {name!r}")
    if not isinstance(value, str):
        raise ToolError(f"argument {name!r} must be a string, not {type(value).__name__}")
    return value


class MemoryTool:
    name = "memory"
    description = (
        "Save lasting notes across sessions. target 'memory': what you learned (facts, "
        "conventions, lessons); 'user': about the person (preferences, context). Keep entries "
        "short; no secrets. replace/remove pick the entry containing `match`."
    )
    parameters: Mapping[str, Any] = {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(ACTIONS)},
            "target": {"type": "string", "enum": list(FILES)},
            "content": {"type": "string", "description": "The entry (add, replace)."},
            "match": {
                "type": "string",
                "description": "Unique substring of the entry to change (replace, remove).",
            },
        },
        "required": ["action", "target"],
    }
    concurrent = False
    idempotent = False

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        memory = ctx.memory
        if not isinstance(memory, MarkdownMemory):
            raise ToolError("memory is not configured")
        action = _arg(args, "action")
        target = _arg(args, "target")
        if action not in ACTIONS:
            raise ToolError(f"unknown action {action!r}; use one of {', '.join(ACTIONS)}")
        if target not in FILES:
            raise ToolError(f"unknown target {target!r}; use memory or user")
        try:
            if action == "add":
                usage = memory.add(target, _arg(args, "content"))
            elif action == "replace":
                match, content = _arg(args, "match"), _arg(args, "content")
                usage = memory.replace(target, match, content)
            else:
                usage = memory.remove(target, _arg(args, "match"))
        except MemoryEntryError as exc:
            raise ToolError(str(exc)) from None
        done = {"add": "added", "replace": "replaced", "remove": "removed"}[action]
        return f"{done} (in your prompt from the next session on). {usage}"


def register_memory_tool(registry: ToolRegistry) -> None:
    registry.register_tool(MemoryTool())
