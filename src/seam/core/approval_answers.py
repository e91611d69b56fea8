"""The in-memory `ApprovalAnswers` (see `contracts/approval_answers.py`), mixed into
`InMemoryExecutionStore`: one process, so a stored answer wakes its waiters at once."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from seam.contracts.sessions import SessionNotFound


class InMemoryApprovalAnswers:
    _sessions: dict[str, Any]

    def _approval_state(self) -> tuple[dict[tuple[str, str], str], set[asyncio.Future[None]]]:
        # Built on first use, so the store's own constructor needs no change.
        state: tuple[dict[tuple[str, str], str], set[asyncio.Future[None]]] | None
        state = getattr(self, "_approvals", None)
        if state is None:
            state = ({}, set())
            self._approvals = state
        return state

    async def answer_approval(self, session_key: str, call_id: str, decision: str) -> bool:
        if session_key not in self._sessions:
            raise SessionNotFound(f"no session {session_key!r}")
        answers, waiters = self._approval_state()
        if (session_key, call_id) in answers:
            return False
        answers[(session_key, call_id)] = decision
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)
        return True

    async def clear_approval(self, session_key: str, call_id: str) -> None:
        answers, _ = self._approval_state()
        answers.pop((session_key, call_id), None)

    async def approval_answer(self, session_key: str, call_id: str) -> str | None:
        answers, _ = self._approval_state()
        return answers.get((session_key, call_id))

    def _forget_approvals(self, session_key: str) -> None:
        """A deleted session takes its answers with it, as in the other stores."""
        answers, _ = self._approval_state()
        for key in [k for k in answers if k[0] == session_key]:
            del answers[key]

    async def wait_for_approval_answer(
        self, session_key: str, call_id: str, seconds: float
    ) -> str | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        _, waiters = self._approval_state()
        while True:
            answer = await self.approval_answer(session_key, call_id)
            left = deadline - loop.time()
            if answer is not None or left <= 0:
                return answer
            waiter: asyncio.Future[None] = loop.create_future()
            waiters.add(waiter)
            try:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter, left)
            finally:
                waiters.discard(waiter)


__all__ = ["InMemoryApprovalAnswers"]
