"""Tools as the runtime runs them: arguments checked against the schema before `run`."""

from __future__ import annotations

from seam.contracts.tools import Tool
from seam.core.tool_registry import CheckedTool
from seam.plugins.tools.arguments import JsonSchemaValidator

VALIDATOR = JsonSchemaValidator()


def checked(tool: Tool) -> Tool:
    """`tool` wrapped the way `build_tool_registry` wraps every tool it builds."""
    return CheckedTool(tool, VALIDATOR)
