"""`ask_person`: how a tool that changes things outside the turn asks for approval.

`cron`, `skill_write` and MCP tools that may write all ask the same way: through the
turn's `Approver`, refusing when there is nobody to ask, and treating silence for
`APPROVAL_TIMEOUT` as a deny. One function, so the three cannot drift apart on what a
missing approver or an unanswered question means.
"""

from __future__ import annotations

import asyncio

from seam.contracts.guardrail import ApprovalDecision
from seam.contracts.tools import ToolContext, ToolError

APPROVAL_TIMEOUT = 300.0  # seconds; silence is a deny


async def ask_person(
    ctx: ToolContext, *, tool: str, command: str, reason: str, nobody: str
) -> ApprovalDecision:
    """The person's answer to "may `tool` run `command`?" (`reason` says why it asks).
    ToolError with the message `nobody` when there is nobody to ask, and a deny when
    nobody answers in time; the caller decides what the answer allows."""
    if ctx.approvals is None:
        raise ToolError(nobody)
    try:
        async with asyncio.timeout(APPROVAL_TIMEOUT):
            return await ctx.approvals.request(
                call_id=ctx.call_id, tool=tool, command=command, reason=reason
            )
    except TimeoutError:
        raise ToolError("refused: no answer to the approval request (a deny)") from None
