"""The model step of a turn (one model call, streamed) and the step that leads to it.

This is the hottest loop in the runtime, so the stream is consumed inline (no nested
generator per chunk, no task or queue hop), a text delta after the first costs an append,
a sequence number and one event, and the streaming timeout is a lazily re-armed watchdog
(a clock read per chunk, no timer per chunk). Every other chunk goes through
`CallRecord.take` (`core/model_stream.py`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from seam.contracts import hooks
from seam.contracts.events import AgentEvent, TextDelta
from seam.contracts.hooks import AfterLLMCall, BeforeLLMCall
from seam.contracts.messages import EMPTY_USAGE, Message
from seam.contracts.model import ModelError, ModelRequest
from seam.contracts.turn_extras import with_images
from seam.core.context_step import fit_context, overflow_compacted
from seam.core.external_calls import after_answer
from seam.core.history import answer_dangling
from seam.core.hook_registry import fire_isolated
from seam.core.model_stream import CallRecord, OpenStream
from seam.core.turn import Finish, flush, record_usage, save_partial, store, usage_record
from seam.core.turn_deps import (
    ModelDeps,
    StepEnd,
    StepOutput,
    StoreDeps,
    Turn,
    TurnServices,
    TurnState,
)


@dataclass(frozen=True, slots=True)
class CallModel:
    """Call the model with the history; its answer ends the turn, its tool calls lead to
    `RunTools` and then back here (calls to the caller's own tools end the turn:
    `core/external_calls.py`).

    `note` is said to the model in this call's system prompt (and in every later call of
    the turn): a resumed turn tells the model its previous reply was cut off.
    """

    note: str | None = None
    # Opens the turn itself, on the model's first chunk (which may name the route).
    opens_turn: ClassVar[bool] = False

    def system(self, turn: Turn) -> str:
        return turn.system if self.note is None else f"{turn.system}\n\n{self.note}"

    def run(self, services: TurnServices, turn: Turn, state: TurnState) -> StepOutput:
        return call_model(self, services.model, turn, state)


async def call_model(step: CallModel, deps: ModelDeps, turn: Turn, state: TurnState) -> StepOutput:
    """Run `CallModel`: fit the context, stream one call, store the reply. The next state
    leads to the tools, to the end of the turn, or (after an overflow) to this step again."""
    halted = _halt_before_call(deps, turn, state)
    if halted is None and deps.budget is not None:
        from seam.core.budget_step import budget_refusal

        halted = await budget_refusal(deps, turn, state)
    if halted is not None:
        raise StepEnd(halted)
    system, iteration = step.system(turn), state.iteration + 1
    state, ready = await _prepare_call(deps, turn, state, system)
    for event in ready:
        yield event
    request = await _request(deps, turn, state, system, iteration)
    clock = time.monotonic
    call = CallRecord(turn, state, iteration, clock())
    stream = OpenStream(deps, turn, iteration, request)
    failure: TimeoutError | ModelError | None = None
    # The sequence number is a local in the loop, written back to `call` only around
    # `take` and when the stream ends (the finally below), not per delta.
    seq, texting = call.seq, False
    try:
        try:
            async with asyncio.timeout(None) as deadline:
                watchdog = stream.watchdog
                watchdog.start(deadline)
                next_chunk = stream.chunks.__anext__
                key, turn_id = turn.session_key, turn.turn_id
                cancel, parts = turn.cancel, call.parts
                while not cancel.cancelled:
                    watchdog.waiting_since = clock()
                    try:
                        chunk = await next_chunk()
                    except StopAsyncIteration:
                        break
                    watchdog.waiting_since = None
                    if texting and chunk.kind == "text":
                        text: str = chunk.text  # type: ignore[union-attr]
                        parts.append(text)
                        seq += 1
                        yield TextDelta(key, turn_id, seq, text)
                        continue
                    call.seq = seq
                    for event in call.take(chunk, clock):
                        yield event
                    seq, texting = call.seq, call.first_at is not None
        except (TimeoutError, ModelError) as exc:
            # A cancel cuts the wait short the same way; `_settle` tells them apart.
            failure = exc
        finally:
            call.seq = seq
            await stream.close(deps, call, failure)
    except (asyncio.CancelledError, GeneratorExit):
        # Cut off mid-stream: keep what was streamed, marked as interrupted.
        await save_partial(deps.context.store, turn, call.after(), call.text())
        raise
    raise StepEnd(await _settle(step, deps, turn, call, failure, system))


def _halt_before_call(deps: ModelDeps, turn: Turn, state: TurnState) -> TurnState | None:
    """The state that ends the turn before any call (cancelled, or out of model calls)."""
    if turn.cancel.cancelled:
        return state._replace(step=_cancelled(turn))
    if state.iteration >= deps.context.options.max_iterations:
        message = f"stopped after {state.iteration} model calls without a final answer"
        return state._replace(step=Finish("max_iterations", halt=("max_iterations", message)))
    return None


def _cancelled(turn: Turn) -> Finish:
    return Finish("cancelled", halt=("cancelled", turn.cancel.reason or "cancelled"))


async def _prepare_call(
    deps: ModelDeps, turn: Turn, state: TurnState, system: str
) -> tuple[TurnState, list[AgentEvent]]:
    """Fit the context; the events that waited, when the turn has started (before it,
    they wait for `run_start`)."""
    state, _ = await fit_context(deps.context, turn, state, system)
    if not state.started:
        return state, []
    events, state = flush(state)
    return state, events


async def _request(
    deps: ModelDeps, turn: Turn, state: TurnState, system: str, iteration: int
) -> ModelRequest:
    """The call's request (the state's history is a tuple: the request never sees the
    turn move on); `before_llm_call` sees it first."""
    sampling, images = turn.extras.sampling, turn.extras.images
    request = ModelRequest(
        system=system,
        messages=with_images(state.messages, images) if images else state.messages,
        tools=turn.definitions,
        tool_choice=sampling.tool_choice,
        # With a resolver, the personality's model is already the provider's.
        model=None if deps.resolves_models else turn.personality.model,
        max_tokens=sampling.max_tokens,
        temperature=sampling.temperature,
    )
    if deps.hooks.has(hooks.BEFORE_LLM_CALL):
        payload = BeforeLLMCall(turn.session_key, turn.turn_id, iteration, request)
        await fire_isolated(deps.hooks, hooks.BEFORE_LLM_CALL, payload)
    return request


async def _settle(
    step: CallModel,
    deps: ModelDeps,
    turn: Turn,
    call: CallRecord,
    failure: TimeoutError | ModelError | None,
    system: str,
) -> TurnState:
    """The state after the call: its failure's, or its answer's."""
    if failure is not None:
        failed = await _failed(step, deps, turn, call, failure, system)
        if failed is not None:
            return failed
    return await _answered(step, deps, turn, call)


async def _failed(
    step: CallModel,
    deps: ModelDeps,
    turn: Turn,
    call: CallRecord,
    failure: TimeoutError | ModelError,
    system: str,
) -> TurnState | None:
    """After a timeout or a model error: retry once after compacting (a context overflow
    before any text), else finish with the error. None: the timeout was a cancel."""
    state, text = call.after(), call.text()
    if isinstance(failure, TimeoutError):
        if turn.cancel.cancelled:
            return None
        state = await _keep_cut_off(deps.context.store, turn, state, text)
        message = f"the model produced nothing for {deps.context.options.streaming_timeout:g} s"
        timeout = Finish("timeout", error=("timeout", message), halt=("timeout", message))
        return state._replace(step=timeout)
    if not text:
        state, compacted = await overflow_compacted(deps.context, turn, state, failure, system)
        if compacted:
            return state._replace(step=step)  # compacted: retry the request once
    state = await _keep_cut_off(deps.context.store, turn, state, text)
    return state._replace(step=Finish("error", error=(failure.kind, str(failure))))


async def _answered(step: CallModel, deps: ModelDeps, turn: Turn, call: CallRecord) -> TurnState:
    """Store the reply with the call's usage (one write; the usage alone without a
    reply); a cancelled call's text is kept as interrupted and ends the turn."""
    text = call.text()
    used = (
        None
        if call.usage is EMPTY_USAGE
        else usage_record(deps.pricing, turn, call.usage, call.route)
    )
    if turn.cancel.cancelled:
        state = call.after()
        if text:
            interrupted = Message("assistant", text, interrupted=True)
            state = await store(deps.context.store, turn, state, interrupted, used=used)
        elif used is not None:
            await record_usage(deps.context.store, turn, used)
        return state._replace(final_text=text, step=_cancelled(turn))
    calls = tuple(call.calls)
    assistant = Message("assistant", text, tool_calls=calls)
    following = after_answer(calls, turn.extras.external_names, step, call.finish)
    state = await store(
        deps.context.store,
        turn,
        call.state,
        assistant,
        used=used,
        seq=call.seq,
        usage=call.total,
        iteration=call.iteration,
        messages=(*call.state.messages, assistant),
        final_text=text,
        step=following,
    )
    if deps.hooks.has(hooks.AFTER_LLM_CALL):
        payload = AfterLLMCall(
            turn.session_key, turn.turn_id, state.iteration, assistant, state.usage
        )
        await fire_isolated(deps.hooks, hooks.AFTER_LLM_CALL, payload)
    return state


