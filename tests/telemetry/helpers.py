"""Tools and span helpers shared by the tracing tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from seam.contracts.tools import ToolContext
from seam.core.tool_registry import DefaultToolRegistry


class Crash(BaseException):
    """Stands for the process dying mid-tool: nothing below the test catches it, so the
    submission stays claimed and running, as after a SIGKILL."""


class NamedTool:
    def __init__(self, name: str, *, crash: bool = False, idempotent: bool = False) -> None:
        self.name = name
        self.description = f"{name} for tests"
        self.parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
        self.concurrent = False
        self.idempotent = idempotent
        self.crash = crash
        self.runs = 0

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        self.runs += 1
        if self.crash:
            raise Crash()
        return f"{self.name} ran"


def registry(*tools: NamedTool) -> DefaultToolRegistry:
    out = DefaultToolRegistry()
    for tool in tools:
        out.register_tool(tool)
    return out


def by_name(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def parent_id(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None
