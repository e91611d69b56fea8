"""Outbox rows to and from `OutboxItem`, shared by the SQLite and PostgreSQL outboxes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from seam.contracts.outbox import OutboxItem

OUTBOX_COLUMNS = (
    "key, target, payload, status, created_at, updated_at, attempts, next_attempt_at,"
    " last_error, delivered_id, source"
)


def outbox_from_row(row: Sequence[Any]) -> OutboxItem:
    (
        key,
        target,
        payload,
        status,
        created_at,
        updated_at,
        attempts,
        next_attempt_at,
        last_error,
        delivered_id,
        source,
    ) = row
    return OutboxItem(
        key=key,
        target=target,
        payload=_text(payload),
        status=status,
        created_at=float(created_at),
        updated_at=float(updated_at),
        attempts=int(attempts),
        next_attempt_at=float(next_attempt_at),
        last_error=None if last_error is None else _text(last_error),
        delivered_id=delivered_id,
        source=source,
    )


def _text(value: str | bytes | memoryview) -> str:
    # PostgreSQL keeps the free text in bytea (its text type cannot hold NUL).
    return value if isinstance(value, str) else bytes(value).decode()
