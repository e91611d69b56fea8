"""Each step of the turn state machine, driven on its own over a prepared turn."""

from __future__ import annotations

from typing import Any

from seam.contracts import (
    CancelToken,
    Done,
    ErrorEvent,
    Halt,
    Message,
    RunStart,
    TextDelta,
    ToolEnd,
    ToolStart,
)
from seam.contracts import hooks as hook_points
from seam.contracts.events import AgentEvent
from seam.core import (
    AgentLoop,
    DefaultHookRegistry,
    DefaultToolRegistry,
    InMemorySessionStore,
    LoopOptions,
    ScriptedModel,
    call,
    text_step,
    tool_step,
)
from seam.core.history import NO_RESULT
from seam.core.model_step import CallModel, UserPrompt
from seam.core.tool_step import RunTools
from seam.core.turn import Finish, TurnStep
from seam.core.turn_deps import StepEnd, Turn, TurnRequest, TurnState
from seam.core.turn_driver import prepare_turn
from tests.support.tools import Echo

KEY = "s1"


def make_loop(
    steps: list[Any], *, hooks: DefaultHookRegistry | None = None, **options: Any
) -> tuple[AgentLoop, ScriptedModel, Echo, InMemorySessionStore]:
    model = ScriptedModel(steps)
    echo = Echo()
    tools = DefaultToolRegistry()
    tools.register_tool(echo)
    store = InMemorySessionStore()
    loop = AgentLoop(
        model=model, tools=tools, sessions=store, hooks=hooks, options=LoopOptions(**options)
    )
    return loop, model, echo, store


async def prepared(
    loop: AgentLoop, *, cancel: CancelToken | None = None, user_message: str | None = "hi"
) -> tuple[Turn, TurnState]:
    start = CallModel() if user_message is None else UserPrompt(user_message)
    request = TurnRequest(KEY, start, cancel=cancel or CancelToken())
    return await prepare_turn(loop.turn_setup, request, "turn-1")


async def drive(
    loop: AgentLoop, step: TurnStep, turn: Turn, state: TurnState
) -> tuple[list[AgentEvent], TurnState]:
    """Run one step; its events and the state it leads to (`state.step`: what follows)."""
    events: list[AgentEvent] = []
    try:
        async for event in step.run(loop.services, turn, state):
            events.append(event)
    except StepEnd as end:
        return events, end.state
    raise AssertionError("a step always ends with the next state")


def said(state: TurnState, text: str) -> TurnState:
    return state._replace(messages=(*state.messages, Message("user", text)))


async def test_user_prompt_stores_the_input_and_leads_to_the_model() -> None:
    loop, model, _, store = make_loop([])
    dangling = call("echo", text="lost")
    await store.create(KEY)
    await store.append(KEY, [Message("user", "earlier"), Message("assistant", "", (dangling,))])
    turn, state = await prepared(loop)

    events, state = await drive(loop, UserPrompt("hello"), turn, state)

    assert events == [] and state.step == CallModel()
    assert [m.content for m in await store.messages(KEY)][-1] == "hello"
    # The request history answers the call a failed turn left open; the store does not.
    assert [(m.role, m.content) for m in state.messages[-2:]] == [
        ("tool", NO_RESULT),
        ("user", "hello"),
    ]
    assert not model.requests  # no model call yet


async def test_call_model_streams_opens_the_turn_and_leads_to_finish() -> None:
    loop, model, _, store = make_loop([text_step("Hello there", chunk=4)])
    turn, state = await prepared(loop)

    events, state = await drive(loop, CallModel(), turn, said(state, "hi"))

    assert isinstance(events[0], RunStart) and events[0].seq == 1
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Hello there"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert state.step == Finish("stop", answered=True)
    assert (state.iteration, state.final_text, state.started) == (1, "Hello there", True)
    assert [m.content for m in await store.messages(KEY)] == ["Hello there"]
    assert model.requests[0].messages[-1].content == "hi"


async def test_call_model_with_tool_calls_leads_to_run_tools_and_back() -> None:
    echo_call = call("echo", text="x")
    loop, _, echo, _ = make_loop([tool_step(echo_call)])
    turn, state = await prepared(loop)
    step = CallModel(note="you were cut off")

    _, state = await drive(loop, step, turn, said(state, "hi"))

    # The same model step (with its note) follows the tools.
    assert state.step == RunTools((echo_call,), then=step)
    assert echo.runs == []  # the tools run in their own step


async def test_a_note_is_said_in_the_system_prompt_of_each_call() -> None:
    loop, model, _, _ = make_loop([text_step("ok")])
    turn, state = await prepared(loop)
    await drive(loop, CallModel(note="NOTE: go on"), turn, said(state, "hi"))
    assert model.requests[0].system == f"{turn.system}\n\nNOTE: go on"


