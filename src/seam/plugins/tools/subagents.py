"""`delegate_task` and `workflow`: tools that run other sessions.

Both go through the session's `Subagents` (built by the `SessionFactory`), so a child is
a durable session like any other: its own transcript, lineage back to the parent, and a
submission that a restarted process finishes. The task id comes from the model's call
id, so a resumed parent that repeats the call gets the stored answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seam.contracts.tool_spec import SpecTool, ToolSpec
from seam.contracts.tools import ChildSetup, Subagents, ToolContext, ToolError, ToolRegistry


def _subagents(ctx: ToolContext) -> Subagents:
    if ctx.subagents is None:
        raise ToolError("this session cannot start subagents")
    return ctx.subagents


class DelegateTask(SpecTool):
    spec = ToolSpec(
        name="delegate_task",
        description=(
            "Hand a self-contained task to a subagent with a fresh context and get its final "
            "answer back. Write the task so it can be done without this conversation."
        ),
        arguments={
            "task": {"type": "string", "description": "What to do, with all needed context."},
            "personality": {"type": "string", "description": "Optional personality id."},
        },
        required=("task",),
        # Several delegations in one step run side by side. Running the call again after a
        # crash is safe by construction: the child's session and submission ids derive from
        # the call id, so a repeat returns the child's stored answer or finishes its pending
        # turn (with the child's own repairs) instead of starting the task over.
        concurrent=True,
        idempotent=True,
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        # Types are checked against the schema before `run`; blank text here.
        task: str = args["task"]
        if not task.strip():
            raise ToolError("argument 'task' must not be empty")
        personality: str | None = args.get("personality") or None
        subagents = _subagents(ctx)
        return await subagents.delegate(
            task, task_id=ctx.call_id or "task", setup=ChildSetup(personality)
        )


class RunWorkflow(SpecTool):
    spec = ToolSpec(
        name="workflow",
        description="Run a registered multi-step workflow on an input and return its output.",
        arguments={
            "name": {"type": "string", "description": "The workflow's name."},
            "input": {"type": "string", "description": "The workflow's input."},
        },
        required=("name", "input"),
        concurrent=True,
        # Each node's submission id derives from the call id too: a repeat resumes the run.
        idempotent=True,
    )

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        name: str = args["name"]
        text: str = args["input"]
        subagents = _subagents(ctx)
        known = subagents.workflow_names()
        if name not in known:
            raise ToolError(f"no workflow {name!r}; registered: {', '.join(known) or 'none'}")
        return await subagents.run_workflow(name, text, run_id=ctx.call_id or "run")


def register_subagent_tools(registry: ToolRegistry, *, workflows: bool = False) -> None:
    """`delegate_task` always; `workflow` only when some workflow is registered."""
    registry.register_tool(DelegateTask())
    if workflows:
        registry.register_tool(RunWorkflow())
