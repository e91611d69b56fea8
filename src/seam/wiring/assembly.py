"""The assembly half of the composition root: `assemble_runtime` wires exactly the
collaborators it is handed and gives every other one the empty stack (in-memory store and
storage, the static personality, no memory, no sandbox, no gate). It reads no file, env var
or home path and changes nothing it is handed, so it is the testing seam:
`assemble_runtime(model=ScriptedModel(...))` is a whole runtime.

It is a short composition of named builders that pass typed values: `Assembly` (what was
handed in), `Collaborators` (each one resolved), then the loop, the Coordinator, the
SessionFactory and the `Runtime` that holds them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from seam.contracts.approval_answers import ApprovalAnswers
from seam.contracts.context import ContextBuilder, ContextCompressor
from seam.contracts.events import ContextCompacted
from seam.contracts.execution import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_MAX_ATTEMPTS,
    ExecutionStore,
)
from seam.contracts.guardrail import CommandGate
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.model import ModelProvider
from seam.contracts.personality import PersonalityRegistry
from seam.contracts.sandbox import SandboxProvider
from seam.contracts.sessions import SessionStore
from seam.contracts.storage import Storage
from seam.contracts.tools import ToolRegistry
from seam.contracts.tracing import NOOP_TRACER, Tracer
from seam.core.coordinator import Coordinator, DeadOwners
from seam.core.execution import InMemoryExecutionStore
from seam.core.hook_registry import DefaultHookRegistry
from seam.core.loop import AgentLoop, LoopOptions, ModelResolver, Pricing
from seam.core.memory import NoopMemory
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.session_factory import SessionFactory
from seam.core.storage import InMemoryStorage
from seam.core.traced_store import DEFAULT_SLOW_STORE_MS, TracedStore
from seam.core.workflows import WorkflowRegistry
from seam.plugins.hooks.circuit_breaker import ToolLoopBreaker
from seam.plugins.hooks.injection_guard import InjectionGuard
from seam.plugins.hooks.reflection import ReflectionHook
from seam.plugins.mcp.servers import McpServers
from seam.plugins.safety import injection
from seam.plugins.safety.redact import redact
from seam.plugins.skills.catalog import SkillCatalog
from seam.wiring.context import build_context_builder
from seam.wiring.cron import tool_jobs
from seam.wiring.runtime import Runtime
from seam.wiring.settings import Settings
from seam.wiring.tools import build_tool_registry

Redact = Callable[[str], str]


@dataclass(frozen=True)
class Assembly:
    """`assemble_runtime`'s parameters as one typed value, so each builder takes what it
    reads from one place instead of a dozen loose arguments. Its fields are exactly that
    function's parameters (a test holds them equal)."""

    model: ModelProvider
    tools: ToolRegistry | None
    hooks: HookRegistry | None
    personalities: PersonalityRegistry | None
    memory: MemoryProvider | None
    sessions: SessionStore | None
    store: ExecutionStore | None
    storage: Storage | None
    sandboxes: SandboxProvider | None
    gate: CommandGate | None
    working_dir: str
    fs_deny: Iterable[str]
    options: LoopOptions | None
    pricing: Pricing | None
    models: ModelResolver | None
    redact: Redact | None
    context: ContextBuilder | None
    compressor: ContextCompressor | None
    reflection: ReflectionHook | None
    tenant_id: str
    workflows: WorkflowRegistry | None
    coordinator: Coordinator | None
    owner: str | None
    dead_owners: DeadOwners | None
    lease: float
    max_attempts: int
    settings: Settings | None
    mcp: McpServers | None
    skills: SkillCatalog | None
    tracer: Tracer | None
    slow_store_ms: float


@dataclass(frozen=True)
class Collaborators:
    """The collaborators a runtime holds, each one resolved: the one handed in, or the
    empty stack's."""

    store: ExecutionStore
    workflows: WorkflowRegistry
    tools: ToolRegistry
    hooks: HookRegistry
    personalities: PersonalityRegistry
    memory: MemoryProvider
    storage: Storage


def default_hooks() -> DefaultHookRegistry:
    """The hooks every runtime gets unless handed its own: the tool-loop breaker and the
    prompt-injection guard (both pure: they keep their state in memory)."""
    hooks = DefaultHookRegistry()
    ToolLoopBreaker().register(hooks)
    InjectionGuard(injection).register(hooks)
    return hooks


def assemble_runtime(
    *,
    model: ModelProvider,
    tools: ToolRegistry | None = None,
    hooks: HookRegistry | None = None,
    personalities: PersonalityRegistry | None = None,
    memory: MemoryProvider | None = None,
    sessions: SessionStore | None = None,
    store: ExecutionStore | None = None,
    storage: Storage | None = None,
    sandboxes: SandboxProvider | None = None,
    gate: CommandGate | None = None,
    working_dir: str = "/",
    fs_deny: Iterable[str] = (),
    options: LoopOptions | None = None,
    pricing: Pricing | None = None,
    models: ModelResolver | None = None,
    redact: Redact | None = redact,
    context: ContextBuilder | None = None,
    compressor: ContextCompressor | None = None,
    reflection: ReflectionHook | None = None,
    tenant_id: str = "local",
    workflows: WorkflowRegistry | None = None,
    coordinator: Coordinator | None = None,
    owner: str | None = None,
    dead_owners: DeadOwners | None = None,
    lease: float = DEFAULT_LEASE_SECONDS,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    settings: Settings | None = None,
    mcp: McpServers | None = None,
    skills: SkillCatalog | None = None,
    tracer: Tracer | None = None,
    slow_store_ms: float = DEFAULT_SLOW_STORE_MS,
) -> Runtime:
    """A runtime of exactly these collaborators; each one left out is the empty stack
    (`gather_collaborators`). Nothing is read from disk or the environment; nothing
    handed in is changed.

    `store` and `sessions` name the same collaborator; pass either. `reflection` is a hook
    its builder already registered on `hooks`; the runtime only closes it. A `coordinator`
    handed in is used as it is (`build_coordinator` otherwise). `settings` are only kept,
    for surfaces that show them. `mcp`: MCP servers whose tools the built-in registry
    offers; the runtime closes them. `skills`: the Agent Skills catalog behind
    `skill_view` and `skill_write` in the built-in registry (None: neither is offered).
    """
    given = Assembly(**locals())
    parts = gather_collaborators(given)
    loop = build_loop(given, parts)
    coordinator = given.coordinator
    if coordinator is None:
        coordinator = build_coordinator(given, parts.store, loop)
    factory = SessionFactory(
        loop, parts.store, coordinator, tenant_id=given.tenant_id, workflows=parts.workflows
    )
    return runtime_of(given, parts, loop, coordinator, factory)