async def test_call_model_cancelled_calls_nothing_and_finishes_cancelled() -> None:
    loop, model, _, _ = make_loop([text_step("never")])
    token = CancelToken()
    token.cancel("stop now")
    turn, state = await prepared(loop, cancel=token)

    events, state = await drive(loop, CallModel(), turn, state)

    assert events == [] and not model.requests
    assert state.step == Finish("cancelled", halt=("cancelled", "stop now"))


async def test_call_model_stops_at_the_iteration_limit() -> None:
    loop, model, _, _ = make_loop([text_step("never")], max_iterations=2)
    turn, state = await prepared(loop)
    _, state = await drive(loop, CallModel(), turn, state._replace(iteration=2))
    assert isinstance(state.step, Finish) and state.step.finish_reason == "max_iterations"
    assert not model.requests


async def test_run_tools_runs_stores_and_goes_on() -> None:
    loop, _, echo, store = make_loop([])
    turn, state = await prepared(loop)
    calls = (call("echo", text="a"), call("echo", text="b"), call("nope"))

    events, state = await drive(loop, RunTools(calls, then=CallModel()), turn, state)

    assert [type(e) for e in events] == [ToolStart] * 3 + [ToolEnd] * 3
    ends = [e for e in events if isinstance(e, ToolEnd)]
    assert [e.result for e in ends[:2]] == ["echo: a", "echo: b"]
    assert ends[2].is_error and "unknown tool" in ends[2].result
    assert echo.runs == ["a", "b"] and state.step == CallModel()
    stored = await store.messages(KEY)
    assert [m.tool_call_id for m in stored] == [c.id for c in calls]
    assert list(state.messages[-3:]) == stored


async def test_run_tools_halts_when_a_hook_says_so() -> None:
    hooks = DefaultHookRegistry()

    async def halt(payload: hook_points.AfterToolCall) -> hook_points.ToolResultChange:
        return hook_points.ToolResultChange(halt=f"{payload.name} must stop")

    hooks.on_modifying(hook_points.AFTER_TOOL_RESULT, halt)
    loop, _, _, _ = make_loop([], hooks=hooks)
    turn, state = await prepared(loop)

    _, state = await drive(loop, RunTools((call("echo"),), then=CallModel()), turn, state)

    assert state.step == Finish("halted", halt=("guardrail", "echo must stop"))


async def test_finish_sends_error_halt_and_one_done() -> None:
    loop, _, _, _ = make_loop([])
    turn, state = await prepared(loop)
    state = state._replace(seq=7, final_text="partial answer", iteration=3)
    step = Finish("timeout", error=("timeout", "silent"), halt=("timeout", "silent"))

    events, state = await drive(loop, step, turn, state)

    assert [type(e) for e in events] == [ErrorEvent, Halt, Done]
    done = events[-1]
    assert isinstance(done, Done)
    assert (done.seq, done.text, done.finish_reason, done.iterations) == (
        10,
        "partial answer",
        "timeout",
        3,
    )
    assert state.step is None
    assert loop.sequences.last(KEY) == 10  # the next turn numbers on from here


async def test_an_answered_finish_fires_agent_done_with_what_was_stored() -> None:
    hooks = DefaultHookRegistry()
    seen: list[hook_points.AgentDone] = []

    async def record(payload: hook_points.AgentDone) -> None:
        seen.append(payload)

    hooks.on_void(hook_points.AGENT_DONE, record)
    loop, _, _, _ = make_loop([], hooks=hooks)
    turn, state = await prepared(loop)
    _, state = await drive(loop, UserPrompt("hi"), turn, state)
    state = state._replace(final_text="bye")

    await drive(loop, Finish("stop", answered=True), turn, state)
    await drive(loop, Finish("error", error=("fatal", "x")), turn, state)

    assert len(seen) == 1
    assert (seen[0].text, [m.content for m in seen[0].messages]) == ("bye", ["hi"])


async def test_a_turn_can_start_at_any_step() -> None:
    """A resumed turn re-running a tool: `run_start` first, then the tool, then the model."""
    loop, model, echo, _ = make_loop([text_step("done")])
    pending = call("echo", text="again")
    events = [
        e async for e in loop.run_from(KEY, RunTools((pending,), then=CallModel(note="resumed")))
    ]
    assert [e.type for e in events] == [
        "run_start",
        "tool_start",
        "tool_end",
        "text_delta",
        "usage",
        "done",
    ]
    assert [e.type for e in events].count("run_start") == 1
    assert echo.runs == ["again"]
    assert model.requests[0].messages[-1].tool_call_id == pending.id
    assert model.requests[0].system.endswith("resumed")
