"""How a tool asks for approval, and what everyone is told when no one could answer.

`cron`, `skill_write` and MCP tools that may write all ask the same way: `ask_person`,
through the turn's `Approver`. No approver, an `unavailable` answer (a pipe, a worker, a
cron job, a heartbeat) or silence until `APPROVAL_TIMEOUT` all mean one thing: no one was
there to approve, so nothing ran. That is never reported as the person's "no": the model
would apologise for a refusal nobody made, and the person would not learn how to allow it.
`nobody_there` is that one sentence, shared with the command gate, so every tool, surface
and the model read the same words.
"""

from __future__ import annotations

import asyncio

from seam.contracts.guardrail import UNAVAILABLE, ApprovalDecision
from seam.contracts.tools import ToolContext, ToolError

APPROVAL_TIMEOUT = 300.0  # seconds; silence means no one was there to answer

# Where a person can answer, or how a script answers for them.
HOW_TO_ALLOW = (
    "To allow it: pass --yes to seam run, or ask where a person can answer"
    " (seam chat, the web page, a paired chat)"
)


def nobody_there(what: str, *, also: str = "") -> str:
    """The refusal when no one could approve `what` (e.g. "skill_write create /x/SKILL.md"):
    it did not run, nobody refused it, and how to allow it (`also`: another way, such as a
    config entry, given only by a caller it would help)."""
    how = f"{HOW_TO_ALLOW}, or {also}" if also else HOW_TO_ALLOW
    return (
        f"refused: no one was available to approve {what}, so it did not run; this is not"
        f" a refusal by the person. {how}."
    )


async def ask_person(ctx: ToolContext, *, tool: str, command: str, reason: str) -> ApprovalDecision:
    """The person's answer to "may `tool` run `command`?" (`reason` says why it asks).

    Raises ToolError with `nobody_there` when no one could answer (no approver, an
    `unavailable` answer, no answer in time): the caller only decides what a real answer
    allows."""
    if ctx.approvals is None:
        raise ToolError(nobody_there(command))
    try:
        async with asyncio.timeout(APPROVAL_TIMEOUT):
            answer = await ctx.approvals.request(
                call_id=ctx.call_id, tool=tool, command=command, reason=reason
            )
    except TimeoutError:
        raise ToolError(nobody_there(command)) from None
    if answer == UNAVAILABLE:
        raise ToolError(nobody_there(command))
    return answer


__all__ = ["APPROVAL_TIMEOUT", "HOW_TO_ALLOW", "ask_person", "nobody_there"]
