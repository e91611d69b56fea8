"""The heartbeat: the HEARTBEAT_OK rule, a lean prompt, quiet hours, the ledger."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from seam.contracts.messages import Usage
from seam.core.execution import InMemoryExecutionStore
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.scripted_model import ScriptedModel, error_step, text_step
from seam.core.storage import InMemoryStorage
from seam.core.tokens import CharTokenEstimator
from seam.plugins.delivery.router import DeliveryRouter
from seam.plugins.dnd.checker import FileDndChecker
from seam.plugins.dnd.rules import make_rule
from seam.plugins.heartbeat.cron_kind import HeartbeatKind
from seam.plugins.heartbeat.ledger import HeartbeatLedger
from seam.plugins.heartbeat.personality import HEARTBEAT_PERSONALITY, HeartbeatPersonalities
from seam.plugins.heartbeat.reply import is_heartbeat_ok
from seam.plugins.heartbeat.runner import run_heartbeat
from seam.plugins.memory.markdown import MarkdownMemory
from seam.testing.clock import ManualClock
from seam.wiring import Runtime, assemble_runtime

# 2026-06-10 12:00 UTC, a Wednesday.
NOON = 1_781_092_800.0
CHECKLIST = "- Is the backup disk over 90% full?\n- Any meeting in the next hour?"


@pytest.mark.parametrize(
    ("reply", "dropped"),
    [
        ("HEARTBEAT_OK", True),
        ("HEARTBEAT_OK.", True),
        ("  HEARTBEAT_OK!\n", True),
        ("ok HEARTBEAT_OK", True),
        ("**HEARTBEAT_OK**", True),
        ("heartbeat_ok", True),
        ("HEARTBEAT_OK — all good", False),  # too much else: delivered
        ("All clear, so I would say HEARTBEAT_OK but the disk is 95% full.", False),
        ("The backup disk is 95% full.", False),
        ("", False),
    ],
)
def test_the_heartbeat_ok_rule(reply: str, dropped: bool) -> None:
    assert is_heartbeat_ok(reply) is dropped


class Beat:
    """A runtime with the heartbeat personality, a real in-memory outbox and a manual clock."""

    def __init__(self, tmp_path: Path, *steps: object, checklist: str = CHECKLIST) -> None:
        self.clock = ManualClock(NOON)
        self.model = ScriptedModel(steps)  # type: ignore[arg-type]
        self.store = InMemoryExecutionStore(clock=self.clock)
        memory = MarkdownMemory(tmp_path / "memory")
        memory.add("memory", "The backup disk is /mnt/backup")
        self.checklist = checklist
        self.personalities = HeartbeatPersonalities(
            StaticPersonalityRegistry(), lambda _: self.checklist
        )
        self.runtime: Runtime = assemble_runtime(
            model=self.model,
            personalities=self.personalities,
            memory=memory,
            store=self.store,
            storage=InMemoryStorage({"/project/AGENTS.md": "Project rules: always use tabs."}),
            working_dir="/project",
        )
        self.dnd = FileDndChecker([], tmp_path / "dnd.json", clock=self.clock)
        self.delivery = DeliveryRouter(
            self.store,
            deliveries=tmp_path / "deliveries",
            owner="telegram:42",
            dnd=self.dnd,
            clock=self.clock,
            chats=("telegram",),
        )
        self.ledger = HeartbeatLedger(tmp_path / "heartbeat.jsonl")

    async def beat(self, target: str = "owner") -> object:
        return await run_heartbeat(
            self.runtime,
            self.delivery,
            self.dnd,
            self.clock,
            ledger=self.ledger,
            checklist=self.personalities.checklist_text(),
            target=target,
        )


async def test_the_prompt_is_the_checklist_and_memory_and_nothing_else(tmp_path: Path) -> None:
    beat = Beat(tmp_path, text_step("HEARTBEAT_OK"), text_step("Hi"))
    run = await beat.beat()
    assert run.status == "ok"  # type: ignore[attr-defined]
    request = beat.model.requests[0]
    assert list(request.tools) == []
    assert CHECKLIST in request.system
    assert "The backup disk is /mnt/backup" in request.system
    assert "HEARTBEAT_OK" in request.system
    assert "always use tabs" not in request.system  # project files are not read into it
    assert "You are Seam" not in request.system  # nor the default personality's soul
    assert [m.role for m in request.messages] == ["user"]
    # The same runtime's ordinary turn does get its tools and the project file.
    await beat.runtime.ask("chat", "hello")
    ordinary = beat.model.requests[1]
    assert ordinary.tools and "always use tabs" in ordinary.system
    # The whole request stays small (an ordinary turn with the built-in tools is ~2,000
    # estimated tokens; openclaw #64293 measured 150K per heartbeat).
    estimate = CharTokenEstimator()
    lean = estimate.text(request.system) + estimate.messages(request.messages)
    full = estimate.text(ordinary.system) + estimate.tools(ordinary.tools)
    assert lean < 250 < 1000 < full


async def test_an_all_clear_is_dropped_and_recorded_with_its_tokens(tmp_path: Path) -> None:
    usage = Usage(input_tokens=180, output_tokens=4)
    beat = Beat(tmp_path, text_step("HEARTBEAT_OK.", usage=usage))
    run = await beat.beat()
    assert run.status == "ok"  # type: ignore[attr-defined]
    assert await beat.store.outbox_items() == []
    [line] = [json.loads(x) for x in (tmp_path / "heartbeat.jsonl").read_text().splitlines()]
    assert line["status"] == "ok"
    assert line["slot"] == "2026-06-10T12:00:00Z"
    assert (line["input_tokens"], line["output_tokens"]) == (180, 4)
    assert line["session"] == "heartbeat:2026-06-10T12:00:00Z"


async def test_a_finding_is_delivered_to_the_owner(tmp_path: Path) -> None:
    beat = Beat(tmp_path, text_step("The backup disk is 95% full."))
    run = await beat.beat()
    assert run.status == "delivered" and run.delivery == "queued"  # type: ignore[attr-defined]
    [item] = await beat.store.outbox_items()
    assert item.target == "telegram:42"
    assert item.key == "heartbeat:2026-06-10T12:00:00Z"
    assert json.loads(item.payload)["text"] == "The backup disk is 95% full."


async def test_the_same_slot_twice_runs_one_turn_and_delivers_once(tmp_path: Path) -> None:
    beat = Beat(tmp_path, text_step("The backup disk is 95% full."))
    await beat.beat()
    again = await beat.beat()  # no second model step is scripted: it would fail
    assert again.status == "delivered"  # type: ignore[attr-defined]
    assert len(beat.model.requests) == 1
    assert len(await beat.store.outbox_items()) == 1


async def test_quiet_hours_skip_the_beat(tmp_path: Path) -> None:
    beat = Beat(tmp_path)  # no model step: a model call would fail the test
    await beat.dnd.add_rule(make_rule("11:00", "13:00"))
    run = await beat.beat()
    assert (run.status, run.reason) == ("skipped", "quiet hours")  # type: ignore[attr-defined]
    await beat.dnd.remove_all()
    await beat.dnd.toggle_indefinite(True)
    assert (await beat.beat()).status == "skipped"  # type: ignore[attr-defined]
    assert beat.model.requests == []
    assert [r.status for r in beat.ledger.recent()] == ["skipped", "skipped"]


async def test_no_checklist_no_model_call(tmp_path: Path) -> None:
    beat = Beat(tmp_path, checklist="  \n")
    run = await beat.beat()
    assert (run.status, run.reason) == ("skipped", "no checklist (write HEARTBEAT.md)")  # type: ignore[attr-defined]
    assert beat.model.requests == []


async def test_a_failed_turn_is_recorded_failed_and_nothing_is_delivered(tmp_path: Path) -> None:
    beat = Beat(tmp_path, error_step("fatal", "the model is gone"))
    run = await beat.beat()
    assert run.status == "failed"  # type: ignore[attr-defined]
    assert "the model is gone" in run.reason  # type: ignore[attr-defined]
    assert await beat.store.outbox_items() == []


async def test_an_undeliverable_target_is_a_failure_not_a_success(tmp_path: Path) -> None:
    beat = Beat(tmp_path, text_step("The backup disk is 95% full."))
    beat.delivery.owner = None
    run = await beat.beat()
    assert run.status == "failed"  # type: ignore[attr-defined]
    assert "no [gateway] owner is configured" in run.reason  # type: ignore[attr-defined]


def test_the_heartbeat_personality_is_not_listed(tmp_path: Path) -> None:
    registry = HeartbeatPersonalities(StaticPersonalityRegistry(), lambda _: CHECKLIST)
    assert [p.id for p in registry.list()] == ["default"]
    lean = registry.get(HEARTBEAT_PERSONALITY)
    assert (lean.toolset, lean.fs_read, lean.fs_write) == ((), (), ())


@dataclass(frozen=True)
class Job:  # the fields of a CronJob the heartbeat kind reads
    deliver: str = "owner"
    urgent: bool = False


@dataclass(frozen=True)
class Run:  # the fields of a CronRun the heartbeat kind reads
    slot_key: str
    session: str
    due_at: float
    started_at: float


async def test_the_cron_kind_drops_the_all_clear_and_delivers_a_finding(tmp_path: Path) -> None:
    beat = Beat(tmp_path, text_step("HEARTBEAT_OK"), text_step("The backup disk is 95% full."))
    kind = HeartbeatKind(
        beat.store,
        beat.runtime.session_key_for,
        beat.delivery,
        beat.dnd,
        beat.ledger,
        beat.personalities.checklist_text,
        clock=beat.clock,
    )
    statuses = []
    for n in range(2):
        due = NOON + n * 1800
        run = Run(f"heartbeat@{due}", f"cron:heartbeat:{n}", due, due)
        assert await kind.skip_reason(Job(), due) is None
        sub = await beat.runtime.ask(run.session, "Heartbeat.", personality=HEARTBEAT_PERSONALITY)
        statuses.append(await kind.deliver(Job(), run, sub))
    assert statuses == ["silent", "queued"]
    [item] = await beat.store.outbox_items()
    assert item.key == f"cron:heartbeat@{NOON + 1800}"
    assert [r.status for r in beat.ledger.recent()] == ["ok", "delivered"]
    await beat.dnd.toggle_indefinite(True)
    assert await kind.skip_reason(Job(), NOON + 3600) == "quiet hours"
    assert len(beat.ledger.recent()) == 2  # deciding records nothing: the claim might fail
    run = Run("heartbeat@x", "cron:heartbeat:2", NOON + 3600, NOON + 3600)
    await kind.skipped(Job(), run, "quiet hours")
    assert beat.ledger.recent()[-1].status == "skipped"
