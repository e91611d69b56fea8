"""The agent loop: one turn in, a stream of typed events out.

`AgentLoop` receives every collaborator at construction and defaults each to the empty
stack, so a test needs only a scripted model. Per turn it re-reads the personality and
its toolset (hot reload), streams the model, runs tool calls, stores the transcript and
ends every turn with exactly one `Done` event, whatever happened.

The hot path is the text-delta stream, so it is written for speed: events are frozen
slotted dataclasses built directly, the streaming timeout is a lazily re-armed watchdog
(one clock read per chunk, no task or timer per chunk), and hooks nobody listens to cost
one dict lookup.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from seam.contracts.events import (
    AgentEvent,
    UsageEvent,
)
from seam.contracts.guardrail import ApprovalDecision, CommandGate
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.messages import EMPTY_USAGE, Usage
from seam.contracts.model import (
    ModelProvider,
)
from seam.contracts.personality import Personality, PersonalityRegistry
from seam.contracts.sandbox import SandboxProvider
from seam.contracts.sessions import SessionStore
from seam.contracts.storage import Storage
from seam.contracts.tools import CancelToken, ToolContext, ToolRegistry
from seam.core.approvals import PendingApprovals
from seam.core.hook_registry import DefaultHookRegistry
from seam.core.memory import NoopMemory
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.sessions import InMemorySessionStore
from seam.core.storage import InMemoryStorage, ScopedStorage
from seam.core.tool_registry import DefaultToolRegistry
from seam.core.turn import Turn

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
    ) -> None:
        self.model = model
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
        self.fs_deny = tuple(fs_deny)
        self.options = options or LoopOptions()
        self._new_id = new_id or _token
        self._seq: dict[str, int] = {}
        self.pending_approvals = PendingApprovals()

    def respond(self, session_key: str, call_id: str, decision: ApprovalDecision) -> bool:
        """Answer a `tool_approval_required` event; False if nothing is waiting for it."""
        return self.pending_approvals.respond(session_key, call_id, decision)

    def model_for(self, personality: Personality) -> ModelProvider:
        """The provider a personality's turns use (its own model or fallback chain, if any)."""
        return self.model if self.models is None else self.models(personality)

    def personality_for(self, personality_id: str | None) -> Personality:
        return self.personalities.get(personality_id or self.personalities.default_id)

    def tool_context(self, session_key: str, personality: Personality, **extra: Any) -> ToolContext:
        """The context a session's tools are built over (also used by `/tools` listings)."""
        storage = ScopedStorage(
            self.storage,
            working_dir=self.working_dir,
            read=personality.fs_read,
            write=personality.fs_write,
            deny=self.fs_deny,
        )
        sandbox = None
        if self.sandboxes is not None:
            sandbox = self.sandboxes.for_session(
                session_key, working_dir=storage.working_dir, network=personality.network
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
            **extra,
        )

    def run(
        self,
        session_key: str,
        user_message: str,
        *,
        personality: str | None = None,
        cancel: CancelToken | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn. Always ends with a `Done` event (unless the consumer stops early)."""
        if not isinstance(user_message, str):
            raise TypeError(f"user_message must be str, not {type(user_message).__name__}")
        return Turn(self, session_key, cancel or CancelToken()).run(user_message, personality)


def _token() -> str:
    return secrets.token_hex(6)


def total_usage(events: Iterable[AgentEvent]) -> Usage:
    usage = EMPTY_USAGE
    for event in events:
        if isinstance(event, UsageEvent):
            usage = usage + event.usage
    return usage
