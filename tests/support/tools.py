"""Tools as the runtime runs them: arguments checked against the schema before `run`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seam.contracts.tools import Tool, ToolContext
from seam.core.tool_registry import CheckedTool
from seam.plugins.tools.arguments import JsonSchemaValidator

VALIDATOR = JsonSchemaValidator()


def checked(tool: Tool) -> Tool:
    """`tool` wrapped the way `build_tool_registry` wraps every tool it builds."""
    return CheckedTool(tool, VALIDATOR)


class Echo:
    """A concurrent, idempotent tool that records and returns its text (`echo: …`)."""

    name = "echo"
    description = "echo the text back"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {"text": {"type": "string"}}}
    concurrent = True
    idempotent = True

    def __init__(self) -> None:
        self.runs: list[str] = []

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        self.runs.append(str(args.get("text", "")))
        return f"echo: {args.get('text', '')}"
