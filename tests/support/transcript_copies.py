"""What both stores' kept transcripts must do, as one scenario each store's tests run
(`tests/services/test_*_transcript_copies.py`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from seam.contracts.execution import ExecutionStore
from seam.contracts.messages import Message
from seam.core import AgentLoop, Coordinator, DefaultToolRegistry, SessionFactory
from seam.core.scripted_model import ScriptedModel, text_step

KEY = 'agent-session:["t","default","chat"]'


def session_factory(store: ExecutionStore, model: ScriptedModel) -> SessionFactory:
    loop = AgentLoop(model=model, tools=DefaultToolRegistry(), sessions=store)
    return SessionFactory(loop, store, Coordinator(store, owner="here"))


def said(model: ScriptedModel) -> list[str]:
    """What the last request sent of the conversation (user and assistant text)."""
    return [m.content for m in model.requests[-1].messages if m.role in ("user", "assistant")]


async def turns_appended_elsewhere_are_read_after_the_kept_ones(
    here: ExecutionStore,
    there: ExecutionStore,
    whole: Callable[[], Awaitable[tuple[Message, ...]]],
) -> None:
    """`here` runs a turn, `there` (another process or worker) appends three more, and
    `here`'s next turn sees them all, in order; its kept copy is what a whole read gives."""
    model = ScriptedModel([text_step("one"), text_step("two")])
    session = await session_factory(here, model).get_or_create_root(KEY)
    await session.ask("first")
    for n in range(3):  # the session's turns move elsewhere meanwhile
        await there.append(KEY, [Message("user", f"q{n}"), Message("assistant", f"a{n}")])
    await session.ask("second")
    expected = ["first", "one", "q0", "a0", "q1", "a1", "q2", "a2", "second"]
    assert said(model) == expected
    kept = await here.load(KEY)
    assert kept is not None
    assert kept.messages == await whole()
    assert [m.content for m in kept.messages] == [*expected, "two"]


async def an_undo_and_a_turn_written_elsewhere_are_seen(
    here: ExecutionStore, there: ExecutionStore
) -> None:
    """`there` undoes `here`'s last turn and writes another of the same length (the count
    alone cannot tell them apart): `here`'s next turn sees what `there` left."""
    model = ScriptedModel([text_step("one"), text_step("two"), text_step("three")])
    session = await session_factory(here, model).get_or_create_root(KEY)
    await session.ask("first")
    await session.ask("second")
    assert await here.load(KEY) is not None  # the copy kept here: all four messages
    assert await there.undo(KEY) == 2
    await there.append(KEY, [Message("user", "other"), Message("assistant", "reply")])
    await session.ask("third")
    assert said(model) == ["first", "one", "other", "reply", "third"]


async def messages_of(store: ExecutionStore) -> tuple[Message, ...]:
    """The transcript as `store` loads it (one with no copies reads it whole)."""
    loaded = await store.load(KEY)
    assert loaded is not None
    return loaded.messages
