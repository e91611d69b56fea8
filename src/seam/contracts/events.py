"""The typed events an agent turn streams to every surface.

Each event is a slotted dataclass with a `type` tag (a class constant, so it costs
nothing per event). Not frozen: a frozen dataclass sets each field through
`object.__setattr__`, which made building an event (a turn builds hundreds) about 40%
dearer; nothing changes an event once it is sent, by convention. Every event carries the
session key, the turn id and a per-session sequence number, so a consumer that reconnects
can resume where it left off. Consumers must ignore event types they do not know.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, ClassVar, Literal

from seam.contracts.messages import EMPTY_USAGE, Usage

HaltReason = Literal[
    "max_iterations", "cancelled", "timeout", "model_error", "guardrail", "hook", "budget"
]


@dataclass(slots=True)
class _Event:
    type: ClassVar[str]
    session_key: str
    turn_id: str
    seq: int


@dataclass(slots=True)
class RunStart(_Event):
    type: ClassVar[str] = "run_start"
    provider: str
    model: str
    personality: str


@dataclass(slots=True)
class TextDelta(_Event):
    type: ClassVar[str] = "text_delta"
    text: str


@dataclass(slots=True)
class ThinkingDelta(_Event):
    type: ClassVar[str] = "thinking_delta"
    text: str


@dataclass(slots=True)
class ToolStart(_Event):
    type: ClassVar[str] = "tool_start"
    call_id: str
    name: str
    arguments: str


@dataclass(slots=True)
class ToolProgress(_Event):
    type: ClassVar[str] = "tool_progress"
    call_id: str
    name: str
    message: str


@dataclass(slots=True)
class ToolEnd(_Event):
    type: ClassVar[str] = "tool_end"
    call_id: str
    name: str
    result: str
    is_error: bool
    duration_ms: float
    truncated: bool = False


@dataclass(slots=True)
class ToolApprovalRequired(_Event):
    type: ClassVar[str] = "tool_approval_required"
    call_id: str
    name: str
    command: str
    reason: str


@dataclass(slots=True)
class ToolApprovalResponse(_Event):
    type: ClassVar[str] = "tool_approval_response"
    call_id: str
    decision: str


@dataclass(slots=True)
class UsageEvent(_Event):
    type: ClassVar[str] = "usage"
    usage: Usage


@dataclass(slots=True)
class ContextCompacted(_Event):
    type: ClassVar[str] = "context_compacted"
    messages_before: int
    messages_after: int
    tokens_before: int
    tokens_after: int
    # "threshold" (usage passed it), "overflow" (the provider refused the request), "manual".
    reason: str = "threshold"
    # False when clearing old tool results was enough and no summary was written.
    summarised: bool = True


@dataclass(slots=True)
class ContextWarning(_Event):
    """The request uses more of the model's context window than the warning threshold;
    sent once each time usage crosses it."""

    type: ClassVar[str] = "context_warning"
    tokens: int
    window: int
    percent: int


@dataclass(slots=True)
class Halt(_Event):
    type: ClassVar[str] = "halt"
    reason: HaltReason
    message: str


@dataclass(slots=True)
class Notice(_Event):
    """Something the person should know that is not an error: content flagged as a
    possible prompt injection, a tool call the model wrote as text that was not used."""

    type: ClassVar[str] = "notice"
    kind: str
    message: str


@dataclass(slots=True)
class ErrorEvent(_Event):
    type: ClassVar[str] = "error"
    kind: str
    message: str


@dataclass(slots=True)
class Done(_Event):
    """The last event of every turn, whatever happened in it."""

    type: ClassVar[str] = "done"
    text: str
    finish_reason: str
    usage: Usage = EMPTY_USAGE
    iterations: int = 0


AgentEvent = (
    RunStart
    | TextDelta
    | ThinkingDelta
    | ToolStart
    | ToolProgress
    | ToolEnd
    | ToolApprovalRequired
    | ToolApprovalResponse
    | UsageEvent
    | ContextCompacted
    | ContextWarning
    | Halt
    | Notice
    | ErrorEvent
    | Done
)


def event_to_dict(event: AgentEvent) -> dict[str, Any]:
    """A JSON-ready dict with the `type` tag first (for `--json` lines, SSE, logs)."""
    out: dict[str, Any] = {"type": event.type}
    for f in fields(event):
        value = getattr(event, f.name)
        if isinstance(value, Usage):
            value = {u.name: getattr(value, u.name) for u in fields(value)}
        out[f.name] = value
    return out
