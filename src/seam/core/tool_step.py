"""The tool step of a turn: run one model step's tool calls, store their results.

Consecutive calls of tools marked `concurrent` run together; results and `tool_end`
events come in call order; progress, approval requests and hook notices are streamed as
they happen. Every call gets exactly one result, also when the turn is cancelled
mid-tool, and every failure (unknown tool, bad JSON, `ToolError`, a crash) becomes an
error result the model reads.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from seam.contracts import hooks
from seam.contracts.events import (
    AgentEvent,
    Notice,
    ToolApprovalRequired,
    ToolApprovalResponse,
    ToolEnd,
    ToolProgress,
    ToolStart,
)
from seam.contracts.hooks import AfterToolCall, BeforeToolCall
from seam.contracts.messages import Message, ToolCall
from seam.contracts.tools import Tool, ToolContext, ToolError
from seam.contracts.tracing import NOOP_TRACER, Attributes
from seam.core.approvals import TurnApprover
from seam.core.hook_registry import fire_isolated, modify_isolated
from seam.core.truncation import truncate_result
from seam.core.turn import Finish, TurnDeps, TurnState, TurnStep, next_seq, store

log = logging.getLogger("seam.loop")

# Streams a notice raised while tools run: (kind, message).
Notify = Callable[[str, str], None]


@dataclass(frozen=True, slots=True)
class RunTools:
    """Run `calls`, store their results, then go on with `then` (or halt, if a hook said
    so). A resumed turn starts here with the calls a crash left without results."""

    calls: Sequence[ToolCall]
    then: TurnStep
    opens_turn: ClassVar[bool] = True

    async def run(self, deps: TurnDeps, state: TurnState) -> AsyncGenerator[AgentEvent, None]:
        calls = self.calls
        key = deps.session_key
        turn_id = deps.turn_id
        cancel = deps.cancel
        by_name = deps.tools
        for tool_call in calls:
            yield ToolStart(
                key, turn_id, next_seq(state), tool_call.id, tool_call.name, tool_call.arguments
            )
        outcomes: list[_Outcome | None] = [None] * len(calls)
        # Events raised while tools run (progress, approval requests and answers, notices),
        # built when they are yielded so sequence numbers stay in order.
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

        decisions: dict[str, str] = {}

        def answered(call_id: str, decision: str) -> None:
            decisions[call_id] = decision
            post(lambda seq: ToolApprovalResponse(key, turn_id, seq, call_id, decision))

        def notify(kind: str, message: str) -> None:
            post(lambda seq: Notice(key, turn_id, seq, kind, message))

        loop = deps.loop
        tracer = loop.tracer
        approver = TurnApprover(
            loop.pending_approvals, key, loop.options.approval_timeout, announce, answered
        )

        async def run_range(start: int, stop: int) -> None:
            async def one(i: int) -> None:
                tool_call = calls[i]
                call_ctx = replace(
                    deps.ctx,
                    call_id=tool_call.id,
                    progress=progress_for(tool_call),
                    approvals=approver,
                )
                tool = by_name.get(tool_call.name)
                if tracer is NOOP_TRACER:
                    outcomes[i] = await run_one(deps, state, tool_call, tool, call_ctx, notify)
                    wake.set()
                    return
                attributes: Attributes = {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": tool_call.name,
                    "gen_ai.tool.call.id": tool_call.id,
                }
                with tracer.span(f"execute_tool {tool_call.name}", attributes) as span:
                    outcome = await run_one(deps, state, tool_call, tool, call_ctx, notify)
                    span.set_attribute("seam.tool.duration_ms", outcome.duration_ms)
                    span.set_attribute("seam.tool.outcome", "error" if outcome.is_error else "ok")
                    decision = decisions.get(tool_call.id)
                    if decision is not None:
                        span.set_attribute("seam.tool.approval", decision)
                    if outcome.is_error:
                        span.record_error(outcome.content[:200])
                outcomes[i] = outcome
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

        results: list[Message] = []
        runner = asyncio.ensure_future(run_all())
        unregister = cancel.on_cancel(wake.set)
        emitted = 0
        try:
            while emitted < len(calls):
                if not runner.done() and not inbox and outcomes[emitted] is None:
                    if cancel.cancelled:
                        runner.cancel()
                        await asyncio.gather(runner, return_exceptions=True)
                    else:
                        waiter = asyncio.ensure_future(wake.wait())
                        await asyncio.wait((runner, waiter), return_when=asyncio.FIRST_COMPLETED)
                        waiter.cancel()
                    wake.clear()
                while inbox:
                    yield inbox.pop(0)(next_seq(state))
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
                        key,
                        turn_id,
                        next_seq(state),
                        tool_call.id,
                        tool_call.name,
                        outcome.content,
                        outcome.is_error,
                        outcome.duration_ms,
                        outcome.truncated,
                    )
                    emitted += 1
        finally:
            unregister()
            if not runner.done():
                runner.cancel()
                await asyncio.gather(runner, return_exceptions=True)

        await store(deps, state, *results)
        state.messages.extend(results)
        if state.halt_reason is not None:
            state.next = Finish("halted", halt=("guardrail", state.halt_reason))
        else:
            state.next = self.then


async def run_one(
    deps: TurnDeps,
    state: TurnState,
    tool_call: ToolCall,
    tool: Tool | None,
    ctx: ToolContext,
    notify: Notify,
) -> _Outcome:
    """Run one call; every failure becomes an error result (seen by the hooks too)."""
    started = time.perf_counter()
    registry = deps.loop.hooks
    name = tool_call.name
    if tool is None:
        error = f"error: unknown tool {name!r}"
        return await _after(
            deps, state, tool_call, tool_call.arguments, error, True, started, notify
        )
    try:
        args = json.loads(tool_call.arguments) if tool_call.arguments.strip() else {}
    except json.JSONDecodeError as exc:
        message = (
            f"error: arguments for {name} are not valid JSON ({exc.msg} at "
            f"position {exc.pos}); send a JSON object"
        )
        return await _after(
            deps, state, tool_call, tool_call.arguments, message, True, started, notify
        )
    if not isinstance(args, dict):
        message = f"error: arguments for {name} must be a JSON object"
        return await _after(
            deps, state, tool_call, tool_call.arguments, message, True, started, notify
        )
    if registry.has(hooks.BEFORE_TOOL_CALL):
        payload = BeforeToolCall(
            deps.session_key, deps.turn_id, state.iteration, tool_call.id, name, args
        )
        change = await modify_isolated(registry, hooks.BEFORE_TOOL_CALL, payload)
        if change is not None:
            if change.notice is not None:
                notify(change.notice.kind, change.notice.message)
            if change.halt is not None:
                state.halt_reason = change.halt
            if change.block is not None:
                blocked = f"blocked: {change.block}"
                return await _after(deps, state, tool_call, args, blocked, True, started, notify)
            if change.arguments is not None:
                args = dict(change.arguments)
    is_error = False
    try:
        content = await tool.run(args, ctx)
    except ToolError as exc:
        content, is_error = f"error: {exc}", True
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        log.exception("tool %s crashed", name)
        content, is_error = f"error: {name} failed: {type(exc).__name__}: {exc}", True
    if not isinstance(content, str):
        content = str(content)
    return await _after(deps, state, tool_call, args, content, is_error, started, notify)


async def _after(
    deps: TurnDeps,
    state: TurnState,
    tool_call: ToolCall,
    arguments: Mapping[str, Any] | str,
    content: str,
    is_error: bool,
    started: float,
    notify: Notify,
) -> _Outcome:
    """Budget the result, let hooks see (and annotate) it, and time it."""
    loop = deps.loop
    registry = loop.hooks
    if loop.redact is not None:
        content = loop.redact(content)
    content, truncated = truncate_result(content, loop.options.result_budget_chars)
    watched = registry.has(hooks.AFTER_TOOL_RESULT)
    if watched or registry.has(hooks.AFTER_TOOL_CALL):
        payload = AfterToolCall(
            deps.session_key,
            deps.turn_id,
            state.iteration,
            tool_call.id,
            tool_call.name,
            arguments,
            content,
            is_error,
        )
        if watched:
            change = await modify_isolated(registry, hooks.AFTER_TOOL_RESULT, payload)
            if change is not None:
                if change.result is not None:
                    content = change.result
                    payload = replace(payload, result=content)
                if change.halt is not None:
                    state.halt_reason = change.halt
                if change.notice is not None:
                    notify(change.notice.kind, change.notice.message)
        await fire_isolated(registry, hooks.AFTER_TOOL_CALL, payload)
    return _Outcome(content, is_error, (time.perf_counter() - started) * 1000, truncated)


@dataclass(frozen=True, slots=True)
class _Outcome:
    content: str
    is_error: bool
    duration_ms: float
    truncated: bool
