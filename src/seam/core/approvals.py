"""The bridge between a tool asking for approval and whoever consumes the turn's events.

A tool (through the command gate) awaits `request()`; the loop streams a
`tool_approval_required` event; the surface answers with `AgentLoop.respond()` from
wherever it runs (an inline CLI prompt, a web request, a chat button). No answer within
the timeout is `unavailable`: no one was there to approve. It is refused like a denial,
but never reported as the person's "no" (nobody said it) and never remembered.

With a `relay` (the store's `ApprovalAnswers`), an answer may also come from another
process: the waiter watches the store beside its in-memory future, and writes the answer
it acts on (given here, or the timeout's `unavailable`) so a later answer anywhere is
refused as already given. The first answer stored wins, wherever it was given.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast, get_args

from seam.contracts.approval_answers import ApprovalAnswers
from seam.contracts.guardrail import UNAVAILABLE, ApprovalDecision

log = logging.getLogger(__name__)

PendingKey = tuple[str, str]  # (session key, call id)


class PendingApprovals:
    """Open approval requests of one loop, by session and call."""

    def __init__(self, relay: ApprovalAnswers | None = None) -> None:
        self._futures: dict[PendingKey, asyncio.Future[ApprovalDecision]] = {}
        # Where answers given in other processes arrive (set by the composition root).
        self.relay = relay

    def expect(self, session_key: str, call_id: str) -> asyncio.Future[ApprovalDecision]:
        future: asyncio.Future[ApprovalDecision] = asyncio.get_running_loop().create_future()
        self._futures[(session_key, call_id)] = future
        return future

    def close(self, session_key: str, call_id: str) -> None:
        self._futures.pop((session_key, call_id), None)

    def respond(self, session_key: str, call_id: str, decision: ApprovalDecision) -> bool:
        future = self._futures.get((session_key, call_id))
        if future is None or future.done():
            return False
        future.set_result(decision)
        return True

    def waiting(self, session_key: str) -> list[str]:
        return [
            call for (key, call), f in self._futures.items() if key == session_key and not f.done()
        ]


@dataclass(frozen=True)
class TurnApprover:
    """The `Approver` a turn hands its tools: it announces each request through
    `announce` (the `tool_approval_required` event) and reports the decision it acts on
    through `answered`."""

    pending: PendingApprovals
    session_key: str
    timeout: float
    announce: Callable[[str, str, str, str], None]
    answered: Callable[[str, ApprovalDecision], None]

    async def request(
        self, *, call_id: str, tool: str, command: str, reason: str
    ) -> ApprovalDecision:
        future = self.pending.expect(self.session_key, call_id)
        relay = self.pending.relay
        if relay is not None:
            try:  # before the request is announced: nobody can have answered it yet
                await relay.clear_approval(self.session_key, call_id)
            except Exception:
                log.exception("could not clear an earlier answer to approval %s", call_id)
        self.announce(call_id, tool, command, reason)
        decision: ApprovalDecision
        try:
            if relay is None:
                try:
                    decision = await asyncio.wait_for(future, self.timeout)
                except TimeoutError:
                    decision = UNAVAILABLE
            else:
                decision = await self._either(relay, call_id, future)
        finally:
            self.pending.close(self.session_key, call_id)
        self.answered(call_id, decision)
        return decision

    async def _either(
        self,
        relay: ApprovalAnswers,
        call_id: str,
        future: asyncio.Future[ApprovalDecision],
    ) -> ApprovalDecision:
        """The first answer, given here or stored by another process."""
        clock = asyncio.get_running_loop()
        deadline = clock.time() + self.timeout
        remote = asyncio.ensure_future(
            relay.wait_for_approval_answer(self.session_key, call_id, self.timeout)
        )
        either: set[asyncio.Future[Any]] = {future, remote}
        try:
            await asyncio.wait(either, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED)
            if not future.done() and remote.done() and remote.exception() is not None:
                # The store failed: answers given here still count until the timeout.
                problem = remote.exception()
                log.warning("cannot watch the store for approval %s: %s", call_id, problem)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(
                        asyncio.shield(future), max(0.0, deadline - clock.time())
                    )
        finally:
            remote.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await remote
        if future.done():
            local = future.result()
        elif not remote.cancelled() and remote.exception() is None and remote.result():
            return _decision(remote.result())
        else:
            # Nobody answered in time (or the store failed): refused, and not a "no".
            local = UNAVAILABLE
        try:
            if await relay.answer_approval(self.session_key, call_id, local):
                return local
            stored = await relay.approval_answer(self.session_key, call_id)
        except Exception:
            log.exception("could not store the answer to approval %s", call_id)
            return local
        # Answered elsewhere first (a web request to another process): that answer wins.
        return local if stored is None else _decision(stored)


def _decision(value: str | None) -> ApprovalDecision:
    """A stored answer as a decision; anything unknown is a denial."""
    if value in get_args(ApprovalDecision):
        return cast(ApprovalDecision, value)
    return "deny"
