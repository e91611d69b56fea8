"""The `cron` tool: the agent schedules for the person, with the checks `seam cron add`
makes and the person's approval for anything that persists."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from seam.contracts.tools import ToolContext, ToolError
from seam.core.cron import InMemoryCronStore
from seam.core.storage import InMemoryStorage
from seam.plugins.cron.admin import CronAdmin
from seam.plugins.tools.cron import CronTool

from .helpers import T0, Clock, RecordingDelivery


@dataclass
class Person:
    """Answers approval requests as a person at the surface would."""

    answer: str = "once"
    asked: list[str] = field(default_factory=list)

    async def request(self, *, call_id: str, tool: str, command: str, reason: str) -> str:
        self.asked.append(command)
        return self.answer


def setup(
    answer: str = "once", mode: str = "manual"
) -> tuple[CronTool, Person, CronAdmin, ToolContext]:
    store = InMemoryCronStore(clock=Clock())
    admin = CronAdmin(store, check_target=RecordingDelivery().check_target, clock=Clock())
    person = Person(answer)
    ctx = ToolContext(
        'agent-session:["local","default","main"]',
        InMemoryStorage(),
        personality_id="coder",
        call_id="c1",
        approvals=person,  # type: ignore[arg-type]
        approval_mode=mode,  # type: ignore[arg-type]
    )
    return CronTool(admin), person, admin, ctx


async def test_add_asks_then_schedules() -> None:
    tool, person, admin, ctx = setup()
    out = await tool.run(
        {
            "action": "add",
            "prompt": "water the plants",
            "cron": "0 8 * * *",
            "tz": "Europe/Berlin",
            "deliver": "telegram:42",
        },
        ctx,
    )
    assert out.startswith("scheduled ")
    assert person.asked == [
        "cron add --cron '0 8 * * *' --tz Europe/Berlin --deliver telegram:42 'water the plants'"
    ]
    [job] = await admin.list()
    assert (job.prompt, job.schedule_kind, job.tz, job.deliver, job.personality) == (
        "water the plants",
        "cron",
        "Europe/Berlin",
        "telegram:42",
        "coder",
    )
    assert job.next_due_at is not None and job.next_due_at > T0
    listed = await tool.run({"action": "list"}, ctx)
    assert job.id in listed and "telegram:42" in listed


async def test_a_denied_add_stores_nothing() -> None:
    tool, _, admin, ctx = setup(answer="deny")
    with pytest.raises(ToolError, match="denied"):
        await tool.run({"action": "add", "prompt": "spam", "every": "1h"}, ctx)
    assert await admin.list() == []


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        ({"every": "5s"}, "shorter than a minute"),
        ({"cron": "0 8 * *"}, "5-field"),
        ({"cron": "0 8 * * *", "tz": "Mars/Base"}, "time zone"),
        ({"at": "tomorrow"}, "ISO"),
        ({"every": "1h", "deliver": "bad:place"}, "unknown target"),
        ({"every": "1h", "at": "2026-12-24T18:00"}, "exactly one"),
    ],
)
async def test_bad_jobs_are_refused_before_anyone_is_asked(
    args: dict[str, str], problem: str
) -> None:
    tool, person, admin, ctx = setup()
    with pytest.raises(ToolError, match=problem):
        await tool.run({"action": "add", "prompt": "x", **args}, ctx)
    assert person.asked == [] and await admin.list() == []


async def test_pause_is_free_resume_and_remove_are_asked() -> None:
    tool, person, admin, ctx = setup()
    await tool.run({"action": "add", "prompt": "poll", "every": "1h"}, ctx)
    [job] = await admin.list()
    person.asked.clear()
    assert (await tool.run({"action": "pause", "job_id": job.id}, ctx)).startswith("paused")
    assert person.asked == []
    await tool.run({"action": "resume", "job_id": job.id}, ctx)
    await tool.run({"action": "remove", "job_id": job.id}, ctx)
    assert person.asked == [f"cron resume {job.id}", f"cron remove {job.id}"]
    assert await admin.list() == []
    with pytest.raises(ToolError, match="no cron job"):
        await tool.run({"action": "pause", "job_id": job.id}, ctx)


async def test_approval_mode_off_asks_nobody_and_no_approver_refuses() -> None:
    tool, person, admin, ctx = setup(mode="off")
    await tool.run({"action": "add", "prompt": "poll", "every": "1h"}, ctx)
    assert person.asked == [] and len(await admin.list()) == 1
    tool, _, admin, ctx = setup()
    from dataclasses import replace

    with pytest.raises(ToolError, match="no one was available to approve cron add"):
        await tool.run(
            {"action": "add", "prompt": "poll", "every": "1h"}, replace(ctx, approvals=None)
        )
    assert await admin.list() == []
