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
from seam.services.sessions.postgres_rows import Params

CHECKPOINTS_MIGRATION: tuple[str, ...] = (
    """CREATE TABLE IF NOT EXISTS turn_checkpoints (
        session_key text NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
        seq integer NOT NULL,
        turn_id text NOT NULL,
        work_dir text NOT NULL,
        before text NOT NULL,
        after text,
        message_count integer NOT NULL,
        created_at double precision NOT NULL,
        undone boolean NOT NULL DEFAULT false,
        PRIMARY KEY (session_key, seq),
        UNIQUE (session_key, turn_id)
    )""",
)

_COLUMNS = "session_key, seq, turn_id, work_dir, before, message_count, created_at, after, undone"


def _row(row: tuple[Any, ...]) -> TurnCheckpoint:
    key, seq, turn, work_dir, before, count, created, after, undone = row
    return TurnCheckpoint(
        session_key=key,
        seq=int(seq),
        turn_id=turn,
        work_dir=work_dir,
        before=before,
        message_count=int(count),
        created_at=float(created),
        after=after,
        undone=bool(undone),
    )


class PostgresCheckpoints:
    _clock: Callable[[], float]

    if TYPE_CHECKING:

        def _tx(self) -> contextlib.AbstractAsyncContextManager[AsyncConnection[Any]]: ...

        async def _all(self, query: Any, params: Params = None) -> list[Any]: ...

    async def record_checkpoint(
        self, session_key: str, *, turn_id: str, work_dir: str, before: str, message_count: int
    ) -> TurnCheckpoint:
        async with self._tx() as conn:
            cur = await conn.execute(
                "SELECT 1 FROM sessions WHERE key = %s FOR NO KEY UPDATE", (session_key,)
            )
            if await cur.fetchone() is None:
                raise SessionNotFound(f"no session {session_key!r}")
            await conn.execute(
                f"INSERT INTO turn_checkpoints ({_COLUMNS}) SELECT %s, coalesce(max(seq), 0) + 1,"
                " %s, %s, %s, %s, %s, NULL, false FROM turn_checkpoints WHERE session_key = %s"
                " ON CONFLICT (session_key, turn_id) DO NOTHING",
                (session_key, turn_id, work_dir, before, message_count, self._clock(), session_key),
            )
            cur = await conn.execute(
                f"SELECT {_COLUMNS} FROM turn_checkpoints WHERE session_key = %s AND turn_id = %s",
                (session_key, turn_id),
            )
            found = await cur.fetchone()
        assert found is not None  # inserted or already there, under the row lock
        return _row(tuple(found))

    async def finish_checkpoint(self, session_key: str, turn_id: str, after: str) -> None:
        async with self._tx() as conn:
            await conn.execute(
                "UPDATE turn_checkpoints SET after = %s WHERE session_key = %s AND turn_id = %s",
                (after, session_key, turn_id),
            )

    async def mark_undone(self, session_key: str, seq: int) -> None:
        async with self._tx() as conn:
            await conn.execute(
                "UPDATE turn_checkpoints SET undone = true WHERE session_key = %s AND seq = %s",
                (session_key, seq),
            )

    async def checkpoints(self, session_key: str) -> list[TurnCheckpoint]:
        rows = await self._all(
            f"SELECT {_COLUMNS} FROM turn_checkpoints WHERE session_key = %s ORDER BY seq",
            (session_key,),
        )
        return [_row(tuple(r)) for r in rows]


__all__ = ["CHECKPOINTS_MIGRATION", "PostgresCheckpoints"]
