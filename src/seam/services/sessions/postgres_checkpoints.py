"""The `CheckpointLog` on PostgreSQL (see `contracts/checkpoints.py`): a mixin of
`PostgresStore`, over the `turn_checkpoints` table (rows go with their session by
cascade). Recording locks the session row, so two workers recording for one session
number their rows one after the other."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from psycopg import AsyncConnection

from seam.contracts.checkpoints import TurnCheckpoint
from seam.contracts.sessions import SessionNotFound
from seam.services.sessions.checkpoint_rows import checkpoint_from_row, checkpoint_sql

_SELECT, _INSERT = checkpoint_sql("%s")


class PostgresCheckpoints:
    """Mixed into `PostgresStore`, which provides the transaction helper and the clock."""

    if TYPE_CHECKING:
        _clock: Callable[[], float]

        def _tx(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

    async def record_checkpoint(
        self, session_key: str, *, turn_id: str, work_dir: str, before: str, message_count: int
    ) -> TurnCheckpoint:
        values = (session_key, turn_id, work_dir, before, message_count, self._clock(), session_key)
        async with self._tx() as conn:
            cur = await conn.execute(
                "SELECT 1 FROM sessions WHERE key = %s FOR NO KEY UPDATE", (session_key,)
            )
            if await cur.fetchone() is None:
                raise SessionNotFound(f"no session {session_key!r}")
            await conn.execute(_INSERT, values)
            cur = await conn.execute(f"{_SELECT} AND turn_id = %s", (session_key, turn_id))
            found = await cur.fetchone()
        assert found is not None  # inserted or already there, under the row lock
        return checkpoint_from_row(tuple(found))

    async def finish_checkpoint(self, session_key: str, turn_id: str, after: str) -> None:
        await self._change(
            "UPDATE turn_checkpoints SET after = %s WHERE session_key = %s AND turn_id = %s",
            (after, session_key, turn_id),
        )

    async def mark_undone(self, session_key: str, seq: int) -> None:
        await self._change(
            "UPDATE turn_checkpoints SET undone = true WHERE session_key = %s AND seq = %s",
            (session_key, seq),
        )

    async def checkpoints(self, session_key: str) -> list[TurnCheckpoint]:
        async with self._tx() as conn:
            cur = await conn.execute(f"{_SELECT} ORDER BY seq", (session_key,))
            found = await cur.fetchall()
        return [checkpoint_from_row(tuple(r)) for r in found]

    async def _change(self, statement: str, params: tuple[object, ...]) -> None:
        async with self._tx() as conn:
            await conn.execute(statement, params)


__all__ = ["PostgresCheckpoints"]
