"""Approval answers on PostgreSQL (see `contracts/approval_answers.py`): a mixin of
`PostgresStore`, over the `approval_answers` table.

Storing an answer NOTIFYs `APPROVALS_CHANNEL` (payload: the schema) in its transaction;
the store's one LISTEN connection (`PostgresStore._listen`) wakes every waiter of this
schema, which then reads its own row. A waiter registers before it reads, so an answer
committed between its read and its wait still wakes it; a lost listener connection wakes
every waiter too (notifications sent meanwhile are gone), and a waiter also looks again
every `RECHECK_SECONDS` whatever happens. The primary key makes the first answer the only
one, whichever process wrote it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from psycopg import AsyncConnection

from seam.contracts.sessions import SessionNotFound
from seam.services.sessions.postgres_channels import APPROVALS_CHANNEL
from seam.services.sessions.postgres_rows import Params

# A safety net under the notifications.
RECHECK_SECONDS = 5.0


class PostgresApprovals:
    _clock: Callable[[], float]
    _schema: str

    if TYPE_CHECKING:

        def _tx(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        async def _one(self, query: Any, params: Params = None) -> Any: ...

        async def _ensure_listening(self) -> None: ...

    def _approval_waiters(self) -> set[asyncio.Future[None]]:
        waiters: set[asyncio.Future[None]] | None = getattr(self, "_approvals_waiting", None)
        if waiters is None:
            waiters = set()
            self._approvals_waiting = waiters
        return waiters

    def _approvals_noted(self) -> None:
        """An answer was stored somewhere (or notifications may have been lost): every
        waiter looks at its row again."""
        for waiter in self._approval_waiters():
            if not waiter.done():
                waiter.set_result(None)

    async def answer_approval(self, session_key: str, call_id: str, decision: str) -> bool:
        async with self._tx() as conn:
            cur = await conn.execute(
                "SELECT 1 FROM sessions WHERE key = %s FOR KEY SHARE", (session_key,)
            )
            if await cur.fetchone() is None:
                raise SessionNotFound(f"no session {session_key!r}")
            cur = await conn.execute(
                "INSERT INTO approval_answers (session_key, call_id, decision, answered_at)"
                " VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (session_key, call_id, decision, self._clock()),
            )
            stored = cur.rowcount == 1
            if stored:
                await conn.execute("SELECT pg_notify(%s, %s)", (APPROVALS_CHANNEL, self._schema))
        if stored:
            self._approvals_noted()
        return stored

    async def clear_approval(self, session_key: str, call_id: str) -> None:
        async with self._tx() as conn:
            await conn.execute(
                "DELETE FROM approval_answers WHERE session_key = %s AND call_id = %s",
                (session_key, call_id),
            )

    async def approval_answer(self, session_key: str, call_id: str) -> str | None:
        row = await self._one(
            "SELECT decision FROM approval_answers WHERE session_key = %s AND call_id = %s",
            (session_key, call_id),
        )
        return None if row is None else str(row[0])

    async def wait_for_approval_answer(
        self, session_key: str, call_id: str, seconds: float
    ) -> str | None:
        await self._ensure_listening()
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
                    await asyncio.wait_for(waiter, min(left, RECHECK_SECONDS))
            finally:
                waiters.discard(waiter)


__all__ = ["APPROVALS_CHANNEL", "PostgresApprovals"]
