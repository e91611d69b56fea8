"""One turn of the agent loop: prepare, stream the model, run tools, store, finish."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from seam.contracts import hooks as hook_names
from seam.contracts.events import (
    AgentEvent,
    Done,
    ErrorEvent,
    Halt,
    HaltReason,
    RunStart,
    TextDelta,
    ThinkingDelta,
    UsageEvent,
)
from seam.contracts.messages import EMPTY_USAGE, Message, ToolCall, Usage
from seam.contracts.model import (
    ModelError,
    ModelRequest,
    RouteChunk,
    ToolDefinition,
)
from seam.contracts.personality import Personality
from seam.contracts.sessions import UsageRecord
from seam.contracts.tools import CancelToken, Tool, ToolContext
from seam.core.context_step import ContextSteps
from seam.core.history import answer_dangling
from seam.core.tool_step import ToolSteps
from seam.core.watchdog import StreamWatchdog

if TYPE_CHECKING:
    from seam.core.loop import AgentLoop

log = logging.getLogger("seam.loop")


class UnknownPersonality(Exception):
    pass


# Writes transcript messages; a durable submission's writer also advances the submission
# in the same transaction (see `ExecutionStore.append_for`).
TranscriptWriter = Callable[[Sequence[Message]], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class TurnOptions:
    """How one turn starts, beyond its input: what a session or a resumed submission adds."""

    # Tool names (None: the personality's toolset).
    toolset: Sequence[str] | None = None
    # The session's model (a name or provider ref), over the personality's own.
    model: str | None = None
    transcript: TranscriptWriter | None = None
    # Calls of the last stored assistant message to run before the first model call
    # (a resumed turn re-running idempotent tools whose outcome a crash left unknown).
    pending_calls: Sequence[ToolCall] = ()
    # Said to the model in this turn's system prompt only (e.g. "you were cut off").
    note: str | None = None
    # Extra `ToolContext` fields (a session's delegate function, its depth).
    context: Mapping[str, Any] | None = None


class Turn(ToolSteps, ContextSteps):
    """The state of one turn; split out so `AgentLoop` stays a plain holder of collaborators."""

    def __init__(
        self,
        loop: AgentLoop,
        session_key: str,
        cancel: CancelToken,
        options: TurnOptions | None = None,
    ) -> None:
        self.loop = loop
        self.key = session_key
        self.cancel = cancel
        self.options = options or TurnOptions()
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
        writer = self.options.transcript
        if writer is not None:
            await writer(messages)
        else:
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

    async def _prepare(self, user_message: str | None, personality_id: str | None) -> _Prepared:
        """Resolve personality, tools, prompt and history for this turn; store the input.

        Without a user message the turn continues the stored conversation (a resumed
        submission whose input is already in the transcript).
        """
        loop = self.loop
        hooks = loop.hooks
        key = self.key
        info = await loop.sessions.get(key)
        try:
            personality = loop.personality_for(
                personality_id or (info.personality if info is not None else None)
            )
        except KeyError as exc:  # the registry's message names the id and the known ones
            raise UnknownPersonality(str(exc.args[0] if exc.args else exc)) from None
        if self.options.model:
            personality = replace(personality, model=self.options.model)
        if info is None:
            info = await loop.sessions.create(key, personality=personality.id)
            if hooks.has(hook_names.SESSION_START):
                await self._fire(
                    hook_names.SESSION_START, {"session_key": key, "personality": personality.id}
                )

        options = self.options
        ctx = loop.tool_context(
            key, personality, turn_id=self.turn_id, cancel=self.cancel, **(options.context or {})
        )
        toolset = options.toolset if options.toolset is not None else personality.toolset
        tools = loop.tools.build(toolset, ctx)

        system = await self._build_system(personality, tools, ctx)
        if hooks.has(hook_names.BEFORE_PROMPT_BUILD):
            change = await self._modify(
                hook_names.BEFORE_PROMPT_BUILD,
                {"session_key": key, "system": system, "user_message": user_message or ""},
            )
            system = change.get("system", system)
            if "append_system" in change:
                system = f"{system}\n\n{change['append_system']}"

        history = await self._history()
        if user_message is not None:
            # A new turn: any earlier call still without a result never gets one (a
            # submission that failed mid-tool), and providers reject such a history.
            history = answer_dangling(history)
            user = Message("user", user_message)
            await self._store(user)
            history.append(user)
        if options.note:
            system = f"{system}\n\n{options.note}"
        return _Prepared(
            personality=personality,
            ctx=ctx,
            tools={tool.name: tool for tool in tools},
            definitions=loop.tools.definitions(tools),
            system=system,
            messages=history,
        )

    async def run(
        self, user_message: str | None, personality_id: str | None
    ) -> AsyncIterator[AgentEvent]:
        loop = self.loop
        hooks = loop.hooks
        key = self.key
        turn_id = self.turn_id
        cancel = self.cancel
        try:
            prep = await self._prepare(user_message, personality_id)
        except UnknownPersonality as exc:
            yield self._error("personality", str(exc))
            yield self._done("", "error", 0)
            return
        messages = prep.messages
        personality = prep.personality
        model = self.model = loop.model_for(personality)
        # `run_start` waits for the model's first chunk: a routing provider (fallback
        # chain, key pool) first says which provider and model actually answer.
        started = False
        if self.options.pending_calls:
            started = True
            yield self._run_start(personality, None)
            for event in self._context_flush():
                yield event
            rerun: list[Message] = []
            async for event in self._run_tools(
                self.options.pending_calls, prep.tools, prep.ctx, rerun
            ):
                yield event
            await self._store(*rerun)
            messages.extend(rerun)

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
                        for event in self._context_flush():
                            yield event
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
                await self._fit_context(prep.system, prep.definitions, messages)
                if started:
                    for event in self._context_flush():
                        yield event
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
                watchdog = StreamWatchdog(timeout)
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
                                for event in self._context_flush():
                                    yield event
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
                        for event in self._context_flush():
                            yield event
                    # A cancel cuts the wait short the same way; that case is handled below.
                    if not cancel.cancelled:
                        await self._save_partial()
                        message = f"the model produced nothing for {timeout:g} s"
                        yield self._error("timeout", message)
                        yield self._halt("timeout", message)
                        yield self._done(final_text, "timeout", iterations)
                        return
                except ModelError as exc:
                    if not partial and await self._overflow_compacted(
                        exc, prep.system, prep.definitions, messages
                    ):
                        continue  # compacted: retry the request once
                    if not started:
                        started = True
                        yield self._run_start(personality, None)
                        for event in self._context_flush():
                            yield event
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
                    for event in self._context_flush():
                        yield event
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
                            {
                                "session_key": key,
                                "text": text,
                                "usage": self.usage,
                                "messages": tuple(self.new_messages),
                            },
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
