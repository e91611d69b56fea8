"""One turn of the agent loop as a small state machine: the helpers every step shares,
and `Finish`, the last step of every turn.

The values are in `core/turn_deps.py`: `Turn` (what the turn is about), `TurnState`
(where it is; a step returns a new one) and each step's dependencies. A step is a small
frozen value whose `run(services, turn, state)` takes its own dependencies from
`services`, yields the events of that step, then returns the next `TurnState` by
raising `StepEnd` (its `step` is the one that follows; None: the turn is over). The
steps are `UserPrompt` and `CallModel` (`core/model_step.py`), `RunTools`
(`core/tool_step.py`) and `Finish` (here).

`core/turn_driver.py` prepares the turn and drives the steps. Resuming a turn is only a
matter of which step it starts from (the Coordinator's repair plan picks it).

`run_start` waits for the model's first chunk (a routing provider says there which
provider and model answer); it is built in one place, `open_turn`: the model step calls
it on its first chunk, the driver before any other step that has something to show
(`opens_turn`). Events raised before it (context notices) wait in `state.waiting` and
follow it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from seam.contracts import hooks
from seam.contracts.events import AgentEvent, Done, ErrorEvent, Halt, HaltReason, RunStart
from seam.contracts.hooks import AgentDone
from seam.contracts.messages import Message, ToolCall, Usage
from seam.contracts.model import RouteChunk
from seam.contracts.sessions import UsageRecord
from seam.core.hook_registry import fire_isolated
from seam.core.turn_deps import (
    FinishDeps,
    Pricing,
    StepEnd,
    StepOutput,
    StoreDeps,
    TranscriptWriter,
    Turn,
    TurnServices,
    TurnState,
    TurnStep,
)

log = logging.getLogger("seam.loop")

__all__ = [
    "Finish",
    "TranscriptWriter",
    "TurnStep",
    "UnknownPersonality",
    "flush",
    "open_turn",
    "record_usage",
    "save_partial",
    "store",
    "usage_record",
]


class UnknownPersonality(Exception):
    pass


# -- helpers every step shares --


def open_turn(
    turn: Turn, state: TurnState, route: RouteChunk | None
) -> tuple[list[AgentEvent], TurnState]:
    """`run_start` (naming who answers: the route, else the turn's model), the events
    that waited for it, and the state after them. The only place a `RunStart` is built."""
    model = turn.model
    personality = turn.personality
    seq = state.seq + 1
    start = RunStart(
        session_key=turn.session_key,
        turn_id=turn.turn_id,
        seq=seq,
        provider=route.provider if route else model.name,
        model=route.model if route else (personality.model or model.model),
        personality=personality.id,
    )
    events: list[AgentEvent] = [start]
    for make in state.waiting:
        seq += 1
        events.append(make(seq))
    return events, state.but(seq=seq, waiting=(), started=True)


def flush(state: TurnState) -> tuple[list[AgentEvent], TurnState]:
    """The waiting events, numbered now, and the state after them."""
    if not state.waiting:
        return [], state
    seq = state.seq
    events = [make(seq + i) for i, make in enumerate(state.waiting, 1)]
    return events, state.but(seq=seq + len(events), waiting=())


async def store(
    deps: StoreDeps,
    turn: Turn,
    state: TurnState,
    *messages: Message,
    used: UsageRecord | None = None,
    **changes: Any,
) -> TurnState:
    """Write messages to the transcript (redacted), through the turn's writer; `used`
    (the call they came from) goes in the same write when the writer takes it. The state
    after it, with `changes` too (one new state for the whole step's end)."""
    usage = used
    redact = deps.redact
    if redact is not None:
        messages = tuple(_redacted(m, redact) for m in messages)
    if turn.transcript is not None:
        await turn.transcript(messages, () if usage is None else (usage,))
    else:
        if usage is not None:
            await _write_usage(deps, turn, usage)
        await deps.sessions.append(turn.session_key, messages)
    changes["stored"] = state.stored + messages
    return state.but(**changes)


async def save_partial(deps: StoreDeps, turn: Turn, state: TurnState, text: str) -> TurnState:
    """Keep streamed text that never became a full reply, marked as interrupted."""
    if not text:
        return state
    try:
        return await store(deps, turn, state, Message("assistant", text, interrupted=True))
    except Exception:
        log.exception("could not save interrupted text for %s", turn.session_key)
        return state


def usage_record(
    pricing: Pricing | None, turn: Turn, usage: Usage, route: RouteChunk | None
) -> UsageRecord:
    """What one model call used, priced when the loop knows the model's price."""
    provider, name = answered_by(turn, route)
    cost = pricing(provider, name, usage) if pricing is not None else None
    return UsageRecord(provider, name, usage, cost, turn.turn_id)


def answered_by(turn: Turn, route: RouteChunk | None) -> tuple[str, str]:
    """(provider, model) of a call: the route's when the provider named one."""
    if route is not None:
        return route.provider, route.model
    model = turn.model
    return model.name, turn.personality.model or model.model


async def record_usage(deps: StoreDeps, turn: Turn, record: UsageRecord) -> None:
    """Store usage on its own (no message to store it with)."""
    if turn.transcript is None:
        await _write_usage(deps, turn, record)
        return
    try:
        await turn.transcript((), (record,))
    except Exception:
        log.exception("could not record usage for %s", turn.session_key)


async def _write_usage(deps: StoreDeps, turn: Turn, record: UsageRecord) -> None:
    # Usage is bookkeeping: failing to store it never fails the turn.
    try:
        await deps.sessions.record_usage(turn.session_key, record)
    except Exception:
        log.exception("could not record usage for %s", turn.session_key)


def _redacted(message: Message, redact: Callable[[str], str]) -> Message:
    """`message` with its text and tool arguments redacted; itself (no copy) when the
    redaction changed nothing, which is nearly always."""
    content = redact(message.content)
    calls = message.tool_calls
    if calls:
        cleaned = tuple(_redacted_call(c, redact) for c in calls)
        if any(new is not old for new, old in zip(cleaned, calls, strict=True)):
            calls = cleaned
    if content == message.content and calls is message.tool_calls:
        return message
    return replace(message, content=content, tool_calls=calls)


def _redacted_call(call: ToolCall, redact: Callable[[str], str]) -> ToolCall:
    arguments = redact(call.arguments)
    return call if arguments == call.arguments else replace(call, arguments=arguments)


# -- the last step of every turn --


@dataclass(frozen=True, slots=True)
class Finish:
    """The end of every turn: its error and halt events, if any, then exactly one `done`.

    `answered`: the model gave its final answer; memory is synced and `agent_done` fires.
    """

    finish_reason: str
    error: tuple[str, str] | None = None  # (kind, message)
    halt: tuple[HaltReason, str] | None = None  # (reason, message)
    answered: bool = False
    opens_turn: ClassVar[bool] = True

    def run(self, services: TurnServices, turn: Turn, state: TurnState) -> StepOutput:
        return finish(self, services.finish, turn, state)


async def finish(step: Finish, deps: FinishDeps, turn: Turn, state: TurnState) -> StepOutput:
    """Run `Finish`: the events it carries and `done`; the state it leaves has no step."""
    key = turn.session_key
    turn_id = turn.turn_id
    if step.answered:
        await _answered(deps, turn, state)
    seq = state.seq
    if step.error is not None:
        seq += 1
        yield ErrorEvent(key, turn_id, seq, *step.error)
    if step.halt is not None:
        seq += 1
        yield Halt(key, turn_id, seq, *step.halt)
    text = state.final_text
    if deps.redact is not None:
        text = deps.redact(text)
    seq += 1
    # Recorded now: a consumer may stop at `done` without closing the stream.
    deps.sequences.record(key, seq)
    yield Done(key, turn_id, seq, text, step.finish_reason, state.usage, state.iteration)
    raise StepEnd(state.but(step=None, seq=seq))


async def _answered(deps: FinishDeps, turn: Turn, state: TurnState) -> None:
    """Sync memory with what the turn stored and fire `agent_done`."""
    key = turn.session_key
    try:
        await deps.memory.sync(key, list(state.stored))
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("memory sync failed for %s; the turn goes on", key)
    if deps.hooks.has(hooks.AGENT_DONE):
        payload = AgentDone(key, turn.turn_id, state.final_text, state.usage, state.stored)
        await fire_isolated(deps.hooks, hooks.AGENT_DONE, payload)
