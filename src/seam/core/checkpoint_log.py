"""The in-memory `CheckpointLog` (see `contracts/checkpoints.py`), mixed into
`InMemoryExecutionStore`: each changing turn's checkpoints, per session, in order.

Every method finishes without awaiting, so each is atomic here, as the durable stores'
transactions are."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from seam.contracts.checkpoints import TurnCheckpoint
from seam.contracts.sessions import SessionNotFound


class InMemoryCheckpointLog:
    _sessions: dict[str, Any]
    _clock: Callable[[], float]

    def _checkpoint_rows(self) -> dict[str, list[TurnCheckpoint]]:
        # Built on first use, so the store's own constructor needs no change.
        rows: dict[str, list[TurnCheckpoint]] | None = getattr(self, "_turn_checkpoints", None)
        if rows is None:
            rows = {}
            self._turn_checkpoints = rows
        return rows

    async def record_checkpoint(
        self, session_key: str, *, turn_id: str, work_dir: str, before: str, message_count: int
    ) -> TurnCheckpoint:
        if session_key not in self._sessions:
            raise SessionNotFound(f"no session {session_key!r}")
        rows = self._checkpoint_rows().setdefault(session_key, [])
        for row in rows:
            if row.turn_id == turn_id:
                return row
        row = TurnCheckpoint(
            session_key=session_key,
            seq=len(rows) + 1,
            turn_id=turn_id,
            work_dir=work_dir,
            before=before,
            message_count=message_count,
            created_at=self._clock(),
        )
        rows.append(row)
        return row

    async def finish_checkpoint(self, session_key: str, turn_id: str, after: str) -> None:
        rows = self._checkpoint_rows().get(session_key, [])
        for i, row in enumerate(rows):
            if row.turn_id == turn_id:
                rows[i] = replace(row, after=after)

    async def mark_undone(self, session_key: str, seq: int) -> None:
        rows = self._checkpoint_rows().get(session_key, [])
        for i, row in enumerate(rows):
            if row.seq == seq:
                rows[i] = replace(row, undone=True)

    async def checkpoints(self, session_key: str) -> list[TurnCheckpoint]:
        return list(self._checkpoint_rows().get(session_key, []))

    def _forget_checkpoints(self, session_key: str) -> None:
        """A deleted session takes its rows with it, as in the other stores."""
        self._checkpoint_rows().pop(session_key, None)


__all__ = ["InMemoryCheckpointLog"]
