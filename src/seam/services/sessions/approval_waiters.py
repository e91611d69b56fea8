"""The in-process half of the approval relay, the same on SQLite and PostgreSQL: the
futures of this process's waiters, woken when an answer may have been stored, and the
wait loop that reads the answer again each time (and every `recheck` seconds at least,
for answers whose wake-up never reached this process).

A waiter registers before it reads, so an answer stored between its read and its wait
still wakes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING


class ApprovalWaiters:
    """Mixed into a store's approvals mixin, which sets `_approval_recheck` and may
    override `_before_waiting` (PostgreSQL starts its listener there)."""

    _approval_recheck: float

    if TYPE_CHECKING:

        async def approval_answer(self, session_key: str, call_id: str) -> str | None: ...

    def _approval_waiters(self) -> set[asyncio.Future[None]]:
        waiters: set[asyncio.Future[None]] | None = getattr(self, "_approvals_waiting", None)
        if waiters is None:
            waiters = set()
            self._approvals_waiting = waiters
        return waiters

    def _approvals_noted(self) -> None:
        """An answer was stored somewhere (or wake-ups may have been lost): every waiter
        looks at its row again."""
        for waiter in self._approval_waiters():
            if not waiter.done():
                waiter.set_result(None)

    async def _before_waiting(self) -> None:
        """Whatever must run before a waiter's first read (nothing, unless overridden)."""

    async def wait_for_approval_answer(
        self, session_key: str, call_id: str, seconds: float
    ) -> str | None:
        await self._before_waiting()
        deadline = time.monotonic() + seconds
        waiters = self._approval_waiters()
        while True:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            waiters.add(waiter)  # before the read: an answer stored meanwhile wakes it
            try:
                answer = await self.approval_answer(session_key, call_id)
                left = deadline - time.monotonic()
                if answer is not None or left <= 0:
                    return answer
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(waiter, min(left, self._approval_recheck))
            finally:
                waiters.discard(waiter)


__all__ = ["ApprovalWaiters"]
