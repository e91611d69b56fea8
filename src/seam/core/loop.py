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

import secrets
from collections.abc import AsyncIterator
from typing import Any, Unpack

from seam.contracts.context import (
    ContextBuilder,
    ContextCompressor,
    ContextUsage,
    TokenEstimator,
)
from seam.contracts.events import AgentEvent
from seam.contracts.guardrail import ApprovalDecision
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.messages import Message
from seam.contracts.model import ModelProvider
from seam.contracts.personality import Personality, PersonalityRegistry
from seam.contracts.sessions import SessionStore
from seam.contracts.storage import Storage
from seam.contracts.tools import CancelToken, ToolContext, ToolRegistry
from seam.contracts.tracing import NOOP_TRACER, Tracer
from seam.contracts.turn_extras import NO_EXTRAS
from seam.core.approvals import PendingApprovals
from seam.core.compression import HistoryCompressor
from seam.core.context import DefaultContextBuilder
from seam.core.event_log import Remembered
from seam.core.hook_registry import DefaultHookRegistry
from seam.core.loop_parts import LoopParts, RunOptions, TurnOptions, check_keywords, given_or
from seam.core.memory import NoopMemory, memory_for_session
from seam.core.model_step import CallModel, UserPrompt
from seam.core.personalities import PersonalityOverlay, StaticPersonalityRegistry
from seam.core.sessions import InMemorySessionStore
from seam.core.storage import InMemoryStorage, ScopedStorage
from seam.core.tokens import CharTokenEstimator
from seam.core.tool_registry import DefaultToolRegistry
from seam.core.turn_deps import (
    ContextDeps,
    EventSequences,
    FinishDeps,
    LoopOptions,
    ModelDeps,
    ModelResolver,
    Pricing,
    Redact,
    SetupDeps,
    StoreDeps,
    ToolDeps,
    TurnRequest,
    TurnServices,
    TurnStep,
)
from seam.core.turn_driver import compact_now, measure, run_turn

__all__ = ["AgentLoop", "EventSequences", "LoopOptions", "ModelResolver", "Pricing"]


