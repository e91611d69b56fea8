"""Outbox rows to and from `OutboxItem`, shared by the SQLite and PostgreSQL outboxes."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from seam.contracts.outbox import OutboxItem, OutboxQuery

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


@dataclass(frozen=True, slots=True)
class ItemsDialect:
    """How a backend spells `outbox_items`' query: `named(n)` is a named parameter (`:n`
    on SQLite, `%(n)s` for psycopg), `starts_with` the literal test of `target` against
    the `prefix` parameter, `tie_break` the insertion order after `created_at`."""

    named: Callable[[str], str]
    starts_with: str
    tie_break: str


def items_query(dialect: ItemsDialect, query: OutboxQuery) -> tuple[str, dict[str, Any]]:
    """`outbox_items`' query, filtered by what is given, and its named parameters."""
    named = dialect.named
    where = ["1 = 1"]
    if query.source is not None:
        where.append(f"source = {named('source')}")
    if query.target_prefix is not None:
        where.append(dialect.starts_with)
    if query.status is not None:
        where.append(f"status = {named('status')}")
    sql = (
        f"SELECT {OUTBOX_COLUMNS} FROM outbox WHERE {' AND '.join(where)}"
        f" ORDER BY created_at, {dialect.tie_break} LIMIT {named('limit')}"
    )
    params = {
        "source": query.source,
        "prefix": query.target_prefix,
        "status": query.status,
        "limit": max(query.limit, 0),
    }
    return sql, params


def _text(value: str | bytes | memoryview) -> str:
    # PostgreSQL keeps the free text in bytea (its text type cannot hold NUL).
    return value if isinstance(value, str) else bytes(value).decode()
