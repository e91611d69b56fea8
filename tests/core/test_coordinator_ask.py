"""`Coordinator.ask` (what `Session.ask` uses): a submission admitted already claimed when
nothing of its session is ahead of it, and the usual queue order otherwise."""

from __future__ import annotations

import asyncio
from pathlib import Path

from seam.contracts.execution import ExecutionStore, NewSubmission, Settlement, SubmissionQuery
from seam.core.coordinator import Coordinator
from seam.core.execution import InMemoryExecutionStore
from seam.core.loop import AgentLoop
from seam.core.scripted_model import ScriptedModel, text_step
from seam.core.session_factory import SessionFactory
from seam.core.tool_registry import DefaultToolRegistry
from seam.services.sessions.sqlite import SQLiteSessionStore

KEY = 'agent-session:["local","default","main"]'


def _factory(store: ExecutionStore, model: ScriptedModel) -> SessionFactory:
    loop = AgentLoop(model=model, tools=DefaultToolRegistry(), sessions=store)
    return SessionFactory(loop, store, Coordinator(store, owner="me"))


async def test_ask_runs_at_once_with_one_attempt() -> None:
    store = InMemoryExecutionStore()
    factory = _factory(store, ScriptedModel([text_step("hello")]))
    session = await factory.get_or_create_root(KEY)
    sub = await session.ask("hi")
    assert (sub.state, sub.outcome, sub.result, sub.attempts) == (
        "settled",
        "completed",
        "hello",
        1,
    )
    assert [m.content for m in await store.messages(KEY)] == ["hi", "hello"]


async def test_ask_while_its_session_runs_elsewhere_waits_its_turn(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    try:
        factory = _factory(store, ScriptedModel([text_step("mine")]))
        session = await factory.get_or_create_root(KEY)
        await store.admit(NewSubmission("x", KEY, "elsewhere"))
        assert (await store.claim("another worker")) is not None
        asking = asyncio.create_task(session.ask("then this"))
        queued = SubmissionQuery(states=("queued",))
        while not await store.submissions(KEY, query=queued):
            await asyncio.sleep(0)  # the task admits it: queued, not claimed, not run
        assert not asking.done()
        await store.settle("x", "another worker", Settlement("completed", result="done"))
        sub = await asking
        assert (sub.state, sub.result, sub.attempts) == ("settled", "mine", 1)
    finally:
        await store.aclose()


async def test_asking_again_with_a_settled_id_returns_the_stored_answer() -> None:
    store = InMemoryExecutionStore()
    model = ScriptedModel([text_step("only once")])
    session = await _factory(store, model).get_or_create_root(KEY)
    first = await session.ask("hi", submission_id="s1")
    again = await session.ask("hi", submission_id="s1")
    assert again == first and len(model.requests) == 1


async def test_two_asks_at_once_in_one_session_run_one_after_the_other(tmp_path: Path) -> None:
    store = SQLiteSessionStore(str(tmp_path / "s.db"))
    try:
        model = ScriptedModel([text_step("one"), text_step("two")])
        session = await _factory(store, model).get_or_create_root(KEY)
        subs = await asyncio.gather(session.ask("a"), session.ask("b"))
        assert sorted(s.result or "" for s in subs) == ["one", "two"]
        said = [m.content for m in await store.messages(KEY)]
        assert said[0::2] in (["a", "b"], ["b", "a"]) and said[1::2] == ["one", "two"]
    finally:
        await store.aclose()
