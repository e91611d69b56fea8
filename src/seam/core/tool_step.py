"""The tool step of a turn: run one model step's tool calls, store their results.

Consecutive calls of tools marked `concurrent` run together; results and `tool_end`
events come in call order; progress, approval requests and hook notices are streamed as
they happen. Every call gets exactly one result, also when the turn is cancelled
mid-tool (`core/tool_call.py` runs one call and turns every failure into a result).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

from seam.contracts.events import (
    Notice,
    ToolApprovalRequired,
    ToolApprovalResponse,
    ToolEnd,
    ToolProgress,
    ToolStart,
)
from seam.contracts.messages import Message, ToolCall
from seam.contracts.tools import Tool, ToolContext
from seam.contracts.tracing import NOOP_TRACER, Attributes
from seam.core.approvals import TurnApprover
from seam.core.read_through import replaced
from seam.core.tool_call import CANCELLED, CallSite, ToolOutcome, run_one
from seam.core.turn import Finish, store
from seam.core.turn_deps import (
    Pending,
    StepEnd,
    StepOutput,
    ToolDeps,
    Turn,
    TurnServices,
    TurnState,
    TurnStep,
)


@dataclass(frozen=True, slots=True)
class RunTools:
    """Run `calls`, store their results, then go on with `then` (or halt, if a hook said
    so). A resumed turn starts here with the calls a crash left without results."""

    calls: Sequence[ToolCall]
    then: TurnStep
    opens_turn: ClassVar[bool] = True

    def run(self, services: TurnServices, turn: Turn, state: TurnState) -> StepOutput:
        return run_tools(self, services.tools, turn, state)


async def run_tools(step: RunTools, deps: ToolDeps, turn: Turn, state: TurnState) -> StepOutput:
    """Run `RunTools`: `tool_start` for every call, the events raised while they run,
    `tool_end` in call order; the next state holds the stored results."""
    calls = step.calls
    key, turn_id = turn.session_key, turn.turn_id
    seq = state.seq
    for tool_call in calls:
        seq += 1
        yield ToolStart(key, turn_id, seq, tool_call.id, tool_call.name, tool_call.arguments)
    batch = ToolBatch(deps, turn, state.iteration, calls)
    results: list[Message] = []
    runner = asyncio.ensure_future(batch.run_all())
    runner.add_done_callback(batch.woken)
    unregister = turn.cancel.on_cancel(batch.wake.set)
    try:
        while len(results) < len(calls):
            await batch.wait(runner, len(results))
            for make in batch.drain():
                seq += 1
                yield make(seq)
            _raise_failure(runner)
            for outcome in batch.ready(runner, len(results)):
                tool_call = calls[len(results)]
                results.append(
                    Message(
                        "tool",
                        outcome.content,
                        tool_call_id=tool_call.id,
                        name=tool_call.name,
                        images=outcome.images,
                    )
                )
                seq += 1
                yield _ended(turn, seq, tool_call, outcome)
    finally:
        unregister()
        await _stop(runner)
    halt = batch.halt()
    following = step.then if halt is None else Finish("halted", halt=("guardrail", halt))
    messages = (*state.messages, *results)
    raise StepEnd(
        await store(deps.store, turn, state, *results, seq=seq, messages=messages, step=following)
    )


def _ended(turn: Turn, seq: int, tool_call: ToolCall, outcome: ToolOutcome) -> ToolEnd:
    return ToolEnd(
        turn.session_key,
        turn.turn_id,
        seq,
        tool_call.id,
        tool_call.name,
        outcome.content,
        outcome.is_error,
        outcome.duration_ms,
        outcome.truncated,
    )


def _raise_failure(runner: asyncio.Future[None]) -> None:
    """Re-raise what broke the batch itself (a tool's own failure is a result)."""
    if runner.done() and not runner.cancelled():
        error = runner.exception()
        if error is not None:
            raise error


async def _stop(runner: asyncio.Future[None]) -> None:
    if not runner.done():
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)


