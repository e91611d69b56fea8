"""Store faults under a turn in flight, written once and run against every backend that
has a meaningful one: the store becomes unreachable (a PostgreSQL restart, a SQLite file
locked past its busy timeout) while the model is answering, and the Coordinator must
finish the submission once the store is back: completed with the answer, one claim, one
user message, one answer, one `done`.

A backend's test module subclasses `FaultSuite` and provides a `faulty` fixture: a
`Faulty` with the store, `inject` (breaks the store; run in a thread, it may block) and
`recover` (mends it; called at the Coordinator's first back-off pause, so the fault is
met before it is mended).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import pytest

from seam.contracts.events import Done
from seam.contracts.execution import ExecutionStore
from seam.contracts.model import ModelChunk, ModelRequest
from seam.core.coordinator import Coordinator
from seam.core.event_log import replay
from seam.core.loop import AgentLoop
from seam.core.outage import OutagePolicy
from seam.core.scripted_model import ScriptedModel, text_step
from seam.core.session_factory import SessionFactory

KEY = 'agent-session:["t","default","faults"]'
ANSWER = "the answer, once"


@dataclass
class Faulty:
    store: ExecutionStore
    inject: Callable[[], None]
    recover: Callable[[], None]


class GatedModel(ScriptedModel):
    """A scripted model whose first call waits at a gate the test opens: the turn is in
    flight (its user message stored, the model asked) while the store is broken."""

    def __init__(self) -> None:
        # A second answer in case the first one's write is what met the fault.
        super().__init__([text_step(ANSWER), text_step(ANSWER)])
        self.asked = asyncio.Event()
        self.gate = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        if not self.asked.is_set():
            self.asked.set()
            await self.gate.wait()
        async for chunk in super().stream(request):
            yield chunk


class FaultSuite:
    async def test_a_store_outage_under_a_turn_in_flight_is_ridden_out(
        self, faulty: Faulty, caplog: pytest.LogCaptureFixture
    ) -> None:
        store = faulty.store
        model = GatedModel()
        recovered: list[float] = []

        async def sleep(seconds: float) -> None:
            if not recovered:
                recovered.append(seconds)
                await asyncio.to_thread(faulty.recover)
            await asyncio.sleep(seconds)

        coordinator = Coordinator(store, owner="w1", outage=OutagePolicy(sleep=sleep))
        factory = SessionFactory(AgentLoop(model=model, sessions=store), store, coordinator)
        session = await factory.get_or_create_root(KEY)
        sub = await session.submit("the question")
        caplog.set_level(logging.WARNING, logger="seam.coordinator")
        running = asyncio.ensure_future(coordinator.run(sub.id, factory.resolve))
        await asyncio.wait_for(model.asked.wait(), 10)
        await asyncio.to_thread(faulty.inject)
        model.gate.set()
        settled = await asyncio.wait_for(running, 30)

        assert recovered, "the store never failed under the turn"
        assert "the store is unavailable" in caplog.text
        assert (settled.outcome, settled.result, settled.error) == ("completed", ANSWER, None)
        assert settled.attempts == 1  # ridden out within the claim: never handed back
        assert [s.id for s in await store.submissions()] == [sub.id]
        messages = [(m.role, m.content) for m in await store.messages(KEY)]
        assert messages == [("user", "the question"), ("assistant", ANSWER)]
        dones = [e for e in await replay(store, KEY) if isinstance(e, Done)]
        assert [(d.text, d.finish_reason) for d in dones] == [(ANSWER, "stop")]
