"""The `cron` tool: the agent schedules work for the person (add, list, pause, resume,
remove jobs).

A job outlives the conversation and acts on its own later, so changing one is treated
like a write: it needs the person's approval in the personality's approval mode (asked
through `ToolContext.approvals`; mode "off" asks nobody). Listing and pausing are free.
The schedule and the delivery target get the same checks as `seam cron add`, made by the
`CronJobs` handed in (wiring's `CronAdmin`), so a job that could never run is refused now,
with the reason, for the model to fix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from seam.contracts.cron import CronJob, JobDraft
from seam.contracts.guardrail import APPROVING
from seam.contracts.tool_approval import ask_person
from seam.contracts.tool_spec import SpecTool, ToolSpec
from seam.contracts.tools import ToolContext, ToolError, ToolRegistry

ACTIONS = ("add", "list", "pause", "resume", "remove")


class CronJobs(Protocol):
    async def prepare_job(self, draft: JobDraft) -> CronJob:
        """The job as it would be stored, checked (schedule, zone, target); raises
        ValueError (one line) for anything that cannot be scheduled. Stores nothing."""
        ...

    async def save_job(self, job: CronJob) -> CronJob: ...

    async def list(self) -> list[CronJob]: ...

    async def pause(self, job_id: str) -> CronJob: ...

    async def resume(self, job_id: str) -> CronJob: ...

    async def remove(self, job_id: str) -> bool: ...

    async def job(self, job_id: str) -> CronJob: ...


def describe_job(job: CronJob) -> str:
    state = "paused" if job.paused else "active"
    return (
        f"{job.id}: {state}, {job.schedule} ({job.tz}), delivers to {job.deliver},"
        f" prompt {job.prompt[:80]!r}"
    )


class CronTool(SpecTool):
    spec = ToolSpec(
        name="cron",
        description=(
            "Schedule work for the person: action=add with a prompt and one of every (30m, 2h,"
            " 1d), cron (5 fields, with tz) or at (ISO time, once); deliver is owner,"
            " telegram:<chat>, file:<name>, a webhook URL or none. Also list, pause, resume,"
            " remove (by job_id). Adding, resuming and removing need the person's approval."
        ),
        arguments={
            "action": {"type": "string", "enum": list(ACTIONS)},
            "prompt": {"type": "string", "description": "what to ask at each run"},
            "every": {"type": "string"},
            "cron": {"type": "string"},
            "at": {"type": "string"},
            "tz": {"type": "string", "description": "IANA zone, e.g. Europe/Berlin"},
            "deliver": {"type": "string"},
            "missed": {"type": "string", "enum": ["skip", "catch_up_once"]},
            "job_id": {"type": "string"},
        },
        required=("action",),
    )

    def __init__(self, jobs: CronJobs) -> None:
        self.jobs = jobs

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        action = str(args["action"])
        if action == "list":
            jobs = await self.jobs.list()
            return "\n".join(describe_job(j) for j in jobs) if jobs else "no cron jobs"
        if action == "add":
            return await self._add(args, ctx)
        job_id = str(args.get("job_id") or "").strip()
        if not job_id:
            raise ToolError(f"{action} needs job_id (see action=list)")
        try:
            job = await self.jobs.job(job_id)
            if action == "pause":
                return "paused " + describe_job(await self.jobs.pause(job_id))
            await self._approve(ctx, f"cron {action} {job_id}", describe_job(job))
            if action == "resume":
                return "resumed " + describe_job(await self.jobs.resume(job_id))
            await self.jobs.remove(job_id)
            return f"removed cron job {job_id}"
        except KeyError as exc:
            raise ToolError(str(exc.args[0] if exc.args else exc)) from None

    async def _add(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        prompt = str(args.get("prompt") or "").strip()
        if not prompt:
            raise ToolError("add needs a prompt: what to ask at each run")
        given = {k: str(args[k]).strip() for k in ("every", "cron", "at") if args.get(k)}
        if len(given) != 1:
            raise ToolError("add needs exactly one of every, cron or at")
        [(kind, when)] = given.items()
        deliver = str(args.get("deliver") or "owner")
        tz = str(args.get("tz") or "UTC")
        try:
            draft = JobDraft(
                prompt,
                every=given.get("every"),
                cron=given.get("cron"),
                at=given.get("at"),
                tz=tz,
                deliver=deliver,
                personality=ctx.personality_id or None,
                missed=str(args.get("missed") or "skip"),
            )
            job = await self.jobs.prepare_job(draft)
        except ValueError as exc:
            raise ToolError(f"cannot schedule that: {exc}") from None
        await self._approve(
            ctx,
            f"cron add --{kind} {when!r} --tz {job.tz} --deliver {job.deliver} {prompt!r}",
            "a job that runs on its own later, without asking again",
        )
        return "scheduled " + describe_job(await self.jobs.save_job(job))

    async def _approve(self, ctx: ToolContext, command: str, reason: str) -> None:
        if ctx.approval_mode == "off":
            return
        answer = await ask_person(
            ctx,
            tool=self.name,
            command=command,
            reason=reason,
        )
        if answer not in APPROVING:
            raise ToolError("refused: the person denied the cron change")


def register_cron_tool(registry: ToolRegistry, jobs: CronJobs) -> None:
    registry.register("cron", lambda ctx: CronTool(jobs))
