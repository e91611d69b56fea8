"""The checkpoint log's table and rows, shared by the SQLite and PostgreSQL stores
(`sqlite_checkpoints`, `postgres_checkpoints`): one statement both dialects read, and one
reader of a row (SQLite gives `undone` back as 0/1, PostgreSQL as a bool)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from seam.contracts.checkpoints import TurnCheckpoint

# `double precision` and `boolean` are PostgreSQL's types and SQLite's affinities alike.
CHECKPOINTS_TABLE = """CREATE TABLE IF NOT EXISTS turn_checkpoints (
    session_key text NOT NULL REFERENCES sessions (key) ON DELETE CASCADE,
    seq integer NOT NULL, turn_id text NOT NULL, work_dir text NOT NULL,
    before text NOT NULL, after text, message_count integer NOT NULL,
    created_at double precision NOT NULL, undone boolean NOT NULL DEFAULT false,
    PRIMARY KEY (session_key, seq),
    UNIQUE (session_key, turn_id)
)"""
CHECKPOINTS_MIGRATION: tuple[str, ...] = (CHECKPOINTS_TABLE,)
CHECKPOINT_COLUMNS = (
    "session_key, seq, turn_id, work_dir, before, message_count, created_at, after, undone"
)


def checkpoint_sql(mark: str) -> tuple[str, str]:
    """(the select of a session's rows, the insert of a turn's row), with `mark` as the
    dialect's parameter placeholder ("?" or "%s"). The insert numbers the row after the
    session's last; a turn that has its row keeps it."""
    select = f"SELECT {CHECKPOINT_COLUMNS} FROM turn_checkpoints WHERE session_key = {mark}"
    values = ", ".join([mark] * 5)
    insert = (
        f"INSERT INTO turn_checkpoints ({CHECKPOINT_COLUMNS}) SELECT {mark},"
        f" coalesce(max(seq), 0) + 1, {values}, NULL, false FROM turn_checkpoints"
        f" WHERE session_key = {mark} ON CONFLICT (session_key, turn_id) DO NOTHING"
    )
    return select, insert


def checkpoint_from_row(row: Sequence[Any]) -> TurnCheckpoint:
    key, seq, turn, work_dir, before, count, created, after, undone = row
    return TurnCheckpoint(
        session_key=str(key),
        seq=int(seq),
        turn_id=str(turn),
        work_dir=str(work_dir),
        before=str(before),
        message_count=int(count),
        created_at=float(created),
        after=None if after is None else str(after),
        undone=bool(undone),
    )
