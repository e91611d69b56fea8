"""The assembly half of the composition root: `assemble_runtime` wires exactly the
collaborators it is handed and gives every other one the empty stack (in-memory store and
storage, the static personality, no memory, no sandbox, no gate). It reads no file, env var
or home path and changes nothing it is handed, so it is the testing seam:
`assemble_runtime(model=ScriptedModel(...))` is a whole runtime.

It is a short composition of named builders that pass typed values: `AssemblyParts` (the
keywords handed in, declared once over the loop's own `LoopParts`), `Collaborators` (each
one resolved), then the loop, the Coordinator, the SessionFactory and the `Runtime` that
holds them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Unpack

from seam.contracts.approval_answers import ApprovalAnswers
from seam.contracts.events import ContextCompacted
from seam.contracts.execution import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_MAX_ATTEMPTS,
    ExecutionStore,
)
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.model import ModelProvider
from seam.contracts.personality import PersonalityRegistry
from seam.contracts.sessions import SessionStore
from seam.contracts.storage import Storage
from seam.contracts.tools import Tool, ToolRegistry
from seam.contracts.tracing import NOOP_TRACER
from seam.core.coordinator import Coordinator, DeadOwners
from seam.core.execution import InMemoryExecutionStore
from seam.core.hook_registry import DefaultHookRegistry
from seam.core.loop import AgentLoop
from seam.core.loop_parts import LoopParts, check_keywords, given_or
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
from seam.wiring.cron_tool import DeferredCronJobs
from seam.wiring.runtime import Runtime, lazy_session_recall
from seam.wiring.settings import Settings
from seam.wiring.tools import build_tool_registry

if TYPE_CHECKING:
    from seam.contracts.session_recall import SessionRecall


class AssemblyParts(LoopParts, total=False):
    """`assemble_runtime`'s keywords beside `model`: the loop's (`LoopParts`) and what
    the rest of a runtime is built from."""

    store: ExecutionStore | None
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
    slow_store_ms: float


@dataclass(frozen=True)
class Collaborators:
    """The collaborators a runtime holds, each one resolved: the one handed in, or the
    empty stack's."""

    model: ModelProvider
    store: ExecutionStore
    workflows: WorkflowRegistry
    tools: ToolRegistry
    hooks: HookRegistry
    personalities: PersonalityRegistry
    memory: MemoryProvider
    storage: Storage
    # Search over past sessions by words and meaning, shared by the tool and surfaces.
    recall: Callable[[], SessionRecall]


def default_hooks() -> DefaultHookRegistry:
    """The hooks every runtime gets unless handed its own: the tool-loop breaker and the
    prompt-injection guard (both pure: they keep their state in memory)."""
    hooks = DefaultHookRegistry()
    ToolLoopBreaker().register(hooks)
    InjectionGuard(injection).register(hooks)
    return hooks


def assemble_runtime(*, model: ModelProvider, **given: Unpack[AssemblyParts]) -> Runtime:
    """A runtime of exactly these collaborators; each one left out is the empty stack
    (`gather_collaborators`). Nothing is read from disk or the environment; nothing
    handed in is changed. Defaults: `working_dir` "/", `redact` the secret redactor
    (None: none), `tenant_id` "local", the store's default `lease` and `max_attempts`.

    `store` and `sessions` name the same collaborator; pass either. `reflection` is a hook
    its builder already registered on `hooks`; the runtime only closes it. A `coordinator`
    handed in is used as it is (`build_coordinator` otherwise). `settings` are only kept,
    for surfaces that show them. `mcp`: MCP servers whose tools the built-in registry
    offers; the runtime closes them. `skills`: the Agent Skills catalog behind
    `skill_view` and `skill_write` in the built-in registry (None: neither is offered).
    """
    check_keywords(given, AssemblyParts.__optional_keys__, "assemble_runtime")
    parts = gather_collaborators(model, given)
    loop = build_loop(given, parts)
    coordinator = given_or(
        given.get("coordinator"), lambda: build_coordinator(given, parts.store, loop)
    )
    factory = SessionFactory(
        loop, parts.store, coordinator, tenant_id=tenant_of(given), workflows=parts.workflows
    )
    return runtime_of(given, parts, loop, coordinator, factory)


def tenant_of(given: AssemblyParts) -> str:
    return given.get("tenant_id", "local")