async def _keep_cut_off(deps: StoreDeps, turn: Turn, state: TurnState, text: str) -> TurnState:
    """Store the text of a call that failed part-way, once per model call.

    A retried call (the Coordinator re-running a transient failure) starts from a
    history that already ends with the first attempt's cut-off text, and the model is
    asked to go on from it. When the retry fails part-way too, its text is dropped:
    storing it would leave one interrupted message per attempt (ten for ten attempts),
    each of which the model would read again on the next try.
    """
    if continues_cut_off(state.messages):
        return state
    return await save_partial(deps, turn, state, text)


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

    def run(self, services: TurnServices, turn: Turn, state: TurnState) -> StepOutput:
        return user_prompt(self, services.context.store, turn, state)


async def user_prompt(
    step: UserPrompt, deps: StoreDeps, turn: Turn, state: TurnState
) -> StepOutput:
    """Run `UserPrompt`: store the input; the next state calls the model."""
    # Any earlier call still without a result never gets one (a submission that
    # failed mid-tool), and providers reject such a history.
    history = answer_dangling(list(state.messages))
    # The caller's images are stored with the message (by hash: `contracts/images.py`),
    # so a later call of the session, or a rerun after a crash, still shows them.
    user = Message("user", step.text, images=turn.extras.images)
    raise StepEnd(await store(deps, turn, state, user, messages=(*history, user), step=CallModel()))
    yield  # an async generator that sends nothing