class AgentLoop:
    """One agent loop: its collaborators, what it keeps per session in this process, and
    the narrow dependencies its turn steps receive (`TurnServices`, built here once).

    Per session: `working_dirs` (sessions that work elsewhere than `working_dir`, an
    editor's project per ACP session; set by the surface), `restored_dirs` (directories
    that came from a stored spec: each turn checks they still exist, failing rather than
    running somewhere else), `sequences`, and the context figures (`context_warned`:
    sessions told their window is filling, once per crossing; `context_counts`: the
    messages counted and their tokens, so a turn estimates only what is new).
    """

    def __init__(self, *, model: ModelProvider, **parts: Unpack[LoopParts]) -> None:
        """Each collaborator left out is the empty stack's (see `LoopParts`): the built-in
        tool registry, no hooks, the static personality, no memory, an in-memory session
        store and storage, no sandbox or gate, the default context handling."""
        check_keywords(parts, LoopParts.__optional_keys__, "AgentLoop")
        self.model = model
        # Spans for each model call and tool call (tracing off: the no-op tracer).
        self.tracer: Tracer = given_or(parts.get("tracer"), lambda: NOOP_TRACER)
        self.tools: ToolRegistry = given_or(parts.get("tools"), DefaultToolRegistry)
        self.hooks: HookRegistry = given_or(parts.get("hooks"), DefaultHookRegistry)
        self.personalities: PersonalityRegistry = given_or(
            parts.get("personalities"), StaticPersonalityRegistry
        )
        self.memory: MemoryProvider = given_or(parts.get("memory"), NoopMemory)
        # A tenant's overrides of a personality for its sessions (wiring sets it).
        self.personality_overlay: PersonalityOverlay | None = None
        self.sessions: SessionStore = given_or(parts.get("sessions"), InMemorySessionStore)
        self.storage: Storage = given_or(parts.get("storage"), InMemoryStorage)
        self.sandboxes = parts.get("sandboxes")
        self.gate = parts.get("gate")
        self.pricing = parts.get("pricing")
        self.budget = parts.get("budget")
        self.models = parts.get("models")
        self.working_dir = parts.get("working_dir", ".")
        self.working_dirs: dict[str, str] = {}
        self.restored_dirs: set[str] = set()
        self.fs_deny = tuple(parts.get("fs_deny", ()))
        self.options = parts.get("options") or LoopOptions()
        self._make_id = parts.get("new_id") or _token
        self.sequences = EventSequences()
        self.pending_approvals = PendingApprovals()
        # The context window: prompt assembly, token estimates, compaction (core/context*).
        self.estimator: TokenEstimator = parts.get("estimator") or CharTokenEstimator()
        self.context: ContextBuilder = parts.get("context") or DefaultContextBuilder()
        self.compressor: ContextCompressor = parts.get("compressor") or HistoryCompressor(
            estimator=self.estimator
        )
        self.context_warned: set[str] = set()
        self.context_counts: dict[str, tuple[int, Message, int]] = {}
        self.redact = parts.get("redact")  # builds the turn's dependencies (see the property)

    @property
    def redact(self) -> Redact | None:
        """Applied to everything stored and to tool results (which the model then reads):
        secrets a tool prints never reach the transcript, the events or the model."""
        return self._redact

    @redact.setter
    def redact(self, redact: Redact | None) -> None:
        # The steps hold it in their dependencies: a new one rebuilds them.
        if redact is not None and not isinstance(redact, Remembered):
            redact = Remembered(redact)
        self._redact = redact
        self.services = self._services()
        self.turn_setup = self._setup_deps()

    def _services(self) -> TurnServices:
        """Each step's dependencies, made of this loop's collaborators."""
        store = StoreDeps(self.sessions, self._redact)
        context = ContextDeps(
            store=store,
            options=self.options,
            estimator=self.estimator,
            builder=self.context,
            compressor=self.compressor,
            memory=self.memory,
            counts=self.context_counts,
            warned=self.context_warned,
        )
        model = ModelDeps(
            context,
            self.hooks,
            self.tracer,
            self.pricing,
            resolves_models=self.models is not None,
            budget=self.budget,
        )
        tools = ToolDeps(store, self.options, self.hooks, self.tracer, self.pending_approvals)
        finish = FinishDeps(self.sequences, self.hooks, self.memory, self._redact)
        return TurnServices(context=context, model=model, tools=tools, finish=finish)

    def _setup_deps(self) -> SetupDeps:
        """What preparing a turn reads: the session store, registries and resolvers."""
        return SetupDeps(
            services=self.services,
            sequences=self.sequences,
            sessions=self.sessions,
            tools=self.tools,
            new_id=self.new_id,
            personality_for=self.personality_for,
            model_for=self.model_for,
            tool_context=self.tool_context,
            missing_dir=self.missing_working_dir,
            hooks=self.hooks,
        )

    def new_id(self) -> str:
        """A fresh turn id."""
        return self._make_id()

    def respond(self, session_key: str, call_id: str, decision: ApprovalDecision) -> bool:
        """Answer a `tool_approval_required` event; False if nothing is waiting for it."""
        return self.pending_approvals.respond(session_key, call_id, decision)

    def model_for(self, personality: Personality) -> ModelProvider:
        """The provider a personality's turns use (its own model or fallback chain, if any)."""
        return self.model if self.models is None else self.models(personality)

    def personality_for(
        self, personality_id: str | None, session_key: str | None = None
    ) -> Personality:
        """The personality by id; for a session, as its tenant overrides it (if at all)."""
        found = self.personalities.get(personality_id or self.personalities.default_id)
        overlay = self.personality_overlay
        return found if session_key is None or overlay is None else overlay(session_key, found)

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
            memory=memory_for_session(self.memory, session_key),
            sandbox=sandbox,
            gate=self.gate,
            approval_mode=personality.approval_mode,
            redact=self.redact,
            **extra,
        )

    def run(
        self, session_key: str, user_message: str | None, **options: Unpack[RunOptions]
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn (`options`: the personality it runs as, a cancel token). Always
        ends with a `Done` event (unless the consumer stops early).

        `user_message=None` continues the stored conversation without new input.
        """
        if user_message is None:
            return self.run_from(session_key, CallModel(), **options)
        if not isinstance(user_message, str):
            raise TypeError(f"user_message must be str, not {type(user_message).__name__}")
        return self.run_from(session_key, UserPrompt(user_message), **options)

    def run_from(
        self, session_key: str, start: TurnStep, **options: Unpack[TurnOptions]
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn from `start` (`UserPrompt(text)`, `CallModel(note=...)`,
        `RunTools(calls, then=CallModel())`, ...). `transcript` writes what the turn
        stores (default: the session store); `subagents` reach the session's children."""
        check_keywords(options, TurnOptions.__optional_keys__, "run_from")
        token = options.get("cancel") or CancelToken()
        request = TurnRequest(
            session_key,
            start,
            options.get("personality"),
            token,
            options.get("transcript"),
            options.get("subagents"),
            options.get("extras", NO_EXTRAS),
        )
        return run_turn(self.turn_setup, request)

    async def compress(
        self, session_key: str, *, personality: str | None = None
    ) -> list[AgentEvent]:
        """Compact the session's history now (`/compress`): the `context_compacted` event,
        and notices if it failed; empty when there is nothing to compact."""
        return await compact_now(self.turn_setup, session_key, personality)

    async def context_usage(
        self, session_key: str, *, personality: str | None = None
    ) -> ContextUsage | None:
        """Estimated size of the session's next request (None: no such session)."""
        return await measure(self.turn_setup, session_key, personality)

    async def missing_working_dir(self, session_key: str) -> str | None:
        """Why the session cannot run where its stored spec says (None: it can). Only a
        directory restored from the store is checked: a resumed turn never silently runs
        in this process's directory instead of the project it started in."""
        if session_key not in self.restored_dirs:
            return None
        path = self.working_dir_for(session_key)
        if await self.storage.exists(path):
            return None
        return f"the session's working directory {path} no longer exists"

    def forget(self, session_key: str) -> None:
        """Drop what this process keeps per session (sequence number, context figures);
        a long-lived worker calls it as sessions leave its cache. A later turn of the
        session starts from what the store says (see `EventSequences.continue_after`)."""
        self.sequences.forget(session_key)
        self.context_counts.pop(session_key, None)
        self.context_warned.discard(session_key)


def _token() -> str:
    return secrets.token_hex(6)
