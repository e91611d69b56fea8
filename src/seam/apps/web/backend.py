"""What `seam serve` drives: one Runtime seen through tenants, turns run in the background,
and their events fanned out to every stream that follows a session.

Tenants: a key belongs to a tenant, and a tenant's sessions are those whose durable key
(`agent-session:["<tenant>","<harness>","<name>"]`) names it. One Runtime serves them all
(the runtime runs any stored submission, whatever its key); only naming and listing are
tenant-aware (`sessions.py`), so a key never sees, or even learns of, another tenant's
sessions.

Streams: a turn driven here (`turns.py`) hands each event to `EventHub.publish` as it
happens; a stream follows the store's log, then the hub (`follow_session`). Turns another
process runs are followed from the store and reach the hub the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Callable, Mapping
from dataclasses import KW_ONLY, InitVar, dataclass, field
from pathlib import Path
from typing import Any, TypedDict, Unpack

from seam.apps.web import approvals, editing, sessions, tenant_files
from seam.apps.web.auth import Principal
from seam.apps.web.metrics import Metrics
from seam.apps.web.problems import Conflict, Forbidden, Invalid, NotFound
from seam.apps.web.retries import RetryBoard
from seam.apps.web.turns import RESCUE_SECONDS, TurnDrivers
from seam.contracts.events import AgentEvent
from seam.contracts.execution import (
    Submission,
    SubmissionConflict,
    SubmissionQuery,
    SubmissionState,
)
from seam.contracts.guardrail import UNAVAILABLE
from seam.contracts.memory import MemoryTarget
from seam.contracts.messages import Message
from seam.contracts.sessions import SessionInfo
from seam.contracts.turn_extras import TurnExtras
from seam.wiring.cron import Background, maybe_start_scheduler, stop_scheduler
from seam.wiring.runtime import Runtime
from seam.wiring.web import (
    EventHub,
    WebDeps,
    follow_session,
    session_name,
    tenant_session_key,
    tenant_session_name,
)
from seam.wiring.web_keys import WebSection

_UNSETTLED: tuple[SubmissionState, ...] = ("queued", "running")
# Session keys remembered by (tenant, name) at most (then forgotten all at once).
_KEYS_KEPT = 10_000
# Approval answers that change the allowlists for everyone: the owner's alone.
_LASTING = ("always", "never")


class MessageOptions(TypedDict, total=False):
    """`post_message`'s keyword arguments: the caller's submission id (an idempotency
    key) and the personality the turn runs as."""

    submission_id: str | None
    personality: str | None
    # The client's own tools and settings for the turn (the OpenAI-compatible API).
    extras: TurnExtras | None


@dataclass(eq=False)
class WebBackend:
    """The Runtime as the web app uses it (see the module docstring)."""

    runtime: Runtime
    config: WebSection = field(default_factory=WebSection)
    _: KW_ONLY
    personalities_dir: Path | None = None
    tenants_dir: Path | None = None
    # Seconds between the turn drivers' looks for turns to rescue (`turns.py`).
    rescue_seconds: InitVar[float] = RESCUE_SECONDS
    # The model's retries, by session (`retries.py`): `seam serve` hands it to the models.
    retries: RetryBoard = field(default_factory=RetryBoard)
    # Whether a personality's model sees images (wiring/vision.py); by default none does.
    sees_images: Callable[[str], bool] = lambda _pid: False
    hub: EventHub = field(default_factory=EventHub, init=False)
    metrics: Metrics = field(default_factory=Metrics, init=False)
    turns: TurnDrivers = field(init=False)
    _cron: Background | None = field(default=None, init=False)
    # Indexes new messages for search by meaning (wiring/session_recall.py).
    _indexing: asyncio.Task[Any] | None = field(default=None, init=False)
    # Each (tenant, name)'s session key, as `key_for` made it (see there).
    _keys: dict[tuple[str, str], str] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self, rescue_seconds: float) -> None:
        self.turns = TurnDrivers(self.runtime, self._on_event, self.metrics.settled, rescue_seconds)

    @classmethod
    def from_deps(cls, deps: WebDeps, retries: RetryBoard | None = None) -> WebBackend:
        return cls(
            deps.runtime,
            deps.config,
            personalities_dir=deps.personalities_dir,
            tenants_dir=deps.tenants_dir,
            retries=retries or RetryBoard(),
            sees_images=deps.sees_images or (lambda _pid: False),
        )

    async def start(self) -> None:
        await self.runtime.open()
        self.turns.start()
        self._cron = await maybe_start_scheduler(self.runtime)  # runs: see the rescuer
        from seam.wiring.session_recall import start_indexing

        self._indexing = start_indexing(self.runtime.session_recall(), self.runtime.settings)

    async def aclose(self) -> None:
        if self._indexing is not None:
            self._indexing.cancel()
        await stop_scheduler(self._cron)
        await self.turns.stop()
        await self.runtime.aclose()

    def _on_event(self, event: AgentEvent) -> None:
        self.metrics.observe(event)
        self.retries.seen(event.session_key)
        self.hub.publish(event)

    # Names and tenants

    def key_for(self, tenant: str, name: str) -> str:
        """The session key of `tenant`'s `name` (Invalid for a bad name). Remembered: a
        key is a pure function of the tenant, the runtime's harness and the name, and
        making one (the name's checks, a JSON encoding) cost a stream's opening about 4%."""
        key = self._keys.get((tenant, name))
        if key is None:
            try:
                key = tenant_session_key(tenant, self.runtime.harness, name)
            except ValueError as exc:
                raise Invalid(str(exc)) from None
            if len(self._keys) >= _KEYS_KEPT:
                self._keys.clear()
            self._keys[tenant, name] = key
        return key

    @staticmethod
    def owned(tenant: str, key: str) -> str | None:
        """The public name of `key` when it is one of `tenant`'s root sessions."""
        return tenant_session_name(tenant, key)

    def owned_name(self, key: str) -> str | None:
        return session_name(key)

    async def existing_key(self, tenant: str, name: str) -> str:
        return (await self.existing(tenant, name))[0]

    async def existing(self, tenant: str, name: str) -> tuple[str, SessionInfo]:
        """The key and row of the tenant's session `name`; NotFound when there is none."""
        key = self.key_for(tenant, name)
        info = await self.runtime.sessions.get(key)
        if info is None:
            raise NotFound(f"no session named {name!r}")
        return key, info

    # Sessions

    async def list_sessions(
        self, tenant: str, query: str | None = None, *, usage: bool = False
    ) -> list[dict[str, Any]]:
        return await sessions.list_sessions(self.runtime, tenant, query, usage=usage)

    async def create_session(
        self, tenant: str, name: str | None, personality: str | None
    ) -> dict[str, Any]:
        name = name or sessions.new_session_name()
        key = self.key_for(tenant, name)
        if personality is not None:
            self.check_personality(personality)
        if await self.runtime.sessions.get(key) is not None:
            raise Conflict(f"a session named {name!r} exists")
        await self.runtime.get_session(key, personality=personality)
        info = await self.runtime.sessions.get(key)
        assert info is not None
        return sessions.session_info(name, info)

    async def session_detail(self, tenant: str, name: str) -> dict[str, Any]:
        """The parts of `seam sessions show --json` (`sessions.session_detail`)."""
        key, info = await self.existing(tenant, name)
        return await sessions.session_detail(self.runtime, key, name, info)

    async def delete_session(self, tenant: str, name: str) -> None:
        key = await self.existing_key(tenant, name)
        await self._abort_all(key)
        self.runtime.drop_session(key)
        await self.runtime.sessions.delete(key)

    async def load_history(self, tenant: str, name: str, messages: list[Message]) -> None:
        """Seed a new session's transcript (an OpenAI request's earlier messages)."""
        if messages:
            await self.runtime.sessions.append(self.key_for(tenant, name), messages)

    async def last_seq(self, tenant: str, name: str) -> int:
        return await self.runtime.store.last_seq(self.key_for(tenant, name))

    async def submission(self, submission_id: str) -> Submission | None:
        return await self.runtime.store.submission(submission_id)

    async def settled(self, submission_id: str) -> bool:
        """Whether a `done` just seen ends this submission's turn: it is running or settled
        (still queued: the `done` was of the turn ahead of it)."""
        sub = await self.runtime.store.submission(submission_id)
        return sub is None or sub.state != "queued"

    # Turns

    async def post_message(
        self, tenant: str, name: str, text: str, **options: Unpack[MessageOptions]
    ) -> Submission:
        """Admit `text` to the session (created on first use) and drive its turn here."""
        submission_id = options.get("submission_id")
        personality = options.get("personality")
        if not text.strip():
            raise Invalid("text is empty")
        key = self.key_for(tenant, name)
        if personality is not None:
            self.check_personality(personality)
        if submission_id is not None:
            await self._check_id_free(tenant, submission_id)
        session = await self.runtime.get_session(key, personality=personality)
        try:
            sub = await session.submit(
                text,
                submission_id=submission_id,
                personality=personality,
                extras=options.get("extras"),
            )
        except SubmissionConflict as exc:
            raise Conflict(str(exc)) from None
        if sub.state != "settled" and sub.id not in self.turns:
            self.metrics.admit(key)
            self.turns.drive(sub.id, admitted=sub)
        return sub

    async def _check_id_free(self, tenant: str, submission_id: str) -> None:
        existing = await self.runtime.store.submission(submission_id)
        if existing is not None and self.owned(tenant, existing.session_key) is None:
            # Another tenant's id: say nothing about it.
            raise Conflict(f"submission id {submission_id!r} is taken")

    def drive(self, submission_id: str, *, admitted: Submission | None = None) -> None:
        """Run (or follow, while another process runs it) a submission in the background."""
        self.turns.drive(submission_id, admitted=admitted)

    async def cancel(self, tenant: str, name: str) -> list[Submission]:
        return await self._abort_all(await self.existing_key(tenant, name))

    async def _abort_all(self, key: str) -> list[Submission]:
        out = []
        for sub in await self.runtime.store.submissions(key, SubmissionQuery(states=_UNSETTLED)):
            out.append(await self.turns.abort(sub, "cancelled through the API"))
        return out

    async def respond(self, who: Principal, name: str, call_id: str, decision: str) -> None:
        """Answer an approval request of a turn in `name`, whichever process runs it
        (see `approvals.py`). A lasting answer changes the allowlists every session
        uses, so only the owner gives one."""
        chosen = approvals.chosen_decision(decision)
        key = await self.existing_key(who.tenant, name)
        if decision in _LASTING and not who.owner:
            raise Forbidden(
                f"{decision!r} changes the rules for everyone: only the owner answers it"
            )
        await approvals.answer(self.runtime, key, name, call_id, chosen)

    async def respond_unattended(self, tenant: str, name: str, call_id: str) -> None:
        """Answer that nobody is there to approve (a stateless OpenAI request): the gate
        refuses the command without counting it as the person's denial."""
        with contextlib.suppress(Conflict):
            key = self.key_for(tenant, name)
            await approvals.answer(self.runtime, key, name, call_id, UNAVAILABLE)

    # Streams

    async def events(
        self, tenant: str, name: str, after: int = 0
    ) -> AsyncGenerator[AgentEvent | None, None]:
        """The session's events after `after`, then live ones; None is a heartbeat."""
        batches = self.event_batches(tenant, name, after)
        try:
            async for batch in batches:
                for event in batch:
                    yield event
        finally:
            await batches.aclose()

    def follow(
        self, key: str, after: int = 0, *, opening: bool = False
    ) -> AsyncGenerator[list[AgentEvent | None], None]:
        """Session `key`'s events after `after` in batches (`follow_session`), for a key
        the caller has just checked exists, or (`opening`) whose first batch says whether
        it does. Not wrapped: the event stream's writer counts it in
        `metrics.open_streams` (`streams.stream_events`), so each batch passes through one
        generator, and each open stream holds one."""
        heartbeat = self.config.heartbeat_seconds
        store = self.runtime.store
        return follow_session(store, self.hub, key, after, heartbeat, opening=opening)

    async def event_batches(
        self, tenant: str, name: str, after: int = 0
    ) -> AsyncGenerator[list[AgentEvent | None], None]:
        """`events` in batches: whatever is ready at once comes as one list."""
        stream = self.follow(await self.existing_key(tenant, name), after)
        self.metrics.open_streams += 1
        try:
            async for batch in stream:
                yield batch
        finally:
            self.metrics.open_streams -= 1
            await stream.aclose()

    # Personalities and memory

    def check_personality(self, personality: str) -> None:
        editing.check_personality(self.runtime, personality)

    def personalities(self) -> list[dict[str, Any]]:
        return editing.personalities(self.runtime)

    def personality(self, who: Principal, pid: str) -> dict[str, Any]:
        """The owner's files of `pid`; for a tenant, its own override of them."""
        if who.owner:
            return editing.personality(self.runtime, self.personalities_dir, pid)
        return tenant_files.personality(self.runtime, self.tenants_dir, who.tenant, pid)

    def put_personality(self, who: Principal, pid: str, soul: str, config: str) -> dict[str, Any]:
        if who.owner:
            return editing.put_personality(self.runtime, self.personalities_dir, pid, soul, config)
        return tenant_files.put_personality(
            self.runtime, self.tenants_dir, who.tenant, pid, (soul, config)
        )

    def _memory_of(self, who: Principal) -> Any:
        if who.owner:
            return self.runtime.memory
        return tenant_files.memory_store(self.runtime, self.tenants_dir, who.tenant)

    def memory(self, who: Principal) -> dict[str, list[str]]:
        return editing.memory(self._memory_of(who))

    def put_memory(
        self, who: Principal, body: Mapping[MemoryTarget, list[str]]
    ) -> dict[str, list[str]]:
        return editing.put_memory(self._memory_of(who), body)


__all__ = ["MessageOptions", "WebBackend"]
