"""Each turn step built from its own dependencies only (no `AgentLoop`): a scripted
model, the in-memory session store and a fake tool are all a step needs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from seam.contracts import (
    CancelToken,
    Done,
    Message,
    RunStart,
    TextDelta,
    ToolContext,
    ToolEnd,
    ToolStart,
)
from seam.contracts import hooks as hook_points
from seam.contracts.events import AgentEvent, ContextCompacted
from seam.contracts.model import ModelProvider
from seam.contracts.personality import Personality
from seam.core import DefaultHookRegistry, InMemorySessionStore, InMemoryStorage, ScriptedModel
from seam.core.context_step import fit_context
from seam.core.model_step import CallModel, UserPrompt, call_model, user_prompt
from seam.core.scripted_model import call, text_step, tool_step
from seam.core.tool_step import RunTools, run_tools
from seam.core.turn import Finish, finish
from seam.core.turn_deps import (
    ContextDeps,
    EventSequences,
    FinishDeps,
    LoopOptions,
    ModelDeps,
    StepEnd,
    StepOutput,
    StoreDeps,
    ToolDeps,
    Turn,
    TurnState,
)
from tests.support.tools import Echo

KEY = "alone"


def a_turn(model: ModelProvider, *tools: Echo, cancel: CancelToken | None = None) -> Turn:
    token = cancel or CancelToken()
    return Turn(
        session_key=KEY,
        turn_id="t1",
        cancel=token,
        personality=Personality("default", "You help."),
        model=model,
        tools={tool.name: tool for tool in tools},
        definitions=(),
        ctx=ToolContext(session_key=KEY, storage=InMemoryStorage(), cancel=token),
        system="You help.",
    )


def fields(state: TurnState) -> dict[str, object]:
    return dict(state._asdict())


async def drive(steps: StepOutput) -> tuple[list[AgentEvent], TurnState]:
    """A step's events and the state it ends with."""
    events: list[AgentEvent] = []
    try:
        async for event in steps:
            events.append(event)
    except StepEnd as end:
        return events, end.state
    raise AssertionError("a step always ends with the next state")


async def a_store() -> InMemorySessionStore:
    store = InMemorySessionStore()
    await store.create(KEY)
    return store


def history(*texts: str) -> tuple[Message, ...]:
    return tuple(Message("user" if i % 2 == 0 else "assistant", t) for i, t in enumerate(texts))


async def test_the_input_is_stored_and_the_model_called_next() -> None:
    store = await a_store()
    turn = a_turn(ScriptedModel())

    events, state = await drive(
        user_prompt(UserPrompt("hello"), StoreDeps(store), turn, TurnState())
    )

    assert events == [] and state.step == CallModel()
    assert [m.content for m in await store.messages(KEY)] == ["hello"]
    assert [m.content for m in state.messages] == ["hello"]


async def test_the_models_reply_is_streamed_stored_and_appended() -> None:
    store = await a_store()
    model = ScriptedModel([text_step("Hello there", chunk=3)])
    deps = ModelDeps(ContextDeps(StoreDeps(store)))
    start = TurnState(messages=history("hi"))

    events, state = await drive(call_model(CallModel(), deps, a_turn(model), start))

    assert isinstance(events[0], RunStart)
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert state.messages[-1] == Message("assistant", "Hello there")
    assert [m.content for m in await store.messages(KEY)] == ["Hello there"]
    assert state.step == Finish("stop", answered=True) and state.final_text == "Hello there"
    assert start.messages == history("hi")  # the state it started from is unchanged


async def test_tool_calls_lead_to_the_tool_step() -> None:
    echo_call = call("echo", text="x")
    deps = ModelDeps(ContextDeps(StoreDeps(await a_store())))
    model = ScriptedModel([tool_step(echo_call)])

    _, state = await drive(call_model(CallModel(), deps, a_turn(model), TurnState()))

    assert state.step == RunTools((echo_call,), then=CallModel())


async def test_a_stream_closed_mid_reply_keeps_the_text_as_interrupted() -> None:
    store = await a_store()
    deps = ModelDeps(ContextDeps(StoreDeps(store)))
    model = ScriptedModel([text_step("one two three four", chunk=4)])
    steps = call_model(CallModel(), deps, a_turn(model), TurnState(messages=history("hi")))

    deltas = 0
    async for item in steps:
        if isinstance(item, TextDelta):
            deltas += 1
            if deltas == 2:
                break
    await steps.aclose()

    [kept] = await store.messages(KEY)
    assert (kept.content, kept.interrupted) == ("one two ", True)


