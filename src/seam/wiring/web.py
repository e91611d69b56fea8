"""What `seam serve` drives: one Runtime seen through tenants, turns run in the background,
and their events fanned out to every stream that follows a session.

Tenants: a key belongs to a tenant, and a tenant's sessions are those whose durable key
(`agent-session:["<tenant>","<harness>","<name>"]`) names it. One Runtime serves them all
(the runtime runs any stored submission, whatever its key); only naming and listing are
tenant-aware, so a key never sees, or even learns of, another tenant's sessions.

Streams: a turn driven here hands each event to `EventHub.publish` as it happens (no
store round trip on the hot path); a stream replays the store's event log first, then the
hub's copy of the running turn's events (text deltas reach the store in batches), then
live events, skipping every sequence number it already sent. Turns another process runs
are followed from the store (the Coordinator replays their stored events) and reach the
hub the same way, so a stream sees them too, and a turn whose process died is taken over
here when its lease is reclaimable.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import tempfile
import time
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from seam.contracts.events import (
    AgentEvent,
    Done,
    RunStart,
    TextDelta,
    ToolApprovalRequired,
    ToolApprovalResponse,
    UsageEvent,
)
from seam.contracts.execution import Submission, SubmissionConflict
from seam.contracts.guardrail import UNAVAILABLE, ApprovalDecision
from seam.contracts.memory import MemoryTarget
from seam.contracts.messages import Message
from seam.contracts.sessions import message_to_dict, usage_to_dict
from seam.contracts.tools import CancelToken
from seam.core.event_log import decode, replay
from seam.core.identity import (
    assert_public_session_name,
    create_session_storage_key,
    parse_session_storage_key,
)
from seam.wiring.cron import Background, maybe_start_scheduler, stop_scheduler
from seam.wiring.runtime import Runtime
from seam.wiring.settings import Settings
from seam.wiring.web_keys import WebSection, web_section

log = logging.getLogger("seam.web")

# Seconds between looks at the store for submissions nobody here drives (another
# process's turns to follow, a dead process's turns to take over, queued ones).
RESCUE_SECONDS = 2.0
# The API's answers, as the issue names them, to the gate's decisions.
DECISIONS: dict[str, ApprovalDecision] = {
    "once": "once",
    "session": "session",
    "always": "always",
    "deny": "deny",
    "never": "always_deny",
}


class NotFound(LookupError):
    pass


class Conflict(ValueError):
    pass


class Invalid(ValueError):
    pass


@dataclass
class Metrics:
    """Counters `/metrics` prints (Prometheus text)."""

    turns: dict[str, int] = field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    turn_seconds_sum: float = 0.0
    turn_seconds_count: int = 0
    first_delta_seconds_sum: float = 0.0
    first_delta_seconds_count: int = 0
    open_streams: int = 0
    requests: int = 0

    def render(self) -> str:
        lines = [
            "# HELP seam_turns_total Turns settled by this process, by outcome.",
            "# TYPE seam_turns_total counter",
        ]
        for outcome in ("completed", "failed", "aborted"):
            value = self.turns.get(outcome, 0)
            lines.append(f'seam_turns_total{{outcome="{outcome}"}} {value}')
        lines += [
            "# HELP seam_tokens_total Model tokens used by turns run here.",
            "# TYPE seam_tokens_total counter",
            f'seam_tokens_total{{kind="input"}} {self.input_tokens}',
            f'seam_tokens_total{{kind="output"}} {self.output_tokens}',
            "# HELP seam_turn_seconds Wall time of a turn from its first event to done.",
            "# TYPE seam_turn_seconds summary",
            f"seam_turn_seconds_sum {self.turn_seconds_sum:.6f}",
            f"seam_turn_seconds_count {self.turn_seconds_count}",
            "# HELP seam_first_delta_seconds From a message's admission to its first text.",
            "# TYPE seam_first_delta_seconds summary",
            f"seam_first_delta_seconds_sum {self.first_delta_seconds_sum:.6f}",
            f"seam_first_delta_seconds_count {self.first_delta_seconds_count}",
            "# HELP seam_open_streams Event streams open now.",
            "# TYPE seam_open_streams gauge",
            f"seam_open_streams {self.open_streams}",
            "# HELP seam_http_requests_total HTTP requests served.",
            "# TYPE seam_http_requests_total counter",
            f"seam_http_requests_total {self.requests}",
        ]
        return "\n".join(lines) + "\n"


class EventHub:
    """Live events by session key, plus the running turn's events so far (its text deltas
    may not have reached the store yet)."""

    def __init__(self) -> None:
        self._subscribers: dict[str, set[asyncio.Queue[AgentEvent]]] = {}
        self._current: dict[str, list[AgentEvent]] = {}

    def publish(self, event: AgentEvent) -> None:
        key = event.session_key
        current = self._current.setdefault(key, [])
        if current and event.seq <= current[-1].seq:
            return  # a follower's replay of what was already published
        if isinstance(event, Done):
            # Everything up to `done` is in the store once `done` is published.
            del self._current[key]
        else:
            current.append(event)
        for queue in self._subscribers.get(key, ()):
            queue.put_nowait(event)

    def current(self, key: str) -> list[AgentEvent]:
        return list(self._current.get(key, ()))

    @contextlib.contextmanager
    def subscribe(self, key: str) -> Any:
        queue: asyncio.Queue[AgentEvent] = asyncio.Queue()
        self._subscribers.setdefault(key, set()).add(queue)
        try:
            yield queue
        finally:
            queues = self._subscribers.get(key)
            if queues is not None:
                queues.discard(queue)
                if not queues:
                    del self._subscribers[key]


class WebBackend:
    """The Runtime as the web app uses it (see the module docstring)."""

    def __init__(
        self,
        runtime: Runtime,
        config: WebSection | None = None,
        *,
        personalities_dir: Path | None = None,
        rescue_seconds: float = RESCUE_SECONDS,
    ) -> None:
        self.runtime = runtime
        self.config = config or WebSection()
        self.hub = EventHub()
        self.metrics = Metrics()
        self.personalities_dir = personalities_dir
        self._rescue_seconds = rescue_seconds
        self._drivers: dict[str, asyncio.Task[None]] = {}
        self._cancels: dict[str, CancelToken] = {}
        self._admitted: dict[str, float] = {}
        self._started: dict[str, float] = {}
        self._rescuer: asyncio.Task[None] | None = None
        self._cron: Background | None = None

    async def start(self) -> None:
        await self.runtime.open()
        self._rescuer = asyncio.ensure_future(self._rescue_forever())
        self._cron = await maybe_start_scheduler(self.runtime)  # runs: see the rescuer

    async def aclose(self) -> None:
        await stop_scheduler(self._cron)
        if self._rescuer is not None:
            self._rescuer.cancel()
            await asyncio.gather(self._rescuer, return_exceptions=True)
        for token in self._cancels.values():
            token.cancel("the server is stopping")
        drivers = list(self._drivers.values())
        if drivers:
            await asyncio.wait(drivers, timeout=2.0)
        for task in drivers:
            task.cancel()
        await asyncio.gather(*drivers, return_exceptions=True)
        await self.runtime.aclose()

    # Names and tenants

    def key_for(self, tenant: str, name: str) -> str:
        try:
            return create_session_storage_key(
                tenant, self.runtime.harness, assert_public_session_name(name)
            )
        except ValueError as exc:
            raise Invalid(str(exc)) from None

    @staticmethod
    def owned(tenant: str, key: str) -> str | None:
        """The public name of `key` when it is one of `tenant`'s root sessions."""
        try:
            owner, _, name = parse_session_storage_key(key)
        except ValueError:
            return None
        return name if owner == tenant else None

    def owned_name(self, key: str) -> str | None:
        try:
            return parse_session_storage_key(key)[2]
        except ValueError:
            return None

    async def existing_key(self, tenant: str, name: str) -> str:
        return await self._existing(tenant, name)

    async def _existing(self, tenant: str, name: str) -> str:
        key = self.key_for(tenant, name)
        if await self.runtime.sessions.get(key) is None:
            raise NotFound(f"no session named {name!r}")
        return key

    # Sessions

    async def list_sessions(self, tenant: str, query: str | None = None) -> list[dict[str, Any]]:
        store = self.runtime.sessions
        if query and query.strip():
            seen: dict[str, dict[str, Any]] = {}
            for hit in await store.search(query, 100):
                name = self.owned(tenant, hit.session_key)
                if name is None or name in seen:
                    continue
                info = await store.get(hit.session_key)
                if info is not None:
                    seen[name] = {**self._info(name, info), "snippet": hit.snippet}
            return list(seen.values())
        out = []
        for info in await store.list(500):
            name = self.owned(tenant, info.key)
            if name is not None:
                out.append(self._info(name, info))
        return out

    @staticmethod
    def _info(name: str, info: Any) -> dict[str, Any]:
        return {
            "name": name,
            "title": info.title,
            "personality": info.personality,
            "message_count": info.message_count,
            "created_at": info.created_at,
            "updated_at": info.updated_at,
        }

    async def create_session(
        self, tenant: str, name: str | None, personality: str | None
    ) -> dict[str, Any]:
        name = name or f"web-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
        key = self.key_for(tenant, name)
        if personality is not None:
            self.check_personality(personality)
        if await self.runtime.sessions.get(key) is not None:
            raise Conflict(f"a session named {name!r} exists")
        await self.runtime.get_session(key, personality=personality)
        info = await self.runtime.sessions.get(key)
        assert info is not None
        return self._info(name, info)

    async def session_detail(self, tenant: str, name: str) -> dict[str, Any]:
        """The parts of `seam sessions show --json` (submissions as `Submission`s)."""
        key = await self._existing(tenant, name)
        store = self.runtime.store
        messages = await store.messages(key)
        return {
            "key": key,
            "name": name,
            "messages": [message_to_dict(m) for m in messages],
            "submissions": await store.submissions(key),
            "usage": usage_to_dict(await store.usage_totals(key)),
        }

    async def delete_session(self, tenant: str, name: str) -> None:
        key = await self._existing(tenant, name)
        for sub in await self.runtime.store.submissions(key, states=("queued", "running")):
            await self._abort(sub)
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
        self,
        tenant: str,
        name: str,
        text: str,
        *,
        submission_id: str | None = None,
        personality: str | None = None,
    ) -> Submission:
        if not text.strip():
            raise Invalid("text is empty")
        key = self.key_for(tenant, name)
        if personality is not None:
            self.check_personality(personality)
        if submission_id is not None:
            existing = await self.runtime.store.submission(submission_id)
            if existing is not None and self.owned(tenant, existing.session_key) is None:
                # Another tenant's id: say nothing about it.
                raise Conflict(f"submission id {submission_id!r} is taken")
        session = await self.runtime.get_session(key, personality=personality)
        try:
            sub = await session.submit(text, submission_id=submission_id, personality=personality)
        except SubmissionConflict as exc:
            raise Conflict(str(exc)) from None
        if sub.state != "settled" and sub.id not in self._drivers:
            self._admitted.setdefault(key, time.perf_counter())
            self.drive(sub.id, admitted=sub)
        return sub

    def drive(self, submission_id: str, *, admitted: Submission | None = None) -> None:
        """Run (or follow, while another process runs it) a submission in the background.
        `admitted`: the submission as just admitted (saves reading it back)."""
        if submission_id in self._drivers:
            return
        token = CancelToken()
        self._cancels[submission_id] = token
        task = asyncio.ensure_future(self._run(submission_id, token, admitted))
        self._drivers[submission_id] = task

    async def _run(
        self, submission_id: str, token: CancelToken, admitted: Submission | None = None
    ) -> None:
        runtime = self.runtime
        try:
            sub = await runtime.coordinator.run(
                submission_id,
                runtime.factory.resolve,
                self._on_event,
                cancel=token,
                admitted=admitted,
            )
            if sub.outcome is not None:
                self.metrics.turns[sub.outcome] = self.metrics.turns.get(sub.outcome, 0) + 1
        except Exception:
            log.exception("driving submission %s failed", submission_id)
        finally:
            self._drivers.pop(submission_id, None)
            self._cancels.pop(submission_id, None)

    def _on_event(self, event: AgentEvent) -> None:
        metrics = self.metrics
        kind = type(event)
        if kind is RunStart:
            self._started[event.session_key] = time.perf_counter()
        elif kind is TextDelta and self._admitted:
            admitted = self._admitted.pop(event.session_key, None)
            if admitted is not None:
                metrics.first_delta_seconds_sum += time.perf_counter() - admitted
                metrics.first_delta_seconds_count += 1
        elif kind is UsageEvent:
            assert isinstance(event, UsageEvent)
            metrics.input_tokens += event.usage.input_tokens
            metrics.output_tokens += event.usage.output_tokens
        elif kind is Done:
            self._admitted.pop(event.session_key, None)
            started = self._started.pop(event.session_key, None)
            if started is not None:
                metrics.turn_seconds_sum += time.perf_counter() - started
                metrics.turn_seconds_count += 1
        self.hub.publish(event)

    async def _rescue_forever(self) -> None:
        """Drive (or follow) every unsettled submission nobody here drives yet."""
        while True:
            try:
                for sub in await self.runtime.store.submissions(states=("queued", "running")):
                    if sub.id not in self._drivers:
                        self.drive(sub.id)
            except Exception:
                log.exception("looking for submissions to drive failed")
            await asyncio.sleep(self._rescue_seconds)

    async def cancel(self, tenant: str, name: str) -> list[Submission]:
        key = await self._existing(tenant, name)
        out = []
        for sub in await self.runtime.store.submissions(key, states=("queued", "running")):
            out.append(await self._abort(sub))
        return out

    async def _abort(self, sub: Submission) -> Submission:
        token = self._cancels.get(sub.id)
        if token is not None:
            token.cancel("cancelled through the API")
        return await self.runtime.abort(sub.id)

    async def respond(self, tenant: str, name: str, call_id: str, decision: str) -> None:
        """Answer an approval request of a turn in `name`, whichever process runs it.

        A turn running here is answered in memory (the fast path). With a store that
        relays answers (`ApprovalAnswers`), the answer is stored first, once the call is
        known to be waiting: here, or in the event log (a `tool_approval_required` of a
        running submission with no response yet), and the process running the turn picks
        it up from the store. The first answer stored wins; later ones are a `Conflict`.
        """
        chosen = DECISIONS.get(decision)
        if chosen is None:
            raise Invalid(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
        await self._answer(await self._existing(tenant, name), name, call_id, chosen)

    async def respond_unattended(self, tenant: str, name: str, call_id: str) -> None:
        """Answer that nobody is there to approve (a stateless OpenAI request): the gate
        refuses the command without counting it as the person's denial."""
        with contextlib.suppress(Conflict):
            await self._answer(self.key_for(tenant, name), name, call_id, UNAVAILABLE)

    async def _answer(self, key: str, name: str, call_id: str, chosen: ApprovalDecision) -> None:
        runtime = self.runtime
        pending = runtime.loop.pending_approvals
        relay = pending.relay
        if relay is None:
            if not runtime.respond_to(key, call_id, chosen):
                raise Conflict(_not_waiting(call_id, name))
            return
        if call_id not in pending.waiting(key):
            state = await self._approval_state(key, call_id)
            if state == "answered" or await relay.approval_answer(key, call_id) is not None:
                raise Conflict(_already_answered(call_id))
            if state != "waiting":
                raise Conflict(_not_waiting(call_id, name))
        if not await relay.answer_approval(key, call_id, chosen):
            raise Conflict(_already_answered(call_id))
        runtime.respond_to(key, call_id, chosen)  # at once when the turn runs here

    async def _approval_state(self, key: str, call_id: str) -> str:
        """ "waiting", "answered" or "unknown": what the event log of the session's running
        submissions says of `call_id`'s approval request."""
        store = self.runtime.store
        state = "unknown"
        for sub in await store.submissions(key, states=("running",)):
            for record in await store.events(key, submission_id=sub.id):
                if record.type not in _APPROVAL_TYPES:
                    continue
                for event in decode(record):
                    if getattr(event, "call_id", None) != call_id:
                        continue
                    # The last word counts: call ids may repeat within a turn.
                    if isinstance(event, ToolApprovalRequired):
                        state = "waiting"
                    elif isinstance(event, ToolApprovalResponse):
                        state = "answered"
        return state

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

    async def event_batches(
        self, tenant: str, name: str, after: int = 0
    ) -> AsyncGenerator[list[AgentEvent | None], None]:
        """`events` in batches: whatever is ready at once comes as one list (a stream
        writes it with one send: on a busy server a burst of events costs one syscall)."""
        key = await self._existing(tenant, name)
        store = self.runtime.store
        heartbeat = self.config.heartbeat_seconds
        last = after
        self.metrics.open_streams += 1
        try:
            with self.hub.subscribe(key) as queue:
                while True:
                    batch: list[AgentEvent | None] = []
                    for event in await replay(store, key, last):
                        if event.seq > last:
                            last = event.seq
                            batch.append(event)
                    for event in self.hub.current(key):
                        if event.seq > last:
                            last = event.seq
                            batch.append(event)
                    if batch:
                        yield batch
                    while True:
                        try:
                            async with asyncio.timeout(heartbeat):
                                ready = [await queue.get()]
                        except TimeoutError:
                            yield [None]
                            break  # look at the store again: a safety net, cheap when idle
                        while not queue.empty():
                            ready.append(queue.get_nowait())
                        batch = []
                        for event in ready:
                            if event.seq <= last:
                                continue
                            if event.seq > last + 1:
                                # Published before this stream subscribed and stored after
                                # its replay read the log: the log has them now.
                                for missed in await replay(store, key, last):
                                    if last < missed.seq < event.seq:
                                        last = missed.seq
                                        batch.append(missed)
                            last = event.seq
                            batch.append(event)
                        if batch:
                            yield batch
        finally:
            self.metrics.open_streams -= 1

    # Personalities and memory

    def check_personality(self, personality: str) -> None:
        try:
            self.runtime.personalities.get(personality)
        except KeyError as exc:
            raise NotFound(str(exc.args[0] if exc.args else exc)) from None

    def personalities(self) -> list[dict[str, Any]]:
        registry = self.runtime.personalities
        default = getattr(registry, "default_id", None)
        return [
            {
                "id": p.id,
                "name": p.name,
                "description": p.description,
                "model": p.model,
                "approval_mode": p.approval_mode,
                "default": p.id == default,
            }
            for p in registry.list()
        ]

    def personality(self, pid: str) -> dict[str, Any]:
        self.check_personality(pid)
        folder = self._folder(pid)
        soul = self.runtime.personalities.get(pid).soul
        config = ""
        if folder is not None:
            with contextlib.suppress(FileNotFoundError):
                soul = (folder / "SOUL.md").read_text(encoding="utf-8")
            with contextlib.suppress(FileNotFoundError):
                config = (folder / "config.toml").read_text(encoding="utf-8")
        return {"id": pid, "soul": soul, "config": config}

    def put_personality(self, pid: str, soul: str, config: str) -> dict[str, Any]:
        """Write SOUL.md and config.toml after checking them exactly as the files are
        checked when loaded (a rejected write changes nothing)."""
        if self.personalities_dir is None:
            raise Conflict("personalities are not stored in files here")
        problem = personality_problem(pid, soul, config)
        if problem is not None:
            raise Invalid(problem)
        folder = self.personalities_dir / pid
        folder.mkdir(parents=True, exist_ok=True)
        _atomic(folder / "SOUL.md", soul)
        if config.strip():
            _atomic(folder / "config.toml", config)
        else:
            with contextlib.suppress(FileNotFoundError):
                (folder / "config.toml").unlink()
        return self.personality(pid)

    def _folder(self, pid: str) -> Path | None:
        return None if self.personalities_dir is None else self.personalities_dir / pid

    def memory(self) -> dict[str, list[str]]:
        memory: Any = self.runtime.memory
        if not hasattr(memory, "entries"):
            return {"memory": [], "user": []}
        return {t: memory.entries(t) for t in ("memory", "user")}

    def put_memory(self, body: Mapping[MemoryTarget, list[str]]) -> dict[str, list[str]]:
        """Replace the entries of the targets given. Each list is first built in a scratch
        copy through the memory's own `add` (the checks the memory tool applies: no
        injections, no secrets, no duplicates, the size limit), so a rejected write
        changes nothing."""
        from seam.wiring.memory import MarkdownMemory, MemoryEntryError

        memory = self.runtime.memory
        if not isinstance(memory, MarkdownMemory):
            raise Conflict("this server has no editable memory")
        staged: dict[MemoryTarget, str] = {}
        with tempfile.TemporaryDirectory() as scratch:
            trial = MarkdownMemory(
                scratch,
                memory_limit=memory.limits["memory"],
                user_limit=memory.limits["user"],
                scanner=memory.scanner,
                redactor=memory.redactor,
            )
            for target, entries in body.items():
                try:
                    for entry in entries:
                        trial.add(target, entry)
                except (MemoryEntryError, ValueError, KeyError) as exc:
                    raise Invalid(f"{target}: {exc.args[0] if exc.args else exc}") from None
                path = trial.path(target)
                staged[target] = path.read_text(encoding="utf-8") if path.exists() else ""
        for target, text in staged.items():
            real = memory.path(target)
            real.parent.mkdir(parents=True, exist_ok=True)
            _atomic(real, text)
        return self.memory()


_APPROVAL_TYPES = frozenset({ToolApprovalRequired.type, ToolApprovalResponse.type})


def _not_waiting(call_id: str, name: str) -> str:
    return f"no tool call {call_id!r} of session {name!r} is waiting for an answer"


def _already_answered(call_id: str) -> str:
    return f"tool call {call_id!r} was already answered"


def personality_problem(pid: str, soul: str, config: str) -> str | None:
    """What is wrong with these files as personality `pid`, as loading them would say."""
    from seam.plugins.personalities.files import FilePersonalityRegistry

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / pid
        try:
            folder.mkdir()
        except OSError:
            return f"{pid!r} is not a valid personality id"
        (folder / "SOUL.md").write_text(soul, encoding="utf-8")
        if config.strip():
            (folder / "config.toml").write_text(config, encoding="utf-8")
        try:
            FilePersonalityRegistry(scratch).get(pid)
        except KeyError as exc:
            message = str(exc.args[0] if exc.args else exc)
            return message.replace(scratch + "/", "").replace(scratch, "")
    return None


def _atomic(path: Path, text: str) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def transcript_messages(items: list[dict[str, Any]]) -> list[Message]:
    """OpenAI-style `messages` as transcript messages (text only)."""
    out = []
    for item in items:
        role = item.get("role")
        content = item.get("content") or ""
        if isinstance(content, list):
            # Only text parts with string text (`{"text": 5}` was a 500, found by fuzzing).
            content = "".join(
                part["text"]
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            )
        if role == "developer":
            role = "system"
        if role not in ("system", "user", "assistant"):
            continue
        out.append(Message(role=role, content=str(content)))
    return out


def build_web_backend(settings: Settings) -> WebBackend:
    """The backend `seam serve` runs: the configured runtime and the `[web]` section."""
    from seam.wiring.configure import create_runtime

    runtime = create_runtime(settings)
    return WebBackend(runtime, web_section(settings), personalities_dir=settings.personalities_dir)


__all__ = [
    "DECISIONS",
    "Conflict",
    "EventHub",
    "Invalid",
    "Metrics",
    "NotFound",
    "WebBackend",
    "build_web_backend",
    "transcript_messages",
]
