"""A cron run whose worker died mid-tool-call is resumed with repair (the unresolved
call gets an "outcome unknown" result), never re-executed, and its reply is delivered
once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from seam.contracts.execution import ClaimScope, JournalEntry
from seam.contracts.messages import Message
from seam.contracts.tools import ToolContext
from seam.core.cron import InMemoryCronStore
from seam.core.scripted_model import ScriptedModel, call, text_step
from seam.core.tool_registry import DefaultToolRegistry
from seam.plugins.cron.admin import CronAdmin, ScheduleSpec
from seam.plugins.cron.scheduler import CronScheduler
from seam.wiring import assemble_runtime
from seam.wiring.cron import RuntimeSubmitter

from .helpers import Clock, RecordingDelivery


class RestartTool:
    """`docker restart`, as in hermes-agent #49201: running it twice is the bug."""

    name = "restart_service"
    description = "restart the service"
    parameters: Mapping[str, Any] = {"type": "object", "properties": {}}
    concurrent = False
    idempotent = False

    def __init__(self) -> None:
        self.runs = 0

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        self.runs += 1
        return "restarted"


def crashed(owners: Sequence[str]) -> list[str]:
    return [o for o in owners if o.startswith("crashed")]


async def test_a_run_killed_mid_tool_call_is_repaired_not_re_run() -> None:
    clock = Clock()
    tool = RestartTool()
    registry = DefaultToolRegistry()
    registry.register_tool(tool)
    model = ScriptedModel([text_step("The restart's outcome is unknown; check the service.")])
    runtime = assemble_runtime(model=model, tools=registry, dead_owners=crashed)
    delivery = RecordingDelivery()
    store = InMemoryCronStore(clock=clock)
    scheduler = CronScheduler(store, RuntimeSubmitter(runtime), delivery, clock=clock)
    job = await CronAdmin(store, clock=clock).add(
        "restart the service", ScheduleSpec(every="1d"), deliver="owner"
    )
    [run] = await scheduler.tick()

    # A worker claimed the run, the model asked for the restart, the worker died before
    # the tool's result was saved.
    execution = runtime.store
    assert (
        await execution.claim("crashed-worker", scope=ClaimScope(submission_id=run.submission_id))
        is not None
    )
    restart = call("restart_service", {})
    await execution.append_for(
        run.submission_id,
        "crashed-worker",
        JournalEntry(
            [Message("user", job.prompt), Message("assistant", "", tool_calls=(restart,))]
        ),
    )

    await runtime.resume_pending()
    await scheduler.tick()
    await scheduler.tick()

    assert tool.runs == 0
    key = runtime.session_key_for(run.session)
    messages = await execution.messages(key)
    [result] = [m for m in messages if m.role == "tool"]
    assert result.tool_call_id == restart.id and "outcome unknown" in result.content
    assert delivery.to("owner") == ["The restart's outcome is unknown; check the service."]
    [stored] = await store.runs(job.id)
    assert (stored.outcome, stored.delivery) == ("completed", "queued")
