"""The `memory` tool: the model's way to write MEMORY.md and USER.md.

All the rules (limits, duplicates, unique matches, injection and secret refusal) live in
the memory backend, so the CLI and the tool cannot drift apart; the tool meets it through
the `EditableMemory` contract. The reply says that a write shows only from the next
session: the current prompt is frozen on purpose.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seam.contracts.memory import MEMORY_TARGETS, EditableMemory, MemoryEntryError
from seam.contracts.tool_spec import SpecTool, ToolSpec
from seam.contracts.tools import ToolContext, ToolError, ToolRegistry

ACTIONS = ("add", "replace", "remove")
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


def register_memory_tool(registry: ToolRegistry) -> None:
    registry.register_tool(MemoryTool())
