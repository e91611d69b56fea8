"""`run_turn`: what one CLI turn leaves behind when it ends."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from seam.apps.cli.runner import run_turn
from seam.contracts.events import ToolApprovalRequired
from seam.contracts.guardrail import ApprovalDecision
from seam.contracts.tools import ToolContext
from seam.core.execution import InMemoryExecutionStore
from seam.core.loop import LoopOptions
from seam.core.scripted_model import ScriptedModel, call, text_step, tool_step
from seam.core.tool_registry import DefaultToolRegistry
from seam.wiring import assemble_runtime


class AskFirst:
    name = "danger"
    description = "needs approval"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
    concurrent = False
    idempotent = False

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        assert ctx.approvals is not None
        decision = await ctx.approvals.request(
            call_id=ctx.call_id, tool=self.name, command="rm -r build", reason="delete"
        )
        return f"decision: {decision}"


async def test_an_unanswered_approval_prompt_ends_with_its_turn() -> None:
    tools = DefaultToolRegistry()
    tools.register_tool(AskFirst())
    runtime = assemble_runtime(
        model=ScriptedModel([tool_step(call("danger")), text_step("denied, fine")]),
        tools=tools,
        store=InMemoryExecutionStore(),
        options=LoopOptions(approval_timeout=0.05),  # nobody answers: the loop denies
    )
    prompts: list[str] = []

    async def approve(event: ToolApprovalRequired) -> ApprovalDecision:
        prompts.append("asking")
        try:
            await asyncio.Event().wait()  # a prompt the person never answers
        except asyncio.CancelledError:
            prompts.append("taken down")
            raise
        return "once"

    try:
        result = await run_turn(
            runtime,
            runtime.session_key_for("main"),
            "clean up",
            personality=None,
            on_event=lambda e: None,
            approve=approve,
        )
    finally:
        await runtime.aclose()
    assert result.done is not None and result.done.text == "denied, fine"
    assert result.submission is not None and result.submission.outcome == "completed"
    # The next prompt (the chat's next message) must not compete with a stale one.
    assert prompts == ["asking", "taken down"]
