"""The bridge between a tool asking for approval and whoever consumes the turn's events.

A tool (through the command gate) awaits `request()`; the loop streams a
`tool_approval_required` event; the surface answers with `AgentLoop.respond()` from
wherever it runs (an inline CLI prompt, a web request, a chat button). No answer within
the timeout is a denial.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from seam.contracts.guardrail import ApprovalDecision

PendingKey = tuple[str, str]  # (session key, call id)


class PendingApprovals:
    """Open approval requests of one loop, by session and call."""

    def __init__(self) -> None:
        self._futures: dict[PendingKey, asyncio.Future[ApprovalDecision]] = {}

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


class TurnApprover:
    """The `Approver` a turn hands its tools."""

    def __init__(
        self,
        pending: PendingApprovals,
        session_key: str,
        timeout: float,
        announce: Callable[[str, str, str, str], None],
        answered: Callable[[str, ApprovalDecision], None],
    ) -> None:
        self._pending = pending
        self._key = session_key
        self._timeout = timeout
        self._announce = announce
        self._answered = answered

    async def request(
        self, *, call_id: str, tool: str, command: str, reason: str
    ) -> ApprovalDecision:
        future = self._pending.expect(self._key, call_id)
        self._announce(call_id, tool, command, reason)
        decision: ApprovalDecision
        try:
            decision = await asyncio.wait_for(future, self._timeout)
        except TimeoutError:
            decision = "deny"
        finally:
            self._pending.close(self._key, call_id)
        self._answered(call_id, decision)
        return decision
