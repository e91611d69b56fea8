"""One turn of the agent loop as a small state machine.

A turn is three values:

- `TurnDeps`, frozen: what the turn depends on (the loop's collaborators, the session
  key, turn id and cancel token, and what preparing the turn resolved: personality,
  model, built tools, tool context, system prompt, transcript writer);
- `TurnState`, mutable: where the turn is (request history, sequence number, usage,
  streamed text not yet stored, iteration, why it halts);
- the step it is at. A step is a small frozen value whose `run(deps, state)` yields the
  events of that step and sets `state.next` to the step that follows (None: the turn is
  over). The steps are `UserPrompt` and `CallModel` (`core/model_step.py`),
  `RunTools` (`core/tool_step.py`) and `Finish` (here).

`core/turn_driver.py` prepares the two values and drives the steps. Resuming a turn is
only a matter of which step it starts from (the Coordinator's repair plan picks it).

`run_start` waits for the model's first chunk (a routing provider says there which
provider and model answer); it is built in one place, `open_turn`: the model step calls
it on its first chunk, the driver before any other step that has something to show
(`opens_turn`). Events raised before it (context notices) wait in `state.waiting` and
follow it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, ClassVar, Protocol

from seam.contracts import hooks
from seam.contracts.events import (
    AgentEvent,
    Done,
    ErrorEvent,
    Halt,
    HaltReason,
    RunStart,
)
from seam.contracts.hooks import AgentDone
from seam.contracts.messages import EMPTY_USAGE, Message, Usage
from seam.contracts.model import ModelProvider, RouteChunk, ToolDefinition
from seam.contracts.personality import Personality
from seam.contracts.sessions import UsageRecord
from seam.contracts.tools import CancelToken, Tool, ToolContext
from seam.core.hook_registry import fire_isolated

if TYPE_CHECKING:
    from seam.core.loop import AgentLoop

log = logging.getLogger("seam.loop")

# Writes transcript messages; a durable submission's writer also advances the submission
# in the same transaction (see `ExecutionStore.append_for`).
# `usage`: the model calls the messages came from, stored in the same write.
TranscriptWriter = Callable[[Sequence[Message], Sequence[UsageRecord]], Awaitable[None]]


class UnknownPersonality(Exception):
    pass


@dataclass(frozen=True, slots=True)
class TurnDeps:
    """What one turn depends on; fixed once the turn is prepared."""

    loop: AgentLoop
    session_key: str
    turn_id: str
    cancel: CancelToken
    personality: Personality
    model: ModelProvider
    tools: Mapping[str, Tool]
    definitions: Sequence[ToolDefinition]
    ctx: ToolContext
    system: str
    # None: the session store's own `append`.
    transcript: TranscriptWriter | None = None


@dataclass(slots=True)
class ContextEstimate:
    """The incremental estimate of the request size: the system prompt and tools it was
    made for, their overhead, and how many history messages were counted (and their
    tokens), so each request counts only messages added since the last one."""

    system: str | None = None
    overhead: int = 0
    counted: int = 0
    tokens: int = 0


@dataclass(slots=True, eq=False)
class TurnState:
    """Where one turn is. Owned by the turn; steps read and advance it."""

    # The request history as the model is sent it (after any compaction).
    messages: list[Message]
    # The last sequence number used (the next event gets seq + 1).
    seq: int = 0
    usage: Usage = EMPTY_USAGE
    # Assistant text streamed but not yet stored: kept so an interruption can save it.
    partial: list[str] = field(default_factory=list)
    # Every message this turn stored, in order.
    stored: list[Message] = field(default_factory=list)
    # Model calls made so far.
    iteration: int = 0
    # The last assistant text (what `done` carries).
    final_text: str = ""
    # Set by a modifying hook (the tool-loop circuit breaker): end after this step.
    halt_reason: str | None = None
    # Whether `run_start` was sent.
    started: bool = False
    # Events raised before `run_start` or between steps, numbered when they are sent.
    waiting: list[Callable[[int], AgentEvent]] = field(default_factory=list)
    estimate: ContextEstimate = field(default_factory=ContextEstimate)
    # A context-overflow error is answered with one compaction and retry per turn.
    overflow_retried: bool = False
    # Set by each step: the step that follows (None: the turn is over).
    next: TurnStep | None = None


class TurnStep(Protocol):
    # Whether the driver sends `run_start` before this step when it was not sent yet
    # (False only for steps that send nothing or open the turn themselves).
    opens_turn: ClassVar[bool]

    def run(self, deps: TurnDeps, state: TurnState) -> AsyncGenerator[AgentEvent, None]:
        """The step's events; sets `state.next` before it ends."""
        ...


# -- helpers every step shares --


