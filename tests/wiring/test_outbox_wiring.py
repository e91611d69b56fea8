"""The deliverer as a surface runs it: over the runtime's store, files into
`$SEAM_HOME/deliveries/`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from seam.contracts.outbox import Outbox, OutboxItem, Outgoing
from seam.core import ScriptedModel, text_step
from seam.wiring import assemble_runtime, create_runtime
from seam.wiring.outbox import deliveries_root, running_deliverer
from seam.wiring.settings import load_settings


async def test_every_runtime_store_is_an_outbox(tmp_path: Path) -> None:
    empty = assemble_runtime(model=ScriptedModel([]))
    settings = load_settings({}, home=tmp_path / "home", working_dir=tmp_path)
    runtime = create_runtime(settings=settings, model=ScriptedModel([text_step("ok")]))
    try:
        assert isinstance(empty.store, Outbox) and isinstance(runtime.store, Outbox)
    finally:
        await empty.aclose()
        await runtime.aclose()


async def test_a_file_item_lands_under_seam_home_deliveries(tmp_path: Path) -> None:
    settings = load_settings({}, home=tmp_path / "home", working_dir=tmp_path)
    runtime = create_runtime(settings=settings, model=ScriptedModel([text_step("ok")]))
    store = runtime.store
    assert isinstance(store, Outbox)
    done = asyncio.Event()

    def record(item: OutboxItem) -> None:
        if item.status == "sent":
            done.set()

    try:
        async with running_deliverer(settings, store, on_result=record) as deliverer:
            assert sorted(deliverer.senders) == ["file:", "http"]
            payload = json.dumps({"text": "Daily digest.", "source": "cron:daily"})
            await store.enqueue("run-1", Outgoing("file:daily.md", payload, source="cron:daily"))
            await asyncio.wait_for(done.wait(), 10)
    finally:
        await runtime.aclose()
    written = (deliveries_root(settings) / "daily.md").read_text()
    assert "Daily digest." in written and "cron:daily" in written
    assert deliveries_root(settings) == tmp_path / "home" / "deliveries"