def gather_collaborators(given: Assembly) -> Collaborators:
    """Each collaborator handed in, or the empty stack's: an `InMemoryExecutionStore`, an
    empty `WorkflowRegistry`, the built-in tools (they reach files only through
    `storage`), `default_hooks()`, a `StaticPersonalityRegistry`, `NoopMemory` and
    `InMemoryStorage`, built in that order."""
    store = one_store(given.store, given.sessions)
    store = store if store is not None else InMemoryExecutionStore()
    workflows = given.workflows if given.workflows is not None else WorkflowRegistry()
    tools = given.tools
    if tools is None:
        tools = build_tool_registry(
            sessions=store,
            workflows=bool(workflows.names()),
            sources=() if given.mcp is None else (given.mcp,),
            skills=given.skills,
            cron=tool_jobs(store, given.settings),
            allow_private=given.settings.config.network.allow_private if given.settings else (),
        )
    hooks = given.hooks if given.hooks is not None else default_hooks()
    personalities = given.personalities
    if personalities is None:
        personalities = StaticPersonalityRegistry()
    memory = given.memory if given.memory is not None else NoopMemory()
    storage = given.storage if given.storage is not None else InMemoryStorage()
    return Collaborators(
        store=store,
        workflows=workflows,
        tools=tools,
        hooks=hooks,
        personalities=personalities,
        memory=memory,
        storage=storage,
    )


def build_loop(given: Assembly, parts: Collaborators) -> AgentLoop:
    """The agent loop over the resolved collaborators; approvals answered in another
    process reach this one's waiters through a store that relays them."""
    loop = AgentLoop(
        model=given.model,
        tools=parts.tools,
        hooks=parts.hooks,
        personalities=parts.personalities,
        memory=parts.memory,
        sessions=parts.store,
        storage=parts.storage,
        working_dir=given.working_dir,
        fs_deny=given.fs_deny,
        options=given.options,
        pricing=given.pricing,
        models=given.models,
        redact=given.redact,
        sandboxes=given.sandboxes,
        gate=given.gate,
        context=given.context if given.context is not None else build_context_builder(None),
        compressor=given.compressor,
        tracer=given.tracer,
    )
    if isinstance(parts.store, ApprovalAnswers):
        loop.pending_approvals.relay = parts.store
    return loop


def build_coordinator(given: Assembly, store: ExecutionStore, loop: AgentLoop) -> Coordinator:
    """The Coordinator that drives submissions when none was handed in: from `owner`,
    `dead_owners`, `lease` and `max_attempts`, compressing through the loop on overflow.
    Tracing on: its store calls slower than `slow_store_ms` are spans."""
    tracer = given.tracer
    traced: Any = (
        store if tracer is None else TracedStore(store, tracer, slow_ms=given.slow_store_ms)
    )
    return Coordinator(
        traced,
        tracer=tracer,
        owner=given.owner,
        lease=given.lease,
        max_attempts=given.max_attempts,
        dead_owners=given.dead_owners,
        compress=_compressor(loop),
    )


def runtime_of(
    given: Assembly,
    parts: Collaborators,
    loop: AgentLoop,
    coordinator: Coordinator,
    factory: SessionFactory,
) -> Runtime:
    """The `Runtime` surfaces hold, over everything built above."""
    return Runtime(
        tenant_id=given.tenant_id,
        model=given.model,
        tools=parts.tools,
        hooks=parts.hooks,
        personalities=parts.personalities,
        memory=parts.memory,
        sessions=parts.store,
        storage=parts.storage,
        loop=loop,
        store=parts.store,
        coordinator=coordinator,
        factory=factory,
        workflows=parts.workflows,
        settings=given.settings,
        reflection=given.reflection,
        mcp=given.mcp,
        skills=given.skills,
        tracer=given.tracer if given.tracer is not None else NOOP_TRACER,
    )


def one_store(store: ExecutionStore | None, sessions: SessionStore | None) -> ExecutionStore | None:
    """`store` and `sessions` are one collaborator: whichever was handed in."""
    if store is None and isinstance(sessions, ExecutionStore):
        return sessions
    if sessions is not None and store is None:
        raise TypeError("sessions must be an ExecutionStore (it stores submissions too)")
    return store


def _compressor(loop: AgentLoop) -> Callable[[str], Awaitable[bool]]:
    """What a submission that overflowed the context window runs before its retry."""

    async def compress(key: str) -> bool:
        events = await loop.compress(key)
        return any(isinstance(event, ContextCompacted) for event in events)

    return compress
