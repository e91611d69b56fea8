"""The composition root: `create_runtime()` turns settings into a wired `Runtime`.

Every collaborator is optional. Whatever is not handed in comes from the settings
(`$SEAM_HOME/config.toml` and the environment): the SQLite session store, the file
personalities, the real filesystem and the configured model. Hand in a scripted model and
in-memory stores and nothing is read from disk or the environment at all.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from seam.contracts.events import AgentEvent
from seam.contracts.guardrail import ApprovalDecision, CommandGate
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.model import ModelProvider
from seam.contracts.personality import PersonalityRegistry
from seam.contracts.sandbox import SandboxProvider
from seam.contracts.sessions import SessionStore
from seam.contracts.storage import Storage
from seam.contracts.tools import CancelToken, Tool, ToolRegistry
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
from seam.core.sessions import InMemorySessionStore
from seam.core.storage import InMemoryStorage
from seam.plugins.hooks.circuit_breaker import ToolLoopBreaker
from seam.plugins.hooks.injection_guard import InjectionGuard
from seam.plugins.safety.redact import redact
from seam.wiring.settings import Settings, load_settings
from seam.wiring.tools import build_tool_registry


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
    settings: Settings | None = None
    harness: str = DEFAULT_HARNESS
    _closed: bool = field(default=False, repr=False)

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
) -> Runtime:
    if settings is None and (model is None or personalities is None or sessions is None):
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
        if sessions is None:
            from seam.services.sessions.sqlite import SQLiteSessionStore

            settings.store_path.parent.mkdir(parents=True, exist_ok=True)
            sessions = SQLiteSessionStore(str(settings.store_path))
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
        options = options or LoopOptions(
            result_budget_chars=agent.result_budget_chars,
            streaming_timeout=agent.streaming_timeout,
            max_iterations=agent.max_iterations,
            approval_timeout=guard_section(settings).approval_timeout,
        )
        # The agent must not edit its own transcript database behind the store's back, nor
        # grant itself approvals or switch its own approval mode off.
        store = str(settings.store_path)
        home = settings.home
        fs_deny += [
            store,
            f"{store}-wal",
            f"{store}-shm",
            str(home / APPROVALS_FILE),
            # Memory is written through the memory tool, whose checks a file write would skip.
            str(home / "memory"),
            str(home / "config.toml"),
            str(home / "pools"),
            str(settings.personalities_dir / "*" / "config.toml"),
        ]
    assert model is not None  # settings were loaded whenever it was missing
    tools = tools if tools is not None else build_tool_registry()
    if hooks is None:
        hooks = DefaultHookRegistry()
        ToolLoopBreaker().register(hooks)
        InjectionGuard().register(hooks)
    personalities = personalities if personalities is not None else StaticPersonalityRegistry()
    memory = memory if memory is not None else NoopMemory()
    sessions = sessions if sessions is not None else InMemorySessionStore()
    storage = storage if storage is not None else InMemoryStorage()
    loop = AgentLoop(
        model=model,
        tools=tools,
        hooks=hooks,
        personalities=personalities,
        memory=memory,
        sessions=sessions,
        storage=storage,
        working_dir=working_dir or "/",
        fs_deny=fs_deny,
        options=options,
        pricing=pricing,
        models=models,
        redact=redact,
        sandboxes=sandboxes,
        gate=gate,
    )
    return Runtime(
        tenant_id=tenant_id,
        model=model,
        tools=tools,
        hooks=hooks,
        personalities=personalities,
        memory=memory,
        sessions=sessions,
        storage=storage,
        loop=loop,
        settings=settings,
    )
