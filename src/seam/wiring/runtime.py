"""The composition root, in two halves: assembly and configuration.

`assemble_runtime(**collaborators)` wires exactly the collaborators it is handed and gives
every other one the empty stack (in-memory store and storage, the static personality, no
memory, no sandbox, no gate). It reads no file, env var or home path and changes nothing it
is handed, so it is the testing seam: `assemble_runtime(model=ScriptedModel(...))` is a
whole runtime.

`create_runtime(settings=None, **overrides)` is the configuration: it builds whatever was
not handed in from the settings (`$SEAM_HOME/config.toml` and the environment, loaded only
when something is missing): the SQLite or PostgreSQL store, the file personalities, the real
filesystem, the sandbox, the command gate and the configured model; then it assembles.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from seam.contracts.approval_answers import ApprovalAnswers
from seam.contracts.context import ContextBuilder, ContextCompressor, ContextUsage
from seam.contracts.events import AgentEvent, ContextCompacted, Done, ErrorEvent
from seam.contracts.execution import (
    DEFAULT_LEASE_SECONDS,
    DEFAULT_MAX_ATTEMPTS,
    ExecutionStore,
    Submission,
)
from seam.contracts.guardrail import ApprovalDecision, CommandGate
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.model import ModelProvider, OnRetry
from seam.contracts.personality import PersonalityRegistry
from seam.contracts.sandbox import SandboxProvider
from seam.contracts.sessions import SessionInfo, SessionStore
from seam.contracts.storage import Storage
from seam.contracts.tools import CancelToken, Tool, ToolRegistry
from seam.contracts.tracing import NOOP_TRACER, Tracer
from seam.core.coordinator import Coordinator, DeadOwners, OnEvent
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
from seam.core.traced_store import DEFAULT_SLOW_STORE_MS, TracedStore
from seam.core.workflows import WorkflowExecutor, WorkflowRegistry
from seam.plugins.hooks.circuit_breaker import ToolLoopBreaker
from seam.plugins.hooks.injection_guard import InjectionGuard
from seam.plugins.hooks.reflection import ReflectionHook
from seam.plugins.hooks.titles import TitleHook
from seam.plugins.mcp.servers import McpServers
from seam.plugins.safety import injection
from seam.plugins.safety.redact import redact
from seam.plugins.skills.catalog import SkillCatalog
from seam.wiring.context import (
    build_compressor,
    build_context_builder,
    build_reflection,
    build_titles,
    close_side_models,
    context_options,
    is_subagent_key,
)
from seam.wiring.cron import tool_jobs
from seam.wiring.secrets import secret_redactor
from seam.wiring.settings import Settings, load_settings
from seam.wiring.telemetry import build_tracer, noting_retries, shutdown_tracer
from seam.wiring.tools import build_tool_registry

Redact = Callable[[str], str]
log = logging.getLogger("seam.runtime")

# Seconds a closing runtime waits for a background memory review to finish.
REFLECTION_GRACE = 10.0
# Seconds a closing runtime waits for a title a side model is writing.
TITLE_GRACE = 5.0
# Seconds between a worker's checks for sessions idle past `[sessions] idle_end`.
IDLE_CHECK_EVERY = 3600.0
# Seconds a turn whose reader stopped reading (`Runtime.run`) gets to stop at its next
# step, settling aborted, before it is abandoned (`seam resume` finishes it then).
STOP_GRACE = 1.0


@dataclass
class Runtime:
    """What a surface holds: every turn, whatever starts it, goes through `ask` (a durable
    submission the Coordinator drives, in a session the SessionFactory built from its stored
    spec). Surfaces use these methods, never `loop`, `coordinator` or `factory` directly.

    An async context manager: `async with create_runtime() as runtime:` opens the store and
    closes everything on the way out."""

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
    # Session titles after the first exchange (`wiring/context.build_titles`).
    titles: TitleHook | None = None
    # Seconds without activity after which a session is ended (`[sessions] idle_end`),
    # applied when the runtime opens; 0: never.
    idle_end: float = 0.0
    # MCP servers (`[mcp.servers.*]`, plugins/mcp): started on first use, closed here.
    mcp: McpServers | None = None
    # The Agent Skills catalog behind `skill_view` (None: skills are not offered).
    skills: SkillCatalog | None = None
    # Spans of turns, model and tool calls (`[telemetry]`); flushed when the runtime closes.
    tracer: Tracer = NOOP_TRACER

    async def open(self) -> Runtime:
        """Connect the store when it needs it (PostgreSQL) and end sessions idle past
        `idle_end`; idempotent, returns self."""
        if not self._opened:
            self._opened = True
            opener: Any = getattr(self.store, "open", None)
            if opener is not None:
                await opener()
            if self.idle_end > 0:
                await self.end_idle_sessions()
        return self

    async def end_idle_sessions(self) -> int:
        """End the sessions idle past `idle_end` (so `prune` can delete them); how many.

        Upkeep, not the command's work: a store that cannot be written (a read-only
        home) is logged and the command goes on."""
        if self.idle_end <= 0:
            return 0
        try:
            return await self.store.end_idle(self.idle_end)
        except Exception:
            log.warning("could not end idle sessions", exc_info=True)
            return 0

    async def __aenter__(self) -> Runtime:
        try:
            return await self.open()
        except BaseException:
            await self.aclose()  # the model and the store were built: close them anyway
            raise

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    # Sessions, through the single construction seam

    async def get_session(
        self,
        key: str,
        *,
        personality: str | None = None,
        title: str | None = None,
        tools: Sequence[str] | None = None,
        model: str | None = None,
    ) -> Session:
        """The session stored under `key`, created (as a root session) if new; a new one
        stores `tools` (names; None: its personality's) and `model` as its spec."""
        await self.open()
        return await self.factory.get_or_create_root(
            key, personality=personality, title=title, tools=tools, model=model
        )

    def drop_session(self, key: str) -> None:
        self.factory.drop(key)

    async def set_working_dir(self, session: str, path: str | None) -> None:
        """Run the named session's turns in `path` (its tools, sandbox view, project files
        and skills) instead of the runtime's working directory (None: back to that one).
        Sessions in different directories run their turns concurrently. The directory is
        stored with the session's spec, so `seam resume` / `seam worker` finish its turns
        there too."""
        key = self.session_key_for(session)
        await self.open()
        await self.factory.set_working_dir(key, path)

    # Turns: every one is a submission, driven by the Coordinator

    async def submit(
        self,
        session: str,
        text: str,
        *,
        personality: str | None = None,
        submission_id: str | None = None,
    ) -> Submission:
        """Queue `text` for the named session (created if new); a worker will run it.
        `personality` is a new session's, and this turn's in an existing one."""
        found = await self.get_session(self.session_key_for(session), personality=personality)
        return await found.submit(text, submission_id=submission_id, personality=personality)

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
        return await self.coordinator.run(
            sub.id, self.factory.resolve, on_event, cancel=cancel, admitted=sub
        )

    def run(
        self,
        session: str,
        text: str,
        *,
        personality: str | None = None,
        cancel: CancelToken | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """`ask` with its events streamed as they happen, ending with a `done` event.

        The same durable path as `ask`, so the session keeps its tenant and stored spec.
        A turn that settled without streaming here (its reply was stored before a crash)
        still ends with `done` (after an `error` event when it failed). Leaving the loop
        early cancels the turn: it stops at its next step and settles aborted.
        """
        self.session_key_for(session)  # a reserved name fails here, not at the first event
        return self._stream(session, text, personality, cancel)

    async def _stream(
        self, session: str, text: str, personality: str | None, cancel: CancelToken | None
    ) -> AsyncIterator[AgentEvent]:
        events: asyncio.Queue[AgentEvent | None] = asyncio.Queue()
        # Our own token, so stopping early never cancels one the caller shares elsewhere.
        stop = CancelToken()
        unlink = cancel.on_cancel(lambda: stop.cancel(cancel.reason)) if cancel else None
        task = asyncio.ensure_future(
            self.ask(
                session, text, personality=personality, on_event=events.put_nowait, cancel=stop
            )
        )
        task.add_done_callback(lambda _: events.put_nowait(None))
        ended = False
        try:
            while (event := await events.get()) is not None:
                ended = ended or isinstance(event, Done)
                yield event
            if not ended:
                for event in settled_events(task.result()):
                    yield event
            task.result()  # a crash in the turn surfaces here
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            if unlink is not None:
                unlink()
            if not task.done():
                stop.cancel("the reader stopped reading")
                if not (await asyncio.wait((task,), timeout=STOP_GRACE))[0]:
                    task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    async def abort(self, submission_id: str) -> Submission:
        """Stop a submission: a queued one settles aborted at once, a running one at its
        turn's next step (its worker sees the request when it renews the lease)."""
        await self.open()
        return await self.coordinator.abort(submission_id)

    async def drain_runnable(self, on_event: OnEvent | None = None) -> list[Submission]:
        """Run every submission that is runnable now, here, one after another."""
        await self.open()
        return await self.coordinator.drain_runnable(self.factory.resolve, on_event)

    async def resume_pending(self, on_event: OnEvent | None = None) -> list[Submission]:
        """Settle every unsettled submission (repairing what a crash left); see
        `Coordinator.resume_pending`."""
        await self.open()
        return await self.coordinator.resume_pending(self.factory.resolve, on_event)

    async def work(
        self,
        *,
        stop: asyncio.Event | None = None,
        on_event: OnEvent | None = None,
        on_settled: Callable[[Submission], None] | None = None,
        idle_wait: float = 5.0,
    ) -> None:
        """Serve the queue as a worker until `stop` is set; see `Coordinator.work`. A
        long-running worker also ends idle sessions now and then (`idle_end`)."""
        await self.open()
        upkeep = asyncio.ensure_future(self._end_idle_periodically())
        try:
            await self.coordinator.work(
                self.factory.resolve,
                stop=stop,
                on_event=on_event,
                on_settled=on_settled,
                idle_wait=idle_wait,
            )
        finally:
            upkeep.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await upkeep

    async def _end_idle_periodically(self) -> None:
        if self.idle_end <= 0:
            return
        while True:
            await asyncio.sleep(min(self.idle_end / 4, IDLE_CHECK_EVERY))
            await self.end_idle_sessions()

    @property
    def owner(self) -> str:
        """This process's lease owner id (what `seam worker` prints)."""
        return self.coordinator.owner

    def respond(self, session: str, call_id: str, decision: ApprovalDecision) -> bool:
        """Answer a `tool_approval_required` event of a turn running in `session` (a public
        name); False if nothing is waiting for it."""
        return self.loop.respond(self.session_key_for(session), call_id, decision)

    def respond_to(self, session_key: str, call_id: str, decision: ApprovalDecision) -> bool:
        """`respond` by the event's own `session_key`, which is also how a subagent's
        request is answered (its `task:` name is not a public one)."""
        return self.loop.respond(session_key, call_id, decision)

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

    async def list_sessions(self, limit: int = 50, *, subagents: bool = False) -> list[SessionInfo]:
        """Most recently active first; subagents' `task:` sessions only when asked (they
        are a parent's working notes, and would crowd out the conversations)."""
        if subagents:
            return await self.sessions.list(limit)
        fetch = limit
        while True:
            infos = await self.sessions.list(fetch)
            kept = [info for info in infos if not is_subagent_key(info.key)]
            if len(kept) >= limit or len(infos) < fetch:
                return kept[:limit]
            fetch *= 4

    @staticmethod
    def session_name_of(key: str) -> str:
        try:
            return parse_session_storage_key(key)[2]
        except ValueError:
            return key

    @property
    def redact(self) -> Callable[[str], str] | None:
        """What the loop applies to everything it stores (None: redaction is off), for a
        surface that keeps text of its own, such as the chat's input history."""
        return self.loop.redact

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
        if self.titles is not None:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(TITLE_GRACE):
                    await self.titles.drain()
            await self.titles.aclose()
        await close_side_models(self.loop.compressor, self.reflection, self.titles)
        if self.mcp is not None:
            await self.mcp.aclose()
        await self.model.aclose()
        await self.sessions.aclose()
        shutdown_tracer(self.tracer)
        if self.loop.sandboxes is not None:
            await self.loop.sandboxes.aclose()


def settled_events(sub: Submission) -> list[AgentEvent]:
    """The closing events of a submission that settled without its turn streaming here
    (a reply stored before a crash, or another worker ran it unfollowed)."""
    finish = sub.finish_reason or ("stop" if sub.outcome == "completed" else "error")
    events: list[AgentEvent] = []
    if sub.outcome == "failed":
        events.append(ErrorEvent(sub.session_key, "", 0, "failed", sub.error or "it failed"))
    events.append(Done(sub.session_key, "", 0, sub.result or "", finish))
    return events


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
    """A runtime of exactly these collaborators; each one left out is the empty stack.

    Defaults: an `InMemoryExecutionStore`, `InMemoryStorage`, `StaticPersonalityRegistry`,
    `NoopMemory`, no sandbox (command tools say so), no gate, no pricing, the built-in tools
    (they reach files only through `storage`) and `default_hooks()`. Nothing is read from
    disk or the environment; nothing handed in is changed.

    `store` and `sessions` name the same collaborator (an `ExecutionStore` is a
    `SessionStore`); pass either. `reflection` is a hook its builder already registered on
    `hooks`; the runtime only closes it. A `coordinator` handed in is used as it is (its
    own `compress`, if any, handles context overflow); otherwise one is built here from
    `owner`, `dead_owners`, `lease` and `max_attempts`, compressing through the loop.
    `settings` are only kept, for surfaces that show them (`runtime.settings`). `mcp`:
    MCP servers whose tools the built-in registry offers (a `tools` registry handed in
    adds them itself); the runtime closes them. `skills`: the Agent Skills catalog behind
    `skill_view` and `skill_write` in the built-in registry (None: neither is offered).
    """
    store = _one_store(store, sessions)
    store = store if store is not None else InMemoryExecutionStore()
    workflows = workflows if workflows is not None else WorkflowRegistry()
    if tools is None:
        tools = build_tool_registry(
            sessions=store,
            workflows=bool(workflows.names()),
            sources=() if mcp is None else (mcp,),
            skills=skills,
            cron=tool_jobs(store, settings),
        )
    hooks = hooks if hooks is not None else default_hooks()
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
        working_dir=working_dir,
        fs_deny=fs_deny,
        options=options,
        pricing=pricing,
        models=models,
        redact=redact,
        sandboxes=sandboxes,
        gate=gate,
        context=context if context is not None else build_context_builder(None),
        compressor=compressor,
        tracer=tracer,
    )
    if isinstance(store, ApprovalAnswers):
        # Approvals answered in another process reach this one's waiters through the store.
        loop.pending_approvals.relay = store
    if coordinator is None:
        # Tracing on: the Coordinator's store calls slower than `slow_store_ms` are spans.
        traced: Any = store if tracer is None else TracedStore(store, tracer, slow_ms=slow_store_ms)
        coordinator = Coordinator(
            traced,
            tracer=tracer,
            owner=owner,
            lease=lease,
            max_attempts=max_attempts,
            dead_owners=dead_owners,
            compress=_compressor(loop),
        )
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
        mcp=mcp,
        skills=skills,
        tracer=tracer if tracer is not None else NOOP_TRACER,
    )


