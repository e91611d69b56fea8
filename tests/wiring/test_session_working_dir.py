"""A session's own working directory (`Runtime.set_working_dir`): its tools, and its
subagents' tools, work there; other sessions keep the runtime's."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seam.contracts.tools import ToolContext
from seam.core import ScriptedModel, call, text_step, tool_step
from seam.wiring.runtime import assemble_runtime
from seam.wiring.tools import build_tool_registry


class Where:
    """Records where each call ran."""

    name = "where"
    description = "Say where you are."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
    concurrent = False
    idempotent = True

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        self.seen.append((ctx.session_key, ctx.working_dir))
        return ctx.working_dir


async def test_tools_and_subagents_work_in_the_sessions_own_directory() -> None:
    where = Where()
    model = ScriptedModel(
        [
            tool_step(call("delegate_task", task="where are you?")),  # session a
            tool_step(call("where")),  # its subagent
            text_step("child done"),
            tool_step(call("where")),  # session a again
            text_step("a done"),
            tool_step(call("where")),  # session b
            text_step("b done"),
        ]
    )
    runtime = assemble_runtime(
        model=model, tools=build_tool_registry([where]), working_dir="/start"
    )
    async with runtime:
        runtime.set_working_dir("a", "/projects/a")
        assert (await runtime.ask("a", "go")).result == "a done"
        assert (await runtime.ask("b", "go")).result == "b done"
        runtime.set_working_dir("a", None)
    a, b = runtime.session_key_for("a"), runtime.session_key_for("b")
    [(child, child_dir), *rest] = where.seen
    assert (
        child.startswith('agent-session:["local","default","task:a:') and child_dir == "/projects/a"
    )
    assert rest == [(a, "/projects/a"), (b, "/start")]
    assert runtime.loop.working_dir_for(a) == "/start"
