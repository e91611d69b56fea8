"""One CLI turn's state while it runs: what it left behind (`TurnResult`) and the object
its event callback, Ctrl-C, the deadline and the approval prompts share (`TurnControl`).

Kept apart from `runner.py` (which starts and settles the turn) so each file has one job.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from seam.contracts.events import (
    AgentEvent,
    Done,
    ErrorEvent,
    Halt,
    ToolApprovalRequired,
    ToolApprovalResponse,
    ToolEnd,
)
from seam.contracts.guardrail import UNAVAILABLE, ApprovalDecision
from seam.contracts.tools import CancelToken

if TYPE_CHECKING:
    from seam.contracts.execution import Submission
    from seam.wiring.runtime import Runtime

# After the first Ctrl-C a turn gets this long to stop at its next step (keeping the
# transcript tidy) before it is abandoned: a stalled model sends no next chunk to stop at.
CANCEL_GRACE = 1.0

Approve = Callable[[ToolApprovalRequired], Awaitable[ApprovalDecision]]


@dataclass
class Unanswered:
    """The first approval request in a turn's events that no one answered (no person
    here, or none in time: the `unavailable` answer), and what its tool then told the
    model (its `tool_end` result), which a surface repeats to the person."""

    waited: ToolApprovalRequired | None = None
    told: str | None = None
    requests: dict[str, ToolApprovalRequired] = field(default_factory=dict)

    def note(self, event: AgentEvent) -> None:
        if isinstance(event, ToolApprovalRequired):
            self.requests[event.call_id] = event
        elif isinstance(event, ToolApprovalResponse) and event.decision == UNAVAILABLE:
            if self.waited is None:
                self.waited = self.requests.get(event.call_id)
        elif isinstance(event, ToolEnd) and self.told is None:
            waited = self.waited
            if waited is not None and event.call_id == waited.call_id:
                self.told = event.result


@dataclass
class TurnResult:
    """What one CLI turn left behind: the submission as it settled (None when it was
    abandoned before it could be read back), and what its events said along the way."""

    submission_id: str
    submission: Submission | None = None
    done: Done | None = None
    error: ErrorEvent | None = None
    halt: Halt | None = None
    # The first approval request nobody could answer (no terminal, end of input, no
    # answer in time), and what its tool then told the model.
    unanswered: Unanswered = field(default_factory=Unanswered)

    @property
    def waited(self) -> ToolApprovalRequired | None:
        return self.unanswered.waited

    @property
    def told(self) -> str | None:
        return self.unanswered.told

    interrupted: bool = False
    # The turn's deadline (seconds) when it ran out and stopped the turn.
    timed_out: float | None = None


@dataclass(eq=False)
class TurnControl:
    """The state one CLI turn shares between its event callback, Ctrl-C, the deadline and
    the approval prompts, kept in one object so `run_turn` reads as the turn's steps."""

    runtime: Runtime
    result: TurnResult
    cancel: CancelToken
    on_event: Callable[[AgentEvent], None]
    approve: Approve | None
    # Approval prompts still open, and the abort requests sent when the turn stopped.
    answering: dict[asyncio.Task[None], ToolApprovalRequired] = field(default_factory=dict)
    aborting: list[asyncio.Task[None]] = field(default_factory=list)

    async def answer(self, event: ToolApprovalRequired) -> None:
        """Ask `approve`, or answer unavailable without one (the `unavailable` answer then
        shows in the events, where `Unanswered` notes it)."""
        decision = await self.approve(event) if self.approve is not None else UNAVAILABLE
        self.runtime.respond_to(event.session_key, event.call_id, decision)

    def watch(self, event: AgentEvent) -> None:
        """Hand each event on, keep what the result reports, and answer approval
        requests in their own task so the turn's event stream is never blocked."""
        self.on_event(event)
        self.result.unanswered.note(event)
        if isinstance(event, Done):
            self.result.done = event
        elif isinstance(event, ErrorEvent):
            self.result.error = event
        elif isinstance(event, Halt):
            self.result.halt = event
        elif isinstance(event, ToolApprovalRequired):
            task = asyncio.ensure_future(self.answer(event))
            self.answering[task] = event
            task.add_done_callback(lambda t: self.answering.pop(t, None))

    def stop_asking(self) -> None:
        """A prompt the turn no longer waits for must not stay up to compete with the next
        one; a request still open when the person stops the turn is refused."""
        for pending, event in list(self.answering.items()):
            pending.cancel()
            self.runtime.respond_to(event.session_key, event.call_id, "deny")

    async def abort(self) -> None:
        """Ask the coordinator to abort the submission; one not admitted yet (KeyError)
        is stopped at its start by the cancelled token."""
        with contextlib.suppress(KeyError):
            await self.runtime.abort(self.result.submission_id)

    def on_stop(self) -> None:
        """Ctrl-C: mark the turn interrupted, refuse open prompts, abort the submission."""
        self.result.interrupted = True
        self.stop_asking()
        self.aborting.append(asyncio.ensure_future(self.abort()))

    def expire(self, task: asyncio.Future[Submission], time_limit: float) -> None:
        """The deadline stops the turn as Ctrl-C does (a Ctrl-C already stopping it wins),
        and abandons it if it has not stopped within `CANCEL_GRACE`."""
        if self.cancel.cancelled or task.done():
            return
        self.result.timed_out = time_limit
        self.cancel.cancel(f"timed out after {time_limit:g} s")
        self.stop_asking()
        self.aborting.append(asyncio.ensure_future(self.abort()))
        loop = asyncio.get_running_loop()
        loop.call_later(CANCEL_GRACE, lambda: task.done() or task.cancel())

    async def wind_down(
        self, task: asyncio.Future[Submission], deadline: asyncio.TimerHandle | None
    ) -> None:
        """However the turn ended (even by an exception here), nothing it started is left
        running: the deadline, the turn's task and every approval prompt."""
        if deadline is not None:
            deadline.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        self.stop_asking()
        await asyncio.gather(*self.answering, return_exceptions=True)
