"""The values a turn's steps work with, and the narrow dependencies each step receives.

- `Turn`, frozen: what one turn is about (session key, turn id, cancel token, and what
  preparing the turn resolved: personality, model, built tools, tool context, system
  prompt, transcript writer).
- `TurnState`: where the turn is (the step it is at, the request history, sequence
  number, usage, ...). A step never changes it: it yields its events, then the next
  state, made with `TurnState.but` (one or two per step, none per event).
- Per-step dependencies (`StoreDeps`, `ContextDeps`, `ModelDeps`, `ToolDeps`,
  `FinishDeps`), each holding exactly what its step uses. `AgentLoop` builds them once,
  gathered in `TurnServices`; a test builds one with two or three fakes.

The steps import this module and nothing imports the steps but the driver and the loop,
so the turn's modules form no import circle.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, NamedTuple, Protocol, cast

from seam.contracts.context import ContextBuilder, ContextCompressor, TokenEstimator
from seam.contracts.events import AgentEvent
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.messages import EMPTY_USAGE, Message, Usage
from seam.contracts.model import ModelProvider, ToolDefinition
from seam.contracts.personality import Personality
from seam.contracts.sessions import SessionStore, UsageRecord
from seam.contracts.tools import CancelToken, Subagents, Tool, ToolContext, ToolRegistry
from seam.contracts.tracing import NOOP_TRACER, Tracer
from seam.contracts.turn_extras import NO_EXTRAS, TurnExtras
from seam.core.approvals import PendingApprovals
from seam.core.compression import HistoryCompressor
from seam.core.context import DefaultContextBuilder
from seam.core.hook_registry import DefaultHookRegistry
from seam.core.memory import NoopMemory
from seam.core.tokens import CharTokenEstimator

if TYPE_CHECKING:
    from seam.contracts.budget import BudgetGate

# (provider, model, usage) -> cost in USD, or None when the price is unknown.
Pricing = Callable[[str, str, Usage], float | None]
# Picks the provider for a personality (its model, its fallback chain); cached by wiring.
ModelResolver = Callable[[Personality], ModelProvider]
# Writes transcript messages; a durable submission's writer also advances the submission
# in the same transaction (see `ExecutionStore.append_for`).
# `usage`: the model calls the messages came from, stored in the same write.
TranscriptWriter = Callable[[Sequence[Message], Sequence[UsageRecord]], Awaitable[None]]
Redact = Callable[[str], str]
# An event raised before it can be numbered (it waits for `run_start` or the next yield).
Pending = Callable[[int], AgentEvent]


@dataclass(frozen=True, slots=True)
class LoopOptions:
    # Per tool result, in characters; the overflow is cut with a marker the model can read.
    result_budget_chars: int = 80_000
    # Seconds the model may go without producing a chunk before the call is abandoned.
    streaming_timeout: float = 120.0
    # Model calls per turn; a turn that still wants tools after this many is halted.
    max_iterations: int = 25
    # Messages of history sent per request (None: all of them).
    history_limit: int | None = None
    # Seconds to wait for a person to answer an approval request; no answer means deny.
    approval_timeout: float = 300.0
    # Tokens the model can take in (None: the provider's `max_context_tokens`).
    context_window: int | None = None
    # Share of the window past which the history is compacted (None: never).
    compress_at: float | None = 0.75
    # Share of the window past which a `context_warning` is streamed, once per crossing.
    context_warn_at: float | None = 0.85
    # Messages a compaction never summarises: the first ones and the last ones.
    protect_first: int = 3
    protect_last: int = 20


class EventSequences:
    """The last event sequence number of each session in this process, so a session's
    events are numbered on across its turns (and, after `continue_after`, across a
    restart)."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: dict[str, int] = {}

    def last(self, session_key: str) -> int:
        return self._last.get(session_key, 0)

    def record(self, session_key: str, seq: int) -> None:
        self._last[session_key] = seq

    def continue_after(self, session_key: str, seq: int) -> None:
        """Number the session's next events after `seq` (the last one a store holds), so
        a restarted process never reuses a sequence number."""
        if seq > self._last.get(session_key, 0):
            self._last[session_key] = seq

    def forget(self, session_key: str) -> None:
        self._last.pop(session_key, None)

    def __contains__(self, session_key: object) -> bool:
        return session_key in self._last


