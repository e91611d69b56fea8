"""The core mechanism under the client tools: a turn whose model calls a tool of its
caller (`TurnExtras.external`) runs the session's own calls, stops with
`finish_reason "tool_calls"` and leaves the caller's calls unanswered in a valid
transcript; `resume` goes on from the results the caller appended."""

from __future__ import annotations

from seam.contracts.events import AgentEvent, Done, ToolStart
from seam.contracts.messages import Message
from seam.contracts.model import ToolDefinition
from seam.contracts.turn_extras import Sampling, TurnExtras, unanswered_calls
from seam.core import AgentLoop, DefaultToolRegistry, ScriptedModel
from seam.core.external_calls import ExtrasBook
from seam.core.model_step import CallModel, UserPrompt
from seam.core.scripted_model import call, text_step, tool_step
from seam.core.sessions import InMemorySessionStore
from tests.support.tools import Echo

WEATHER = ToolDefinition("weather", "today's weather", {"type": "object", "properties": {}})


async def _run(loop: AgentLoop, start: object, extras: TurnExtras) -> list[AgentEvent]:
    return [e async for e in loop.run_from("s", start, extras=extras)]  # type: ignore[arg-type]


async def test_a_call_for_the_caller_ends_the_turn_after_the_sessions_own() -> None:
    own, asked = call("echo", text="hi"), call("weather", city="Oslo")
    model = ScriptedModel([tool_step(own, asked, text="Looking."), text_step("sunny it is")])
    registry = DefaultToolRegistry()
    registry.register_tool(Echo())
    sessions = InMemorySessionStore()
    loop = AgentLoop(model=model, tools=registry, sessions=sessions)
    extras = TurnExtras(external=(WEATHER,), sampling=Sampling(max_tokens=5, temperature=0.1))
    events = await _run(loop, UserPrompt("weather?"), extras)
    done = events[-1]
    assert isinstance(done, Done) and done.finish_reason == "tool_calls"
    assert [e.name for e in events if isinstance(e, ToolStart)] == ["echo"]  # weather not run
    request = model.requests[0]
    assert [t.name for t in request.tools][-1] == "weather"
    assert (request.max_tokens, request.temperature) == (5, 0.1)
    stored = await sessions.messages("s")
    assert [m.role for m in stored] == ["user", "assistant", "tool"]
    assert unanswered_calls(stored) == [asked]
    # The caller answers; the next turn starts with the model, not a new message.
    await sessions.append("s", [Message("tool", "sunny", tool_call_id=asked.id, name="weather")])
    events = await _run(loop, CallModel(), TurnExtras(external=(WEATHER,), resume=True))
    assert isinstance(events[-1], Done) and events[-1].text == "sunny it is"
    sent = model.requests[1].messages
    assert [m.role for m in sent] == ["user", "assistant", "tool", "tool"]
    assert unanswered_calls(await sessions.messages("s")) == []


async def test_a_tool_of_the_session_wins_over_a_caller_tool_of_the_same_name() -> None:
    model = ScriptedModel([tool_step(call("echo", text="x")), text_step("done")])
    registry = DefaultToolRegistry()
    registry.register_tool(Echo())
    loop = AgentLoop(model=model, tools=registry, sessions=InMemorySessionStore())
    clash = ToolDefinition("echo", "the caller's echo", {"type": "object"})
    events = await _run(loop, UserPrompt("go"), TurnExtras(external=(clash,)))
    assert isinstance(events[-1], Done) and events[-1].finish_reason == "stop"
    assert [t.name for t in model.requests[0].tools].count("echo") == 1


def test_the_extras_book_keeps_the_newest() -> None:
    book = ExtrasBook(limit=2)
    first, second = TurnExtras(note="a"), TurnExtras(note="b")
    book.offer("1", first)
    book.offer("2", second)
    book.offer("3", first)
    assert book.get("1") == TurnExtras()  # the oldest went
    assert (book.get("2"), book.get("3")) == (second, first)
