"""Tool calls of one model step: concurrency, approvals, progress, budgets and hooks."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from seam.contracts import hooks as hook_names
from seam.contracts.events import (
    AgentEvent,
    Notice,
    ToolApprovalRequired,
    ToolApprovalResponse,
    ToolEnd,
    ToolProgress,
    ToolStart,
)
from seam.contracts.messages import Message, ToolCall
from seam.contracts.tools import CancelToken, Tool, ToolContext, ToolError
from seam.core.approvals import TurnApprover
from seam.core.truncation import truncate_result

if TYPE_CHECKING:
    from seam.core.loop import AgentLoop

log = logging.getLogger("seam.loop")


class ToolSteps:
    """Running one model step's tool calls: the part of a turn that talks to tools.

    A mixin of `Turn` (kept in its own module for size): it relies on the turn's state and
    helpers declared below.
    """

    loop: AgentLoop
    key: str
    turn_id: str
    cancel: CancelToken
    iteration: int
    halt_reason: str | None
    notify: Callable[[str, str], None] | None

    def _next(self) -> int:
        raise NotImplementedError

    async def _fire(self, name: str, payload: dict[str, Any]) -> None:
        raise NotImplementedError

    async def _modify(self, name: str, payload: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

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


@dataclass(frozen=True, slots=True)
class _Outcome:
    content: str
    is_error: bool
    duration_ms: float
    truncated: bool