# -- the turn's values --


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """What a turn is asked to do: the session, the step it starts from, and what the
    caller adds (a personality over the session's, a cancel token, the transcript writer
    of a durable submission, the session's subagents, the caller's extras)."""

    session_key: str
    start: TurnStep
    personality: str | None = None
    cancel: CancelToken = field(default_factory=CancelToken)
    transcript: TranscriptWriter | None = None
    subagents: Subagents | None = None
    # The caller's own tools, sampling settings, ... (`contracts/turn_extras.py`).
    extras: TurnExtras = NO_EXTRAS


@dataclass(frozen=True, slots=True)
class Turn:
    """What one turn is about; fixed once the turn is prepared."""

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
    # The caller's own tools (in `definitions` too), sampling settings, ...
    extras: TurnExtras = NO_EXTRAS


class ContextEstimate(NamedTuple):
    """The incremental estimate of the request size: the system prompt and tools it was
    made for, their overhead, and how many history messages were counted (and their
    tokens), so each request counts only messages added since the last one. A tuple: a
    new one is made before every request."""

    system: str | None = None
    overhead: int = 0
    counted: int = 0
    tokens: int = 0


class TurnState(NamedTuple):
    """Where one turn is. Immutable: a step returns a new one (`but`, one or two per
    step, none per event). A named tuple rather than a frozen dataclass for the cost of
    that copy: the tuple is built in C, a frozen dataclass sets every field through
    `object.__setattr__`."""

    # The step the turn is at (None: the turn is over).
    step: TurnStep | None = None
    # The request history as the model is sent it (after any compaction).
    messages: tuple[Message, ...] = ()
    # The last sequence number used (the next event gets seq + 1).
    seq: int = 0
    usage: Usage = EMPTY_USAGE
    # Every message this turn stored, in order.
    stored: tuple[Message, ...] = ()
    # Model calls made so far.
    iteration: int = 0
    # The last assistant text (what `done` carries).
    final_text: str = ""
    # Whether `run_start` was sent.
    started: bool = False
    # Events raised before `run_start` or between steps, numbered when they are sent.
    waiting: tuple[Pending, ...] = ()
    estimate: ContextEstimate = ContextEstimate()
    # A context-overflow error is answered with one compaction and retry per turn.
    overflow_retried: bool = False

    def but(self, **changes: object) -> TurnState:
        """A copy with `changes`: `_replace` for the hot paths, a quarter cheaper
        (`_replace` pops every field from the keywords; this sets only those given)."""
        values: list[object] = list(self)
        for name, value in changes.items():
            values[_FIELD_INDEX[name]] = value
        return tuple.__new__(TurnState, values)


_FIELD_INDEX = {name: i for i, name in enumerate(TurnState._fields)}


# What a step yields: its events; it ends by raising `StepEnd(next_state)`.
StepOutput = AsyncGenerator[AgentEvent, None]


class StepEnd(Exception):
    """How a step returns the turn's next state. An async generator cannot `return` a
    value (PEP 525), so a step ends the way a generator's return value travels in
    `StopIteration`: after its last event it raises `StepEnd(state)`, which the driver
    catches. One raise per step and nothing per event (a state yielded among the events
    would cost a type check on every text delta). The state travels as the exception's
    one argument (built in C, no `__init__` frame per step)."""

    __slots__ = ()

    if TYPE_CHECKING:  # `BaseException` keeps the argument in `args`

        def __init__(self, state: TurnState) -> None: ...

    @property
    def state(self) -> TurnState:
        return cast(TurnState, self.args[0])


