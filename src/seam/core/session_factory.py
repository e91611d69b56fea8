"""The SessionFactory: the single construction seam for every session.

Root chat threads, subagents (`task:` names), workflow nodes and sessions resumed after a
crash are all built here, from their stored spec, so every one of them gets its tools,
its lineage and its durability the same way. The factory owns the per-process session
cache; `Runtime.get_session()` is a thin delegate to it.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace
from typing import TYPE_CHECKING, Unpack

from seam.contracts import hooks
from seam.contracts.events import AgentEvent, Halt
from seam.contracts.execution import EventQuery, ExecutionStore, Submission
from seam.contracts.hooks import SubagentSpawned
from seam.contracts.sessions import NewSession, SessionInfo, SessionNotFound
from seam.contracts.tools import AS_DEFAULTS, CancelToken, ChildSetup, Tool, ToolError
from seam.contracts.turn_extras import NO_EXTRAS, TurnExtras
from seam.core.coordinator import Coordinator, OnEvent
from seam.core.event_log import decode
from seam.core.hook_registry import fire_isolated
from seam.core.identity import (
    DEFAULT_HARNESS,
    TASK_PREFIX,
    assert_public_session_name,
    create_session_storage_key,
    create_task_session_name,
    parse_session_storage_key,
)
from seam.core.loop_parts import SessionTurnOptions, check_keywords
from seam.core.model_step import CallModel, UserPrompt
from seam.core.turn import TurnStep
from seam.core.workflows import WorkflowRegistry

if TYPE_CHECKING:
    from seam.core.loop import AgentLoop

DEFAULT_MAX_DEPTH = 2
DEFAULT_CACHE_SIZE = 1024


class Session:
    """One conversation with its spec (personality, tool names, model), bound to the loop.

    Cheap: it holds no transcript (the store does), so a resumed session is the same
    object a fresh one would be.
    """

    def __init__(self, factory: SessionFactory, info: SessionInfo, depth: int) -> None:
        self.factory = factory
        self.loop: AgentLoop = factory.loop
        self.info = info
        self.key = info.key
        self.depth = depth
        self.subagents = SessionSubagents(self)
        # `is_idempotent`'s answers: a tool's name keeps its nature for the session's life.
        self._idempotent: dict[str, bool] = {}

    @property
    def name(self) -> str:
        return parse_session_storage_key(self.key)[2]

    def run(
        self, user_message: str | None, **options: Unpack[SessionTurnOptions]
    ) -> AsyncIterator[AgentEvent]:
        """One turn, not durable by itself (`ask` is): see `AgentLoop.run`."""
        start = CallModel() if user_message is None else UserPrompt(user_message)
        return self.run_from(start, **options)

    def run_from(
        self, start: TurnStep, **options: Unpack[SessionTurnOptions]
    ) -> AsyncIterator[AgentEvent]:
        """One turn from `start` (see `AgentLoop.run_from`); its tools reach this
        session's subagents. The stored tool names and model apply (the loop reads them)."""
        check_keywords(options, SessionTurnOptions.__optional_keys__, "run_from")
        return self.loop.run_from(
            self.key,
            start,
            personality=options.get("personality") or self.info.personality,
            cancel=options.get("cancel"),
            transcript=options.get("transcript"),
            subagents=self.subagents,
            extras=options.get("extras", NO_EXTRAS),
        )

    def tools(self) -> list[Tool]:
        """This session's toolset, built by name through the registry over its context."""
        loop = self.loop
        personality = loop.personality_for(self.info.personality)
        ctx = loop.tool_context(self.key, personality, subagents=self.subagents)
        names = self.info.tools if self.info.tools is not None else personality.toolset
        return loop.tools.build(names, ctx)

    def is_idempotent(self, tool_name: str) -> bool:
        """Whether the session's tool `tool_name` may run twice (asked once a turn by the
        coordinator's journal; building the toolset to answer costs more than the turn's
        own store reads, so the answer is kept)."""
        known = self._idempotent.get(tool_name)
        if known is None:
            known = any(t.name == tool_name and t.idempotent for t in self.tools())
            self._idempotent[tool_name] = known
        return known

    async def submit(
        self,
        text: str,
        *,
        submission_id: str | None = None,
        personality: str | None = None,
        extras: TurnExtras | None = None,
    ) -> Submission:
        """Queue `text` as a durable submission of this session (its turn runs as
        `personality`, when given, instead of the session's own; with `extras`, the
        caller's tools and settings: `contracts/turn_extras.py`).

        The input is stored redacted, as the transcript stores it (`_redacted`).
        """
        return await self.factory.coordinator.submit(
            self.key,
            self._redacted(text),
            submission_id=submission_id,
            personality=personality or self.info.personality,
            extras=extras,
        )

    async def ask(
        self,
        text: str,
        *,
        submission_id: str | None = None,
        on_event: OnEvent | None = None,
        personality: str | None = None,
        extras: TurnExtras | None = None,
        cancel: CancelToken | None = None,
    ) -> Submission:
        """Submit `text` (as `submit` does) and drive it to settlement here; returns the
        settled submission (`cancel`: see `Coordinator.run`).

        Admitted already claimed when nothing of the session is ahead of it
        (`Coordinator.ask`): one transaction for the admission and the claim."""
        return await self.factory.coordinator.ask(
            self.key,
            self._redacted(text),
            self.factory.resolve,
            on_event,
            cancel,
            submission_id=submission_id,
            personality=personality or self.info.personality,
            extras=extras,
        )

    def _redacted(self, text: str) -> str:
        """The input as the submission row stores it: redacted, as the transcript stores
        it (the row must not keep a secret the transcript hides)."""
        redact = self.loop.redact
        return text if redact is None else redact(text)