async def test_a_tool_result_is_recorded() -> None:
    store = await a_store()
    echo = Echo()
    echo_call = call("echo", text="ping")

    events, state = await drive(
        run_tools(
            RunTools((echo_call,), then=CallModel()),
            ToolDeps(StoreDeps(store)),
            a_turn(ScriptedModel(), echo),
            TurnState(),
        )
    )

    assert [type(e) for e in events] == [ToolStart, ToolEnd]
    assert echo.runs == ["ping"]
    [result] = await store.messages(KEY)
    assert (result.role, result.content, result.tool_call_id) == (
        "tool",
        "echo: ping",
        echo_call.id,
    )
    assert state.messages == (result,) and state.step == CallModel()


async def test_a_refused_tool_gives_the_refusal_and_does_not_run() -> None:
    hooks = DefaultHookRegistry()

    async def refuse(payload: hook_points.BeforeToolCall) -> hook_points.ToolCallChange:
        return hook_points.ToolCallChange(block=f"{payload.name} is not allowed here")

    hooks.on_modifying(hook_points.BEFORE_TOOL_CALL, refuse)
    echo = Echo()
    deps = ToolDeps(StoreDeps(await a_store()), hooks=hooks)
    steps = run_tools(
        RunTools((call("echo", text="x"),), then=CallModel()),
        deps,
        a_turn(ScriptedModel(), echo),
        TurnState(),
    )

    events, _ = await drive(steps)

    [end] = [e for e in events if isinstance(e, ToolEnd)]
    assert end.is_error and end.result == "blocked: echo is not allowed here"
    assert echo.runs == []


async def test_a_result_over_budget_is_cut_and_redacted() -> None:
    class Loud(Echo):
        async def run(self, args: Mapping[str, Any], ctx: ToolContext) -> str:
            return "SECRET " + "x" * 500

    deps = ToolDeps(
        StoreDeps(await a_store(), redact=lambda t: t.replace("SECRET", "[hidden]")),
        options=LoopOptions(result_budget_chars=100),
    )
    steps = run_tools(
        RunTools((call("echo"),), then=CallModel()),
        deps,
        a_turn(ScriptedModel(), Loud()),
        TurnState(),
    )

    events, _ = await drive(steps)

    [end] = [e for e in events if isinstance(e, ToolEnd)]
    assert end.truncated and end.result.startswith("[hidden]") and "SECRET" not in end.result


async def test_compaction_shrinks_the_context() -> None:
    store = await a_store()
    long = history(*(f"message {i} " + "words " * 80 for i in range(40)))
    await store.append(KEY, long)
    options = LoopOptions(context_window=4_000, protect_first=2, protect_last=4)
    deps = ContextDeps(StoreDeps(store), options=options)
    turn = a_turn(ScriptedModel([text_step("## Goals\nkeep going")]))

    state, compacted = await fit_context(deps, turn, TurnState(messages=long), "You help.")

    assert compacted and len(state.messages) < len(long)
    assert any("keep going" in m.content for m in state.messages)
    [event] = [make(1) for make in state.waiting if isinstance(make(1), ContextCompacted)]
    assert isinstance(event, ContextCompacted) and event.tokens_after < event.tokens_before


async def test_finish_sends_one_done_and_numbers_the_next_turn_on() -> None:
    sequences = EventSequences()
    deps = FinishDeps(sequences=sequences)
    state = TurnState(step=Finish("stop"), seq=4, final_text="bye", iteration=1)

    events, after = await drive(finish(Finish("stop"), deps, a_turn(ScriptedModel()), state))

    [done] = events
    assert isinstance(done, Done) and (done.seq, done.text) == (5, "bye")
    assert after.step is None and sequences.last(KEY) == 5


async def test_steps_leave_the_state_they_were_given_as_it_was() -> None:
    store = await a_store()
    echo_call = call("echo", text="x")
    model = ScriptedModel([tool_step(echo_call)])
    turn = a_turn(model, Echo())
    given = TurnState(messages=history("hi"), seq=2, iteration=1)
    snapshot = fields(given)

    await drive(user_prompt(UserPrompt("again"), StoreDeps(store), turn, given))
    await drive(call_model(CallModel(), ModelDeps(ContextDeps(StoreDeps(store))), turn, given))
    tools = RunTools((echo_call,), then=CallModel())
    await drive(run_tools(tools, ToolDeps(StoreDeps(store)), turn, given))
    await drive(finish(Finish("stop", answered=True), FinishDeps(), turn, given))

    assert fields(given) == snapshot