def create_runtime(
    settings: Settings | None = None,
    *,
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
    on_retry: OnRetry | None = None,
    interactive: bool = False,
) -> Runtime:
    """The runtime the settings describe, with the collaborators handed in instead of
    theirs; `settings` are loaded (`load_settings()`) only when something is missing.

    Without settings to read this needs every one of `model`, `personalities`, `store`,
    `storage`, `memory`, `sandboxes`, `gate`, `pricing`, `options` and `working_dir`; a
    test that wants none of them read wants `assemble_runtime`.

    `on_retry` hears of each retry the configured model makes. `interactive` (a person
    waits on each turn: `seam run`, `seam chat`) settles a turn that failed transiently
    as failed: the model's own retries, shown through `on_retry`, are all the retrying
    there is, instead of minutes of silent re-runs with back-off (a crashed turn is
    still resumed).
    """
    store = _one_store(store, sessions)
    wanted = (model, personalities, store, storage, memory, sandboxes, gate, pricing, options)
    if settings is None and (working_dir is None or any(item is None for item in wanted)):
        settings = load_settings()
    fs_deny: list[str] = []
    models: ModelResolver | None = None
    tracer = build_tracer(settings)
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

            factory = ModelFactory(settings, on_retry=noting_retries(tracer, on_retry))
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
        from seam.wiring.guard import guard_section

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
        # The agent must not edit its own controls (approvals, config, personalities, the
        # store) nor the person's secrets and start-up files: one list, see wiring/reach.py.
        from seam.wiring.reach import fs_deny as reach_deny

        fs_deny += reach_deny(settings)
    assert model is not None  # settings were loaded whenever it was missing
    from seam.wiring.owners import dead_owners, owner_id

    hooks = hooks if hooks is not None else default_hooks()
    # Registered on `hooks` here (configuration), so assembly only closes it.
    reflection = None
    titles = None
    if settings is not None:
        # Both built above from the settings when missing.
        assert memory is not None and store is not None
        reflection = build_reflection(settings, memory, hooks, model)
        titles = build_titles(settings, store, hooks)
    section = settings.config.store if settings is not None else None
    mcp = None
    if settings is not None and tools is None:
        from seam.wiring.mcp import build_mcp, default_gets_mcp

        mcp = build_mcp(settings)
        if mcp.names() and personalities is not None:
            personalities = default_gets_mcp(personalities)
    skills = None
    if settings is not None and tools is None:
        from seam.wiring.skills import build_skills, default_gets_skills

        skills = build_skills(settings)
        # The default personality names them; each session gets them only where a skill
        # is offered (the tools' factories ask), so sessions elsewhere stay lean.
        if personalities is not None:
            personalities = default_gets_skills(personalities)
    if settings is not None and personalities is not None:
        from seam.wiring.heartbeat import with_heartbeat

        # The lean `heartbeat` personality, in every runtime so any worker runs a beat.
        personalities = with_heartbeat(personalities, settings)
    runtime = assemble_runtime(
        model=model,
        tools=tools,
        hooks=hooks,
        personalities=personalities,
        memory=memory,
        store=store,
        storage=storage,
        sandboxes=sandboxes,
        gate=gate,
        working_dir=working_dir or "/",
        fs_deny=fs_deny,
        options=options,
        pricing=pricing,
        models=models,
        redact=secret_redactor(settings),
        context=build_context_builder(settings),
        compressor=build_compressor(settings),
        reflection=reflection,
        tenant_id=tenant_id,
        workflows=workflows,
        coordinator=coordinator,
        owner=owner_id(),
        dead_owners=dead_owners,
        lease=section.lease_seconds if section is not None else DEFAULT_LEASE_SECONDS,
        max_attempts=section.max_attempts if section is not None else DEFAULT_MAX_ATTEMPTS,
        settings=settings,
        mcp=mcp,
        skills=skills,
        tracer=None if tracer is NOOP_TRACER else tracer,
        slow_store_ms=settings.config.telemetry.slow_store_ms if settings else 50.0,
    )
    runtime.titles = titles
    if settings is not None:
        runtime.idle_end = settings.config.sessions.idle_end_seconds
    if coordinator is None:
        runtime.coordinator.rerun_transient = not interactive
    return runtime


def _one_store(
    store: ExecutionStore | None, sessions: SessionStore | None
) -> ExecutionStore | None:
    """`store` and `sessions` are one collaborator: whichever was handed in."""
    if store is None and isinstance(sessions, ExecutionStore):
        return sessions
    if sessions is not None and store is None:
        raise TypeError("sessions must be an ExecutionStore (it stores submissions too)")
    return store


def _open_store(settings: Settings) -> ExecutionStore:
    """The store the settings name, from the registered backend its URL selects (opened
    by `Runtime.open()`)."""
    from seam.wiring.store_backends import open_store, store_location

    return open_store(store_location(settings))


def _compressor(loop: AgentLoop) -> Callable[[str], Awaitable[bool]]:
    """What a submission that overflowed the context window runs before its retry."""

    async def compress(key: str) -> bool:
        events = await loop.compress(key)
        return any(isinstance(event, ContextCompacted) for event in events)

    return compress


__all__ = ["Runtime", "assemble_runtime", "create_runtime", "default_hooks", "settled_events"]