@dataclass(frozen=True)
class SessionSubagents:
    """The `Subagents` a session hands its tools: children built by the same factory."""

    _session: Session

    @property
    def depth(self) -> int:
        return self._session.depth

    @property
    def max_depth(self) -> int:
        return self._session.factory.max_depth

    async def delegate(self, task: str, *, task_id: str, setup: ChildSetup = AS_DEFAULTS) -> str:
        parent = self._session
        child = await parent.factory.create_child(parent, task_id, setup)
        sub = await child.ask(task, submission_id=submission_id_for(child.key))
        if sub.outcome == "completed" and sub.finish_reason in HALTED:
            # Halted turns settle completed with whatever text they had; the parent must
            # hear that the task was not done, not take that text (often "") as the answer.
            why = await _halt_message(parent.factory.store, sub)
            raise ToolError(f"the subagent halted ({sub.finish_reason}): {why}")
        return answer_of(sub)

    def workflow_names(self) -> list[str]:
        return self._session.factory.workflows.names()

    async def run_workflow(self, name: str, input: str, *, run_id: str) -> str:
        parent = self._session
        executor = parent.factory.create_workflow_executor(parent.key, parent.depth)
        return await executor.run(name, input, run_id=run_id)


@dataclass(eq=False)
class SessionFactory:
    """Builds and caches every session of one loop, store and Coordinator (see the module
    docstring); `tenant_id` and `harness` make its sessions' storage keys."""

    loop: AgentLoop
    store: ExecutionStore
    coordinator: Coordinator
    _: KW_ONLY
    tenant_id: str = "local"
    harness: str = DEFAULT_HARNESS
    workflows: WorkflowRegistry = field(default_factory=WorkflowRegistry)
    max_depth: int = DEFAULT_MAX_DEPTH
    cache_size: int = DEFAULT_CACHE_SIZE
    # Recently used sessions, newest last: a long-running worker serves many sessions,
    # and any session can be rebuilt from the store, so the cache is bounded.
    _cache: OrderedDict[str, Session] = field(default_factory=OrderedDict, init=False)

    def key_for(self, name: str) -> str:
        """The storage key of a public session name (`task:` names are rejected)."""
        return create_session_storage_key(
            self.tenant_id, self.harness, assert_public_session_name(name)
        )

    async def get_or_create_root(
        self,
        key: str,
        *,
        personality: str | None = None,
        tools: Sequence[str] | None = None,
        model: str | None = None,
        title: str | None = None,
        stored: SessionInfo | None = None,
    ) -> Session:
        """The root session under `key`: cached, or built from `stored` (its row, as the
        caller already read it), or read from the store and created there if new."""
        cached = self._cached(key)
        if cached is not None:
            return cached
        _, _, name = parse_session_storage_key(key)
        assert_public_session_name(name)
        if stored is not None and stored.key == key:
            info = stored
        else:
            info = await self.store.create(
                key,
                NewSession(
                    # Pinned at creation, as a turn does: later turns keep this personality.
                    personality=personality or self.loop.personalities.default_id,
                    title=title,
                    tenant=self.tenant_id,
                    tools=tools,
                    model=model,
                ),
            )
        early = self.loop.working_dirs.get(key)
        if early is not None:  # given before the session existed (`set_working_dir`)
            info = await self._store_working_dir(info, early)
        return self._keep(Session(self, info, 0))

    async def set_working_dir(self, key: str, path: str | None) -> None:
        """Run the session's turns in `path` (None: the loop's directory), here and in any
        process that resumes it: the directory is stored with the session's spec once
        the session exists (`get_or_create_root` stores one given before)."""
        working_dirs = self.loop.working_dirs
        if path is None:
            working_dirs.pop(key, None)
        else:
            working_dirs[key] = path
        self.loop.restored_dirs.discard(key)
        info = await self.store.get(key)
        if info is not None:
            info = await self._store_working_dir(info, path, clear=True)
            cached = self._cache.get(key)
            if cached is not None:
                cached.info = info

    async def _store_working_dir(
        self, info: SessionInfo, path: str | None, *, clear: bool = False
    ) -> SessionInfo:
        if info.working_dir == path or (path is None and not clear):
            return info
        await self.store.set_working_dir(info.key, path)
        return replace(info, working_dir=path)

    async def create_child(
        self, parent: Session, task_id: str, setup: ChildSetup = AS_DEFAULTS
    ) -> Session:
        """A subagent session `task:<parent name>:<task_id>`, lineage stored, one level
        deeper than its parent; refused past `max_depth`."""
        depth = parent.depth + 1
        if depth > self.max_depth:
            raise ToolError(
                f"subagents may nest {self.max_depth} levels deep; this session is already "
                f"at depth {parent.depth}"
            )
        tenant, harness, parent_name = parse_session_storage_key(parent.key)
        key = create_session_storage_key(
            tenant, harness, create_task_session_name(parent_name, task_id)
        )
        # A subagent works where its parent does (an editor session's project).
        working_dirs = self.loop.working_dirs
        inherited = working_dirs.get(parent.key)
        if inherited is not None:
            working_dirs[key] = inherited
        cached = self._cached(key)
        if cached is not None:
            return cached
        info = await self.store.get(key)
        if info is None:
            info = await self.store.create(
                key,
                NewSession(
                    personality=setup.personality or parent.info.personality,
                    parent_key=parent.key,
                    tenant=tenant,
                    tools=setup.tools if setup.tools is not None else parent.info.tools,
                    model=parent.info.model,
                ),
            )
            registry = self.loop.hooks
            if registry.has(hooks.SUBAGENT_SPAWNED):
                spawned = SubagentSpawned(parent.key, key, info.personality or "")
                await fire_isolated(registry, hooks.SUBAGENT_SPAWNED, spawned)
        # Stored too, so a resumed child turn runs there even before its parent resumes.
        info = await self._store_working_dir(info, inherited)
        return self._keep(Session(self, info, depth))

    async def resolve(self, key: str) -> Session:
        """The session stored under `key` (rebuilt from the store after a restart)."""
        cached = self._cached(key)
        if cached is not None:
            return cached
        info = await self.store.get(key)
        if info is None:
            raise SessionNotFound(f"no session {key!r}")
        depth = 0
        parent_key = info.parent_key
        while parent_key is not None and depth <= self.max_depth:
            depth += 1
            parent = await self.store.get(parent_key)
            parent_key = parent.parent_key if parent is not None else None
        if depth == 0 and parse_session_storage_key(key)[2].startswith(TASK_PREFIX):
            depth = 1
        return self._keep(Session(self, info, depth))

    def drop(self, key: str) -> None:
        self._cache.pop(key, None)
        self.loop.forget(key)

    def _cached(self, key: str) -> Session | None:
        session = self._cache.get(key)
        if session is not None:
            self._cache.move_to_end(key)
        return session

    def _keep(self, session: Session) -> Session:
        stored = session.info.working_dir
        if stored is not None and session.key not in self.loop.working_dirs:
            # Rebuilt from the store (after a restart): work where the session did, once
            # each turn has checked the directory is still there (`restored_dirs`).
            self.loop.working_dirs[session.key] = stored
            self.loop.restored_dirs.add(session.key)
        kept = self._cache.setdefault(session.key, session)
        self._cache.move_to_end(session.key)
        while len(self._cache) > self.cache_size:
            evicted, _ = self._cache.popitem(last=False)
            self.loop.forget(evicted)
        return kept

    def create_workflow_executor(self, storage_key: str, depth: int = 0) -> WorkflowExecutor:
        return WorkflowExecutor(self, storage_key, depth)