def gather_collaborators(model: ModelProvider, given: AssemblyParts) -> Collaborators:
    """Each collaborator handed in, or the empty stack's: an `InMemoryExecutionStore`, an
    empty `WorkflowRegistry`, the built-in tools (they reach files only through
    `storage`), `default_hooks()`, a `StaticPersonalityRegistry`, `NoopMemory` and
    `InMemoryStorage`, built in that order."""
    store = given_or(one_store(given.get("store"), given.get("sessions")), InMemoryExecutionStore)
    workflows = given_or(given.get("workflows"), WorkflowRegistry)
    recall = lazy_session_recall(store, given.get("settings"))
    tools = given_or(given.get("tools"), lambda: built_in_tools(given, store, workflows, recall))
    return Collaborators(
        model=model,
        store=store,
        workflows=workflows,
        tools=tools,
        hooks=given_or(given.get("hooks"), default_hooks),
        personalities=given_or(given.get("personalities"), StaticPersonalityRegistry),
        memory=given_or(given.get("memory"), NoopMemory),
        storage=given_or(given.get("storage"), InMemoryStorage),
        recall=recall,
    )


def built_in_tools(
    given: AssemblyParts,
    store: ExecutionStore,
    workflows: WorkflowRegistry,
    recall: Callable[[], SessionRecall] | None = None,
) -> ToolRegistry:
    """The built-in tool registry over the store, with the workflow tools when any are
    registered, the MCP servers' and skills' tools, the cron tools and `web_search`."""
    mcp, settings = given.get("mcp"), given.get("settings")
    searching: tuple[Tool, ...] = ()
    if settings is not None and settings.config.web_search.provider:  # lazy: off by default
        from seam.wiring.web_search import web_search_tools

        searching = web_search_tools(settings)
    return build_tool_registry(
        searching,
        sessions=store,
        recall=recall,
        workflows=bool(workflows.names()),
        sources=() if mcp is None else (mcp,),
        skills=given.get("skills"),
        cron=DeferredCronJobs(store, settings),
        allow_private=settings.config.network.allow_private if settings else (),
        memory_recall=settings.config.recall.enabled if settings else True,
    )


def build_loop(given: AssemblyParts, parts: Collaborators) -> AgentLoop:
    """The agent loop over the resolved collaborators; approvals answered in another
    process reach this one's waiters through a store that relays them."""
    loop = AgentLoop(
        model=parts.model,
        tools=parts.tools,
        hooks=parts.hooks,
        personalities=parts.personalities,
        memory=parts.memory,
        sessions=parts.store,
        storage=parts.storage,
        working_dir=given.get("working_dir", "/"),
        fs_deny=given.get("fs_deny", ()),
        options=given.get("options"),
        pricing=given.get("pricing"),
        budget=given.get("budget"),
        models=given.get("models"),
        redact=given.get("redact", redact),
        sandboxes=given.get("sandboxes"),
        gate=given.get("gate"),
        context=given_or(given.get("context"), lambda: build_context_builder(None)),
        compressor=given.get("compressor"),
        estimator=given.get("estimator"),
        tracer=given.get("tracer"),
        new_id=given.get("new_id"),
    )
    if isinstance(parts.store, ApprovalAnswers):
        loop.pending_approvals.relay = parts.store
    return loop


def build_coordinator(given: AssemblyParts, store: ExecutionStore, loop: AgentLoop) -> Coordinator:
    """The Coordinator that drives submissions when none was handed in: from `owner`,
    `dead_owners`, `lease` and `max_attempts`, compressing through the loop on overflow.
    Tracing on: its store calls slower than `slow_store_ms` are spans."""
    tracer = given.get("tracer")
    slow_ms = given.get("slow_store_ms", DEFAULT_SLOW_STORE_MS)
    traced: Any = store if tracer is None else TracedStore(store, tracer, slow_ms=slow_ms)
    return Coordinator(
        traced,
        tracer=tracer,
        owner=given.get("owner"),
        lease=given.get("lease", DEFAULT_LEASE_SECONDS),
        max_attempts=given.get("max_attempts", DEFAULT_MAX_ATTEMPTS),
        dead_owners=given.get("dead_owners"),
        compress=_compressor(loop),
    )


def runtime_of(
    given: AssemblyParts,
    parts: Collaborators,
    loop: AgentLoop,
    coordinator: Coordinator,
    factory: SessionFactory,
) -> Runtime:
    """The `Runtime` surfaces hold, over everything built above."""
    return Runtime(
        tenant_id=tenant_of(given),
        model=parts.model,
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
        settings=given.get("settings"),
        reflection=given.get("reflection"),
        mcp=given.get("mcp"),
        skills=given.get("skills"),
        tracer=given_or(given.get("tracer"), lambda: NOOP_TRACER),
        recall=parts.recall,
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