class ToolBatch:
    """The calls of one tool step while they run: their outcomes (by call), the events
    they raise (built when sent, so sequence numbers stay in order), and the approver
    their tools ask. The step streams from it; only this step's tasks write to it."""

    def __init__(self, deps: ToolDeps, turn: Turn, iteration: int, calls: Sequence[ToolCall]):
        self.deps = deps
        self.turn = turn
        self.calls = calls
        self.outcomes: list[ToolOutcome | None] = [None] * len(calls)
        self.inbox: list[Pending] = []
        self.wake = asyncio.Event()
        # call id -> the approval decision, noted on the call's span.
        self.decisions: dict[str, str] = {}
        self.site = CallSite(deps, turn, iteration, self.notify)
        self.approver = TurnApprover(
            deps.approvals,
            turn.session_key,
            deps.options.approval_timeout,
            self.announce,
            self.answered,
        )

    # -- events raised while tools run --

    def post(self, make: Pending) -> None:
        self.inbox.append(make)
        self.wake.set()

    def drain(self) -> list[Pending]:
        waiting, self.inbox = self.inbox, []
        return waiting

    def progress_for(self, tool_call: ToolCall) -> Callable[[str], None]:
        key, turn_id = self.turn.session_key, self.turn.turn_id

        def report(message: str) -> None:
            self.post(
                lambda seq: ToolProgress(key, turn_id, seq, tool_call.id, tool_call.name, message)
            )

        return report

    def announce(self, call_id: str, tool: str, command: str, reason: str) -> None:
        key, turn_id = self.turn.session_key, self.turn.turn_id
        self.post(
            lambda seq: ToolApprovalRequired(key, turn_id, seq, call_id, tool, command, reason)
        )

    def answered(self, call_id: str, decision: str) -> None:
        self.decisions[call_id] = decision
        key, turn_id = self.turn.session_key, self.turn.turn_id
        self.post(lambda seq: ToolApprovalResponse(key, turn_id, seq, call_id, decision))

    def notify(self, kind: str, message: str) -> None:
        key, turn_id = self.turn.session_key, self.turn.turn_id
        self.post(lambda seq: Notice(key, turn_id, seq, kind, message))

    # -- running --

    async def run_all(self) -> None:
        """Run the calls in order, each run of consecutive `concurrent` tools together."""
        calls, tools = self.calls, self.turn.tools
        i = 0
        while i < len(calls):
            j = i + 1
            if _concurrent(tools.get(calls[i].name)):
                while j < len(calls) and _concurrent(tools.get(calls[j].name)):
                    j += 1
            if j - i == 1:
                await self._one(i)
            else:
                await asyncio.gather(*(self._one(k) for k in range(i, j)))
            i = j

    async def _one(self, i: int) -> None:
        tool_call = self.calls[i]
        ctx = replaced(
            self.turn.ctx,
            call_id=tool_call.id,
            progress=self.progress_for(tool_call),
            approvals=self.approver,
        )
        tool = self.turn.tools.get(tool_call.name)
        if self.deps.tracer is NOOP_TRACER:
            self.outcomes[i] = await run_one(self.site, tool_call, tool, ctx)
        else:
            self.outcomes[i] = await self._traced(tool_call, tool, ctx)
        self.wake.set()

    async def _traced(
        self, tool_call: ToolCall, tool: Tool | None, ctx: ToolContext
    ) -> ToolOutcome:
        """`run_one` inside an `execute_tool` span with the call's figures."""
        attributes: Attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool_call.name,
            "gen_ai.tool.call.id": tool_call.id,
        }
        with self.deps.tracer.span(f"execute_tool {tool_call.name}", attributes) as span:
            outcome = await run_one(self.site, tool_call, tool, ctx)
            span.set_attribute("seam.tool.duration_ms", outcome.duration_ms)
            span.set_attribute("seam.tool.outcome", "error" if outcome.is_error else "ok")
            decision = self.decisions.get(tool_call.id)
            if decision is not None:
                span.set_attribute("seam.tool.approval", decision)
            if outcome.is_error:
                span.record_error(outcome.content[:200])
        return outcome

    # -- streaming what they did --

    async def wait(self, runner: asyncio.Future[None], emitted: int) -> None:
        """Until there is something to send: an event, the next result in call order, or
        the end of the batch. A cancel stops the tools still running."""
        if runner.done() or self.inbox or self.outcomes[emitted] is not None:
            return
        if self.turn.cancel.cancelled:
            await _stop(runner)
        else:
            # The runner sets `wake` when it ends too (`woken`): one event to wait on,
            # no task per wait.
            await self.wake.wait()
        self.wake.clear()

    def woken(self, _: object) -> None:
        """The runner's done callback: a wait for the next result ends with the batch."""
        self.wake.set()

    def ready(self, runner: asyncio.Future[None], emitted: int) -> list[ToolOutcome]:
        """The results that can be sent now, in call order from `emitted`; once the batch
        is over, a call that never finished gets the cancelled result."""
        ready: list[ToolOutcome] = []
        for outcome in self.outcomes[emitted:]:
            if outcome is None:
                if not runner.done():
                    break
                outcome = CANCELLED
            ready.append(outcome)
        return ready

    def halt(self) -> str | None:
        """Why a hook halts the turn after this step (the last call's that said so)."""
        halts = [o.halt for o in self.outcomes if o is not None and o.halt is not None]
        return halts[-1] if halts else None


def _concurrent(tool: Tool | None) -> bool:
    return tool is not None and tool.concurrent