class TurnStep(Protocol):
    # Whether the driver sends `run_start` before this step when it was not sent yet
    # (False only for steps that send nothing or open the turn themselves).
    opens_turn: ClassVar[bool]

    def run(self, services: TurnServices, turn: Turn, state: TurnState) -> StepOutput:
        """The step's events; ends with `StepEnd(next_state)` (its `step`: what
        follows)."""
        ...


# -- what each step depends on --


@dataclass(frozen=True, slots=True)
class StoreDeps:
    """Writing the transcript: the session store (when the turn has no writer of its own)
    and the redaction applied to everything stored."""

    sessions: SessionStore
    redact: Redact | None = None


@dataclass(frozen=True, slots=True)
class ContextDeps:
    """Building the prompt and keeping the request inside the context window. `counts`
    and `warned` are the loop's per-session memo across turns (see `context_step`)."""

    store: StoreDeps
    options: LoopOptions = LoopOptions()
    estimator: TokenEstimator = field(default_factory=CharTokenEstimator)
    builder: ContextBuilder = field(default_factory=DefaultContextBuilder)
    compressor: ContextCompressor = field(default_factory=HistoryCompressor)
    memory: MemoryProvider = field(default_factory=NoopMemory)
    counts: dict[str, tuple[int, Message, int]] = field(default_factory=dict)
    warned: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class ModelDeps:
    """The model step: the context (fitted before each call), hooks, tracing, pricing,
    spending limits."""

    context: ContextDeps
    hooks: HookRegistry = field(default_factory=DefaultHookRegistry)
    tracer: Tracer = NOOP_TRACER
    pricing: Pricing | None = None
    # With a resolver the turn's provider already is the personality's model, so the
    # request names no model of its own.
    resolves_models: bool = False
    # Asked before each call; a refusal ends the turn (`core/budget_step.py`).
    budget: BudgetGate | None = None


@dataclass(frozen=True, slots=True)
class ToolDeps:
    """The tool step: hooks, tracing, approvals, the result budget and redaction."""

    store: StoreDeps
    options: LoopOptions = LoopOptions()
    hooks: HookRegistry = field(default_factory=DefaultHookRegistry)
    tracer: Tracer = NOOP_TRACER
    approvals: PendingApprovals = field(default_factory=PendingApprovals)


@dataclass(frozen=True, slots=True)
class FinishDeps:
    """The last step: memory sync, the `agent_done` hook, and where sequence numbers are
    recorded for the session's next turn."""

    sequences: EventSequences = field(default_factory=EventSequences)
    hooks: HookRegistry = field(default_factory=DefaultHookRegistry)
    memory: MemoryProvider = field(default_factory=NoopMemory)
    redact: Redact | None = None


@dataclass(frozen=True, slots=True)
class TurnServices:
    """Every step's dependencies, built once by the loop; each step takes its own."""

    context: ContextDeps
    model: ModelDeps
    tools: ToolDeps
    finish: FinishDeps


# Builds a session's tool context (`AgentLoop.tool_context`).
ToolContexts = Callable[..., ToolContext]


@dataclass(frozen=True, slots=True)
class SetupDeps:
    """Preparing a turn (`turn_driver`): reading the session, resolving the personality,
    model and toolset, and checking the session's working directory."""

    services: TurnServices
    sequences: EventSequences
    sessions: SessionStore
    tools: ToolRegistry
    new_id: Callable[[], str]
    # (personality id, session key): the personality as the session's tenant sees it.
    personality_for: Callable[[str | None, str | None], Personality]
    model_for: Callable[[Personality], ModelProvider]
    tool_context: ToolContexts
    # Why the session cannot run where its stored spec says (None: it can).
    missing_dir: Callable[[str], Awaitable[str | None]]
    hooks: HookRegistry = field(default_factory=DefaultHookRegistry)
