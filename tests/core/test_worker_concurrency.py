"""`Coordinator.work(concurrency=N)`: a worker runs N submissions at once, each of a
different session, and a session's own submissions still one after another."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from seam.contracts.execution import Submission
from seam.contracts.model import ModelRequest
from seam.contracts.tools import ToolContext
from seam.core.coordinator import Coordinator
from seam.core.execution import InMemoryExecutionStore
from seam.core.loop import AgentLoop
from seam.core.scripted_model import ScriptedModel, Step, call, text_step, tool_step
from seam.core.session_factory import SessionFactory
from seam.core.tool_registry import DefaultToolRegistry

A = 'agent-session:["local","default","a"]'
B = 'agent-session:["local","default","b"]'


class Gate:
    """Logs each run's start and end. The run for `a1` waits until the one for `b1` has
    started: it ends only if the worker runs the two at once."""

    name = "gate"
    description = "A gate for tests."
    parameters: Mapping[str, Any] = {"type": "object", "properties": {"who": {"type": "string"}}}
    concurrent = False
    idempotent = False

    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []
        self.b_started = asyncio.Event()

    async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
        who = str(args["who"])
        self.log.append(("start", who))
        if who == "b1":
            self.b_started.set()
        if who == "a1":
            await self.b_started.wait()
        self.log.append(("end", who))
        return who


def reply(request: ModelRequest) -> Step:
    """Call the gate for the question asked; answer once its result is in."""
    last = request.messages[-1]
    if last.role == "tool":
        return text_step(f"done {last.content}")
    return tool_step(call("gate", who=last.content))


async def test_a_worker_runs_submissions_of_different_sessions_at_once() -> None:
    store = InMemoryExecutionStore()
    gate = Gate()
    tools = DefaultToolRegistry()
    tools.register_tool(gate)
    loop = AgentLoop(model=ScriptedModel([reply] * 6), tools=tools, sessions=store)
    coordinator = Coordinator(store, owner="worker")
    factory = SessionFactory(loop, store, coordinator)
    a, b = await factory.get_or_create_root(A), await factory.get_or_create_root(B)
    for session, text in ((a, "a1"), (a, "a2"), (b, "b1")):
        await session.submit(text)
    stop = asyncio.Event()
    settled: list[Submission] = []

    def on_settled(sub: Submission) -> None:
        settled.append(sub)
        if len(settled) == 3:
            stop.set()

    # The timeout only bounds a failure: with one lane, a1's gate never opens.
    await asyncio.wait_for(
        coordinator.work(
            factory.resolve, stop=stop, on_settled=on_settled, concurrency=3, idle_wait=0.05
        ),
        timeout=10,
    )
    assert sorted((s.outcome, s.result) for s in settled) == [
        ("completed", "done a1"),
        ("completed", "done a2"),
        ("completed", "done b1"),
    ]
    log = gate.log
    assert log.index(("start", "b1")) < log.index(("end", "a1"))  # at once
    assert log.index(("end", "a1")) < log.index(("start", "a2"))  # one session in order


async def test_a_worker_needs_at_least_one_lane() -> None:
    store = InMemoryExecutionStore()
    coordinator = Coordinator(store, owner="worker")
    loop = AgentLoop(model=ScriptedModel([]), sessions=store)
    factory = SessionFactory(loop, store, coordinator)
    with pytest.raises(ValueError, match="at least 1"):
        await coordinator.work(factory.resolve, concurrency=0)