class WorkflowExecutor:
    """Runs registered workflows on behalf of the session stored under `storage_key`:
    each node a child session's durable turn, the answer of one the next one's
    `{previous}`."""

    def __init__(self, factory: SessionFactory, storage_key: str, depth: int = 0) -> None:
        self.factory = factory
        self.storage_key = storage_key
        self.depth = depth

    async def run(self, name: str, input: str, *, run_id: str) -> str:
        try:
            workflow = self.factory.workflows.get(name)
        except KeyError as exc:
            raise ToolError(str(exc.args[0])) from None
        parent = await self.factory.resolve(self.storage_key)
        if self.depth > parent.depth:  # the caller knows the session is deeper than its lineage
            parent.depth = self.depth
        previous = ""
        for node in workflow.nodes:
            child = await self.factory.create_child(
                parent,
                f"wf-{name}-{run_id}-{node.name}",
                ChildSetup(node.personality, node.tools),
            )
            prompt = node.prompt.format(input=input, previous=previous)
            sub = await child.ask(prompt, submission_id=submission_id_for(child.key))
            previous = answer_of(sub)
        return previous


def submission_id_for(child_key: str) -> str:
    """A child's submission id, derived from its key: a resumed parent that delegates the
    same task again gets the stored answer instead of running the child twice."""
    return "task-" + hashlib.sha256(child_key.encode()).hexdigest()[:20]


# Finish reasons of a turn that stopped without a final answer.
HALTED = frozenset({"max_iterations", "halted"})


async def _halt_message(store: ExecutionStore, sub: Submission) -> str:
    """What the child's `halt` event said (the circuit breaker's or the loop's reason)."""
    try:
        records = await store.events(sub.session_key, EventQuery(submission_id=sub.id))
    except Exception:
        records = []
    for record in reversed(records):
        if record.type == "halt":
            for event in decode(record):
                if isinstance(event, Halt):
                    return event.message
    return "it stopped before giving an answer"


def answer_of(sub: Submission) -> str:
    if sub.outcome == "completed":
        return sub.result or ""
    raise ToolError(f"the subagent {sub.outcome}: {sub.error or sub.finish_reason or 'no answer'}")
