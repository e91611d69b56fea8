"""The composition root's product: the `Runtime` every surface holds.

The two halves that build it live beside it and import this module, never the other way
round (so the three form no import circle); `seam.wiring` exports all three:
`assemble_runtime(**collaborators)` (`wiring/assembly.py`) wires exactly the collaborators
it is handed and gives every other one the empty stack (in-memory store and storage, the
static personality, no memory, no sandbox, no gate). It reads no file, env var or home path
and changes nothing it is handed, so it is the testing seam:
`assemble_runtime(model=ScriptedModel(...))` is a whole runtime.

`create_runtime(settings=None, **overrides)` (`wiring/configure.py`) is the configuration:
it builds whatever was not handed in from the settings (`$SEAM_HOME/config.toml` and the
environment, loaded only when something is missing): the SQLite or PostgreSQL store, the
file personalities, the real filesystem, the sandbox, the command gate and the configured
model; then it assembles.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Unpack

from seam.contracts.checkpoints import CheckpointService
from seam.contracts.closing import ClosesOnExit
from seam.contracts.context import ContextUsage
from seam.contracts.events import AgentEvent, Done, ErrorEvent
from seam.contracts.execution import ExecutionStore, Submission
from seam.contracts.guardrail import ApprovalDecision
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.model import ModelProvider
from seam.contracts.personality import PersonalityRegistry
from seam.contracts.sessions import SessionInfo, SessionStore
from seam.contracts.storage import Storage
from seam.contracts.tools import CancelToken, Tool, ToolRegistry
from seam.contracts.tracing import NOOP_TRACER, Tracer
from seam.core.approvals import PendingApprovals
from seam.core.coordinator import Coordinator, OnEvent
from seam.core.coordinator_session import DriveOptions, SubmitOptions
from seam.core.coordinator_work import WorkOptions
from seam.core.identity import (
    DEFAULT_HARNESS,
    assert_public_session_name,
    create_session_storage_key,
    parse_session_storage_key,
)
from seam.core.loop import AgentLoop
from seam.core.loop_parts import RunOptions, check_keywords
from seam.core.session_factory import Session, SessionFactory, WorkflowExecutor
from seam.core.session_stream import EventChannel
from seam.core.workflows import WorkflowRegistry
from seam.plugins.hooks.reflection import ReflectionHook
from seam.plugins.hooks.titles import TitleHook
from seam.plugins.mcp.servers import McpServers
from seam.plugins.skills.catalog import SkillCatalog
from seam.wiring.context import close_side_models, is_subagent_key
from seam.wiring.settings import Settings
from seam.wiring.telemetry import shutdown_tracer

if TYPE_CHECKING:
    from seam.contracts.session_recall import SessionRecall

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


class AskOptions(SubmitOptions, total=False):
    """`Runtime.ask`'s and `ask_key`'s keywords: `submit`'s, and the callback each event
    of the turn is handed to and its cancel token."""

    on_event: OnEvent | None
    cancel: CancelToken | None


@dataclass
class Runtime(ClosesOnExit):
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
    # Undo and changes of the files turns touched (`[checkpoints]`; None: not kept).
    checkpoints: CheckpointService | None = None
    # Search over past sessions by words and meaning (`lazy_session_recall`).
    recall: Callable[[], SessionRecall] | None = None

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

    def session_recall(self) -> SessionRecall:
        """Search over past sessions by words and meaning, the one the tool uses too."""
        if self.recall is None:
            self.recall = lazy_session_recall(self.store, self.settings)
        return self.recall()

    async def __aenter__(self) -> Runtime:
        try:
            return await self.open()
        except BaseException:
            await self.aclose()  # the model and the store were built: close them anyway
            raise

    # Sessions, through the single construction seam

    async def get_session(
        self,
        key: str,
        *,
        personality: str | None = None,
        title: str | None = None,
        tools: Sequence[str] | None = None,
        model: str | None = None,
        stored: SessionInfo | None = None,
    ) -> Session:
        """The session stored under `key`, created (as a root session) if new; a new one
        stores `tools` (names; None: its personality's) and `model` as its spec.
        `stored`: its row as the caller already read it (not read again)."""
        if not self._opened:
            await self.open()
        return await self.factory.get_or_create_root(
            key, personality=personality, title=title, tools=tools, model=model, stored=stored
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
        if not self._opened:
            await self.open()
        await self.factory.set_working_dir(key, path)

    # Turns: every one is a submission, driven by the Coordinator

    async def submit(self, session: str, text: str, **options: Unpack[SubmitOptions]) -> Submission:
        """Queue `text` for the named session (created if new); a worker will run it.
        `personality` is a new session's, and this turn's in an existing one."""
        check_keywords(options, SubmitOptions.__optional_keys__, "submit")
        personality = options.get("personality")
        found = await self.get_session(self.session_key_for(session), personality=personality)
        submission_id = options.get("submission_id")
        return await found.submit(text, submission_id=submission_id, personality=personality)

    async def ask(self, session: str, text: str, **options: Unpack[AskOptions]) -> Submission:
        """One durable turn in the named session, driven here; returns it settled.
        `options` (`AskOptions`): the turn's personality (a new session's too), the
        caller's submission id, a callback for each event, a cancel token."""
        check_keywords(options, AskOptions.__optional_keys__, "ask")
        return await self.ask_key(self.session_key_for(session), text, **options)

    async def ask_key(
        self,
        key: str,
        text: str,
        *,
        stored: SessionInfo | None = None,
        **options: Unpack[AskOptions],
    ) -> Submission:
        """`ask` in the session stored under `key`, for a surface that derived the key
        once where it named the session (`session_key_for`); `stored`: the session's row
        as that surface already read it, so it is not read again (None: read or create)."""
        personality = options.get("personality")
        if not self._opened:
            await self.open()
        found = await self.factory.get_or_create_root(key, personality=personality, stored=stored)
        return await found.ask(
            text,
            submission_id=options.get("submission_id"),
            on_event=options.get("on_event"),
            personality=personality,
            extras=options.get("extras"),  # a person's images (`contracts/images.py`)
            cancel=options.get("cancel"),
        )

    async def drive(
        self, submission_id: str, on_event: OnEvent | None = None, **options: Unpack[DriveOptions]
    ) -> Submission:
        """Run an admitted submission to its end in this process (a surface that admits
        first and drives in the background, as the web page does); its settled row.
        `options`: the `cancel` token and the `admitted` row (see `Coordinator.run`)."""
        return await self.coordinator.run(submission_id, self.factory.resolve, on_event, **options)

    def run(
        self, session: str, text: str, **options: Unpack[RunOptions]
    ) -> AsyncIterator[AgentEvent]:
        """`ask` with its events streamed as they happen, ending with a `done` event
        (`options`: the turn's personality and cancel token, as the loop's `run` takes).

        The same durable path as `ask`, so the session keeps its tenant and stored spec.
        A turn that settled without streaming here (its reply was stored before a crash)
        still ends with `done` (after an `error` event when it failed). Leaving the loop
        early cancels the turn: it stops at its next step and settles aborted.
        """
        check_keywords(options, RunOptions.__optional_keys__, "run")
        self.session_key_for(session)  # a reserved name fails here, not at the first event
        return self._stream(session, text, options.get("personality"), options.get("cancel"))

    async def _stream(
        self, session: str, text: str, personality: str | None, cancel: CancelToken | None
    ) -> AsyncIterator[AgentEvent]:
        channel = EventChannel()
        # Our own token, so stopping early never cancels one the caller shares elsewhere.
        stop = CancelToken()
        unlink = cancel.on_cancel(lambda: stop.cancel(cancel.reason)) if cancel else None
        task = asyncio.ensure_future(
            self.ask(session, text, personality=personality, on_event=channel.put, cancel=stop)
        )
        task.add_done_callback(lambda _: channel.close())
        ended = False
        try:
            async for event in channel.events():
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
        if not self._opened:
            await self.open()
        return await self.coordinator.abort(submission_id)

    async def drain_runnable(self, on_event: OnEvent | None = None) -> list[Submission]:
        """Run every submission that is runnable now, here, one after another."""
        if not self._opened:
            await self.open()
        return await self.coordinator.drain_runnable(self.factory.resolve, on_event)

    async def resume_pending(self, on_event: OnEvent | None = None) -> list[Submission]:
        """Settle every unsettled submission (repairing what a crash left); see
        `Coordinator.resume_pending`."""
        if not self._opened:
            await self.open()
        return await self.coordinator.resume_pending(self.factory.resolve, on_event)

    async def work(self, **options: Unpack[WorkOptions]) -> None:
        """Serve the queue as a worker until `options`' `stop` is set, `concurrency`
        submissions at a time; see `Coordinator.work`. A long-running worker also ends
        idle sessions now and then (`idle_end`)."""
        check_keywords(options, WorkOptions.__optional_keys__, "work")
        if not self._opened:
            await self.open()
        upkeep = asyncio.ensure_future(self._end_idle_periodically())
        try:
            await self.coordinator.work(self.factory.resolve, **options)
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
    def working_dir(self) -> str:
        """Where sessions work unless they were given a folder of their own."""
        return str(self.loop.working_dir)

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

    @property
    def approvals(self) -> PendingApprovals:
        """The approvals turns in this process wait on, and the store's relay for those
        waiting in another process (None on a store without one)."""
        return self.loop.pending_approvals

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


def lazy_session_recall(
    store: SessionStore, settings: Settings | None
) -> Callable[[], SessionRecall]:
    """A runtime's one `SessionRecall`, built on first call from `[recall]`
    (`wiring/session_recall`, imported only then: not on the one-shot path)."""
    made: list[SessionRecall] = []

    def recall() -> SessionRecall:
        if not made:
            from seam.wiring.session_recall import build_session_recall

            made.append(build_session_recall(store, settings))
        return made[0]

    return recall


def settled_events(sub: Submission) -> list[AgentEvent]:
    """The closing events of a submission that settled without its turn streaming here
    (a reply stored before a crash, or another worker ran it unfollowed)."""
    finish = sub.finish_reason or ("stop" if sub.outcome == "completed" else "error")
    events: list[AgentEvent] = []
    if sub.outcome == "failed":
        events.append(ErrorEvent(sub.session_key, "", 0, "failed", sub.error or "it failed"))
    events.append(Done(sub.session_key, "", 0, sub.result or "", finish))
    return events


__all__ = ["Runtime", "settled_events"]
