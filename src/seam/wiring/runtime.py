"""The composition root: `create_runtime()` turns settings into a wired `Runtime`.

Every collaborator is optional. Whatever is not handed in comes from the settings
(`$SEAM_HOME/config.toml` and the environment): the SQLite session store, the file
personalities, the real filesystem and the configured model. Hand in a scripted model and
in-memory stores and nothing is read from disk or the environment at all.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from seam.contracts.context import ContextUsage
from seam.contracts.events import AgentEvent, ContextCompacted
from seam.contracts.execution import ExecutionStore, Submission
from seam.contracts.guardrail import ApprovalDecision, CommandGate
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.model import ModelProvider
from seam.contracts.personality import PersonalityRegistry
from seam.contracts.sandbox import SandboxProvider
from seam.contracts.sessions import SessionStore
from seam.contracts.storage import Storage
from seam.contracts.tools import CancelToken, Tool, ToolRegistry
from seam.core.coordinator import Coordinator, OnEvent
from seam.core.execution import InMemoryExecutionStore
from seam.core.hook_registry import DefaultHookRegistry
from seam.core.identity import (
    DEFAULT_HARNESS,
    assert_public_session_name,
    create_session_storage_key,
    parse_session_storage_key,
)
from seam.core.loop import AgentLoop, LoopOptions, ModelResolver, Pricing
from seam.core.memory import NoopMemory
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.session_factory import Session, SessionFactory
from seam.core.storage import InMemoryStorage
from seam.core.workflows import WorkflowExecutor, WorkflowRegistry
from seam.plugins.hooks.circuit_breaker import ToolLoopBreaker
from seam.plugins.hooks.injection_guard import InjectionGuard
from seam.plugins.hooks.reflection import ReflectionHook
from seam.wiring.context import (
    build_compressor,
    build_context_builder,
    build_reflection,
    close_side_models,
    context_options,
)
from seam.wiring.secrets import secret_redactor
from seam.wiring.settings import Settings, load_settings
from seam.wiring.tools import build_tool_registry

# Seconds a closing runtime waits for a background memory review to finish.
REFLECTION_GRACE = 10.0


@dataclass
class Runtime:
    tenant_id: str
    model: ModelProvider
    tools: ToolRegistry
    hooks: HookRegistry
    personalities: PersonalityRegistry
    memory: MemoryProvider
    sessions: SessionStore
    storage: Storage
    loop: AgentLoop
    # The same object as `sessions`: sessions, transcripts, submissions, the event log.
    store: ExecutionStore
    coordinator: Coordinator
    factory: SessionFactory
    workflows: WorkflowRegistry
    settings: Settings | None = None
    harness: str = DEFAULT_HARNESS
    _closed: bool = field(default=False, repr=False)
    _opened: bool = field(default=False, repr=False)
    # The background memory review (`[reflection] enabled`), closed with the runtime.
    reflection: ReflectionHook | None = None

    async def open(self) -> Runtime:
        """Connect the store when it needs it (PostgreSQL); idempotent, returns self."""
        if not self._opened:
            self._opened = True
            opener: Any = getattr(self.store, "open", None)
            if opener is not None:
                await opener()
        return self

    # Sessions, through the single construction seam

    async def get_session(
        self, key: str, *, personality: str | None = None, title: str | None = None
    ) -> Session:
        """The session stored under `key`, created (as a root session) if new."""
        await self.open()
        return await self.factory.get_or_create_root(key, personality=personality, title=title)

    def drop_session(self, key: str) -> None:
        self.factory.drop(key)

    async def submit(
        self,
        session: str,
        text: str,
        *,
        personality: str | None = None,
        submission_id: str | None = None,
    ) -> Submission:
        """Queue `text` for the named session (created if new); a worker will run it."""
        found = await self.get_session(self.session_key_for(session), personality=personality)
        return await found.submit(text, submission_id=submission_id)

    async def ask(
        self,
        session: str,
        text: str,
        *,
        personality: str | None = None,
        submission_id: str | None = None,
        on_event: OnEvent | None = None,
        cancel: CancelToken | None = None,
    ) -> Submission:
        """One durable turn in the named session, driven here; returns it settled."""
        sub = await self.submit(session, text, personality=personality, submission_id=submission_id)
        return await self.coordinator.run(sub.id, self.factory.resolve, on_event, cancel=cancel)

    async def drain_runnable(self, on_event: OnEvent | None = None) -> list[Submission]:
        await self.open()
        return await self.coordinator.drain_runnable(self.factory.resolve, on_event)

    async def resume_pending(self, on_event: OnEvent | None = None) -> list[Submission]:
        await self.open()
        return await self.coordinator.resume_pending(self.factory.resolve, on_event)

    def create_workflow_executor(self, storage_key: str, depth: int = 0) -> WorkflowExecutor:
        return self.factory.create_workflow_executor(storage_key, depth)

    async def compress(self, session: str, *, personality: str | None = None) -> list[AgentEvent]:
        """Compact the named session's history now (`/compress`); see `AgentLoop.compress`."""
        return await self.loop.compress(self.session_key_for(session), personality=personality)

    async def context_usage(
        self, session: str, *, personality: str | None = None
    ) -> ContextUsage | None:
        """Estimated share of the context window the session's next request takes."""
        key = self.session_key_for(session)
        return await self.loop.context_usage(key, personality=personality)

    def session_key_for(self, name: str) -> str:
        """The durable key of a public session name (rejects reserved `task:` names)."""
        return create_session_storage_key(
            self.tenant_id, self.harness, assert_public_session_name(name)
        )

    @staticmethod
    def session_name_of(key: str) -> str:
        try:
            return parse_session_storage_key(key)[2]
        except ValueError:
            return key

    def run(
        self,
        session: str,
        text: str,
        *,
        personality: str | None = None,
        cancel: CancelToken | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """One turn in the named session; see `AgentLoop.run`."""
        key = self.session_key_for(session)
        return self.loop.run(key, text, personality=personality, cancel=cancel)

    def respond(self, session: str, call_id: str, decision: ApprovalDecision) -> bool:
        """Answer a `tool_approval_required` event of a turn running in `session`."""
        return self.loop.respond(self.session_key_for(session), call_id, decision)

    def toolset(self, personality: str | None = None) -> list[Tool]:
        """The tools a personality gets, built over a throwaway context (for listings)."""
        chosen = self.loop.personality_for(personality)
        ctx = self.loop.tool_context("listing", chosen)
        return self.tools.build(chosen.toolset, ctx)

    async def aclose(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.reflection is not None:
            # Let a review that is under way finish (it is what `[reflection]` is for),
            # but never hold the exit for long: what is still running then is cancelled.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(REFLECTION_GRACE):
                    await self.reflection.drain()
            await self.reflection.aclose()
        await close_side_models(self.loop.compressor, self.reflection)
        await self.model.aclose()
        await self.sessions.aclose()
        if self.loop.sandboxes is not None:
            await self.loop.sandboxes.aclose()


def create_runtime(
    *,
    settings: Settings | None = None,
    model: ModelProvider | None = None,
    tools: ToolRegistry | None = None,
    hooks: HookRegistry | None = None,
    personalities: PersonalityRegistry | None = None,
    memory: MemoryProvider | None = None,
    sessions: SessionStore | None = None,
    storage: Storage | None = None,
    sandboxes: SandboxProvider | None = None,
    gate: CommandGate | None = None,
    gateway: bool = False,
    working_dir: str | None = None,
    options: LoopOptions | None = None,
    pricing: Pricing | None = None,
    tenant_id: str = "local",
    store: ExecutionStore | None = None,
    workflows: WorkflowRegistry | None = None,
    coordinator: Coordinator | None = None,
) -> Runtime:
    """`store` and `sessions` name the same collaborator (an `ExecutionStore` is a
    `SessionStore`); pass either."""
    if store is None and isinstance(sessions, ExecutionStore):
        store = sessions
    elif sessions is not None and store is None:
        raise TypeError("sessions must be an ExecutionStore (it stores submissions too)")
    if settings is None and (model is None or personalities is None or store is None):
        settings = load_settings()
    fs_deny: list[str] = []
    models: ModelResolver | None = None
    if settings is not None:
        settings.home.mkdir(parents=True, exist_ok=True)
        if personalities is None:
            from seam.plugins.personalities.files import (
                FilePersonalityRegistry,
                write_default_personality,
            )

            write_default_personality(str(settings.personalities_dir))
            personalities = FilePersonalityRegistry(
                str(settings.personalities_dir), default_id=settings.config.agent.personality
            )
        if store is None:
            store = _open_store(settings)
        if storage is None:
            from seam.services.storage.fs import FsStorage

            storage = FsStorage()
        if memory is None:
            from seam.wiring.memory import build_memory

            memory = build_memory(settings)
        if working_dir is None:
            working_dir = str(settings.working_dir)
        if sandboxes is None:
            from seam.wiring.sandbox import LazySandboxes

            sandboxes = LazySandboxes(settings)
        if model is None:
            from seam.wiring.models import LazyModel, ModelFactory, PersonalityModels

            factory = ModelFactory(settings)
            model = LazyModel(factory)
            models = PersonalityModels(factory, model)
        if gate is None:
            from seam.wiring.guard import build_gate
            from seam.wiring.judge import lazy_judge

            # Approval mode "off" only where a person drives the agent, never a gateway.
            gate = build_gate(settings, judge=lazy_judge(settings), allow_off=not gateway)
        if pricing is None:
            from seam.wiring.pricing import price_table

            pricing = price_table(settings.config.prices, where=str(settings.config_path))
        from seam.wiring.guard import APPROVALS_FILE, guard_section

        agent = settings.config.agent
        options = options or context_options(
            settings,
            LoopOptions(
                result_budget_chars=agent.result_budget_chars,
                streaming_timeout=agent.streaming_timeout,
                max_iterations=agent.max_iterations,
                approval_timeout=guard_section(settings).approval_timeout,
            ),
        )
        # The agent must not edit its own transcript database behind the store's back, nor
        # grant itself approvals or switch its own approval mode off.
        db_file = str(settings.store_path)
        home = settings.home
        fs_deny += [
            db_file,
            f"{db_file}-wal",
            f"{db_file}-shm",
            str(home / APPROVALS_FILE),
            # Memory is written through the memory tool, whose checks a file write would skip.
            str(home / "memory"),
            str(home / "config.toml"),
            str(home / "pools"),
            str(settings.personalities_dir / "*" / "config.toml"),
        ]
    assert model is not None  # settings were loaded whenever it was missing
    workflows = workflows if workflows is not None else WorkflowRegistry()
    store = store if store is not None else InMemoryExecutionStore()
    if tools is None:
        tools = build_tool_registry(sessions=store, workflows=bool(workflows.names()))
    if hooks is None:
        hooks = DefaultHookRegistry()
        ToolLoopBreaker().register(hooks)
        InjectionGuard().register(hooks)
    personalities = personalities if personalities is not None else StaticPersonalityRegistry()
    memory = memory if memory is not None else NoopMemory()
    storage = storage if storage is not None else InMemoryStorage()
    loop = AgentLoop(
        model=model,
        tools=tools,
        hooks=hooks,
        personalities=personalities,
        memory=memory,
        sessions=store,
        storage=storage,
        working_dir=working_dir or "/",
        fs_deny=fs_deny,
        options=options,
        pricing=pricing,
        models=models,
        redact=secret_redactor(settings),
        sandboxes=sandboxes,
        gate=gate,
        context=build_context_builder(settings),
        compressor=build_compressor(settings),
    )
    reflection = None
    if settings is not None:
        reflection = build_reflection(settings, memory, hooks, model)
    if coordinator is None:
        coordinator = _coordinator(store, settings)
    if coordinator.compress is None:
        coordinator.compress = _compressor(loop)
    factory = SessionFactory(loop, store, coordinator, tenant_id=tenant_id, workflows=workflows)
    return Runtime(
        tenant_id=tenant_id,
        model=model,
        tools=tools,
        hooks=hooks,
        personalities=personalities,
        memory=memory,
        sessions=store,
        storage=storage,
        loop=loop,
        store=store,
        coordinator=coordinator,
        factory=factory,
        workflows=workflows,
        settings=settings,
        reflection=reflection,
    )


def _open_store(settings: Settings) -> ExecutionStore:
    url = settings.store_url
    if url:
        from seam.services.sessions.postgres import PostgresStore

        return PostgresStore(url)  # connected by `Runtime.open()`
    from seam.services.sessions.sqlite import SQLiteSessionStore

    settings.store_path.parent.mkdir(parents=True, exist_ok=True)
    return SQLiteSessionStore(str(settings.store_path))


def _compressor(loop: AgentLoop) -> Callable[[str], Awaitable[bool]]:
    """What a submission that overflowed the context window runs before its retry."""

    async def compress(key: str) -> bool:
        events = await loop.compress(key)
        return any(isinstance(event, ContextCompacted) for event in events)

    return compress


def _coordinator(store: ExecutionStore, settings: Settings | None) -> Coordinator:
    from seam.wiring.owners import dead_owners, owner_id

    if settings is None:
        return Coordinator(store, owner=owner_id(), dead_owners=dead_owners)
    section = settings.config.store
    return Coordinator(
        store,
        owner=owner_id(),
        lease=section.lease_seconds,
        max_attempts=section.max_attempts,
        dead_owners=dead_owners,
    )
