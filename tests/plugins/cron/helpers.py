"""What the scheduler tests share: a manual clock, a recording Delivery and a runtime
over a scripted model."""

from __future__ import annotations

from dataclasses import dataclass, field

from seam.contracts.delivery import SILENT, DeliveryError, DeliveryResult, Notice
from seam.core.cron import InMemoryCronStore
from seam.core.scripted_model import ScriptedModel, Step
from seam.plugins.cron.admin import CronAdmin
from seam.plugins.cron.scheduler import CronScheduler
from seam.wiring import Runtime, assemble_runtime
from seam.wiring.cron import RuntimeSubmitter

T0 = 1_790_000_000.0  # 2026-09-21, a Monday


class Clock:
    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class Sent:
    target: str
    text: str
    key: str
    source: str | None
    urgent: bool


@dataclass
class RecordingDelivery:
    """A `Delivery` that records what it is handed, once per key (as the outbox does)."""

    sent: list[Sent] = field(default_factory=list)
    fail_targets: set[str] = field(default_factory=set)

    def check_target(self, target: str) -> str:
        if target.startswith("bad:"):
            raise DeliveryError(f"unknown target {target!r}")
        return target

    async def deliver(self, target: str, text: str, notice: Notice) -> DeliveryResult:
        if target in self.fail_targets:
            raise DeliveryError(f"cannot reach {target}")
        if text.strip() == SILENT:
            return DeliveryResult("silent")
        if target == "none":
            return DeliveryResult("none")
        if all(s.key != notice.key for s in self.sent):
            self.sent.append(Sent(target, text, notice.key, notice.source, notice.urgent))
        return DeliveryResult("queued")

    def to(self, target: str) -> list[str]:
        return [s.text for s in self.sent if s.target == target]


@dataclass
class Rig:
    clock: Clock
    runtime: Runtime
    model: ScriptedModel
    delivery: RecordingDelivery
    scheduler: CronScheduler
    admin: CronAdmin

    def another_scheduler(self) -> CronScheduler:
        return CronScheduler(
            self.scheduler.store,
            RuntimeSubmitter(self.runtime),
            self.delivery,
            clock=self.clock,
        )

    async def cycle(self) -> None:
        """One tick, every submission run, one more tick to deliver."""
        await self.scheduler.tick()
        await self.runtime.drain_runnable()
        await self.scheduler.tick()


def rig(*steps: Step) -> Rig:
    clock = Clock()
    model = ScriptedModel(list(steps))
    runtime = assemble_runtime(model=model)
    delivery = RecordingDelivery()
    store = InMemoryCronStore(clock=clock)
    scheduler = CronScheduler(store, RuntimeSubmitter(runtime), delivery, clock=clock)
    admin = CronAdmin(store, check_target=delivery.check_target, clock=clock)
    return Rig(clock, runtime, model, delivery, scheduler, admin)
