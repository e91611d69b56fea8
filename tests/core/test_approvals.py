"""Approval requests travel through the event stream and back through `respond()`."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from seam.contracts import ToolApprovalRequired, ToolApprovalResponse, ToolContext, ToolEnd
from seam.core import AgentLoop, DefaultToolRegistry, LoopOptions, ScriptedModel
from seam.core.scripted_model import call, text_step, tool_step


class AskFirst:
    name = "danger"
    description = "does something that needs approval"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
    concurrent = False
    idempotent = False

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        assert ctx.approvals is not None
        decision = await ctx.approvals.request(
            call_id=ctx.call_id, tool=self.name, command="rm -r build", reason="recursive delete"
        )
        return f"decision: {decision}"


def agent(timeout: float = 5.0) -> AgentLoop:
    tools = DefaultToolRegistry()
    tools.register_tool(AskFirst())
    model = ScriptedModel([tool_step(call("danger")), text_step("ok")])
    return AgentLoop(model=model, tools=tools, options=LoopOptions(approval_timeout=timeout))


async def test_the_consumer_answers_an_approval_request() -> None:
    loop = agent()
    events = []
    async for event in loop.run("s", "clean up"):
        events.append(event)
        if isinstance(event, ToolApprovalRequired):
            assert (event.name, event.command, event.reason) == (
                "danger",
                "rm -r build",
                "recursive delete",
            )
            assert loop.respond("s", event.call_id, "once")
    answer = next(e for e in events if isinstance(e, ToolApprovalResponse))
    assert answer.decision == "once"
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.result == "decision: once"
    names = [e.type for e in events]
    assert names.index("tool_approval_required") < names.index("tool_approval_response")
    assert names.index("tool_approval_response") < names.index("tool_end")


async def test_no_answer_in_time_means_no_one_was_there() -> None:
    loop = agent(timeout=0.05)
    events = await asyncio.wait_for(_collect(loop), 5)
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.result == "decision: unavailable"  # refused, but nobody said no


async def test_respond_to_nothing_is_false() -> None:
    assert agent().respond("s", "call_x", "once") is False


async def _collect(loop: AgentLoop) -> list[Any]:
    return [e async for e in loop.run("s", "go")]
