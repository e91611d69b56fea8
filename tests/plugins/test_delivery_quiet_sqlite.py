"""Quiet hours end to end on the real SQLite outbox: a delivery made under `seam dnd on`
is held, `seam dnd off` releases it, and the deliverer's file sender writes it once."""

from __future__ import annotations

from pathlib import Path

from seam.contracts.delivery import Notice
from seam.plugins.delivery.outbox_worker import OutboxDeliverer
from seam.plugins.delivery.router import DeliveryRouter
from seam.plugins.delivery.senders import FileSender
from seam.plugins.dnd.checker import FileDndChecker
from seam.services.sessions.sqlite import SQLiteSessionStore
from seam.testing.clock import ManualClock
from seam.wiring.delivery import dnd_command

NOON = 1_781_092_800.0


async def test_held_under_dnd_then_released_and_written_once(tmp_path: Path) -> None:
    clock = ManualClock(NOON)
    store = SQLiteSessionStore(str(tmp_path / "sessions.db"), clock=clock)
    root = tmp_path / "deliveries"
    dnd = FileDndChecker([], tmp_path / "dnd.json", clock=clock)
    router = DeliveryRouter(store, deliveries=root, owner="file:owner.md", dnd=dnd, clock=clock)
    deliverer = OutboxDeliverer(store, [FileSender(root)], clock=clock)
    try:
        await dnd_command("on", dnd, store, now=clock())
        held = await router.deliver(
            "owner", "The disk is 95% full.", Notice(key="hb:1", source="hb")
        )
        urgent = await router.deliver("file:alerts.md", "Down!", Notice(key="a:1", urgent=True))
        assert (held.verdict, urgent.verdict) == ("held", "queued")
        await deliverer.deliver_due()
        assert (root / "alerts.md").read_text().count("Down!") == 1
        assert not (root / "owner.md").exists()
        status = await dnd_command("status", dnd, store, now=clock())
        assert "held deliveries: 1" in status

        clock.advance(3600)
        lines = await dnd_command("off", dnd, store, now=clock())
        assert lines == ["do not disturb is off", "releasing 1 held delivery now"]
        await deliverer.deliver_due()
        await deliverer.deliver_due()
        assert (root / "owner.md").read_text().count("The disk is 95% full.") == 1
        item = await store.outbox_item("hb:1")
        assert item is not None and item.status == "sent"
    finally:
        await store.aclose()
