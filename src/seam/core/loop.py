"""The agent loop: one turn in, a stream of typed events out.

`AgentLoop` receives every collaborator at construction and defaults each to the empty
stack, so a test needs only a scripted model. Per turn it re-reads the personality and
its toolset (hot reload), streams the model, runs tool calls, stores the transcript and
ends every turn with exactly one `Done` event, whatever happened.

A turn itself is a small state machine (`core/turn.py`, driven by `core/turn_driver.py`):
`run` starts it at `UserPrompt`, `run_from` at any step (the Coordinator resumes a
repaired submission at `RunTools` or `CallModel`). The hot path is the text-delta stream
inside the model step (`core/model_step.py`), written for speed.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from seam.contracts.context import (
    ContextBuilder,
    ContextCompressor,
    ContextUsage,
    TokenEstimator,
)
from seam.contracts.events import AgentEvent
from seam.contracts.guardrail import ApprovalDecision, CommandGate
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.messages import Message, Usage
from seam.contracts.model import ModelProvider
from seam.contracts.personality import Personality, PersonalityRegistry
from seam.contracts.sandbox import SandboxProvider
from seam.contracts.sessions import SessionStore
from seam.contracts.storage import Storage
from seam.contracts.tools import CancelToken, Subagents, ToolContext, ToolRegistry
from seam.contracts.tracing import NOOP_TRACER, Tracer
from seam.core.approvals import PendingApprovals
from seam.core.compression import HistoryCompressor
from seam.core.context import DefaultContextBuilder
from seam.core.hook_registry import DefaultHookRegistry
from seam.core.memory import NoopMemory
from seam.core.model_step import CallModel, UserPrompt
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.sessions import InMemorySessionStore
from seam.core.storage import InMemoryStorage, ScopedStorage
from seam.core.tokens import CharTokenEstimator
from seam.core.tool_registry import DefaultToolRegistry
from seam.core.turn import TranscriptWriter, TurnStep
from seam.core.turn_driver import compact_now, measure, run_turn

log = logging.getLogger("seam.loop")

# (provider, model, usage) -> cost in USD, or None when the price is unknown.
Pricing = Callable[[str, str, Usage], float | None]
# Picks the provider for a personality (its model, its fallback chain); cached by wiring.
ModelResolver = Callable[[Personality], ModelProvider]


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


class AgentLoop:
    def __init__(
        self,
        *,
        model: ModelProvider,
        tools: ToolRegistry | None = None,
        hooks: HookRegistry | None = None,
        personalities: PersonalityRegistry | None = None,
        memory: MemoryProvider | None = None,
        sessions: SessionStore | None = None,
        storage: Storage | None = None,
        sandboxes: SandboxProvider | None = None,
        gate: CommandGate | None = None,
        pricing: Pricing | None = None,
        models: ModelResolver | None = None,
        redact: Callable[[str], str] | None = None,
        working_dir: str = ".",
        fs_deny: Iterable[str] = (),
        options: LoopOptions | None = None,
        new_id: Callable[[], str] | None = None,
        context: ContextBuilder | None = None,
        compressor: ContextCompressor | None = None,
        estimator: TokenEstimator | None = None,
        tracer: Tracer | None = None,
    ) -> None:
        self.model = model
        # Spans for each model call and tool call (tracing off: the no-op tracer).
        self.tracer: Tracer = tracer if tracer is not None else NOOP_TRACER
        self.tools: ToolRegistry = tools if tools is not None else DefaultToolRegistry()
        self.hooks: HookRegistry = hooks if hooks is not None else DefaultHookRegistry()
        self.personalities: PersonalityRegistry = (
            personalities if personalities is not None else StaticPersonalityRegistry()
        )
        self.memory: MemoryProvider = memory if memory is not None else NoopMemory()
        self.sessions: SessionStore = sessions if sessions is not None else InMemorySessionStore()
        self.storage: Storage = storage if storage is not None else InMemoryStorage()
        self.sandboxes = sandboxes
        self.gate = gate
        self.pricing = pricing
        self.models = models
        # Applied to everything stored and to tool results (which the model then reads):
        # secrets a tool prints never reach the transcript, the events or the model.
        self.redact = redact
        self.working_dir = working_dir
        # Sessions that work somewhere else than `working_dir` (an editor's project per ACP
        # session): their tools, sandbox and project files are there. Set by the surface.
        self.working_dirs: dict[str, str] = {}
        # Sessions whose directory came from their stored spec: each turn checks it still
        # exists, failing rather than running somewhere else.
        self.restored_dirs: set[str] = set()
        self.fs_deny = tuple(fs_deny)
        self.options = options or LoopOptions()
        self._make_id = new_id or _token
        self.sequences = EventSequences()
        self.pending_approvals = PendingApprovals()
        # The context window: prompt assembly, token estimates, compaction (core/context*).
        self.estimator: TokenEstimator = estimator or CharTokenEstimator()
        self.context: ContextBuilder = context or DefaultContextBuilder()
        self.compressor: ContextCompressor = compressor or HistoryCompressor(
            estimator=self.estimator
        )
        # Sessions whose last estimate was past `context_warn_at` (warned once per crossing).
        self.context_warned: set[str] = set()
        # Per session: (messages counted, the last of them, their estimated tokens), so a
        # turn estimates only the messages added since the previous one.
        self.context_counts: dict[str, tuple[int, Message, int]] = {}

    def new_id(self) -> str:
        """A fresh turn id."""
        return self._make_id()

    def respond(self, session_key: str, call_id: str, decision: ApprovalDecision) -> bool:
        """Answer a `tool_approval_required` event; False if nothing is waiting for it."""
        return self.pending_approvals.respond(session_key, call_id, decision)

    def model_for(self, personality: Personality) -> ModelProvider:
        """The provider a personality's turns use (its own model or fallback chain, if any)."""
        return self.model if self.models is None else self.models(personality)

    def personality_for(self, personality_id: str | None) -> Personality:
        return self.personalities.get(personality_id or self.personalities.default_id)

    def working_dir_for(self, session_key: str) -> str:
        """Where the session works: its own directory if it was given one, else the loop's."""
        return self.working_dirs.get(session_key, self.working_dir)

    def tool_context(self, session_key: str, personality: Personality, **extra: Any) -> ToolContext:
        """The context a session's tools are built over (also used by `/tools` listings),
        in the session's own working directory (`working_dir_for`)."""
        storage = ScopedStorage(
            self.storage,
            working_dir=self.working_dir_for(session_key),
            read=personality.fs_read,
            write=personality.fs_write,
            deny=self.fs_deny,
        )
        sandbox = None
        if self.sandboxes is not None:
            sandbox = self.sandboxes.for_session(
                session_key,
                working_dir=storage.working_dir,
                network=personality.network,
                reach=storage.reach,
            )
        return ToolContext(
            session_key=session_key,
            storage=storage,
            working_dir=storage.working_dir,
            personality_id=personality.id,
            memory=self.memory,
            sandbox=sandbox,
            gate=self.gate,
            approval_mode=personality.approval_mode,
            redact=self.redact,
            **extra,
        )

    def run(
        self,
        session_key: str,
        user_message: str | None,
        *,
        personality: str | None = None,
        cancel: CancelToken | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn. Always ends with a `Done` event (unless the consumer stops early).

        `user_message=None` continues the stored conversation without new input.
        """
        if user_message is None:
            return self.run_from(session_key, CallModel(), personality=personality, cancel=cancel)
        if not isinstance(user_message, str):
            raise TypeError(f"user_message must be str, not {type(user_message).__name__}")
        return self.run_from(
            session_key, UserPrompt(user_message), personality=personality, cancel=cancel
        )

    def run_from(
        self,
        session_key: str,
        start: TurnStep,
        *,
        personality: str | None = None,
        cancel: CancelToken | None = None,
        transcript: TranscriptWriter | None = None,
        subagents: Subagents | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn from `start` (`UserPrompt(text)`, `CallModel(note=...)`,
        `RunTools(calls, then=CallModel())`, ...). `transcript` writes what the turn
        stores (default: the session store); `subagents` reach the session's children."""
        return run_turn(
            self,
            session_key,
            start,
            personality=personality,
            cancel=cancel or CancelToken(),
            transcript=transcript,
            subagents=subagents,
        )

    async def compress(
        self, session_key: str, *, personality: str | None = None
    ) -> list[AgentEvent]:
        """Compact the session's history now (`/compress`): the `context_compacted` event,
        and notices if it failed; empty when there is nothing to compact."""
        return await compact_now(self, session_key, personality)

    async def context_usage(
        self, session_key: str, *, personality: str | None = None
    ) -> ContextUsage | None:
        """Estimated size of the session's next request (None: no such session)."""
        return await measure(self, session_key, personality)

    def forget(self, session_key: str) -> None:
        """Drop what this process keeps per session (sequence number, context figures);
        a long-lived worker calls it as sessions leave its cache. A later turn of the
        session starts from what the store says (see `EventSequences.continue_after`)."""
        self.sequences.forget(session_key)
        self.context_counts.pop(session_key, None)
        self.context_warned.discard(session_key)


def _token() -> str:
    return secrets.token_hex(6)
