"""One model call as it streams: `CallRecord`, what the call has produced so far, and
`OpenStream`, what the call holds open (the provider's iterator, the watchdog, the cancel
hook and the call's span). Both are the model step's working values for one call, gone
when the step returns its next state. The hot path (text deltas) stays inline in
`model_step.call_model`; every other chunk goes through `CallRecord.take`.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractContextManager

from seam.contracts.events import AgentEvent, TextDelta, ThinkingDelta, UsageEvent
from seam.contracts.messages import EMPTY_USAGE, ToolCall, Usage
from seam.contracts.model import ModelChunk, ModelError, ModelRequest, RouteChunk
from seam.contracts.tracing import NOOP_SPAN, NOOP_TRACER, Attributes, Span
from seam.core.turn import answered_by, open_turn
from seam.core.turn_deps import ModelDeps, Turn, TurnState
from seam.core.watchdog import StreamWatchdog

log = logging.getLogger("seam.loop")


class CallRecord:
    """What one model call produced so far: streamed text, tool calls, usage, the route
    that answered, the last sequence number, and the turn state as of its start (with
    `run_start` sent, once the first chunk came)."""

    __slots__ = (
        "began",
        "calls",
        "finish",
        "first_at",
        "iteration",
        "parts",
        "route",
        "seq",
        "state",
        "total",
        "turn",
        "usage",
    )

    def __init__(self, turn: Turn, state: TurnState, iteration: int, began: float) -> None:
        self.turn = turn
        self.state = state
        self.iteration = iteration
        self.seq = state.seq
        self.parts: list[str] = []
        self.calls: list[ToolCall] = []
        self.finish = "stop"
        self.usage = EMPTY_USAGE  # this call's
        self.total = state.usage  # the turn's
        self.route: RouteChunk | None = None
        self.began = began
        self.first_at: float | None = None

    def take(self, chunk: ModelChunk, clock: Callable[[], float]) -> list[AgentEvent]:
        """The events of any chunk but a text delta after the first (those stay inline,
        for speed); `run_start` and what waited for it come first on the first chunk."""
        events = self._open(chunk) if not self.state.started else []
        kind = chunk.kind
        if kind == "tool_call_start" or kind == "tool_call_delta":
            return events  # the whole call comes with its end
        if kind == "text":
            if self.first_at is None:
                self.first_at = clock()
            text: str = chunk.text  # type: ignore[union-attr]
            self.parts.append(text)
            self.seq += 1
            events.append(TextDelta(self.turn.session_key, self.turn.turn_id, self.seq, text))
        elif kind == "tool_call_end":
            self.calls.append(chunk.call)  # type: ignore[union-attr]
        elif kind == "thinking":
            thought: str = chunk.text  # type: ignore[union-attr]
            self.seq += 1
            events.append(
                ThinkingDelta(self.turn.session_key, self.turn.turn_id, self.seq, thought)
            )
        elif kind == "usage":
            events.append(self._used(chunk.usage))  # type: ignore[union-attr]
        elif kind == "done":
            self.finish = chunk.finish_reason  # type: ignore[union-attr]
        elif kind == "route":
            self.route = chunk  # type: ignore[assignment]
        elif kind == "warning":
            log.warning("model warning: %s", chunk.message)  # type: ignore[union-attr]
        return events

    def _open(self, chunk: ModelChunk) -> list[AgentEvent]:
        # Nothing was sent since the call began, so `self.state.seq` is still current.
        route = chunk if chunk.kind == "route" else None
        events, self.state = open_turn(self.turn, self.state, route)  # type: ignore[arg-type]
        self.seq = self.state.seq
        return events

    def _used(self, usage: Usage) -> AgentEvent:
        self.usage = self.usage + usage
        self.total = self.total + usage
        self.seq += 1
        return UsageEvent(self.turn.session_key, self.turn.turn_id, self.seq, usage)

    def text(self) -> str:
        return "".join(self.parts)

    def after(self) -> TurnState:
        """The turn's state once this call's events went out."""
        return self.state._replace(seq=self.seq, usage=self.total, iteration=self.iteration)


class OpenStream:
    """What a streamed call holds open until `close`: the provider's iterator, the
    watchdog that abandons a silent stream, the cancel hook that cuts a wait short, and
    the call's span (current while it streams, so the provider's retries are noted on
    it)."""

    __slots__ = ("_block", "_unregister", "chunks", "span", "watchdog")

    def __init__(self, deps: ModelDeps, turn: Turn, iteration: int, request: ModelRequest):
        self.watchdog = StreamWatchdog(deps.context.options.streaming_timeout)
        self.chunks: AsyncIterator[ModelChunk] = turn.model.stream(request).__aiter__()
        self._unregister = turn.cancel.on_cancel(self.watchdog.interrupt)
        tracer = deps.tracer
        self._block: AbstractContextManager[Span] = (
            NOOP_SPAN
            if tracer is NOOP_TRACER
            else tracer.span(*_chat_span(turn, iteration, request))
        )
        self.span = self._block.__enter__()

    async def close(
        self, deps: ModelDeps, call: CallRecord, failure: TimeoutError | ModelError | None
    ) -> None:
        """Stop the watchdog and the provider's stream; put the call's figures (and its
        failure, unless a cancel cut it short) on its span and end the span."""
        self._unregister()
        self.watchdog.stop()
        aclose = getattr(self.chunks, "aclose", None)
        if aclose is not None:
            await aclose()
        span = self.span
        if span is not NOOP_SPAN:
            if isinstance(failure, ModelError):
                span.record_error(failure)
            elif failure is not None and not call.turn.cancel.cancelled:
                timeout = deps.context.options.streaming_timeout
                span.record_error(f"timeout: the model produced nothing for {timeout:g} s")
            _describe_call(span, deps, call)
        self._block.__exit__(None, None, None)


def _chat_span(turn: Turn, iteration: int, request: ModelRequest) -> tuple[str, Attributes]:
    model = request.model or turn.personality.model or turn.model.model
    attributes: Attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": turn.model.name,
        "gen_ai.request.model": model,
        "seam.iteration": iteration,
    }
    return f"chat {model}", attributes


def _describe_call(span: Span, deps: ModelDeps, call: CallRecord) -> None:
    """The model call's figures on its span (GenAI semantic conventions)."""
    route, usage = call.route, call.usage
    if route is not None:
        span.set_attribute("gen_ai.provider.name", route.provider)
        span.set_attribute("gen_ai.response.model", route.model)
    span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
    span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
    span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
    span.set_attribute("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens)
    span.set_attribute("gen_ai.response.finish_reasons", (call.finish,))
    if call.first_at is not None:
        span.set_attribute("seam.time_to_first_token_ms", (call.first_at - call.began) * 1000)
    if deps.pricing is not None and usage is not EMPTY_USAGE:
        cost = deps.pricing(*answered_by(call.turn, route), usage)
        if cost is not None:
            span.set_attribute("seam.cost_usd", cost)
