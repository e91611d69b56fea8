"""A Coordinator whose driving task is cancelled (its process is stopping) lets go of the
submission: aborted when a stop was asked for, back in the queue otherwise. Nothing is
left leased to a worker that no longer runs it."""

from __future__ import annotations

import asyncio

from seam.contracts.events import AgentEvent, TextDelta
from seam.contracts.tools import CancelToken
from seam.core.scripted_model import Step
from tests.core.test_coordinator import KEY, build


async def _cancel_mid_stream(cancel: CancelToken | None, *, asked: bool) -> str:
    factory, _, _ = build([Step(deltas=["Half an ans", "wer"], error_after=1, stall=True)])
    session = await factory.get_or_create_root(KEY)
    sub = await session.submit("tell me")
    streamed = asyncio.Event()

    def on_event(event: AgentEvent) -> None:
        if isinstance(event, TextDelta):
            streamed.set()

    task = asyncio.ensure_future(
        factory.coordinator.run(sub.id, factory.resolve, on_event, cancel=cancel)
    )
    await streamed.wait()
    if asked and cancel is not None:
        cancel.cancel("the person stopped it")
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    current = await factory.store.submission(sub.id)
    assert current is not None
    assert current.lease_owner is None
    messages = await factory.store.messages(KEY)
    assert [(m.role, m.interrupted) for m in messages] == [("user", False), ("assistant", True)]
    return f"{current.state}:{current.outcome}"


async def test_a_cancelled_task_hands_the_submission_back() -> None:
    assert await _cancel_mid_stream(None, asked=False) == "queued:None"


async def test_a_cancelled_task_whose_stop_was_asked_settles_aborted() -> None:
    assert await _cancel_mid_stream(CancelToken(), asked=True) == "settled:aborted"
