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

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from psycopg import AsyncConnection

from seam.contracts.sessions import SessionNotFound
from seam.services.sessions.approval_waiters import ApprovalWaiters
from seam.services.sessions.postgres_channels import APPROVALS_CHANNEL
from seam.services.sessions.postgres_rows import Params

# A safety net under the notifications.
RECHECK_SECONDS = 5.0


class PostgresApprovals(ApprovalWaiters):
    _clock: Callable[[], float]
    _schema: str
    _approval_recheck = RECHECK_SECONDS

    if TYPE_CHECKING:

        def _tx(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        async def _one(self, query: Any, params: Params = None) -> Any: ...

        async def _ensure_listening(self) -> None: ...

    async def _before_waiting(self) -> None:
        await self._ensure_listening()

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


__all__ = ["APPROVALS_CHANNEL", "PostgresApprovals"]
