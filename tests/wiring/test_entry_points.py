"""One path for every turn: whatever starts a turn (ask, submit + drain, a worker, run,
resume), its session is built by the SessionFactory and driven by the Coordinator, so it
carries the runtime's tenant and its own stored spec (tool names, model)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from seam.contracts.events import Done, ToolEnd
from seam.contracts.execution import Submission
from seam.contracts.personality import Personality
from seam.core import (
    InMemoryExecutionStore,
    ScriptedModel,
    StaticPersonalityRegistry,
    call,
    text_step,
    tool_step,
)
from seam.wiring import Runtime, assemble_runtime

TENANT = "alice"
PINNED_TOOLS = ["read_file", "session_search"]
PINNED_MODEL = "pinned-model"

Start = Callable[[Runtime, str], Awaitable[Submission]]


async def _ask(rt: Runtime, name: str) -> Submission:
    return await rt.ask(name, "hello")


async def _submit_and_drain(rt: Runtime, name: str) -> Submission:
    queued = await rt.submit(name, "hello")
    [sub] = await rt.drain_runnable()
    assert sub.id == queued.id
    return sub


async def _worker(rt: Runtime, name: str) -> Submission:
    await rt.submit(name, "hello")
    stop = asyncio.Event()
    settled: list[Submission] = []

    def on_settled(sub: Submission) -> None:
        settled.append(sub)
        stop.set()

    async with asyncio.timeout(10):
        await rt.work(stop=stop, on_settled=on_settled, idle_wait=0.05)
    [sub] = settled
    return sub


async def _run(rt: Runtime, name: str) -> Submission:
    events = [e async for e in rt.run(name, "hello")]
    assert isinstance(events[-1], Done)
    [sub] = await rt.store.submissions(rt.session_key_for(name))
    return sub


async def _resume(rt: Runtime, name: str) -> Submission:
    await rt.submit(name, "hello")
    # A new process over the same store: the session is rebuilt from what was stored.
    restarted = assemble_runtime(model=rt.model, store=rt.store, tenant_id=TENANT)
    [sub] = await restarted.resume_pending()
    return sub


ENTRY_POINTS: dict[str, Start] = {
    "ask": _ask,
    "submit+drain": _submit_and_drain,
    "worker": _worker,
    "run": _run,
    "resume": _resume,
}


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
async def test_every_entry_point_carries_the_tenant_and_the_stored_spec(entry: str) -> None:
    model = ScriptedModel([text_step("hi")])
    async with assemble_runtime(model=model, tenant_id=TENANT) as rt:
        key = rt.session_key_for("pinned")
        await rt.get_session(key, tools=PINNED_TOOLS, model=PINNED_MODEL)
        sub = await ENTRY_POINTS[entry](rt, "pinned")
        info = await rt.store.get(key)
    assert (sub.outcome, sub.result) == ("completed", "hi")
    assert info is not None and info.tenant == TENANT
    [request] = model.requests
    assert request.model == PINNED_MODEL
    assert [tool.name for tool in request.tools] == PINNED_TOOLS


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
async def test_a_session_an_entry_point_creates_belongs_to_the_tenant(entry: str) -> None:
    async with assemble_runtime(model=ScriptedModel([text_step("hi")]), tenant_id=TENANT) as rt:
        await ENTRY_POINTS[entry](rt, "fresh")
        info = await rt.store.get(rt.session_key_for("fresh"))
    assert info is not None and info.tenant == TENANT


async def test_what_run_said_is_found_by_the_tenants_session_search() -> None:
    search = call("session_search", query="wifi password")
    model = ScriptedModel(
        [text_step("Noted."), tool_step(search), lambda req: text_step(req.messages[-1].content)]
    )
    store = InMemoryExecutionStore()
    async with assemble_runtime(model=model, store=store, tenant_id=TENANT) as rt:
        [e async for e in rt.run("monday", "the wifi password is on the fridge")]
        events = [e async for e in rt.run("friday", "where was the wifi password?")]
    [end] = [e for e in events if isinstance(e, ToolEnd)]
    assert not end.is_error and "on the fridge" in end.result


async def test_a_turn_may_run_as_another_personality_of_the_same_session() -> None:
    personalities = StaticPersonalityRegistry(
        [Personality("default", "You are helpful."), Personality("pirate", "You are a pirate.")]
    )
    model = ScriptedModel([text_step("hi"), text_step("arr"), text_step("hello")])
    async with assemble_runtime(model=model, personalities=personalities) as rt:
        await rt.ask("s", "hello")
        await rt.ask("s", "talk like a pirate", personality="pirate")  # `/personality pirate`
        await rt.ask("s", "and now?")
        info = await rt.store.get(rt.session_key_for("s"))
    souls = [request.system.split("\n")[0] for request in model.requests]
    assert souls == ["You are helpful.", "You are a pirate.", "You are helpful."]
    assert info is not None and info.personality == "default"  # pinned at creation
