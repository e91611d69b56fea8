"""The agent loop: one turn in, a stream of typed events out.

`AgentLoop` receives every collaborator at construction and defaults each to the empty
stack, so a test needs only a scripted model. Per turn it re-reads the personality and
its toolset (hot reload), streams the model, runs tool calls, stores the transcript and
ends every turn with exactly one `Done` event, whatever happened.

The hot path is the text-delta stream, so it is written for speed: events are frozen
slotted dataclasses built directly, the streaming timeout is a lazily re-armed watchdog
(one clock read per chunk, no task or timer per chunk), and hooks nobody listens to cost
one dict lookup.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from seam.contracts import hooks as hook_names
from seam.contracts.events import (
    AgentEvent,
    Done,
    ErrorEvent,
    Halt,
    HaltReason,
    Notice,
    RunStart,
    TextDelta,
    ThinkingDelta,
    ToolApprovalRequired,
    ToolApprovalResponse,
    ToolEnd,
    ToolProgress,
    ToolStart,
    UsageEvent,
)
from seam.contracts.guardrail import ApprovalDecision, CommandGate
from seam.contracts.hooks import HookRegistry
from seam.contracts.memory import MemoryProvider
from seam.contracts.messages import EMPTY_USAGE, Message, ToolCall, Usage
from seam.contracts.model import (
    ModelError,
    ModelProvider,
    ModelRequest,
    RouteChunk,
    ToolDefinition,
)
from seam.contracts.personality import Personality, PersonalityRegistry
from seam.contracts.sandbox import SandboxProvider
from seam.contracts.sessions import SessionStore, UsageRecord
from seam.contracts.storage import Storage
from seam.contracts.tools import CancelToken, Tool, ToolContext, ToolError, ToolRegistry
from seam.core.approvals import PendingApprovals, TurnApprover
from seam.core.hook_registry import DefaultHookRegistry
from seam.core.memory import NoopMemory
from seam.core.personalities import StaticPersonalityRegistry
from seam.core.sessions import InMemorySessionStore
from seam.core.storage import InMemoryStorage, ScopedStorage
from seam.core.tool_registry import DefaultToolRegistry
from seam.core.truncation import truncate_result

log = logging.getLogger("seam.loop")

# (provider, model, usage) -> cost in USD, or None when the price is unknown.
Pricing = Callable[[str, str, Usage], float | None]
# Picks the provider for a personality (its model, its fallback chain); cached by wiring.
ModelResolver = Callable[[Personality], ModelProvider]


@dataclass(frozen=True, slots=True)
class LoopOptions:
    # Per tool result, in characters; the overflow is cut with a marker the model can read.
    result_budget_chars: int = 80_000
    # Seconds the model may go without producing a chunk before the call is abandoned.
    streaming_timeout: float = 120.0
    # Model calls per turn; a turn that still wants tools after this many is halted.
    max_iterations: int = 25
    # Messages of history sent per request (None: all of them).
    history_limit: int | None = None
    # Seconds to wait for a person to answer an approval request; no answer means deny.
    approval_timeout: float = 300.0


class _Watchdog:
    """Cancels a model stream that has produced nothing for `timeout` seconds.

    Only armed while the loop is waiting on the model, so a slow consumer of the event
    stream is never mistaken for a stalled model.
    """

    __slots__ = ("_cm", "_handle", "_loop", "timeout", "waiting_since")

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        # In time.monotonic() seconds, the clock asyncio's default loop uses too.
        self.waiting_since: float | None = None
        self._loop = asyncio.get_running_loop()
        self._cm: asyncio.Timeout | None = None
        self._handle: asyncio.TimerHandle | None = None

    def start(self, cm: asyncio.Timeout) -> None:
        self._cm = cm
        self._handle = self._loop.call_at(self._loop.time() + self.timeout, self._check)

    def _check(self) -> None:
        now = time.monotonic()
        since = self.waiting_since
        if since is not None and now - since >= self.timeout:
            assert self._cm is not None
            self._cm.reschedule(self._loop.time())
            return
        delay = self.timeout if since is None else since + self.timeout - now
        self._handle = self._loop.call_later(delay, self._check)

    def interrupt(self) -> None:
        """Cut a wait on the model short (the turn was cancelled)."""
        if self.waiting_since is not None and self._cm is not None:
            self._cm.reschedule(self._loop.time())

    def stop(self) -> None:
        if self._handle is not None:
            self._handle.cancel()


class AgentLoop:
    def __init__(
        self,
        *,
        model: ModelProvider,
        tools: ToolRegistry | None = None,
        hooks: HookRegistry | None = None,
        personalities: PersonalityRegistry | None = None,
        memory: MemoryProvider | None = None,
        sessions: SessionStore | None = None,
        storage: Storage | None = None,
        sandboxes: SandboxProvider | None = None,
        gate: CommandGate | None = None,
        pricing: Pricing | None = None,
        models: ModelResolver | None = None,
        redact: Callable[[str], str] | None = None,
        working_dir: str = ".",
        fs_deny: Iterable[str] = (),
        options: LoopOptions | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> None:
        self.model = model
        self.tools: ToolRegistry = tools if tools is not None else DefaultToolRegistry()
        self.hooks: HookRegistry = hooks if hooks is not None else DefaultHookRegistry()
        self.personalities: PersonalityRegistry = (
            personalities if personalities is not None else StaticPersonalityRegistry()
        )
        self.memory: MemoryProvider = memory if memory is not None else NoopMemory()
        self.sessions: SessionStore = sessions if sessions is not None else InMemorySessionStore()
        self.storage: Storage = storage if storage is not None else InMemoryStorage()
        self.sandboxes = sandboxes
        self.gate = gate
        self.pricing = pricing
        self.models = models
        # Applied to everything stored and to tool results (which the model then reads):
        # secrets a tool prints never reach the transcript, the events or the model.
        self.redact = redact
        self.working_dir = working_dir
        self.fs_deny = tuple(fs_deny)
        self.options = options or LoopOptions()
        self._new_id = new_id or _token
        self._seq: dict[str, int] = {}
        self.pending_approvals = PendingApprovals()

    def respond(self, session_key: str, call_id: str, decision: ApprovalDecision) -> bool:
        """Answer a `tool_approval_required` event; False if nothing is waiting for it."""
        return self.pending_approvals.respond(session_key, call_id, decision)

    def model_for(self, personality: Personality) -> ModelProvider:
        """The provider a personality's turns use (its own model or fallback chain, if any)."""
        return self.model if self.models is None else self.models(personality)

    def personality_for(self, personality_id: str | None) -> Personality:
        return self.personalities.get(personality_id or self.personalities.default_id)

    def tool_context(self, session_key: str, personality: Personality, **extra: Any) -> ToolContext:
        """The context a session's tools are built over (also used by `/tools` listings)."""
        storage = ScopedStorage(
            self.storage,
            working_dir=self.working_dir,
            read=personality.fs_read,
            write=personality.fs_write,
            deny=self.fs_deny,
        )
        sandbox = None
        if self.sandboxes is not None:
            sandbox = self.sandboxes.for_session(
                session_key, working_dir=storage.working_dir, network=personality.network
            )
        return ToolContext(
            session_key=session_key,
            storage=storage,
            working_dir=storage.working_dir,
            personality_id=personality.id,
            memory=self.memory,
            sandbox=sandbox,
            gate=self.gate,
            approval_mode=personality.approval_mode,
            **extra,
        )

    def run(
        self,
        session_key: str,
        user_message: str,
        *,
        personality: str | None = None,
        cancel: CancelToken | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run one turn. Always ends with a `Done` event (unless the consumer stops early)."""
        if not isinstance(user_message, str):
            raise TypeError(f"user_message must be str, not {type(user_message).__name__}")
        return _Turn(self, session_key, cancel or CancelToken()).run(user_message, personality)


def _token() -> str:
    return secrets.token_hex(6)


class _Turn:
    """The state of one turn; split out so `AgentLoop` stays a plain holder of collaborators."""

    def __init__(self, loop: AgentLoop, session_key: str, cancel: CancelToken) -> None:
        self.loop = loop
        self.key = session_key
        self.cancel = cancel
        self.turn_id = loop._new_id()
        self.seq = loop._seq.get(session_key, 0)
        self.usage = EMPTY_USAGE
        # Assistant text streamed but not yet stored: kept so an interruption can save it.
        self.partial: list[str] = []
        self.new_messages: list[Message] = []
        self.iteration = 0
        self.model = loop.model
        # Set by a modifying hook (the tool-loop circuit breaker): end after this step.
        self.halt_reason: str | None = None
        # Set while tools run: streams a `notice` event raised by a hook.
        self.notify: Callable[[str, str], None] | None = None

    def _next(self) -> int:
        self.seq += 1
        return self.seq

    async def _store(self, *messages: Message) -> None:
        redact = self.loop.redact
        if redact is not None:
            messages = tuple(_redacted(m, redact) for m in messages)
        await self.loop.sessions.append(self.key, messages)
        self.new_messages.extend(messages)

    async def _fire(self, name: str, payload: dict[str, Any]) -> None:
        try:
            await self.loop.hooks.fire_void(name, payload)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("void hook %s failed; the turn goes on", name)

    async def _modify(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        try:
            return await self.loop.hooks.fire_modifying(name, payload)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("modifying hook %s failed; ignoring its changes", name)
            return {}

    def _done(self, text: str, finish: str, iterations: int) -> Done:
        if self.loop.redact is not None:
            text = self.loop.redact(text)
        seq = self._next()
        self.loop._seq[self.key] = seq
        return Done(
            session_key=self.key,
            turn_id=self.turn_id,
            seq=seq,
            text=text,
            finish_reason=finish,
            usage=self.usage,
            iterations=iterations,
        )

    def _run_start(self, personality: Personality, route: RouteChunk | None) -> RunStart:
        model = self.model
        return RunStart(
            session_key=self.key,
            turn_id=self.turn_id,
            seq=self._next(),
            provider=route.provider if route else model.name,
            model=route.model if route else (personality.model or model.model),
            personality=personality.id,
        )

    def _halt(self, reason: HaltReason, message: str) -> Halt:
        return Halt(
            session_key=self.key,
            turn_id=self.turn_id,
            seq=self._next(),
            reason=reason,
            message=message,
        )

    def _error(self, kind: str, message: str) -> ErrorEvent:
        return ErrorEvent(
            session_key=self.key,
            turn_id=self.turn_id,
            seq=self._next(),
            kind=kind,
            message=message,
        )

    async def _save_partial(self) -> None:
        """Keep streamed text that never became a full reply, marked as interrupted."""
        if not self.partial:
            return
        text = "".join(self.partial)
        self.partial = []
        try:
            await self._store(Message("assistant", text, interrupted=True))
        except Exception:
            log.exception("could not save interrupted text for %s", self.key)

    async def _prepare(self, user_message: str, personality_id: str | None) -> _Prepared:
        """Resolve personality, tools, prompt and history for this turn; store the input."""
        loop = self.loop
        hooks = loop.hooks
        key = self.key
        info = await loop.sessions.get(key)
        personality = loop.personality_for(
            personality_id or (info.personality if info is not None else None)
        )
        if info is None:
            info = await loop.sessions.create(key, personality=personality.id)
            if hooks.has(hook_names.SESSION_START):
                await self._fire(
                    hook_names.SESSION_START, {"session_key": key, "personality": personality.id}
                )

        ctx = loop.tool_context(key, personality, turn_id=self.turn_id, cancel=self.cancel)
        tools = loop.tools.build(personality.toolset, ctx)

        system = personality.soul.strip()
        snapshot = await loop.memory.prefetch(key)
        if snapshot:
            system = f"{system}\n\n{snapshot}"
        if hooks.has(hook_names.BEFORE_PROMPT_BUILD):
            change = await self._modify(
                hook_names.BEFORE_PROMPT_BUILD,
                {"session_key": key, "system": system, "user_message": user_message},
            )
            system = change.get("system", system)
            if "append_system" in change:
                system = f"{system}\n\n{change['append_system']}"

        limit = loop.options.history_limit
        history = await loop.sessions.messages(key, -limit if limit else 0)
        user = Message("user", user_message)
        await self._store(user)
        return _Prepared(
            personality=personality,
            ctx=ctx,
            tools={tool.name: tool for tool in tools},
            definitions=loop.tools.definitions(tools),
            system=system,
            messages=[*history, user],
        )

    async def run(self, user_message: str, personality_id: str | None) -> AsyncIterator[AgentEvent]:
        loop = self.loop
        hooks = loop.hooks
        key = self.key
        turn_id = self.turn_id
        cancel = self.cancel
        try:
            prep = await self._prepare(user_message, personality_id)
        except KeyError as exc:  # unknown personality: the message names it
            yield self._error("personality", str(exc.args[0] if exc.args else exc))
            yield self._done("", "error", 0)
            return
        messages = prep.messages
        personality = prep.personality
        model = self.model = loop.model_for(personality)
        # `run_start` waits for the model's first chunk: a routing provider (fallback
        # chain, key pool) first says which provider and model actually answer.
        started = False

        final_text = ""
        iterations = 0
        timeout = loop.options.streaming_timeout
        clock = time.monotonic
        try:
            while True:
                if cancel.cancelled:
                    if not started:
                        started = True
                        yield self._run_start(personality, None)
                    yield self._halt("cancelled", cancel.reason or "cancelled")
                    yield self._done(final_text, "cancelled", iterations)
                    return
                if iterations >= loop.options.max_iterations:
                    yield self._halt(
                        "max_iterations",
                        f"stopped after {iterations} model calls without a final answer",
                    )
                    yield self._done(final_text, "max_iterations", iterations)
                    return
                iterations += 1
                self.iteration = iterations
                request = ModelRequest(
                    system=prep.system,
                    # A snapshot: the request must not change as the turn goes on.
                    messages=tuple(messages),
                    tools=prep.definitions,
                    # With a resolver, the personality's model is already the provider's.
                    model=personality.model if loop.models is None else None,
                )
                if hooks.has(hook_names.BEFORE_LLM_CALL):
                    await self._fire(
                        hook_names.BEFORE_LLM_CALL, {"session_key": key, "request": request}
                    )

                # Stream the model. This is the hottest loop in the runtime, so it is inline
                # (no nested generator) and keeps the sequence number in a local, written
                # back before every yield.
                calls: list[ToolCall] = []
                finish = "stop"
                call_usage = EMPTY_USAGE
                answered_by: RouteChunk | None = None
                partial = self.partial
                watchdog = _Watchdog(timeout)
                chunks = model.stream(request).__aiter__()
                next_chunk = chunks.__anext__
                seq = self.seq
                unregister = cancel.on_cancel(watchdog.interrupt)
                try:
                    async with asyncio.timeout(None) as deadline:
                        watchdog.start(deadline)
                        while not cancel.cancelled:
                            watchdog.waiting_since = clock()
                            try:
                                chunk = await next_chunk()
                            except StopAsyncIteration:
                                break
                            watchdog.waiting_since = None
                            kind = chunk.kind
                            if not started:
                                started = True
                                route = chunk if kind == "route" else None
                                yield self._run_start(personality, route)  # type: ignore[arg-type]
                                seq = self.seq
                            if kind == "route":
                                answered_by = chunk  # type: ignore[assignment]
                            if kind == "text":
                                text = chunk.text  # type: ignore[union-attr]
                                partial.append(text)
                                self.seq = seq = seq + 1
                                yield TextDelta(key, turn_id, seq, text)
                            elif kind == "tool_call_end":
                                calls.append(chunk.call)  # type: ignore[union-attr]
                            elif kind == "thinking":
                                self.seq = seq = seq + 1
                                yield ThinkingDelta(
                                    session_key=key,
                                    turn_id=turn_id,
                                    seq=seq,
                                    text=chunk.text,  # type: ignore[union-attr]
                                )
                            elif kind == "usage":
                                usage: Usage = chunk.usage  # type: ignore[union-attr]
                                call_usage = call_usage + usage
                                self.usage = self.usage + usage
                                self.seq = seq = seq + 1
                                yield UsageEvent(
                                    session_key=key, turn_id=turn_id, seq=seq, usage=usage
                                )
                            elif kind == "done":
                                finish = chunk.finish_reason  # type: ignore[union-attr]
                            elif kind == "warning":
                                log.warning("model warning: %s", chunk.message)  # type: ignore[union-attr]
                except TimeoutError:
                    if not started:
                        started = True
                        yield self._run_start(personality, None)
                    # A cancel cuts the wait short the same way; that case is handled below.
                    if not cancel.cancelled:
                        await self._save_partial()
                        message = f"the model produced nothing for {timeout:g} s"
                        yield self._error("timeout", message)
                        yield self._halt("timeout", message)
                        yield self._done(final_text, "timeout", iterations)
                        return
                except ModelError as exc:
                    if not started:
                        started = True
                        yield self._run_start(personality, None)
                    await self._save_partial()
                    yield self._error(exc.kind, str(exc))
                    yield self._done(final_text, "error", iterations)
                    return
                finally:
                    unregister()
                    watchdog.stop()
                    aclose = getattr(chunks, "aclose", None)
                    if aclose is not None:
                        await aclose()

                if not started:  # the model sent nothing at all
                    started = True
                    yield self._run_start(personality, None)
                if call_usage is not EMPTY_USAGE:
                    await self._record_usage(call_usage, answered_by, personality)
                text = "".join(partial)
                self.partial = []
                if cancel.cancelled:
                    if text:
                        await self._store(Message("assistant", text, interrupted=True))
                    yield self._halt("cancelled", cancel.reason or "cancelled")
                    yield self._done(text, "cancelled", iterations)
                    return
                assistant = Message("assistant", text, tool_calls=tuple(calls))
                await self._store(assistant)
                messages.append(assistant)
                if hooks.has(hook_names.AFTER_LLM_CALL):
                    await self._fire(
                        hook_names.AFTER_LLM_CALL,
                        {"session_key": key, "message": assistant, "usage": self.usage},
                    )
                final_text = text
                if not calls:
                    await self._sync_memory()
                    if hooks.has(hook_names.AGENT_DONE):
                        await self._fire(
                            hook_names.AGENT_DONE,
                            {"session_key": key, "text": text, "usage": self.usage},
                        )
                    yield self._done(text, finish, iterations)
                    return

                results: list[Message] = []
                async for event in self._run_tools(calls, prep.tools, prep.ctx, results):
                    yield event
                await self._store(*results)
                messages.extend(results)
                if self.halt_reason is not None:
                    yield self._halt("guardrail", self.halt_reason)
                    yield self._done(final_text, "halted", iterations)
                    return
        except (asyncio.CancelledError, GeneratorExit):
            await self._save_partial()
            raise
        finally:
            loop._seq[key] = self.seq

    async def _record_usage(
        self, usage: Usage, route: RouteChunk | None, personality: Personality
    ) -> None:
        model = self.model
        provider = route.provider if route else model.name
        name = route.model if route else (personality.model or model.model)
        pricing = self.loop.pricing
        cost = pricing(provider, name, usage) if pricing is not None else None
        try:
            await self.loop.sessions.record_usage(
                self.key, UsageRecord(provider, name, usage, cost, self.turn_id)
            )
        except Exception:
            log.exception("could not record usage for %s", self.key)

    async def _sync_memory(self) -> None:
        try:
            await self.loop.memory.sync(self.key, self.new_messages)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("memory sync failed for %s; the turn goes on", self.key)

    async def _run_tools(
        self,
        calls: Sequence[ToolCall],
        by_name: dict[str, Tool],
        ctx: ToolContext,
        results: list[Message],
    ) -> AsyncIterator[AgentEvent]:
        """Run one step's tool calls; results and `tool_end` events come in call order.

        Consecutive calls of tools that allow it run concurrently. Progress reported by a
        tool is streamed as it happens.
        """
        key = self.key
        turn_id = self.turn_id
        for tool_call in calls:
            yield ToolStart(
                session_key=key,
                turn_id=turn_id,
                seq=self._next(),
                call_id=tool_call.id,
                name=tool_call.name,
                arguments=tool_call.arguments,
            )
        outcomes: list[_Outcome | None] = [None] * len(calls)
        # Events raised while tools run (progress, approval requests and answers), built
        # when they are yielded so sequence numbers stay in order.
        inbox: list[Callable[[int], AgentEvent]] = []
        wake = asyncio.Event()

        def post(make: Callable[[int], AgentEvent]) -> None:
            inbox.append(make)
            wake.set()

        def progress_for(tool_call: ToolCall) -> Callable[[str], None]:
            def report(message: str) -> None:
                post(
                    lambda seq: ToolProgress(
                        key, turn_id, seq, tool_call.id, tool_call.name, message
                    )
                )

            return report

        def announce(call_id: str, tool: str, command: str, reason: str) -> None:
            post(
                lambda seq: ToolApprovalRequired(key, turn_id, seq, call_id, tool, command, reason)
            )

        def answered(call_id: str, decision: str) -> None:
            post(lambda seq: ToolApprovalResponse(key, turn_id, seq, call_id, decision))

        def notify(kind: str, message: str) -> None:
            post(lambda seq: Notice(key, turn_id, seq, kind, message))

        self.notify = notify
        approver = TurnApprover(
            self.loop.pending_approvals,
            key,
            self.loop.options.approval_timeout,
            announce,
            answered,
        )

        async def run_range(start: int, stop: int) -> None:
            async def one(i: int) -> None:
                tool_call = calls[i]
                call_ctx = replace(
                    ctx,
                    call_id=tool_call.id,
                    progress=progress_for(tool_call),
                    approvals=approver,
                )
                outcomes[i] = await self._run_one(tool_call, by_name.get(tool_call.name), call_ctx)
                wake.set()

            if stop - start == 1:
                await one(start)
            else:
                await asyncio.gather(*(one(i) for i in range(start, stop)))

        async def run_all() -> None:
            i = 0
            while i < len(calls):
                j = i + 1
                tool = by_name.get(calls[i].name)
                if tool is not None and tool.concurrent:
                    while j < len(calls):
                        nxt = by_name.get(calls[j].name)
                        if nxt is None or not nxt.concurrent:
                            break
                        j += 1
                await run_range(i, j)
                i = j

        runner = asyncio.ensure_future(run_all())
        unregister = self.cancel.on_cancel(wake.set)
        emitted = 0
        try:
            while emitted < len(calls):
                if not runner.done() and not inbox and outcomes[emitted] is None:
                    if self.cancel.cancelled:
                        runner.cancel()
                        await asyncio.gather(runner, return_exceptions=True)
                    else:
                        waiter = asyncio.ensure_future(wake.wait())
                        await asyncio.wait((runner, waiter), return_when=asyncio.FIRST_COMPLETED)
                        waiter.cancel()
                    wake.clear()
                while inbox:
                    yield inbox.pop(0)(self._next())
                if runner.done() and not runner.cancelled() and runner.exception() is not None:
                    raise runner.exception()  # type: ignore[misc]
                while emitted < len(calls):
                    outcome = outcomes[emitted]
                    if outcome is None:
                        if not runner.done():
                            break
                        # Cancelled before it finished: the transcript still needs a result.
                        outcome = _Outcome("cancelled before the tool finished", True, 0.0, False)
                    tool_call = calls[emitted]
                    results.append(
                        Message(
                            "tool", outcome.content, tool_call_id=tool_call.id, name=tool_call.name
                        )
                    )
                    yield ToolEnd(
                        session_key=key,
                        turn_id=turn_id,
                        seq=self._next(),
                        call_id=tool_call.id,
                        name=tool_call.name,
                        result=outcome.content,
                        is_error=outcome.is_error,
                        duration_ms=outcome.duration_ms,
                        truncated=outcome.truncated,
                    )
                    emitted += 1
        finally:
            self.notify = None
            unregister()
            if not runner.done():
                runner.cancel()
                await asyncio.gather(runner, return_exceptions=True)

    async def _run_one(self, tool_call: ToolCall, tool: Tool | None, ctx: ToolContext) -> _Outcome:
        """Run one call; every failure becomes an error result (seen by the hooks too)."""
        started = time.perf_counter()
        hooks = self.loop.hooks
        payload: dict[str, Any] = {
            "session_key": self.key,
            "turn_id": self.turn_id,
            "iteration": self.iteration,
            "call_id": tool_call.id,
            "name": tool_call.name,
            "arguments": tool_call.arguments,
        }
        if tool is None:
            return await self._after(
                payload, f"error: unknown tool {tool_call.name!r}", True, started
            )
        try:
            args = json.loads(tool_call.arguments) if tool_call.arguments.strip() else {}
        except json.JSONDecodeError as exc:
            message = (
                f"error: arguments for {tool_call.name} are not valid JSON ({exc.msg} at "
                f"position {exc.pos}); send a JSON object"
            )
            return await self._after(payload, message, True, started)
        if not isinstance(args, dict):
            message = f"error: arguments for {tool_call.name} must be a JSON object"
            return await self._after(payload, message, True, started)
        payload["arguments"] = args
        if hooks.has(hook_names.BEFORE_TOOL_CALL):
            change = await self._modify(hook_names.BEFORE_TOOL_CALL, payload)
            if "halt" in change:
                self.halt_reason = str(change["halt"])
            if "block" in change:
                content = f"blocked: {change['block']}"
                return await self._after(payload, content, True, started)
            args = change.get("arguments", args)
            payload["arguments"] = args
        is_error = False
        try:
            content = await tool.run(args, ctx)
        except ToolError as exc:
            content, is_error = f"error: {exc}", True
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("tool %s crashed", tool_call.name)
            content, is_error = f"error: {tool_call.name} failed: {type(exc).__name__}: {exc}", True
        if not isinstance(content, str):
            content = str(content)
        return await self._after(payload, content, is_error, started)

    async def _after(
        self, payload: dict[str, Any], content: str, is_error: bool, started: float
    ) -> _Outcome:
        """Budget the result, let hooks see (and annotate) it, and time it."""
        hooks = self.loop.hooks
        if self.loop.redact is not None:
            content = self.loop.redact(content)
        content, truncated = truncate_result(content, self.loop.options.result_budget_chars)
        if hooks.has(hook_names.AFTER_TOOL_RESULT):
            change = await self._modify(
                hook_names.AFTER_TOOL_RESULT, {**payload, "result": content, "is_error": is_error}
            )
            content = str(change.get("result", content))
            if "halt" in change:
                self.halt_reason = str(change["halt"])
            if "notice" in change and self.notify is not None:
                kind, message = change["notice"]
                self.notify(str(kind), str(message))
        if hooks.has(hook_names.AFTER_TOOL_CALL):
            await self._fire(
                hook_names.AFTER_TOOL_CALL, {**payload, "result": content, "is_error": is_error}
            )
        return _Outcome(content, is_error, (time.perf_counter() - started) * 1000, truncated)


def _redacted(message: Message, redact: Callable[[str], str]) -> Message:
    content = redact(message.content)
    calls = message.tool_calls
    if calls:
        calls = tuple(replace(c, arguments=redact(c.arguments)) for c in calls)
    if content is message.content and calls is message.tool_calls:
        return message
    return replace(message, content=content, tool_calls=calls)


@dataclass(frozen=True, slots=True)
class _Prepared:
    personality: Personality
    ctx: ToolContext
    tools: dict[str, Tool]
    definitions: list[ToolDefinition]
    system: str
    messages: list[Message]


@dataclass(frozen=True, slots=True)
class _Outcome:
    content: str
    is_error: bool
    duration_ms: float
    truncated: bool


def total_usage(events: Iterable[AgentEvent]) -> Usage:
    usage = EMPTY_USAGE
    for event in events:
        if isinstance(event, UsageEvent):
            usage = usage + event.usage
    return usage
