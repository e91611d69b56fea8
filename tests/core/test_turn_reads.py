"""What a durable turn reads before it runs: the session's row and transcript once, with
one `load` (a round trip each on PostgreSQL), and the history it sends is the same as
when they were read apart."""

from __future__ import annotations

from collections import Counter

from seam.contracts.messages import Message
from seam.contracts.sessions import LoadedSession, NewSession, SessionInfo
from seam.core.coordinator import Coordinator
from seam.core.execution import InMemoryExecutionStore
from seam.core.loop import AgentLoop
from seam.core.scripted_model import ScriptedModel, text_step
from seam.core.session_factory import SessionFactory
from seam.core.tool_registry import DefaultToolRegistry

KEY = 'agent-session:["local","default","reads"]'


class CountingStore(InMemoryExecutionStore):
    """The in-memory execution store, counting the session reads a turn makes."""

    def __init__(self) -> None:
        super().__init__()
        self.reads: Counter[str] = Counter()

    async def get(self, key: str) -> SessionInfo | None:
        self.reads["get"] += 1
        return await super().get(key)

    async def load(self, key: str) -> LoadedSession | None:
        self.reads["load"] += 1
        return await super().load(key)

    async def messages(self, key: str, start: int = 0, limit: int | None = None) -> list[Message]:
        self.reads["messages"] += 1
        return await super().messages(key, start, limit)

    async def last_seq(self, key: str) -> int:
        self.reads["last_seq"] += 1
        return await super().last_seq(key)


def _factory(store: CountingStore, model: ScriptedModel) -> SessionFactory:
    loop = AgentLoop(model=model, tools=DefaultToolRegistry(), sessions=store)
    return SessionFactory(loop, store, Coordinator(store, owner="me"))


async def test_a_durable_turn_reads_the_session_once() -> None:
    store = CountingStore()
    model = ScriptedModel([text_step("one"), text_step("two")])
    session = await _factory(store, model).get_or_create_root(KEY)
    await session.ask("first")
    store.reads.clear()
    settled = await session.ask("second")
    assert settled.result == "two"
    assert store.reads == Counter(load=1, last_seq=1)
    # The history sent is the whole conversation so far, read by that one load.
    sent = [(m.role, m.content) for m in model.requests[-1].messages]
    assert sent[-3:] == [("user", "first"), ("assistant", "one"), ("user", "second")]


async def test_a_turn_on_a_new_session_reads_its_transcript_after_creating_it() -> None:
    """A session the turn creates is read again after `session_start`, as before."""
    store = CountingStore()
    model = ScriptedModel([text_step("hi")])
    loop = AgentLoop(model=model, tools=DefaultToolRegistry(), sessions=store)
    events = [event async for event in loop.run(KEY, "hello")]
    assert events[-1].type == "done"
    assert store.reads["load"] == 1 and store.reads["messages"] == 1
    assert await store.get(KEY) is not None


async def test_a_resumed_session_is_read_from_the_store_not_the_cache() -> None:
    """A worker that resolves a session another process wrote to sends what is stored."""
    store = CountingStore()
    await store.create(KEY, NewSession())
    await store.append(KEY, [Message(role="user", content="earlier")])
    await store.append(KEY, [Message(role="assistant", content="noted")])
    model = ScriptedModel([text_step("ok")])
    factory = _factory(store, model)
    await factory.coordinator.submit(KEY, "now")
    settled = await factory.coordinator.drain_runnable(factory.resolve)
    assert len(settled) == 1
    sent = [(m.role, m.content) for m in model.requests[-1].messages]
    assert sent[-3:] == [("user", "earlier"), ("assistant", "noted"), ("user", "now")]
    assert store.reads["load"] == 1 and store.reads["messages"] == 0
