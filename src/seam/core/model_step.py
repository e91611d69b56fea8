"""The model step of a turn (one model call, streamed) and the step that leads to it.

This is the hottest loop in the runtime, so the stream is consumed inline (no nested
generator per chunk, no task or queue hop), events are built positionally, the sequence
number is a local written back before every yield, and the streaming timeout is a lazily
re-armed watchdog (a clock read per chunk, no timer per chunk).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import ClassVar

from seam.contracts import hooks
from seam.contracts.events import AgentEvent, TextDelta, ThinkingDelta, UsageEvent
from seam.contracts.hooks import AfterLLMCall, BeforeLLMCall
from seam.contracts.messages import EMPTY_USAGE, Message, ToolCall, Usage
from seam.contracts.model import ModelError, ModelRequest, RouteChunk
from seam.contracts.tracing import NOOP_SPAN, NOOP_TRACER, Attributes, Span, Tracer
from seam.core.context_step import fit_context, overflow_compacted
from seam.core.history import answer_dangling
from seam.core.hook_registry import fire_isolated
from seam.core.tool_step import RunTools
from seam.core.turn import (
    Finish,
    TurnDeps,
    TurnState,
    flush,
    open_turn,
    record_usage,
    save_partial,
    store,
    usage_record,
)
from seam.core.watchdog import StreamWatchdog

log = logging.getLogger("seam.loop")


@dataclass(frozen=True, slots=True)
class CallModel:
    """Call the model with the history; its answer ends the turn, its tool calls lead to
    `RunTools` and then back here.

    `note` is said to the model in this call's system prompt (and in every later call of
    the turn): a resumed turn tells the model its previous reply was cut off.
    """

    note: str | None = None
    # Opens the turn itself, on the model's first chunk (which may name the route).
    opens_turn: ClassVar[bool] = False

    def system(self, deps: TurnDeps) -> str:
        return deps.system if self.note is None else f"{deps.system}\n\n{self.note}"

    @staticmethod
    async def _keep_cut_off(deps: TurnDeps, state: TurnState) -> None:
        """Store the text of a call that failed part-way, once per model call.

        A retried call (the Coordinator re-running a transient failure) starts from a
        history that already ends with the first attempt's cut-off text, and the model is
        asked to go on from it. When the retry fails part-way too, its text is dropped:
        storing it would leave one interrupted message per attempt (ten for ten
        attempts), each of which the model would read again on the next try.
        """
        if continues_cut_off(state.messages):
            state.partial = []
            return
        await save_partial(deps, state)

    async def run(self, deps: TurnDeps, state: TurnState) -> AsyncGenerator[AgentEvent, None]:
        loop = deps.loop
        cancel = deps.cancel
        if cancel.cancelled:
            state.next = Finish("cancelled", halt=("cancelled", cancel.reason or "cancelled"))
            return
        if state.iteration >= loop.options.max_iterations:
            message = f"stopped after {state.iteration} model calls without a final answer"
            state.next = Finish("max_iterations", halt=("max_iterations", message))
            return
        state.iteration += 1
        system = self.system(deps)
        await fit_context(deps, state, system)
        if state.started:
            for event in flush(state):
                yield event
        personality = deps.personality
        request = ModelRequest(
            system=system,
            # A snapshot: the request must not change as the turn goes on.
            messages=tuple(state.messages),
            tools=deps.definitions,
            # With a resolver, the personality's model is already the provider's.
            model=personality.model if loop.models is None else None,
        )
        registry = loop.hooks
        key = deps.session_key
        turn_id = deps.turn_id
        if registry.has(hooks.BEFORE_LLM_CALL):
            payload = BeforeLLMCall(key, turn_id, state.iteration, request)
            await fire_isolated(registry, hooks.BEFORE_LLM_CALL, payload)

        calls: list[ToolCall] = []
        finish = "stop"
        call_usage = EMPTY_USAGE
        answered_by: RouteChunk | None = None
        partial = state.partial
        timeout = loop.options.streaming_timeout
        clock = time.monotonic
        watchdog = StreamWatchdog(timeout)
        chunks = deps.model.stream(request).__aiter__()
        next_chunk = chunks.__anext__
        started = state.started
        seq = state.seq
        unregister = cancel.on_cancel(watchdog.interrupt)
        # The call's span is current while it streams, so the provider's retries
        # (wiring's on_retry) are noted on it.
        tracer = loop.tracer
        span_block = (
            NOOP_SPAN if tracer is NOOP_TRACER else _chat_span(tracer, deps, state, request)
        )
        span = span_block.__enter__()
        began = clock()
        first_at: float | None = None
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
                        state.seq = seq
                        route = chunk if kind == "route" else None
                        for event in open_turn(deps, state, route):  # type: ignore[arg-type]
                            yield event
                        seq = state.seq
                    if kind == "text":
                        if first_at is None:
                            first_at = clock()
                        text = chunk.text  # type: ignore[union-attr]
                        partial.append(text)
                        state.seq = seq = seq + 1
                        yield TextDelta(key, turn_id, seq, text)
                    elif kind == "tool_call_end":
                        calls.append(chunk.call)  # type: ignore[union-attr]
                    elif kind == "thinking":
                        state.seq = seq = seq + 1
                        yield ThinkingDelta(key, turn_id, seq, chunk.text)  # type: ignore[union-attr]
                    elif kind == "usage":
                        usage: Usage = chunk.usage  # type: ignore[union-attr]
                        call_usage = call_usage + usage
                        state.usage = state.usage + usage
                        state.seq = seq = seq + 1
                        yield UsageEvent(key, turn_id, seq, usage)
                    elif kind == "done":
                        finish = chunk.finish_reason  # type: ignore[union-attr]
                    elif kind == "route":
                        answered_by = chunk  # type: ignore[assignment]
                    elif kind == "warning":
                        log.warning("model warning: %s", chunk.message)  # type: ignore[union-attr]
        except TimeoutError:
            # A cancel cuts the wait short the same way; that case is handled below.
            if not cancel.cancelled:
                span.record_error(f"timeout: the model produced nothing for {timeout:g} s")
                await self._keep_cut_off(deps, state)
                message = f"the model produced nothing for {timeout:g} s"
                state.next = Finish(
                    "timeout", error=("timeout", message), halt=("timeout", message)
                )
                return
        except ModelError as exc:
            span.record_error(exc)
            if not state.partial and await overflow_compacted(deps, state, exc, system):
                state.next = self  # compacted: retry the request once
                return
            await self._keep_cut_off(deps, state)
            state.next = Finish("error", error=(exc.kind, str(exc)))
            return
        finally:
            unregister()
            watchdog.stop()
            aclose = getattr(chunks, "aclose", None)
            if aclose is not None:
                await aclose()
            if span is not NOOP_SPAN:
                _describe_call(span, deps, call_usage, answered_by, finish, began, first_at)
            span_block.__exit__(None, None, None)

        # Stored with the message the call produced (one write), or alone without one.
        used = (
            None
            if call_usage is EMPTY_USAGE
            else usage_record(deps, call_usage, answered_by, personality)
        )
        text = "".join(partial)
        state.partial = []
        if cancel.cancelled:
            if text:
                await store(deps, state, Message("assistant", text, interrupted=True), usage=used)
            elif used is not None:
                await record_usage(deps, used)
            state.final_text = text
            state.next = Finish("cancelled", halt=("cancelled", cancel.reason or "cancelled"))
            return
        assistant = Message("assistant", text, tool_calls=tuple(calls))
        await store(deps, state, assistant, usage=used)
        state.messages.append(assistant)
        if registry.has(hooks.AFTER_LLM_CALL):
            payload_after = AfterLLMCall(key, turn_id, state.iteration, assistant, state.usage)
            await fire_isolated(registry, hooks.AFTER_LLM_CALL, payload_after)
        state.final_text = text
        if not calls:
            state.next = Finish(finish, answered=True)
        else:
            state.next = RunTools(tuple(calls), then=self)


def _chat_span(
    tracer: Tracer, deps: TurnDeps, state: TurnState, request: ModelRequest
) -> AbstractContextManager[Span]:
    model = request.model or deps.personality.model or deps.model.model
    attributes: Attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": deps.model.name,
        "gen_ai.request.model": model,
        "seam.iteration": state.iteration,
    }
    return tracer.span(f"chat {model}", attributes)


def _describe_call(
    span: Span,
    deps: TurnDeps,
    usage: Usage,
    route: RouteChunk | None,
    finish: str,
    began: float,
    first_at: float | None,
) -> None:
    """The model call's figures on its span (GenAI semantic conventions)."""
    if route is not None:
        span.set_attribute("gen_ai.provider.name", route.provider)
        span.set_attribute("gen_ai.response.model", route.model)
    span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
    span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
    span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
    span.set_attribute("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens)
    span.set_attribute("gen_ai.response.finish_reasons", (finish,))
    if first_at is not None:
        span.set_attribute("seam.time_to_first_token_ms", (first_at - began) * 1000)
    loop = deps.loop
    if loop.pricing is not None and usage is not EMPTY_USAGE:
        provider = route.provider if route else deps.model.name
        name = route.model if route else (deps.personality.model or deps.model.model)
        cost = loop.pricing(provider, name, usage)
        if cost is not None:
            span.set_attribute("seam.cost_usd", cost)


def continues_cut_off(messages: Sequence[Message]) -> bool:
    """Whether the next model call goes on from a reply that was cut off: the history
    ends with an interrupted assistant message (nothing was said after it)."""
    if not messages:
        return False
    last = messages[-1]
    return last.role == "assistant" and last.interrupted and not last.tool_calls


@dataclass(frozen=True, slots=True)
class UserPrompt:
    """A new turn's input: stored, then the model is called."""

    text: str
    opens_turn: ClassVar[bool] = False

    async def run(self, deps: TurnDeps, state: TurnState) -> AsyncGenerator[AgentEvent, None]:
        # Any earlier call still without a result never gets one (a submission that
        # failed mid-tool), and providers reject such a history.
        state.messages = answer_dangling(state.messages)
        user = Message("user", self.text)
        await store(deps, state, user)
        state.messages.append(user)
        state.next = CallModel()
        return
        yield  # an async generator that sends nothing