def next_seq(state: TurnState) -> int:
    state.seq += 1
    return state.seq


def open_turn(deps: TurnDeps, state: TurnState, route: RouteChunk | None) -> list[AgentEvent]:
    """`run_start` (naming who answers: the route, else the turn's model) and the events
    that waited for it. The only place a `RunStart` is built."""
    state.started = True
    model = deps.model
    personality = deps.personality
    start = RunStart(
        session_key=deps.session_key,
        turn_id=deps.turn_id,
        seq=next_seq(state),
        provider=route.provider if route else model.name,
        model=route.model if route else (personality.model or model.model),
        personality=personality.id,
    )
    return [start, *flush(state)]


def flush(state: TurnState) -> list[AgentEvent]:
    """The waiting events, numbered now."""
    waiting = state.waiting
    if not waiting:
        return []
    state.waiting = []
    return [make(next_seq(state)) for make in waiting]


async def store(
    deps: TurnDeps, state: TurnState, *messages: Message, usage: UsageRecord | None = None
) -> None:
    """Write messages to the transcript (redacted), through the turn's writer; `usage`
    (the call they came from) goes in the same write when the writer takes it."""
    redact = deps.loop.redact
    if redact is not None:
        messages = tuple(_redacted(m, redact) for m in messages)
    if deps.transcript is not None:
        await deps.transcript(messages, () if usage is None else (usage,))
    else:
        if usage is not None:
            await _write_usage(deps, usage)
        await deps.loop.sessions.append(deps.session_key, messages)
    state.stored.extend(messages)


async def save_partial(deps: TurnDeps, state: TurnState) -> None:
    """Keep streamed text that never became a full reply, marked as interrupted."""
    if not state.partial:
        return
    text = "".join(state.partial)
    state.partial = []
    try:
        await store(deps, state, Message("assistant", text, interrupted=True))
    except Exception:
        log.exception("could not save interrupted text for %s", deps.session_key)


def usage_record(
    deps: TurnDeps, usage: Usage, route: RouteChunk | None, personality: Personality
) -> UsageRecord:
    """What one model call used, priced when the loop knows the model's price."""
    model = deps.model
    provider = route.provider if route else model.name
    name = route.model if route else (personality.model or model.model)
    loop = deps.loop
    cost = loop.pricing(provider, name, usage) if loop.pricing is not None else None
    return UsageRecord(provider, name, usage, cost, deps.turn_id)


async def record_usage(deps: TurnDeps, record: UsageRecord) -> None:
    """Store usage on its own (no message to store it with)."""
    if deps.transcript is None:
        await _write_usage(deps, record)
        return
    try:
        await deps.transcript((), (record,))
    except Exception:
        log.exception("could not record usage for %s", deps.session_key)


async def _write_usage(deps: TurnDeps, record: UsageRecord) -> None:
    # Usage is bookkeeping: failing to store it never fails the turn.
    try:
        await deps.loop.sessions.record_usage(deps.session_key, record)
    except Exception:
        log.exception("could not record usage for %s", deps.session_key)


def _redacted(message: Message, redact: Callable[[str], str]) -> Message:
    content = redact(message.content)
    calls = message.tool_calls
    if calls:
        calls = tuple(replace(c, arguments=redact(c.arguments)) for c in calls)
    if content is message.content and calls is message.tool_calls:
        return message
    return replace(message, content=content, tool_calls=calls)


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

    async def run(self, deps: TurnDeps, state: TurnState) -> AsyncGenerator[AgentEvent, None]:
        loop = deps.loop
        key = deps.session_key
        turn_id = deps.turn_id
        if self.answered:
            await _sync_memory(deps, state)
            if loop.hooks.has(hooks.AGENT_DONE):
                payload = AgentDone(
                    key, turn_id, state.final_text, state.usage, tuple(state.stored)
                )
                await fire_isolated(loop.hooks, hooks.AGENT_DONE, payload)
        if self.error is not None:
            kind, message = self.error
            yield ErrorEvent(key, turn_id, next_seq(state), kind, message)
        if self.halt is not None:
            reason, message = self.halt
            yield Halt(key, turn_id, next_seq(state), reason, message)
        text = state.final_text
        if loop.redact is not None:
            text = loop.redact(text)
        seq = next_seq(state)
        # Recorded now: a consumer may stop at `done` without closing the stream.
        loop.sequences.record(key, seq)
        state.next = None
        yield Done(key, turn_id, seq, text, self.finish_reason, state.usage, state.iteration)


async def _sync_memory(deps: TurnDeps, state: TurnState) -> None:
    try:
        await deps.loop.memory.sync(deps.session_key, state.stored)
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("memory sync failed for %s; the turn goes on", deps.session_key)
