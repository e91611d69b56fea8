"""Hooks: typed points where plugins watch or steer a turn.

Two kinds, as in the seeds:

- void hooks fan out; a failing handler is logged and never breaks a turn;
- modifying hooks run in registration order and return a *change* (or None); per field of
  the change, the first non-None value wins.

Every hook point is a typed handle (`VoidHook[Payload]`, `ModifyingHook[Payload, Change]`)
and every payload and change is a frozen dataclass, so a handler that reads a field that
does not exist, or returns a change with a misspelt one, fails the type check (and, for a
change, raises `TypeError` when it is built).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from seam.contracts.messages import Message, Usage
from seam.contracts.model import ModelRequest

P = TypeVar("P")
C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class VoidHook(Generic[P]):
    """A point that tells handlers what happened; they cannot change it."""

    name: str


@dataclass(frozen=True, slots=True)
class ModifyingHook(Generic[P, C]):
    """A point whose handlers may return a change of type `C` (merged first-non-None)."""

    name: str


# -- payloads and changes --


@dataclass(frozen=True, slots=True)
class SessionStart:
    """A turn found no stored session and created it."""

    session_key: str
    personality: str


@dataclass(frozen=True, slots=True)
class BeforePromptBuild:
    session_key: str
    system: str
    # The turn's new input; "" when it continues the stored conversation (a resume).
    user_message: str


@dataclass(frozen=True, slots=True)
class PromptChange:
    # Replaces the system prompt.
    system: str | None = None
    # Appended to the (possibly replaced) system prompt after a blank line.
    append_system: str | None = None


@dataclass(frozen=True, slots=True)
class _AtStep:
    """Where in a turn a model or tool call happens; the payloads about one start so."""

    session_key: str
    turn_id: str
    # The turn's model call (1-based); for a tool call, the one that asked for it (0 for
    # calls a resumed turn re-runs before its first model call).
    iteration: int


@dataclass(frozen=True, slots=True)
class BeforeLLMCall(_AtStep):
    request: ModelRequest


@dataclass(frozen=True, slots=True)
class AfterLLMCall(_AtStep):
    # The assistant message as stored (its text and tool calls).
    message: Message
    # The turn's usage so far.
    usage: Usage


@dataclass(frozen=True, slots=True)
class HookNotice:
    """Something the person should see, streamed as a `notice` event."""

    kind: str
    message: str


@dataclass(frozen=True, slots=True)
class BeforeToolCall(_AtStep):
    call_id: str
    name: str
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolCallChange:
    # Do not run the call; the model reads "blocked: <reason>" as its error result.
    block: str | None = None
    # End the turn with a `halt` event once this step's results are stored.
    halt: str | None = None
    # Run the call with these arguments instead.
    arguments: Mapping[str, Any] | None = None
    notice: HookNotice | None = None


@dataclass(frozen=True, slots=True)
class AfterToolCall(_AtStep):
    """A tool call's result (after the result budget), before the model reads it."""

    call_id: str
    name: str
    # The parsed arguments; the raw text when they were not a JSON object.
    arguments: Mapping[str, Any] | str
    result: str
    is_error: bool


@dataclass(frozen=True, slots=True)
class ToolResultChange:
    # Replaces what the model reads.
    result: str | None = None
    # End the turn with a `halt` event once this step's results are stored.
    halt: str | None = None
    notice: HookNotice | None = None


@dataclass(frozen=True, slots=True)
class AgentDone:
    """A turn ended with the model's final answer."""

    session_key: str
    turn_id: str
    text: str
    usage: Usage
    # Every message the turn stored, in order.
    messages: Sequence[Message]


@dataclass(frozen=True, slots=True)
class SubagentSpawned:
    """A session started a child session for a task (a subagent or a workflow node)."""

    parent_key: str
    child_key: str
    personality: str


# -- the hook points the runtime fires --

SESSION_START: VoidHook[SessionStart] = VoidHook("session_start")
BEFORE_PROMPT_BUILD: ModifyingHook[BeforePromptBuild, PromptChange] = ModifyingHook(
    "before_prompt_build"
)
BEFORE_LLM_CALL: VoidHook[BeforeLLMCall] = VoidHook("before_llm_call")
AFTER_LLM_CALL: VoidHook[AfterLLMCall] = VoidHook("after_llm_call")
BEFORE_TOOL_CALL: ModifyingHook[BeforeToolCall, ToolCallChange] = ModifyingHook("before_tool_call")
# Modifying, on every tool result: rewrite what the model reads, raise a notice, halt.
AFTER_TOOL_RESULT: ModifyingHook[AfterToolCall, ToolResultChange] = ModifyingHook(
    "after_tool_result"
)
# Void, after the result is final (what the model reads).
AFTER_TOOL_CALL: VoidHook[AfterToolCall] = VoidHook("after_tool_call")
AGENT_DONE: VoidHook[AgentDone] = VoidHook("agent_done")
SUBAGENT_SPAWNED: VoidHook[SubagentSpawned] = VoidHook("subagent_spawned")

AnyHook = VoidHook[Any] | ModifyingHook[Any, Any]


def merge_changes(first: C, later: C) -> C:
    """`first` with each of its None fields taken from `later` (first non-None wins)."""
    updates: dict[str, Any] = {}
    for field in dataclasses.fields(first):  # type: ignore[arg-type]
        if getattr(first, field.name) is None:
            value = getattr(later, field.name)
            if value is not None:
                updates[field.name] = value
    return dataclasses.replace(first, **updates) if updates else first  # type: ignore[type-var]


class HookRegistry(Protocol):
    def on_void(self, hook: VoidHook[P], handler: Callable[[P], Awaitable[None]]) -> None: ...

    def on_modifying(
        self, hook: ModifyingHook[P, C], handler: Callable[[P], Awaitable[C | None]]
    ) -> None: ...

    def has(self, hook: AnyHook) -> bool:
        """Cheap check so the loop builds no payload for hooks nobody listens to."""
        ...

    async def fire_void(self, hook: VoidHook[P], payload: P) -> None: ...

    async def fire_modifying(self, hook: ModifyingHook[P, C], payload: P) -> C | None:
        """The handlers' changes merged (see `merge_changes`); None when none had one."""
        ...
